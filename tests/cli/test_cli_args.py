"""Shared CLI argument types."""

from __future__ import annotations

import argparse

import pytest

from cohsim.cli.args import nonneg_int, positive_float, positive_int


def test_accepts_and_refuses():
    assert nonneg_int("0") == 0 and positive_int("3") == 3 and positive_float("0.5") == 0.5
    for fn, bad in (
        (nonneg_int, "-1"),
        (nonneg_int, "x"),
        (positive_int, "0"),
        (positive_float, "0"),
        (positive_float, "fast"),
    ):
        with pytest.raises(argparse.ArgumentTypeError):
            fn(bad)
