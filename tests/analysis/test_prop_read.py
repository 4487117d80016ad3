"""calibration/analysis/prop_read/fit.py on the committed prop_bench runs: positive costs per
live slave namespace, per mount and per peer-ring step, and the figures its README reports."""

from __future__ import annotations

import re

from analysis_runner import REPO, number, run

README = REPO / "calibration/data/devvm-2cpu-amd-epyc-f25m1/prop-and-read/README.md"


def test_fit_slopes_are_positive_and_as_the_readme_says() -> None:
    out = run("prop_read.fit")
    readme = README.read_text()
    per_slave = re.findall(
        r"(bind_mount|umount)\s+time = a \+ b\*K.*b = ([\d.]+) \+- ([\d.]+)", out
    )
    assert [op for op, _, _ in per_slave] == ["bind_mount", "umount"]
    per_mount = re.findall(r"host  time = a \+ b\*N.*b = ([\d.]+) \+- ([\d.]+) us/mount", out)
    per_step = re.findall(r"slave time = .*c = ([\d.]+) \+- ([\d.]+) ns/step", out)
    assert len(per_mount) == 2 and len(per_step) == 2
    for b, sb in [(b, sb) for _, b, sb in per_slave] + per_mount + per_step:
        assert float(b) > 0 and float(b) > 3 * float(sb)
        # the README quotes each slope and its standard error as printed
        assert f"{b} +- {sb}" in readme, b
    # the slave read at 5,000 mounts of one peer group, as the README's table gives it
    p50 = number(r"\n\s+5000\s+slave\s+5021\s+121\s+\d+\s+5001\s+([\d.]+) /", out)
    assert f"{p50:.1f}" in readme and p50 > 10 * number(
        r"\n\s+5000\s+host\s+5021\s+118\s+\d+\s+0\s+([\d.]+) /", out
    )
