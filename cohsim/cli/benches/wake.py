"""`cohsim bench wake`: wake_bench's flags, argv and summary (wake-up onto an idle CPU)."""

from __future__ import annotations

import argparse
from typing import Any

from cohsim.cli.args import positive_int
from cohsim.cli.benches.flags import cpu_pair, flags


def add(kinds: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """`bench wake`: wake_bench's flags."""
    pw = kinds.add_parser(
        "wake",
        help="wake-up latency of a task that slept, onto an idle CPU",
        description="wake_bench: two threads ping-pong through a futex on one CPU and across"
        " two; wake_ns = (cross-CPU p50 - same-CPU p50) / 2 per repeat.",
    )
    pw.add_argument(
        "--cpus",
        default=None,
        type=cpu_pair,
        metavar="A,B",
        help="the two CPUs (default: the first two this process may run on)",
    )
    pw.add_argument(
        "--samples",
        type=positive_int,
        default=20000,
        help="timed round trips per placement (default 20000)",
    )
    pw.add_argument("--repeats", type=positive_int, default=5, help="repeats (default 5)")
    return pw


def c_args(a: argparse.Namespace) -> list[str]:
    return flags(a, "--samples", "--repeats", *(["--cpus"] if a.cpus else []))


def show(summary: dict[str, Any]) -> None:
    reps = summary["repeats"]
    print(
        f"wake-up onto an idle CPU: wake_ns {summary['wake_ns']:.0f} ns"
        f" (median of {len(reps)} repeats; (cross p50 - same p50) / 2)"
    )
    print(
        f"futex round trip p50: same CPU {summary['same_p50_ns']:.0f} ns,"
        f" across CPUs {summary['cross_p50_ns']:.0f} ns"
    )
    print(f"{'repeat':>6}{'same_p50_ns':>13}{'cross_p50_ns':>14}{'wake_ns':>10}")
    for r in reps:
        print(
            f"{r['repeat']:>6}{r['same_p50_ns']:>13.0f}{r['cross_p50_ns']:>14.0f}"
            f"{r['wake_ns']:>10.0f}"
        )
