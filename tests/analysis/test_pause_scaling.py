"""calibration/analysis/pause_scaling/: level 2 against the 16-vCPU VM's pause_bench (held-out
4-16 threads) and its 120-pair hand-off matrix, with explicit tolerances on what was measured,
and the figures the data folder's README reports."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from analysis_runner import REPO, number, run

README = REPO / "calibration/data/devvm-16cpu-intel-xeon-f6m207/README.md"
#: held-out error factors (mean |log(model / measured)| over 4, 8, 16 threads) as measured,
#: (version, lock) -> (p50, acq/s); a test fails if one grows by more than 15 %: a guard, not a
#: claim that the model is right (the README says where it is not). As measured since level 2
#: answers an upgrade of a shared copy after the point's invalidations (cohsim/lock/line.py):
#: the machine's ttas p50 grew from x1.65 (its releaser's re-take now waits for the waiters'
#: copies to be invalidated), the fit's ticket came closer (x1.74 / x1.70, Markov x1.89 / x1.74,
#: with the fit's same_llc_ns at 176.7 then)
MEASURED_ERROR = {
    "des": {
        ("machine", "ticket"): (1.68, 1.77),
        ("machine", "ttas"): (2.15, 1.53),
        ("fit", "ticket"): (1.47, 1.43),
        ("fit", "ttas"): (5.00, 2.48),
    },
    "markov": {
        ("machine", "ticket"): (1.56, 1.65),
        ("fit", "ticket"): (1.46, 1.43),
    },
}
SLACK = 1.15


def _errors(out: str) -> dict[tuple[str, str], tuple[float, float]]:
    rows = re.findall(
        r"^(machine|fit)\s+(ttas|ticket)\s+error p50 x([\d.]+) .* acq/s x([\d.]+)", out, re.M
    )
    return {(v, lock): (float(a), float(b)) for v, lock, a, b in rows}


def _check_heldout(model: str) -> str:
    out = run("pause_scaling.heldout", model)
    errors = _errors(out)
    assert len(errors) == 4
    for key, (p50, acq) in MEASURED_ERROR[model].items():
        assert errors[key][0] <= p50 * SLACK and errors[key][1] <= acq * SLACK, key
    # the fit on 1-2 threads lands twice the pairs' 51.2 ns (fit_lock's DES, seed 0): 112.2,
    # 176.7 before an upgrade of a shared copy waited for the point's invalidations
    llc = number(r"same_llc_ns ([\d.]+) \+-", out)
    assert 95 <= llc <= 130
    # ticket: the measured hand-off line (data only) and the model's per-waiter slopes
    a, b = (
        number(p, out) for p in (r"measured 4..16: (\d+) \+", r"measured 4..16: \d+ \+ ([\d.]+)")
    )
    assert (a, b) == (372, 8.6)
    machine = number(r"hand-off line, machine\s+4,8,16: -?\d+ \+ ([\d.]+)", out)
    fit = number(r"hand-off line, fit\s+4,8,16: -?\d+ \+ ([\d.]+)", out)
    # the fit's slope 2.5x the machine's (53.2 / 21.2; 4x, 86.0, with the fit of 176.7 ns)
    assert b < machine / 2 and machine < fit / 2
    return out


def test_heldout_markov_within_measured_error() -> None:
    _check_heldout("markov")


@pytest.mark.slow
def test_heldout_des_within_measured_error_and_as_the_readme_says() -> None:
    out = _check_heldout("des")
    readme = README.read_text()
    for key, (p50, acq) in _errors(out).items():
        assert f"p50 x{p50:.2f}" in readme and f"acq/s x{acq:.2f}" in readme, key
    assert "same_llc_ns 112.2 +- 23.7" in readme
    assert "372 + 8.6 ns x" in readme and "84 + 21.2 ns" in readme and "53 + 53.2" in readme
    # the model's ttas never shares (fairness 0) where pause_bench shares with falling odds
    fair = re.findall(
        r"^(?:machine|fit)\s+ttas\s+(?:4|8|16) .* ([\d.]+)/([\d.]+)\s+x\S+\s*$", out, re.M
    )
    assert fair and all(float(m) == 0.0 and float(x) > 0 for m, x in fair)
    race = re.search(
        r"loop as think_ns: 2: ([\d.]+)\s+4: ([\d.]+)\s+8: ([\d.]+)\s+16: ([\d.]+)", out
    )
    assert race and race.groups() == ("1.000", "0.954", "0.000", "0.000")


def test_pairs_matrix_uniform_with_two_alternating_pairs_as_the_readme_says() -> None:
    out = run("pause_scaling.pairs")
    readme = README.read_text()
    # the machine file's same_llc_ns is the matrix's median (p50 less the clock pair)
    assert "class same_llc: 120 pairs, model 51.2 ns, measured median 51.2 ns" in out
    spread = number(r"per-pair median \|model - measured\| / measured: ([\d.]+) %", out)
    assert spread <= 25 and f"{spread:.1f} %" in readme
    # no distance pattern, a weak per-vCPU effect
    corr = number(r"with \|i - j\|: ([+-][\d.]+)", out)
    r2 = number(r"R\^2 ([\d.]+)", out)
    assert abs(corr) < 0.2 and r2 < 0.3
    assert f"{corr:+.2f}" in readme and f"R^2 {r2:.2f}" in readme
    # exactly two pairs alternate strictly above the one-thread loop's rate: 0,4 and 3,8
    alternating = re.findall(r"^alternating pair (\d+),(\d+)", out, re.M)
    assert alternating == [("0", "4"), ("3", "8")]


def test_pairs_writes_the_c2c_matrix_form(tmp_path: Path) -> None:
    from cohsim.machine.matrix import read_matrix

    path = tmp_path / "m.csv"
    run("pause_scaling.pairs", "--out", path)
    m = read_matrix(path)
    assert m.shape == (16, 16)
    assert abs(m[4, 0] - (173.0 - 26.7)) < 2  # pair 0,4: p50 less its clock pair


MCS_README = REPO / "calibration/data/devvm-16cpu-intel-xeon-f6m207/pause-mcs/README.md"


@pytest.mark.parametrize("model", ["des", "markov"])
def test_level_2s_mcs_against_pause_bench_as_the_readme_says(model: str) -> None:
    """Level 2's classic MCS lock is too fast against pause_bench's on the 16-vCPU VM, the p50
    wait by x0.56-0.65 at 2-16 threads; its qspinlock faster still; each row in the README."""
    out = run("pause_scaling.mcs", model)
    rows = [
        (m.group(1), m.group(2), *re.findall(r"x([\d.]+)", m.group(3)))
        for m in re.finditer(r"^(mcs|qspinlock)\s+(\d+)(.*)$", out, re.M)
    ]
    assert len(rows) == 8
    p50 = {(lock, int(n)): float(q) for lock, n, _, q in rows}
    for n in (2, 4, 8, 16):
        assert 0.5 < p50[("mcs", n)] < 0.7 and p50[("qspinlock", n)] < p50[("mcs", n)]
    if model == "des":
        readme = MCS_README.read_text()
        for line in out.splitlines()[2:]:
            assert " ".join(line.split()) in " ".join(readme.split()), line
