"""`cohsim bench corun`: corun_bench's flags, argv and summary (how much slower CPU work runs
while the other CPUs work too: a machine file's `microarch.corun_slowdown`, the kernel model's
`cpu.smt_slowdown` prior)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from cohsim.cli.args import positive_int
from cohsim.cli.benches.flags import flags


def _threads(text: str) -> int:
    """At least 2 CPUs (one alone is the baseline), at most those this process may run on."""
    value = positive_int(text)
    usable = len(os.sched_getaffinity(0))
    if not 2 <= value <= usable:
        raise argparse.ArgumentTypeError(
            f"{text!r}: from 2 to the {usable} CPUs this process may run on"
        )
    return value


def add(kinds: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """`bench corun`: corun_bench's flags."""
    p = kinds.add_parser(
        "corun",
        help="how much slower CPU work runs with the other CPUs busy (SMT siblings, shared "
        "host cores)",
        description="corun_bench: three loops (ALU chains, a dependent walk over 16 MiB, "
        "fstat) for --ms on one CPU alone, then on N CPUs at once, each thread pinned to its "
        "own CPU (the first N this process may run on; default all of them, so both SMT "
        "siblings of every core are busy), alternating which goes first. The median ratio "
        "together/alone is a machine file's microarch.corun_slowdown and pins the kernel "
        "model's cpu.smt_slowdown prior. Needs no privileges.",
    )
    p.add_argument(
        "--threads",
        type=_threads,
        default=None,
        metavar="N",
        help="CPUs busy at once, N >= 2 (default: every CPU this process may run on)",
    )
    p.add_argument(
        "--ms", type=positive_int, default=1000, help="ms per loop and pass (default 1000)"
    )
    p.add_argument("--repeats", type=positive_int, default=5, help="repeats (default 5)")
    return p


def c_args(a: argparse.Namespace) -> list[str]:
    return flags(a, "--ms", "--repeats", *(["--threads"] if a.threads else []))


def show(summary: dict[str, Any]) -> None:
    slowdown = summary["corun_slowdown"]
    print(
        f"co-run slowdown with {summary['threads']} CPUs busy: "
        + (f"x{slowdown:.3f}" if slowdown else "-")
        + " (median ratio together/alone over every loop and repeat;"
        " a machine file's microarch.corun_slowdown)"
    )
    print(f"{'loop':<6}{'alone ns':>10}{'together ns':>13}{'ratio':>7}  per repeat")
    for name, loop in summary["loops"].items():
        ratios = " ".join(f"{x:.2f}" for x in loop["ratios"])
        print(
            f"{name:<6}{loop['alone_ns_per_iter']:>10.2f}{loop['together_ns_per_iter']:>13.2f}"
            f"{loop['ratio']:>7.3f}  {ratios}"
        )
