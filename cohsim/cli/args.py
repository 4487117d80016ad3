"""Argument types shared by the cli_* modules: a bad value is argparse's usage error (exit 2).

The rule every command follows (cohsim.cli.app): a flag's value that is malformed or outside
what its kind admits (not a number, a count below 1, a name not among the choices, a list with
a bad item) is a usage error, exit 2, before anything is read or run; what the model refuses or
needs a file, the catalog or another flag to judge (an unknown instance, more threads than the
machine has CPUs, a burst beyond a real node: cohsim.predict.validity, a trace that does not
parse) is a CohsimError, exit 1.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence

from cohsim.kernel.costs import DEFAULT_KERNEL, load_kernel
from cohsim.predict.options import REPLICATES, RunOptions
from cohsim.predict.pins import check as check_pins
from cohsim.predict.pins import load as load_pins
from cohsim.predict.pins import parse_assignment
from cohsim.predict.question import Burst, Target, sorted_pins
from cohsim.workload.runtime import RUNTIME_HELP, RUNTIMES


def nonneg_int(text: str) -> int:
    """An integer >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a non-negative integer")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return value


def positive_float(text: str) -> float:
    """A number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be positive")
    return value


def nonneg_float(text: str) -> float:
    """A finite number >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (value >= 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"{text!r} must be a number >= 0")
    return value


def count_list(text: str) -> list[int]:
    """A comma-separated list of integers >= 1 ("10,50,100")."""
    out = []
    for item in text.split(","):
        try:
            out.append(positive_int(item.strip()))
        except argparse.ArgumentTypeError as exc:
            if "," not in text:
                raise
            raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None
    return out


def name_list(allowed: Sequence[str], *, all_: bool = False) -> Callable[[str], list[str]]:
    """A comma-separated list of names from `allowed` (with `all_`, also "all": every one)."""

    def check(text: str) -> list[str]:
        if all_ and text == "all":
            return list(allowed)
        names = [n.strip() for n in text.split(",")]
        bad = [n for n in names if n not in allowed]
        if bad:
            expected = ", ".join(allowed) + (" or all" if all_ else "")
            raise argparse.ArgumentTypeError(
                f"unknown {', '.join(map(repr, bad))} (expected {expected})"
            )
        return names

    return check


def add_seed(p: argparse.ArgumentParser, default: int = 0) -> None:
    """`--seed N`: the one seed of a command's randomness, a non-negative integer (what numpy
    seeds with); a negative one is a usage error."""
    p.add_argument(
        "--seed",
        type=nonneg_int,
        default=default,
        help="random seed, a non-negative integer (default %(default)s)",
    )


def add_replicates(
    p: argparse.ArgumentParser, help: str, notes: dict[str, str] | None = None
) -> None:
    """--replicates N: `help` then each engine's default (`RunOptions.replicates` None:
    cohsim.predict.options.REPLICATES), each followed by its note in `notes`; not given, None."""
    notes = notes or {}
    defaults = "; ".join(f"{n} with --engine {e}{notes.get(e, '')}" for e, n in REPLICATES.items())
    p.add_argument(
        "--replicates",
        type=positive_int,
        default=RunOptions.replicates,
        help=f"{help} (default: {defaults})",
    )


def add_runtime(p: argparse._ActionsContainer, default: str, *, unset: bool = False) -> None:
    """`--runtime`: the container runtime's own mount calls (cohsim.workload.runtime), the
    same choices and words in every command. `unset`: None when not given (the command fills
    in `default`: a flag of one mode of a command, refused in the other)."""
    p.add_argument(
        "--runtime",
        choices=RUNTIMES,
        default=None if unset else default,
        help=f"{RUNTIME_HELP} (default {default})",
    )


def add_model_files(p: argparse.ArgumentParser, whose: str = "the machine") -> None:
    """--kernel and --calibration: the kernel model file and the fit a prediction uses."""
    p.add_argument(
        "--kernel",
        help=f"kernel parameters: a name under models/kernel/ or a TOML file (default "
        f"{DEFAULT_KERNEL})",
    )
    p.add_argument(
        "--calibration",
        metavar="FIT.json",
        help="a fit from `cohsim calibrate`; 'none' for the model files as they are "
        f"(default: the committed fit that describes {whose})",
    )


def assignment(text: str) -> tuple[str, float]:
    """ "NAME=VALUE", VALUE a number (`--set`)."""
    try:
        return parse_assignment(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_pins(p: argparse.ArgumentParser) -> None:
    """`--set NAME=VALUE` (repeatable) and `--priors FILE`: pin any prior of the kernel model
    (cohsim.predict.pins)."""
    p.add_argument(
        "--set",
        type=assignment,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="pin a prior of the kernel model (a key of [priors] in models/kernel/*.toml, e.g. "
        "propagation.service_namespaces=12): not drawn; repeatable; over --priors",
    )
    p.add_argument(
        "--priors",
        metavar="FILE",
        help="pin priors from a TOML file of NAME = VALUE (as --set)",
    )


def pins_of(args: argparse.Namespace) -> dict[str, float]:
    """The priors `--priors` and `--set` pin (a --set over the file's value)."""
    pins = load_pins(args.priors) if args.priors else {}
    pins.update(dict(args.set))
    return pins


def target_of(args: argparse.Namespace) -> Target:
    """The `Target` of `add_model_files`' and `add_pins`' flags, with no machine (a plan's or
    a sweep's candidates are the machines; `predict` sets its one with `dataclasses.replace`)."""
    return Target(kernel=args.kernel, calibration=args.calibration, pins=sorted_pins(pins_of(args)))


def burst_of(args: argparse.Namespace, strategy: str | None = None) -> Burst:
    """The `Burst` the question's flags describe (`strategy` in place of `--strategy`'s)."""
    return Burst(
        containers=args.containers,
        layers=args.layers,
        strategy=args.strategy if strategy is None else strategy,
        runtime=args.runtime,
        node_mounts=args.node_mounts,
        deadline_s=args.deadline,
    )


def warn_pins(kernel: str | None, pins: dict[str, float]) -> None:
    """Check `pins` against the kernel's priors before any work (a UsageError for an unknown
    name or an impossible value) and print one warning line per value outside its range."""
    if not pins:
        return
    for phrase in check_pins(load_kernel(kernel), pins):
        print(
            f"cohsim: warning: pinned {phrase}: read the answer as an extrapolation",
            file=sys.stderr,
        )
