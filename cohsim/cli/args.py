"""Argument types shared by the cli_* modules: a bad value is argparse's usage error (exit 2)."""

from __future__ import annotations

import argparse


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
    value = nonneg_int(text)
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


def add_seed(p: argparse.ArgumentParser, default: int = 0) -> None:
    """`--seed N`: the one seed of a command's randomness, a non-negative integer (what numpy
    seeds with); a negative one is a usage error."""
    p.add_argument(
        "--seed",
        type=nonneg_int,
        default=default,
        help="random seed, a non-negative integer (default %(default)s)",
    )
