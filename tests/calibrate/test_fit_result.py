"""result: a fit's frozen result, read, applied and written back, and loaded by predictions
without the estimator that made it."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest
from conftest import REPO

from cohsim.calibrate.fitparams import KERNEL_PARAMS
from cohsim.calibrate.fitresult import FitResult, load_fit
from cohsim.kernel.costs import load_kernel

DEVVM = "devvm-2cpu-intel-xeon-f6m167"
FIT = REPO / "calibration" / "fits" / f"{DEVVM}.json"

#: the estimator side of cohsim.calibrate: bench data, the mount_bench simulation, the fits'
#: phases and the held-out checks; a prediction imports none of them
ESTIMATOR = {
    "calibration",
    "heldout",
    "hostterms",
    "kernelfit",
    "lockfit",
    "measured",
    "measuredruns",
    "mountreplay",
    "noise",
    "surface",
}
#: the result side: what loading and applying a fit needs
RESULT = {"__init__", "fitresult", "fitjson", "fitparams", "committed", "fitplot"}


def test_every_calibrate_module_is_on_one_side():
    """A new module under cohsim/calibrate/ says which side it is on (and so whether a
    prediction may import it)."""
    found = {p.stem for p in (REPO / "cohsim" / "calibrate").glob("*.py")}
    assert found == ESTIMATOR | RESULT and not ESTIMATOR & RESULT


def test_a_prediction_imports_no_estimator_module():
    """`import cohsim.predict`, and a prediction's fit loaded and applied (the committed
    default and a named file), leave every estimator module unimported."""
    code = f"""
import json, sys
import cohsim.predict
from cohsim.machine.catalog import Catalog
from cohsim.kernel.costs import load_kernel
from cohsim.predict.target import apply_calibration
for name in ("m7a.24xlarge", "{DEVVM}"):
    machine = Catalog().get(name)
    for spec in (None, {str(FIT)!r}):
        assert apply_calibration(spec, machine, load_kernel(), 2, 0).draws
print(json.dumps(sorted(m for m in sys.modules if m.startswith("cohsim.calibrate"))))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    loaded = {
        m.removeprefix("cohsim.calibrate").lstrip(".") or "__init__" for m in json.loads(out.stdout)
    }
    assert "fitresult" in loaded
    assert loaded & ESTIMATOR == set(), f"a prediction imports {sorted(loaded & ESTIMATOR)}"


@pytest.fixture(scope="module")
def fit() -> FitResult:
    return load_fit(FIT)


def test_the_result_is_frozen_and_round_trips(fit):
    with pytest.raises(dataclasses.FrozenInstanceError):
        fit.instance = "elsewhere"  # type: ignore[misc]
    again = FitResult.from_dict(fit.to_dict())
    assert again.to_dict() == fit.to_dict() == json.loads(FIT.read_text())
    assert again.params == fit.params and again.settings == fit.settings


def test_the_result_applies_to_a_kernel_and_its_machine(fit):
    base = load_kernel()
    fitted = fit.kernel_params(base)
    assert fitted.rcu_exp_base_ns == pytest.approx(fit.params["rcu_exp_base_ns"])
    draws = fit.sample_kernels(base, 4, seed=0)
    assert draws == fit.sample_kernels(base, 4, seed=0)  # same seed, same draws
    for k in draws:
        lo, hi = fit.bounds["rcu_exp_base_ns"]
        assert lo <= k.rcu_exp_base_ns <= hi
    host = fit.host_kernel(fitted)
    assert host.wake_ns == pytest.approx(fit.params["wake_ns"])
    m = fit.machine()
    assert m.name == DEVVM and m.coherence.same_llc_ns == pytest.approx(fit.params["same_llc_ns"])
    assert 0.0 < fit.misfit_sd() < 1.0


def test_the_report_says_each_parameter_and_what_was_fixed(fit):
    lines = fit.report().splitlines()
    assert len(lines) == len(fit.parameters) + len(fit.fixed)
    for name in KERNEL_PARAMS:
        assert any(line.split()[0] == name and "+/-" in line for line in lines)
    assert all(line.startswith("  fixed ") for line in lines[len(fit.parameters) :])
