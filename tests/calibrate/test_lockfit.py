"""lockfit: the cache-line transfer fitted to pause_bench runs, the PAUSE measured."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import DATA

from cohsim.calibrate.lockfit import LLC_BOUNDS, fit_lock
from cohsim.calibrate.measuredruns import load_bench
from cohsim.errors import CohsimError
from cohsim.machine.catalog import Catalog

DEVVM = "devvm-2cpu-intel-xeon-f6m167"


@pytest.fixture(scope="module")
def pause():
    return load_bench([DATA / DEVVM / "pause"]).pause


def test_fits_the_transfer_and_measures_the_pause(pause):
    fit = fit_lock(Catalog().get(DEVVM), pause, 0)
    assert fit.names == ["same_llc_ns"] and fit.cov.shape == (1, 1)
    lo, hi = LLC_BOUNDS
    llc = fit.parameters["same_llc_ns"]
    assert lo < llc.value < hi and llc.stderr > 0 and llc.bounds == LLC_BOUNDS
    pauses = {r.repeat: r.pause_ns for r in pause}
    measured = fit.parameters["pause_ns"]
    assert measured.value == pytest.approx(sum(pauses.values()) / len(pauses))
    multi = [r for r in pause if r.threads >= 2]
    assert len(fit.residuals) == 2 * len(multi)
    assert {r["metric"] for r in fit.residuals} == {"p50_ns", "acquisitions_per_s"}
    assert "llc_service_ns" in fit.fixed and fit.optimizer["residuals"] == len(fit.residuals)


def test_one_thread_runs_cannot_fit_the_transfer(pause):
    one = [dataclasses.replace(r) for r in pause if r.threads == 1]
    with pytest.raises(CohsimError, match="no run with 2 or more threads"):
        fit_lock(Catalog().get(DEVVM), one, 0)
