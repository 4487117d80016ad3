"""Shared CLI argument types."""

from __future__ import annotations

import argparse

import pytest

from cohsim.cli.args import add_seed, nonneg_int, positive_float, positive_int


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


def test_seed_flag_takes_a_non_negative_integer(capsys):
    p = argparse.ArgumentParser(prog="x")
    add_seed(p, 7)
    assert p.parse_args([]).seed == 7 and p.parse_args(["--seed", "0"]).seed == 0
    with pytest.raises(SystemExit) as e:
        p.parse_args(["--seed", "-1"])
    assert e.value.code == 2
    assert "argument --seed: '-1' is not a non-negative integer" in capsys.readouterr().err
