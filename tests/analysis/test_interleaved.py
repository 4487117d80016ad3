"""calibration/analysis/interleaved on the committed rounds: the figures of
mount-interleaved-rounds/README.md."""

from __future__ import annotations

from analysis_runner import number, run


def test_compare_reports_how_far_the_slowdowns_moved() -> None:
    out = run("interleaved.compare")
    assert number(r"slowdowns moved by (\d+) % \(median\)", out) == 19
    assert number(r"(\d+) % at most", out) == 87
    assert number(r"over (\d+) multi-worker shapes", out) == 18
    assert "common-parent 1w 1L" in out
