"""kernelfit: the kernel fit's settings checked and its result's shape."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import DATA

from cohsim.calibrate.fitparams import KERNEL_PARAMS
from cohsim.calibrate.hostterms import BenchSim, measure_bench_terms
from cohsim.calibrate.kernelfit import KernelSettings, fit_kernel
from cohsim.calibrate.measuredruns import load_bench
from cohsim.errors import CohsimError
from cohsim.kernel.costs import load_kernel
from cohsim.kernel.linecosts import LineCosts
from cohsim.machine.catalog import Catalog

DEVVM = "devvm-2cpu-intel-xeon-f6m167"
SETTINGS = KernelSettings(
    free=("ser_umount",),
    starts=1,
    max_nfev=2,
    seed_sets=2,
    radius=0.15,
    seed=0,
    progress=False,
)


@pytest.fixture(scope="module")
def setup():
    runs = [
        r
        for r in load_bench([DATA / DEVVM / "mount"]).mount
        if r.strategy == "per-layer" and r.layers == 1 and r.workers in (1, 2) and r.repeat < 2
    ]
    machine = Catalog().get(DEVVM)
    costs = LineCosts(machine, seed=0)
    think, extra = measure_bench_terms(machine, load_kernel(), costs, runs, 1, 0)
    return BenchSim(machine, costs, think, extra, containers=1, seed=0, seeds=1), runs


def test_unknown_free_parameter(setup):
    bench, runs = setup
    bad = dataclasses.replace(SETTINGS, free=("nope",))
    with pytest.raises(CohsimError, match="unknown kernel parameter 'nope'"):
        fit_kernel(bench, load_kernel(), runs, bad)


def test_one_free_parameter(setup):
    bench, runs = setup
    fit = fit_kernel(bench, load_kernel(), runs, SETTINGS)
    assert fit.names == ["ser_umount"] and fit.cov.shape == (1, 1)
    p = fit.parameters["ser_umount"]
    assert p.low <= p.value <= p.high and p.stderr > 0 and p.group == "kernel"
    assert np.all(np.isfinite(fit.cov))
    # the others are kept at the model file's split, and say so
    assert {n for n in KERNEL_PARAMS if n != "ser_umount"} <= set(fit.fixed)
    assert fit.optimizer["residuals"] == len(fit.residuals) > 0
    assert {r["kind"] for r in fit.residuals} == {"kernel"}
