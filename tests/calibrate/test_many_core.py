"""The model against the 16-vCPU host (calibration/data/devvm-16cpu-intel-xeon-f6m207): its
own 1-2 worker fit and the 2-vCPU fit's kernel, predicting 16-200 workers there.

The tolerances are what was measured (calibration/data/devvm-16cpu-intel-xeon-f6m207/README.md,
"What the model predicts here", `python -m calibration.reports.many_core --transfer`) with a
margin for the simulation's seeds: they hold the model where it is, misses included, so a
change that moves these predictions shows here. They are not the 15 % the held-out checks aim
for: common-parent at 16 one-container workers without the mountinfo sample is +20 % (within
the host) and +51 % (the 2-vCPU kernel), lowerdir-plus -19 and -37 % (README there).
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys

import pytest
from conftest import DATA, REPO

from cohsim.calibrate import (
    Checked,
    check_runs,
    load_bench,
    load_fit,
    transfer_kernel,
)
from cohsim.errors import CohsimError

HOST = "devvm-16cpu-intel-xeon-f6m207"
HOST_DATA = DATA / HOST
FITS = REPO / "calibration" / "fits"


@pytest.fixture(scope="module")
def fits():
    host = load_fit(FITS / f"{HOST}.json")
    two = load_fit(FITS / "devvm-2cpu-intel-xeon-f6m167.json")
    return host, transfer_kernel(host, two), two


def test_transfer_takes_the_kernel_and_keeps_the_host(fits):
    host, moved, two = fits
    for name in ("ser_bind", "ser_overlay", "ser_umount", "rcu_exp_base_ns"):
        assert moved.params[name] == two.params[name]
    for name in ("wake_ns", "same_llc_ns", "pause_ns"):
        assert moved.params[name] == host.params[name]
    assert moved.think_ns == host.think_ns and moved.instance == HOST
    assert moved.misfit_sd() == two.misfit_sd()  # the source fit's own error widens intervals
    assert host.params["ser_bind"] != two.params["ser_bind"]  # the host fit is untouched
    assert set(moved.cov["names"]) == set(host.cov["names"])
    assert len(moved.sample_kernels(None, 2, 0)) == 2


def test_transfer_needs_the_same_kernel_model(fits):
    host, _, two = fits
    other = dataclasses.replace(transfer_kernel(host, two), kernel_name="linux-9.99")
    with pytest.raises(CohsimError, match="kernel 'linux-9.99'"):
        transfer_kernel(host, other)


def test_runs_know_whether_mount_bench_read_mountinfo():
    plain = load_bench([HOST_DATA / "burst" / "no-mountinfo-reads"]).mount
    sampled = load_bench([HOST_DATA / "burst" / "16-100-workers"]).mount
    assert not any(r.sampled for r in plain) and all(r.sampled for r in sampled)
    assert all(r.sample_ns == 0 for r in plain)


def _sixteen(strategy: str) -> list:
    runs = load_bench(
        [HOST_DATA / "burst" / "no-mountinfo-reads", HOST_DATA / "burst" / "16-100-workers"]
    )
    return [r for r in runs.mount if r.key == (strategy, 16, 10)]


#: (fit, strategy, mountinfo sampled) -> predicted / measured - 1 of the worker time per
#: sequence, 16 one-container workers x 10 layers, at the fits' nominal points (samples=0; the
#: fits' own seeds): as measured since level 2 answers an upgrade of a shared copy after the
#: point's invalidations (cohsim/lock/line.py: mount_lock's line 12 ns more a take here,
#: the seqcount readers' phase 1,000 -> 814 ns), the fits not made again; session 35's in the
#: comments; since this host's machine file prices its list walks as its ring measured them
#: (cohsim.kernel.walk) and its fit was made again with its untraced wake-up pace (1,844 ns,
#: wake-pace/ and wake-pace/busy/; the traced 6.0 us before), the earlier figures in the
#: comments. +/- 0.15, though one nominal run is a
#: single trajectory: on 16 CPUs a 0.1 ns
#: change to the writer's line cost alone moved per-layer (sampled) from +0.40 to -0.13
#: (tests/calibrate/test_many_core_cpus.py), so these pin where the model is, not its spread
_MEASURED = {
    ("host", "per-layer", False): +0.229,  # +0.067 walks alone; +0.002 before
    ("host", "per-layer", True): -0.086,  # +0.312 walks alone; -0.099 before
    ("host", "common-parent", False): +0.455,  # +0.259 walks alone; +0.543 before
    ("host", "common-parent", True): +0.143,  # +0.149 walks alone; +0.264 before
    ("host", "lowerdir-plus", False): +0.160,  # +0.188 walks alone; +0.188 before
    ("host", "lowerdir-plus", True): +0.161,  # +0.033 walks alone; +0.033 before
    ("transfer", "per-layer", False): +0.054,  # -0.018 walks alone; +0.014 before
    ("transfer", "per-layer", True): +0.229,  # -0.078 walks alone; +0.111 before
    ("transfer", "common-parent", False): +0.446,  # +0.779 walks alone; +0.763 before
    ("transfer", "common-parent", True): +0.216,  # +0.291 walks alone; +0.292 before
    ("transfer", "lowerdir-plus", False): -0.009,  # +0.094 walks alone; +0.094 before
    ("transfer", "lowerdir-plus", True): -0.032,  # -0.050 walks alone; -0.050 before
}
SIXTEEN = {k: (v - 0.15, v + 0.15) for k, v in _MEASURED.items()}


@pytest.mark.parametrize("which", ["host", "transfer"])
def test_sixteen_one_container_workers(fits, which):
    fit = fits[0] if which == "host" else fits[1]
    for strategy in ("per-layer", "common-parent", "lowerdir-plus"):
        checked = check_runs(fit, _sixteen(strategy), samples=0)
        assert [(c.sampled, c.containers, c.runs) for c in checked] == [(False, 1, 3), (True, 1, 3)]
        for c in checked:
            assert isinstance(c, Checked)
            lo, hi = SIXTEEN[(which, strategy, c.sampled)]
            assert lo < c.error() < hi, (which, strategy, c.sampled, c.error())


def _summaries(group: str) -> list[tuple[float, float, float]]:
    """(median abs. error %, worst error %, interval coverage %) of the report's summary lines
    for `group`: within the host, then the 2-vCPU fit's kernel."""
    cmd = [sys.executable, "-m", "calibration.reports.many_core", "--transfer", "--groups", group]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr
    pattern = r"median \|error\| ([\d.]+)%, worst ([+-][\d.]+)%.*?coverage \d+/\d+ runs \((\d+)%\)"
    return [(float(a), float(b), float(c)) for a, b, c in re.findall(pattern, proc.stdout)]


