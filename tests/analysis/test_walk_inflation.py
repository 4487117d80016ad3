"""calibration/analysis/walk_inflation/predict.py on the committed walk_bench run: the three
prices of mount_lock's line transfers (before, the engines' now, every access) are ordered, all
fall short of the measured extra time, and the walk data's README quotes the table as printed."""

from __future__ import annotations

import re

from analysis_runner import REPO, run

README = REPO / "calibration/data/devvm-2cpu-intel-xeon-f6m207/walk/README.md"


def test_prices_are_ordered_and_short_of_the_measurement() -> None:
    out = run("walk_inflation.predict")
    rows = re.findall(
        r"\n(mount_setattr|move_mount)\s+(\d+)\s+(\d+)\s+([+-]\d+)\s+([+-]\d+)"
        r"\s+([+-]\d+)\s+([+-]\d+)\s+([+-]\d+)",
        out,
    )
    assert len(rows) == 6
    readme = README.read_text()
    for op, layers, _alone, stat, _ctrl, before, model, every in rows:
        assert 0 < int(before) < int(model) < int(every) < int(stat), (op, layers)
        assert f"| {op} | {layers} | {stat} | {before} | {model} | {every} |" in readme
