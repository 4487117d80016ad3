"""calibration/analysis/ns_copy/fit.py on the committed ns_bench run: a positive cost per
mount, and the figures its data folder's README reports."""

from __future__ import annotations

import re

from analysis_runner import REPO, number, run

README = REPO / "calibration/data/devvm-2cpu-amd-epyc-f25m1/ns-copy/README.md"


def test_fit_per_mount_cost_is_positive_and_as_the_readme_says() -> None:
    out = run("ns_copy.fit")
    readme = README.read_text()
    fits = re.findall(
        r"(newns|userns)\s+(\w+)\s+a = +(-?[\d.]+) \+- +([\d.]+) us\s+"
        r"b = ([\d.]+) \+- ([\d.]+) us/mount",
        out,
    )
    assert len(fits) == 4
    for variant, step, _a, _sa, b, sb in fits:
        assert float(b) > 0 and float(b) > 3 * float(sb)
        # the README quotes each per-mount cost and its standard error as printed
        assert f"{b} +- {sb}" in readme, (variant, step)
    p50 = number(r"newns\s+10000\s+10021\s+([\d.]+) /", out)
    assert f"{p50:.1f}" in readme


RSLAVE = REPO / "calibration/data/devvm-2cpu-amd-epyc-f25m1/ns-rslave"


def test_rslave_fit_per_variant_as_the_readme_says() -> None:
    out = run("ns_copy.fit", RSLAVE / "ns_bench.csv")
    readme = (RSLAVE / "README.md").read_text()
    fits = re.findall(
        r"(newns|userns|shared)\s+(\w+)\s+a = +(-?[\d.]+) \+- +([\d.]+) us\s+"
        r"b = ([\d.]+) \+- ([\d.]+) us/mount \(([\d.]+) \+- ([\d.]+) ns\)",
        out,
    )
    # per variant: the copy, runc's rslave, the teardown
    assert [(v, s) for v, s, *_ in fits] == [
        (v, s)
        for v, t in (
            ("newns", "umount_scratch"),
            ("userns", "umount_oldroot"),
            ("shared", "umount_scratch"),
        )
        for s in ("unshare", "rslave", t)
    ]
    for variant, step, _a, _sa, b, sb, b_ns, sb_ns in fits:
        assert float(b) > 0 and float(b) > 3 * float(sb)
        if step == "rslave":  # quoted in ns per mount
            assert f"{b_ns} +- {sb_ns}" in readme, (variant, step)
        else:
            assert f"{b} +- {sb}" in readme, (variant, step)
    rslave = {v: float(b_ns) for v, s, *_x, b_ns, _s in fits if s == "rslave"}
    # the copies that are peers of the parent's cost more to make slaves than private ones
    assert rslave["shared"] > rslave["newns"] and rslave["shared"] > rslave["userns"]
