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


RING_README = REPO / "calibration/data/devvm-2cpu-amd-epyc-f25m1/prop-ring/README.md"


def test_ring_fit_per_peer_slopes_as_the_readme_says() -> None:
    out = run("prop_read.ring")
    readme = RING_README.read_text()
    slopes = re.findall(r"(ring_\w+)\s+medians: .*b = ([\d.]+) \+- ([\d.]+) ns/peer", out)
    both = dict((op, (b, sb)) for op, b, sb in slopes[:8])
    apart = dict((op, (b, sb)) for op, b, sb in slopes[8:])
    assert len(slopes) == 16
    # every mount and unmount walks the destination's peers: a positive, well-resolved slope
    for op in ("ring_bind", "ring_umount", "ring_detach", "ring_move_mount", "ring_detach2"):
        for b, sb in (both[op], apart[op]):
            assert float(b) > 10 * float(sb) and f"{b} +- {sb}" in readme, (op, b)
    # open_tree's growth comes from the source mount's children, not from its peers
    assert float(apart["ring_open_tree"][0]) < 2 < float(both["ring_open_tree"][0])
    assert "{} +- {}".format(*both["ring_open_tree"]) in readme
    extra = re.findall(r"\n  (ring_\w+)\s+(-?[\d.]+) \+- ([\d.]+)", out.split("children of")[-1])
    assert {op: (d, s) for op, d, s in extra}["ring_bind"][0] in readme