#: group -> per fit (within the host, the 2-vCPU kernel): the summary as measured (median abs.
#: error %, worst error %, coverage %; README "What the model predicts here"). The test holds
#: the median within 5 points above it, the worst within 15, the coverage within 10 below
FULL = {
    # session 38: this host's list walks, its fit made again with its untraced wake-up pace
    "mount": [(36.8, +94.3, 70), (13.4, +97.8, 86)],  # 35: 18.2/+107.3/82, 24.2/+101.4/74
    "burst": [(21.3, +91.5, 76), (21.7, +88.8, 88)],  # 35: 32.7/+205.7/61, 39.6/+113.1/64
    "no-reads": [(44.1, +153.5, 58), (38.4, +97.8, 75)],  # 35: 56.6/+134.9/67, 59.8/+154.4/50
}


@pytest.mark.slow
@pytest.mark.parametrize("group", list(FULL))
def test_the_full_grid_as_measured(group):
    got = _summaries(group)  # 4-8 min per group on 2 CPUs
    assert len(got) == 2
    for (median, worst, coverage), (m0, w0, c0) in zip(got, FULL[group], strict=True):
        assert median < m0 + 5, (group, median)
        assert abs(worst) < abs(w0) + 15, (group, worst)
        assert coverage > c0 - 10, (group, coverage)
