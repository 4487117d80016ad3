"""Uncertainty: how replicates become a value with an interval.

The simulation is run several times (replicates). Replicate 0 uses the nominal parameters (the
fitted ones where a calibration applies, the kernel file's elsewhere); the others use parameter
sets drawn from the calibration's covariance and from the kernel model's priors (the ranges of
what no measurement identifies: cohsim.predict.priors), each with its own seed. Each reported
latency statistic is the median over replicates with, as its interval:

- with at least `MIN_DRAWS` drawn replicates: the `LEVEL` prediction interval for one more
  draw, from the drawn replicates' logarithms (a lognormal spread, Student's t for the few
  draws: mean +- t(n-1) s sqrt(1 + 1/n)), stretched to hold every replicate; with few draws it
  is wide because the spread itself is poorly known, not because the answer is. A launch's
  fixed base (the same in every replicate) is taken off first and added back;
- with fewer: the replicates' range, which is not a 90 % interval (the range of two
  replicates covers about a third of what the priors allow) and says so (`method`).

Failures and the lock-wait fraction keep the replicates' range. Without a fit and with the
priors pinned, the intervals only cover the simulation's own randomness.

With a kernel fit, the mount phase's intervals are then widened by the model's own error on
the fitted host (`Calibration.misfit_sd`: the in-sample scatter of the worker time per
sequence), as a lognormal factor covering `MISFIT_LEVEL` of it; each launch statistic's
interval by the same absolute amount as the mount phase's (the rest of a launch is not
calibrated). The misfit was seen at 1-4 workers on the fitted host; on a larger machine the
model's error may well be larger.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

import numpy as np

STATS = ("p50", "p95", "p99", "max")
MISFIT_LEVEL = 0.9  #: central share of the model's misfit the widened intervals cover
LEVEL = 0.9  #: central share of the drawn replicates' spread a statistic's interval covers
MIN_DRAWS = 2  #: drawn replicates (after the nominal one) needed for a `LEVEL` interval

#: Student's t quantile at 0.5 + LEVEL / 2 for 1, 2, ... degrees of freedom: scipy.special's
#: stdtrit as it answers, to the last bit (tests/predict/test_intervals.py checks), so that a
#: prediction need not import scipy (a third of a second of a fresh process's start)
# fmt: off
T_QUANTILES = (
    6.313751514675037, 2.9199855803537242, 2.3533634348018233, 2.1318467863266495,
    2.0150483733330233, 1.9431802805153042, 1.8945786050900062, 1.8595480375308973,
    1.833112932656237, 1.8124611228116756, 1.7958848187040433, 1.782287555649319,
    1.7709333959868725, 1.761310135774891, 1.753050355692572, 1.7458836762762495,
    1.7396067260750725, 1.7340636066175388, 1.7291328115213682, 1.7247182429207866,
    1.720742902811878, 1.7171443743802424, 1.713871527747048, 1.710882079909428,
    1.7081407612518986, 1.7056179197592727, 1.7032884457221265, 1.7011309342659313,
    1.6991270265334972, 1.697260886593957, 1.6955187825458649, 1.6938887483837102,
    1.6923603090303438, 1.6909242551868546, 1.6895724577802655, 1.6882977141168156,
    1.6870936195962631, 1.6859544601667371, 1.6848751217112248, 1.683851013335652,
    1.682878002132708, 1.6819523574675337, 1.681070703202519, 1.6802299765721167,
    1.6794273926523544, 1.678660413556865, 1.6779267216418607, 1.6772241961243388,
    1.6765508926168535, 1.675905025163097, 1.67528495042491, 1.6746891537260253,
    1.6741162367031004, 1.6735649063521605, 1.673033965289911, 1.6725223030755771,
    1.6720288884609522, 1.6715527624548587, 1.6710930321038946, 1.6706488649046363,
)
# fmt: on


def t_quantile(df: int) -> float:
    """Student's t quantile at 0.5 + LEVEL / 2 with `df` degrees of freedom."""
    if 1 <= df <= len(T_QUANTILES):
        return T_QUANTILES[df - 1]
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.5 + LEVEL / 2))


