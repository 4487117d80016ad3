"""Flag checks the `cohsim bench` subcommands share: comma-separated lists of names or of
integers, of CPUs this process may use, a CPU pair, and the C program's argv made from the
parsed flags."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

from cohsim.measure import programs


def choice_list(allowed: tuple[str, ...], flag: str) -> Callable[[str], str]:
    def check(text: str) -> str:
        bad = [v for v in text.split(",") if v not in allowed]
        if bad or not text:
            raise argparse.ArgumentTypeError(
                f"{flag}: {','.join(bad) or text!r} not in {', '.join(allowed)}"
            )
        return text

    return check


def int_list(flag: str, low: int = 1) -> Callable[[str], str]:
    def check(text: str) -> str:
        try:
            programs.parse_int_list(text, flag, low)
        except Exception as exc:  # CohsimError -> argparse usage error (exit 2)
            # argparse names the flag already: "argument --threads: '-1' is not ..."
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{flag}: ")) from exc
        return text

    return check


def list_arg(
    p: argparse.ArgumentParser,
    flag: str,
    default: str | None,
    help: str,
    *,
    choices: tuple[str, ...] = (),
    low: int = 1,
    unique: bool = False,
) -> None:
    """A comma-separated list flag: of `choices`, or of integers >= `low`; a malformed one is
    argparse's usage error (exit 2) naming `flag`, before any benchmark is built. `unique`: a
    value given twice is one too."""
    check = choice_list(choices, flag) if choices else int_list(flag, low)
    if unique:
        check = _no_repeats(check, flag, str if choices else int)
    p.add_argument(flag, default=default, type=check, help=help)


def _no_repeats(
    check: Callable[[str], str], flag: str, value: Callable[[str], object]
) -> Callable[[str], str]:
    def unique(text: str) -> str:
        values = [value(v) for v in check(text).split(",")]
        twice = sorted({str(v) for v in values if values.count(v) > 1})
        if twice:
            raise argparse.ArgumentTypeError(f"{flag}: {','.join(twice)} given twice")
        return text

    return unique


def allowed_cpus(flag: str) -> Callable[[str], str]:
    """A comma-separated list of CPU numbers, none twice, each one this process may run on
    (online and in its affinity mask); anything else is argparse's usage error naming `flag`."""
    form = _no_repeats(int_list(flag, 0), flag, int)

    def check(text: str) -> str:
        allowed = os.sched_getaffinity(0)
        bad = [v for v in form(text).split(",") if int(v) not in allowed]
        if bad:
            raise argparse.ArgumentTypeError(
                f"{flag}: CPU {','.join(bad)} not online or not allowed for this process"
                f" (allowed: {','.join(str(c) for c in sorted(allowed))})"
            )
        return text

    return check


def cpu_pair(text: str) -> str:
    """``"A,B"``: two different CPU numbers (whether this process may use them, wake_bench says)."""
    try:
        cpus = [int(v) for v in text.split(",")]
    except ValueError:
        cpus = []
    if len(cpus) != 2 or cpus[0] == cpus[1] or min(cpus) < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not two different CPU numbers A,B")
    return text


def flags(a: argparse.Namespace, *names: str) -> list[str]:
    """``["--flag", "value", ...]`` for the C program, each value read from the flag's dest."""
    return [w for f in names for w in (f, str(getattr(a, f[2:].replace("-", "_"))))]
