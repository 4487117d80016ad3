"""Uncertainty: medians over replicates with a 90 % interval from the drawn ones (their range
when there are too few), widened by a fit's misfit."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from scipy.special import stdtrit

from cohsim.kernel.costs import load_kernel
from cohsim.predict import (
    MISFIT_LEVEL,
    burst_workload,
    predict,
    resolve_calibration,
    resolve_machine,
    run_workload,
)
from cohsim.predict.intervals import Interval, interval, method, summarise, widen

SMALL = dict(containers=12, layers=4, replicates=2, jobs=1)


def test_with_one_draw_the_summary_is_the_median_with_the_range():
    per = [np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 6.0])]
    values = [{"failures": 0.0}, {"failures": 2.0}]
    launch, extra = summarise(per, values)
    assert launch["max"] == Interval(4.5, 3.0, 6.0, "s")
    assert extra["failures"] == Interval(1.0, 0.0, 2.0, "containers")
    assert method(2)["level"] is None and "range of 2 replicates" in method(2)["method"]


def test_with_draws_the_interval_is_a_lognormal_prediction_interval():
    """From 2 drawn replicates on: exp(mean +- t(n-1) sd sqrt(1 + 1/n)) of the drawn values'
    logarithms (replicate 0, the nominal one, is not a draw), stretched to hold them all."""
    xs = [1.0, 0.9, 1.1, 1.3]
    got = interval(xs, "s")
    ys = np.log(xs[1:])
    t = stdtrit(2, 0.95)
    half = t * ys.std(ddof=1) * math.sqrt(1 + 1 / 3)
    assert got.value == pytest.approx(np.median(xs))
    assert got.low == pytest.approx(math.exp(ys.mean() - half))
    assert got.high == pytest.approx(math.exp(ys.mean() + half))
    assert method(4)["level"] == 0.9 and "3 drawn replicates" in method(4)["method"]
    # more draws of the same spread: a narrower interval (t shrinks), never narrower than them
    many = interval([1.0, 0.9, 1.1, 1.3] * 4, "s")
    assert many.high - many.low < got.high - got.low
    assert many.low <= 0.9 and many.high >= 1.3
    # a constant every replicate adds (a launch's base) is taken off, and the bound keeps it
    shifted = interval([x + 0.5 for x in xs], "s", offset=0.5)
    assert shifted.low == pytest.approx(got.low + 0.5) and shifted.high == pytest.approx(
        got.high + 0.5
    )
    # a zero (no mount phase) keeps a linear interval, never below 0
    flat = interval([0.0, 0.0, 1.0, 2.0], "s")
    assert flat.low == 0.0 and flat.high > 2.0


def test_widening_without_misfit_changes_nothing():
    m = {"max": Interval(2.0, 1.0, 3.0, "s")}
    la = {"max": Interval(5.0, 4.0, 6.0, "s")}
    assert widen(la, m, 0.0) == (la, m)
    wl, wm = widen(la, m, 0.2)
    f = math.exp(statistics.NormalDist().inv_cdf(0.5 + MISFIT_LEVEL / 2) * 0.2)
    assert wm["max"].high == pytest.approx(3.0 * f) and wm["max"].low == pytest.approx(1.0 / f)
    assert wl["max"].high - 6.0 == pytest.approx(wm["max"].high - 3.0)


def test_intervals_carry_the_calibrations_misfit(catalog):
    """With the committed kernel fit, the mount phase's intervals are the replicates' range
    widened by the fit's in-sample scatter (a lognormal factor covering 90 % of it), and each
    launch statistic's by the same absolute amount; without a fit they are the range alone."""
    from cohsim.calibrate import default_fit

    fit = default_fit("m7a.24xlarge")
    res = [
        r["log_residual"]
        for r in fit.residuals_
        if r.get("kind") == "kernel" and r["metric"] == "stride_ns"
    ]
    sd = math.sqrt(sum(x * x for x in res) / len(res))
    assert fit.misfit_sd() == pytest.approx(sd) and 0.05 < sd < 0.5
    bare = predict(arch="chiplet", calibration="none", **SMALL)
    assert bare.misfit_sd == 0.0 and bare.to_dict()["model_misfit"]["log_sd"] == 0.0
    fitted = predict(arch="chiplet", **SMALL)
    assert fitted.misfit_sd == pytest.approx(sd)
    assert fitted.to_dict()["model_misfit"]["log_sd"] == round(sd, 6)
    # the same runs without the widening: predict's own path with misfit_sd left at 0
    machine, _ = resolve_machine(catalog, arch="chiplet", instance=None)
    machine, kernel, draws, _, misfit = resolve_calibration(None, machine, load_kernel(), 1, 0)
    assert misfit == fitted.misfit_sd
    narrow = run_workload(
        machine,
        burst_workload("per-layer", 12, 4),
        kernel=kernel,
        kernel_samples=draws,
        replicates=2,
        jobs=1,
        layers=4,
    )
    f = math.exp(statistics.NormalDist().inv_cdf(0.95) * sd)
    for k, m in fitted.mount_s.items():
        m0, l0, l1 = narrow.mount_s[k], narrow.launch_s[k], fitted.launch_s[k]
        assert m.value == m0.value and l1.value == l0.value
        assert m.low == pytest.approx(m0.low / f) and m.high == pytest.approx(m0.high * f)
        assert l1.high - l0.high == pytest.approx(m.high - m0.high)
        assert l0.low - l1.low == pytest.approx(m0.low - m.low)


def test_the_t_quantile_table_is_scipys_to_the_last_bit():
    """intervals' table of Student's t quantiles (a prediction does not import scipy) is
    scipy.special.stdtrit's answer exactly, and past the table it asks scipy."""
    from cohsim.predict.intervals import LEVEL, T_QUANTILES, t_quantile

    for df in range(1, len(T_QUANTILES) + 5):
        assert t_quantile(df) == float(stdtrit(df, 0.5 + LEVEL / 2))
