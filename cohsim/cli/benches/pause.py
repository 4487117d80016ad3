"""`cohsim bench pause`: pause_bench's flags, argv and summary (lock hand-off latency)."""

from __future__ import annotations

import argparse
from typing import Any

from cohsim.cli.args import nonneg_int, positive_int
from cohsim.cli.benches.flags import flags, list_arg

_PLACEMENTS = ("compact", "scatter", "one-socket")
_LOCKS = ("ttas", "ticket", "mcs")


def add(kinds: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """`bench pause`: pause_bench's flags."""
    pp = kinds.add_parser(
        "pause",
        help="lock hand-off latency of a PAUSE-spinning lock",
        description="pause_bench: pinned threads contend for one spinlock.",
    )
    list_arg(pp, "--threads", "1,2", "comma-separated thread counts (default 1,2)")
    pp.add_argument(
        "--placement",
        default="compact",
        choices=_PLACEMENTS,
        help="which CPUs the threads are pinned to (default compact)",
    )
    list_arg(pp, "--cpus", None, "explicit CPU list, overrides --placement", low=0)
    list_arg(
        pp,
        "--lock",
        "ttas,ticket",
        "lock kinds, comma-separated (default ttas,ticket)",
        choices=_LOCKS,
    )
    pp.add_argument(
        "--cs-ns", type=nonneg_int, default=100, help="critical section length (default 100)"
    )
    pp.add_argument(
        "--think-ns", type=nonneg_int, default=0, help="think time between acquisitions"
    )
    pp.add_argument("--duration-ms", type=positive_int, default=1000, help="measured time per run")
    pp.add_argument(
        "--warmup-ms", type=nonneg_int, default=100, help="unmeasured time before each run"
    )
    pp.add_argument(
        "--repeats", type=positive_int, default=3, help="repeats of every configuration"
    )
    return pp


def c_args(a: argparse.Namespace) -> list[str]:
    out = flags(a, "--threads", "--lock", "--cs-ns", "--think-ns")
    out += flags(a, "--duration-ms", "--warmup-ms", "--repeats")
    return out + flags(a, "--cpus" if a.cpus else "--placement")


def show(summary: dict[str, Any]) -> None:
    print(f"PAUSE latency: {summary['pause_ns']:.1f} ns")
    print(f"{'lock':<8}{'threads':>8}{'p50_ns':>10}{'p99_ns':>10}{'acq/s':>14}  placement")
    for c in summary["configs"]:
        print(
            f"{c['lock']:<8}{c['threads']:>8}{c['p50_ns']:>10.1f}{c['p99_ns']:>10.1f}"
            f"{c['acquisitions_per_s']:>14.0f}  {c['placement']}"
        )
