"""Uncertainty: how replicates become a value with an interval.

The simulation is run several times (replicates); each reported statistic is the median over
replicates with the replicates' range as its interval. Replicate 0 uses the fitted parameters;
the others use parameter sets drawn from the calibration's covariance (and their own seeds),
so the interval carries the fit's uncertainty. Without a fit, it only covers the simulation's
own randomness and says so.

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


def summarise(
    per: list[np.ndarray], values: list[dict[str, float]]
) -> tuple[dict[str, Interval], dict[str, Interval]]:
    """The latency statistics (`STATS`, in seconds) over each replicate's per-container values
    in `per`, and each of `values`' keys (one dict per replicate), as medians over replicates
    with the replicates' range."""
    launch = {}
    for s in STATS:
        q = {"p50": 50, "p95": 95, "p99": 99, "max": 100}[s]
        xs = [float(np.percentile(p, q)) for p in per]
        launch[s] = Interval(float(np.median(xs)), min(xs), max(xs), "s")
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