@dataclass(frozen=True)
class Interval:
    """A value with its interval bounds and unit."""

    value: float
    low: float
    high: float
    unit: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": round(self.value, 6),
            "low": round(self.low, 6),
            "high": round(self.high, 6),
            "unit": self.unit,
        }


def method(replicates: int) -> dict[str, Any]:
    """What the latency intervals of `replicates` replicates are (the result's `interval`)."""
    draws = replicates - 1
    if draws >= MIN_DRAWS:
        t = t_quantile(draws - 1) * math.sqrt(1 + 1 / draws)
        return {
            "level": LEVEL,
            "draws": draws,
            "method": f"{LEVEL:.0%} prediction interval of one more draw from the {draws} drawn "
            f"replicates' logarithms (+- {t:.2f} sd, Student's t), holding every replicate",
        }
    return {
        "level": None,
        "draws": draws,
        "method": f"range of {replicates} replicate{'s' if replicates > 1 else ''} (too few "
        f"draws for a {LEVEL:.0%} interval: give at least {MIN_DRAWS + 1} replicates)",
    }


def interval(xs: list[float], unit: str, offset: float = 0.0) -> Interval:
    """The median of the replicates' values `xs` (xs[0]: the nominal replicate) with the
    interval `method` describes, for the part of each value above `offset` (a constant every
    replicate adds, such as a launch's fixed base: the interval never goes below it)."""
    lo, hi = min(xs), max(xs)
    drawn = np.asarray(xs[1:], dtype=float) - offset
    if len(drawn) >= MIN_DRAWS:
        positive = bool((drawn > 0).all())
        ys = np.log(drawn) if positive else drawn
        t = t_quantile(len(ys) - 1)
        half = t * float(ys.std(ddof=1)) * math.sqrt(1 + 1 / len(ys))
        a, b = float(ys.mean()) - half, float(ys.mean()) + half
        a, b = (math.exp(a), math.exp(b)) if positive else (max(0.0, a), b)
        lo, hi = min(lo, a + offset), max(hi, b + offset)
    return Interval(float(np.median(xs)), lo, hi, unit)


def summarise(
    per: list[np.ndarray], values: list[dict[str, float]], offset: float = 0.0
) -> tuple[dict[str, Interval], dict[str, Interval]]:
    """The latency statistics (`STATS`, in seconds) over each replicate's per-container values
    in `per` (per[0]: the nominal replicate), with `interval`'s intervals above `offset`; and
    each of `values`' keys (one dict per replicate) as medians over replicates with their
    range."""
    launch = {}
    for s in STATS:
        q = {"p50": 50, "p95": 95, "p99": 99, "max": 100}[s]
        launch[s] = interval([float(np.percentile(p, q)) for p in per], "s", offset)
    extra = {}
    for key in values[0]:
        xs = [v[key] for v in values]
        extra[key] = Interval(
            float(np.median(xs)),
            min(xs),
            max(xs),
            "containers" if key == "failures" else "fraction",
        )
    return launch, extra


def widen(
    launch_s: dict[str, Interval], mount_s: dict[str, Interval], misfit_sd: float
) -> tuple[dict[str, Interval], dict[str, Interval]]:
    """The intervals widened by the model's misfit: each mount-phase bound by the lognormal
    factor exp(z misfit_sd) covering `MISFIT_LEVEL`, each launch statistic's bounds by the
    same absolute amount as the mount phase's statistic of the same name."""
    f = math.exp(statistics.NormalDist().inv_cdf(0.5 + MISFIT_LEVEL / 2) * misfit_sd)
    mount = {k: Interval(v.value, v.low / f, v.high * f, v.unit) for k, v in mount_s.items()}
    launch = {
        k: Interval(
            v.value,
            max(0.0, v.low - (mount_s[k].low - mount[k].low)),
            v.high + (mount[k].high - mount_s[k].high),
            v.unit,
        )
        for k, v in launch_s.items()
    }
    return launch, mount
