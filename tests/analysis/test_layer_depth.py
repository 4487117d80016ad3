"""calibration/analysis/layer_depth on the committed runs: the figures the layer-depth READMEs
report."""

from __future__ import annotations

from analysis_runner import REPO, number, run

HOST16 = REPO / "calibration/data/devvm-16cpu-intel-xeon-f6m207/layer-depth"
HOST2 = REPO / "calibration/data/devvm-2cpu-intel-xeon-f6m207/layer-depth"


def test_a_trap_step_costs_fifty_times_more_with_sixteen_workers() -> None:
    out = run("layer_depth.slope", *sorted((HOST16 / "sweep").glob("depth-*")))
    assert number(r"common-parent 16 x 50 .*?\| +(\d+) \|", out) == 5014
    assert number(r"lowerdir-plus 16 x 50 .*?\| +(\d+) \|", out) == 5132
    assert number(r"common-parent 16 x 50 +([\d.]+)", out) == 1330.9  # depth 3
    assert number(r"common-parent 64 x 50 .*?\| +(\d+) \|", out) == 2167


def test_alone_a_step_is_about_a_tenth_of_a_microsecond() -> None:
    out = run("layer_depth.slope", *sorted(HOST2.glob("depth-*")))
    for shape, ns in (("common-parent 1", 93), ("common-parent 2", 89), ("lowerdir-plus 2", 120)):
        assert number(shape + r" x 50 .*?\| +(\d+) \|", out) == ns
