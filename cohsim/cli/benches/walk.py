"""`cohsim bench walk`: walk_bench's flags, argv and summary (path walkers against the mounts).

K pinned threads walk a path (``fstatat``; ``openat`` + ``close``; ``fstat`` of an open fd as the
control without a walk) while M pinned threads run containerd's per-layer idmapped mount
sequence for L layers (cohsim.measure.walkbench). The summary gives, per (walk, K, M, L), the
walk's p50/p99 and calls/s with its p50 over the same walk without mounters, and each mount
op's p50 with its ratio to the same (M, L) without walkers.
"""

from __future__ import annotations

import argparse
from typing import Any

from cohsim.cli.args import nonneg_int, positive_int
from cohsim.cli.benches.flags import flags, list_arg
from cohsim.measure.walkbench import WALK_DEFAULTS, WALK_KINDS


def add(kinds: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """`bench walk`: walk_bench's flags."""
    p = kinds.add_parser(
        "walk",
        help="path walkers against containerd's mount sequence on mount_lock (root)",
        description="walk_bench: K pinned threads walk a path (fstatat, or openat + close; fstat"
        " of an open fd as a control without a walk) while M pinned threads run containerd's"
        " per-layer idmapped mount sequence for L layers, every call timed, in a private mount"
        " namespace (needs root). K = 0 gives the mount ops' baseline, M = 0 the walk's.",
    )
    for flag, low, what in (
        ("--walkers", 0, "walker threads K"),
        ("--mounters", 0, "mounter threads M"),
        ("--layers", 1, "image layers L of each mounter's sequence"),
    ):
        default = WALK_DEFAULTS[flag]
        list_arg(
            p, flag, default, f"{what}, comma-separated (default {default})", low=low, unique=True
        )
    list_arg(
        p,
        "--walk",
        WALK_DEFAULTS["--walk"],
        "what a walker calls, comma-separated: stat (fstatat), openat (openat + close), fstat"
        " (the control: no path walk); default stat",
        choices=WALK_KINDS,
        unique=True,
    )
    p.add_argument(
        "--duration-ms",
        type=positive_int,
        default=1000,
        help="measured time per run (default 1000)",
    )
    p.add_argument(
        "--warmup-ms", type=nonneg_int, default=100, help="unmeasured time before each run (100)"
    )
    p.add_argument(
        "--repeats", type=positive_int, default=3, help="rounds of every configuration (default 3)"
    )
    list_arg(
        p,
        "--cpus",
        None,
        "CPUs for the threads, mounters first (default: all this process may use, in order)",
        low=0,
        unique=True,
    )
    p.add_argument(
        "--oversubscribe",
        action="store_true",
        help="allow more threads than CPUs (they then share CPUs: not a clean measurement)",
    )
    p.set_defaults(walk_parser=p)
    return p


def c_args(a: argparse.Namespace) -> list[str]:
    if all(int(v) == 0 for v in f"{a.walkers},{a.mounters}".split(",")):
        a.walk_parser.error("--walkers and --mounters are all 0: nothing to run")
    out = flags(a, "--walkers", "--mounters", "--layers", "--walk")
    out += flags(a, "--duration-ms", "--warmup-ms", "--repeats")
    out += flags(a, "--cpus") if a.cpus else []
    return out + (["--oversubscribe"] if a.oversubscribe else [])


def _num(value: float | None, width: int, digits: int = 2) -> str:
    return f"{value:>{width}.{digits}f}" if value is not None else f"{'-':>{width}}"


def _key(c: dict[str, Any]) -> str:
    return f"{c['walk']:<7}{c['walkers']:>8}{c['mounters']:>9}{c['layers']:>7}"


def show(summary: dict[str, Any]) -> None:
    print(
        f"timer overhead {summary['timer_overhead_ns']:.0f} ns (in every call);"
        " /alone: over the same walk with no mounter; /K=0: over the same mounters and layers"
        " with no walker (medians of the ratios within a round); wait: ms a role's threads"
        " waited runnable for their CPU in a run, switches: their involuntary context switches"
    )
    head = f"{'walk':<7}{'walkers':>8}{'mounters':>9}{'layers':>7}"
    walkers = [c for c in summary["configs"] if c["walkers"]]
    if walkers:
        print(
            f"{head}{'p50_ns':>10}{'p99_ns':>11}{'calls/s':>12}{'p50/alone':>10}{'mean/alone':>11}"
        )
    for c in walkers:
        print(
            f"{_key(c)}{_num(c['walk_p50_ns'], 10, 1)}{_num(c['walk_p99_ns'], 11, 1)}"
            f"{_num(c['walk_calls_per_s'], 12, 0)}{_num(c['walk_p50_vs_alone'], 10)}"
            f"{_num(c['walk_mean_vs_alone'], 11)}"
        )
    print(f"{head}{'walker_wait_ms':>16}{'switches':>10}{'mounter_wait_ms':>17}{'switches':>10}")
    for c in summary["configs"]:
        print(
            f"{_key(c)}{_num(c['walker_runnable_wait_ms'], 16, 1)}"
            f"{_num(c['walker_involuntary_switches'], 10, 0)}"
            f"{_num(c['mounter_runnable_wait_ms'], 17, 1)}"
            f"{_num(c['mounter_involuntary_switches'], 10, 0)}"
        )
    mounters = [c for c in summary["configs"] if c["mounters"]]
    if mounters:
        print(f"{head}  {'op':<16}{'p50_ns':>11}{'p50/K=0':>9}{'mean_ns':>11}{'mean/K=0':>9}")
    for c in mounters:
        for op, o in c["ops"].items():
            if o["p50_ns"] is not None:
                print(
                    f"{_key(c)}  {op:<16}{o['p50_ns']:>11.1f}{_num(o['p50_vs_k0'], 9)}"
                    f"{o['mean_ns']:>11.1f}{_num(o['mean_vs_k0'], 9)}"
                )
