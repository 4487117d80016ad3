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
from scipy.special import stdtrit

STATS = ("p50", "p95", "p99", "max")
MISFIT_LEVEL = 0.9  #: central share of the model's misfit the widened intervals cover
LEVEL = 0.9  #: central share of the drawn replicates' spread a statistic's interval covers
MIN_DRAWS = 2  #: drawn replicates (after the nominal one) needed for a `LEVEL` interval


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
        t = float(stdtrit(draws - 1, 0.5 + LEVEL / 2)) * math.sqrt(1 + 1 / draws)
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
        t = float(stdtrit(len(ys) - 1, 0.5 + LEVEL / 2))
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
