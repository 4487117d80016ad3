"""`cohsim bench wake`: wake_bench's flags, argv and summary (wake-up onto an idle CPU)."""

from __future__ import annotations

import argparse
from typing import Any

from cohsim.cli.args import positive_int
from cohsim.cli.benches.flags import cpu_pair, flags, list_arg
from cohsim.errors import CohsimError

_SAMPLES = 20000  #: timed round trips a placement (wake_bench's default)
_PACE_ROUNDS = 50  #: --pace's timed rounds a sleeper count (wake_bench's default)


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
        default=None,
        help=f"timed round trips per placement (default {_SAMPLES}; with --pace, rounds per "
        f"sleeper count, default {_PACE_ROUNDS})",
    )
    pw.add_argument("--repeats", type=positive_int, default=5, help="repeats (default 5)")
    list_arg(
        pw,
        "--pace",
        None,
        "instead: one waker on the first CPU wakes N sleepers spread over the other CPUs at "
        "once (FUTEX_WAKE, as a release of namespace_sem wakes the readers it granted), for "
        "each N of this comma-separated list",
        unique=True,
    )
    pw.add_argument(
        "--pace-busy",
        action="store_true",
        help="with --pace: a spinning thread on every sleeper's CPU (wake-ups onto running "
        "CPUs, not idle ones)",
    )
    return pw


def c_args(a: argparse.Namespace) -> list[str]:
    if a.pace_busy and not a.pace:
        raise CohsimError("--pace-busy: only with --pace")
    if a.pace:
        if a.cpus:
            raise CohsimError("--cpus: not with --pace (the waker takes the first CPU)")
        samples = ["--samples", str(a.samples)] if a.samples is not None else []
        return ["--pace", a.pace, *(["--pace-busy"] if a.pace_busy else []), *samples,
                "--repeats", str(a.repeats)]  # fmt: skip
    if a.samples is None:
        a.samples = _SAMPLES
    return flags(a, "--samples", "--repeats", *(["--cpus"] if a.cpus else []))


def show(summary: dict[str, Any]) -> None:
    if "pace" in summary:
        print(f"{'sleepers':>8} {'placement':<12}{'step_ns':>9}{'spread_ns':>11}{'first_ns':>10}")
        for p in summary["pace"]:
            print(
                f"{p['sleepers']:>8} {p['placement']:<12}{p['step_p50']:>9.0f}"
                f"{p.get('spread_p50', float('nan')):>11.0f}{p['first_p50']:>10.0f}"
            )
        print("step: the waker's FUTEX_WAKE over N (its pace); spread: the sleepers running, one")
        print("after another; first: from the wake to the first sleeper running (medians, ns)")
        return
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
