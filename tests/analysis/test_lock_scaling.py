"""calibration/analysis/lock_scaling/compare.py: level 2 against MCTOP's lock throughput curves
(calibration/data/reference/lock-scaling/), with an explicit tolerance on the error, and the
figures its README reports."""

from __future__ import annotations

import re

import pytest
from analysis_runner import REPO, number, run

from calibration.analysis.lock_scaling import compare
from cohsim.lock.handoff import simulate

README = REPO / "calibration/data/reference/lock-scaling/README.md"
#: tolerances on the error factor (mean |log(model / measured)|), per model: (median, worst,
#: worst MCS curve) at the measured error (Markov x1.25, x1.79, x1.36; DES x1.49, x1.98,
#: x1.55; MCS held to level 2's classic mcs) plus 10-15 %; a guard against regressions, not a
#: fit
TOLERANCE = {"markov": (1.45, 2.0, 1.65), "des": (1.6, 2.3, 1.8)}


def _check(model: str) -> None:
    out = run("lock_scaling.compare", model)
    curves = re.findall(r"^(\w+)\s+(TTAS|TICKET|MCS)\s+error x([\d.]+)", out, re.M)
    assert len(curves) == 12
    median = number(r"median error x([\d.]+)", out)
    worst = number(r"worst x([\d.]+)", out)
    med_max, worst_max, mcs_max = TOLERANCE[model]
    assert median <= med_max and worst <= worst_max
    assert all(float(e) <= mcs_max for _, lock, e in curves if lock == "MCS")
    readme = README.read_text()
    name = {"markov": "Markov", "des": "DES"}[model]
    assert f"{name}: median x{median:.2f}, worst x{worst:.2f}." in readme
    table = {line.split("|")[1].split()[0]: line for line in readme.splitlines() if "| x" in line}
    for tag, lock, e in curves:
        cells = table[tag].split("|")[2:5]
        cell = cells[("TTAS", "TICKET", "MCS").index(lock)].split("/")
        assert cell[0 if model == "markov" else 1].strip() == f"x{e}", (tag, lock)


def test_markov_against_mctop_within_tolerance_and_as_the_readme_says() -> None:
    _check("markov")


@pytest.mark.slow
def test_des_against_mctop_within_tolerance_and_as_the_readme_says() -> None:
    _check("des")


def test_des_ttas_siblings_do_not_keep_the_lock_in_their_core():
    """xeon (2 x 10 cores), 40 threads: every SMT sibling spins. The writer's core owns the
    line only once the point has invalidated the other copies, when the point also starts the
    next queued request, so neither the releaser nor its sibling re-takes the lock ahead of
    the queue (cohsim.lock.line). Before, threads 19 and 39 (one core) held all 639."""
    m, _ = compare.build("xeon")
    r = simulate(
        m,
        40,
        lock="ttas",
        cs_ns=compare.CRITICAL_CYCLES,
        think_ns=compare.THINK_CYCLES,
        params=compare.lock_params("xeon", m),
        seed=1,
        acquisitions=600,
        record=True,
    )
    held: dict[int, int] = {}
    for t, _a, _b in r.record.holds:
        held[t] = held.get(t, 0) + 1
    assert len(held) == 40 and max(held.values()) < 0.1 * len(r.record.holds)
