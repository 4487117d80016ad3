"""Uncertainty: how replicates become a value with an interval, from joint draws.

The simulation is run several times (replicates). Replicate 0 uses the nominal parameters (the
fitted ones where a calibration applies, the kernel file's elsewhere); the others use parameter
sets drawn from the calibration's covariance and from the kernel model's priors (the ranges of
what no measurement identifies: cohsim.predict.unknowns), each with its own seed. Each replicate
is one draw of the whole burst (`Draw`): every container's launch and mount phase, from the
same run. Every statistic a prediction reports is read off a draw's containers (`row`): the
launch's and the mount phase's p50, p95, p99 and max, the chance of missing the deadline
(the share of the burst's containers whose launch is past it) and the failures (how many).
Its value is the median over the replicates; its interval runs from the lowest to the
highest it takes over one set of draws (`summarise`):

- the replicates themselves;
- with at least `MIN_DRAWS` drawn replicates, the two ends of the `LEVEL` prediction interval
  of one more draw for the burst's scale: the drawn replicates' launch p99 above the launch's
  fixed base (the same in every replicate), lognormal, Student's t for the few draws (mean +-
  t(n-1) s sqrt(1 + 1/n) of its logarithms). An end beyond the drawn replicates is a draw
  made from the drawn replicate nearest it, every container's launch above the base and
  mount phase scaled by the one factor that takes its p99 there (`extremes`). With few draws
  the interval is wide because the spread itself is poorly known, not because the answer is,
  and t's tails are unbounded where the priors are not (3 draws: +- 3.37 sd of the logarithm,
  a factor of hundreds on a small time above the base). So an end is bounded by the priors'
  corners where they were run (`corners`: replicate 0 with every drawn prior at the end that
  makes a launch faster, and at the end that makes it slower, cohsim.predict.unknowns.corner):
  an end past a corner is that corner's run (`bounded`);
- with fewer draws, the replicates alone: their range, which is not a 90 % interval (the range
  of two replicates covers about a third of what the priors allow) and says so (`method`).

With a kernel fit, every draw of that set then also counts with each container's mount phase
scaled down and up by the model's own error on the fitted host (`FitResult.misfit_sd`: the
in-sample scatter of the worker time per sequence), as a lognormal factor covering
`MISFIT_LEVEL` of it, and its launch moved by the same amount (the rest of a launch is not
calibrated; `widened`). The misfit was seen at 1-4 workers on the fitted host; on a larger
machine the model's error may well be larger. Without a fit and with the priors pinned, the
intervals only cover the simulation's own randomness.

Why joint: every bound is the same order statistic (the lowest, or the highest) of each
statistic over the same draws, and each draw's statistics are ordered (its p50 <= p95 <= p99
<= max; each container's mount phase lies within its launch, so every quantile of the mount
phase is at most the launch's). So the bounds are ordered as the values are: across the
quantiles, and the mount phase's below the launch's. And the chance of missing the deadline
comes from the same draws as the launch: its high end is zero exactly when the launch max's
high end is within the deadline, and above zero whenever the launch p99's high end is past it.
The lock-wait fraction keeps the replicates' range (`spread`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

STATS = ("p50", "p95", "p99", "max")
_PERCENT = (50.0, 95.0, 99.0, 100.0)  #: the percentile of each of `STATS`
MISFIT_LEVEL = 0.9  #: central share of the model's misfit the widened intervals cover
LEVEL = 0.9  #: central share of the drawn replicates' spread a statistic's interval covers
MIN_DRAWS = 2  #: drawn replicates (after the nominal one) needed for a `LEVEL` interval
SCALE = 99.0  #: the percentile of the launch (above its base) that measures a draw's scale

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


def method(replicates: int, corners: bool = False, priced: bool = False) -> dict[str, Any]:
    """What the intervals of `replicates` replicates are (the result's `interval`); `corners`:
    their ends bounded by the priors' corners (`bounded`); `priced`: the corners are the
    nominal run scaled as the closed form prices them (cohsim.predict.replicates)."""
    draws = replicates - 1
    joint = (
        "; every statistic (launch and mount-phase quantiles, the chance of missing the "
        "deadline) from the same draws, its lowest and highest over them"
    )
    if draws >= MIN_DRAWS:
        t = t_quantile(draws - 1) * math.sqrt(1 + 1 / draws)
        bound = (
            ", each end no further than the run with every drawn prior at its fast (slow) end"
            if corners
            else ""
        )
        if corners and priced:
            bound += (
                " (the nominal run scaled by how far the closed form, cohsim.kernel.analytic, "
                "says each corner reaches)"
            )
        return {
            "level": LEVEL,
            "draws": draws,
            "method": f"the {replicates} replicates and two draws scaled to the ends of the "
            f"{LEVEL:.0%} prediction interval of one more draw's launch p99 above the base "
            f"(from the {draws} drawn replicates' logarithms, +- {t:.2f} sd, Student's t)"
            + bound
            + joint,
            "bounded_by_priors": corners,
        }
    return {
        "level": None,
        "draws": draws,
        "method": f"range of {replicates} replicate{'s' if replicates > 1 else ''} (too few "
        f"draws for a {LEVEL:.0%} interval: give at least {MIN_DRAWS + 1} replicates)" + joint,
    }


@dataclass(frozen=True)
class Draw:
    """One draw of the burst: each container's launch (the kernel's fixed base included) and
    its mount phase, s, in the same order; a container's mount phase lies within its launch."""

    launch_s: np.ndarray
    mount_s: np.ndarray


#: the columns of `row`, in order
COLUMNS = (
    *(f"launch_{s}" for s in STATS),
    *(f"mount_{s}" for s in STATS),
    "miss_chance",
    "failures",
)


def row(d: Draw, deadline_s: float) -> np.ndarray:
    """A draw's statistics (`COLUMNS`): the launch's and the mount phase's quantiles, the
    share of its containers past `deadline_s` and their number."""
    return rows([d], deadline_s)[0]


def percentiles(arrays: Sequence[np.ndarray], q: float | Sequence[float]) -> np.ndarray:
    """`np.percentile(a, q)` of each of `arrays`, one row each: stacked when they are all as
    long (numpy's percentile along an axis is each row's own, element by element: the same
    numbers as one at a time), else one at a time."""
    if len({len(a) for a in arrays}) == 1:
        return np.asarray(np.percentile(np.array(arrays, dtype=float), q, axis=1).T)
    return np.array([np.percentile(a, q) for a in arrays])


def rows(draws: Sequence[Draw], deadline_s: float) -> np.ndarray:
    """`row` of each of `draws`, one row each: a draw's quantiles are read off its own
    containers (`percentiles`)."""
    late = np.array([np.count_nonzero(d.launch_s > deadline_s) for d in draws], dtype=float)
    return np.column_stack(
        [
            percentiles([d.launch_s for d in draws], _PERCENT),
            percentiles([d.mount_s for d in draws], _PERCENT),
            late / np.array([len(d.launch_s) for d in draws]),
            late,
        ]
    )


def scaled(d: Draw, factor: float, base_s: float) -> Draw:
    """The draw with every container's launch above `base_s` and its mount phase times
    `factor` (>= 0): the same shape of burst at another scale."""
    return Draw(base_s + (d.launch_s - base_s) * factor, d.mount_s * factor)


def extremes(drawn: Sequence[Draw], base_s: float, corners: Sequence[Draw] = ()) -> list[Draw]:
    """The draws at the ends of the `LEVEL` prediction interval of one more draw's scale (its
    launch p99 above `base_s`), where an end lies beyond the drawn replicates `drawn`: the
    nearest of them scaled there (see the module). None with fewer than `MIN_DRAWS`.
    `corners` (the runs with every drawn prior at its fast and at its slow end): an end
    beyond the scale of every corner and drawn replicate is that corner itself (`bounded`)."""
    if len(drawn) < MIN_DRAWS:
        return []
    scale = percentiles([d.launch_s - base_s for d in drawn], SCALE)
    positive = bool((scale > 0).all())
    ys = np.log(scale) if positive else scale
    half = t_quantile(len(ys) - 1) * float(ys.std(ddof=1)) * math.sqrt(1 + 1 / len(ys))
    lo, hi = float(ys.mean()) - half, float(ys.mean()) + half
    lo, hi = (math.exp(lo), math.exp(hi)) if positive else (max(0.0, lo), hi)
    out = []
    i, j = int(np.argmin(scale)), int(np.argmax(scale))
    if lo < scale[i]:  # scale[i] > 0 here
        out.append(bounded(drawn[i], lo, float(scale[i]), corners, base_s, low=True))
    if hi > scale[j] > 0:
        out.append(bounded(drawn[j], hi, float(scale[j]), corners, base_s, low=False))
    return out


def bounded(
    d: Draw, end: float, at: float, corners: Sequence[Draw], base_s: float, *, low: bool
) -> Draw:
    """The draw `d` (of scale `at`) scaled to the interval's `end` (a scale beyond the drawn
    ones), unless a corner of the priors lies within it: the priors are bounded, so no draw
    of them goes past the corner that sets each at its end in the same direction. Then that
    corner (whose scale is the farthest the priors reach that way, and a real run's shape)."""
    if not corners:
        return scaled(d, end / at, base_s)
    reach = percentiles([c.launch_s - base_s for c in corners], SCALE)
    k = int(np.argmin(reach)) if low else int(np.argmax(reach))
    past = end < reach[k] if low else end > reach[k]
    if not past:
        return scaled(d, end / at, base_s)
    # the corner itself, unless the drawn replicate reaches further (noise beyond the corner)
    inside = reach[k] >= at if low else reach[k] <= at
    return d if inside else corners[k]


def misfit_factor(misfit_sd: float) -> float:
    """The lognormal factor covering `MISFIT_LEVEL` of a misfit of log sd `misfit_sd`."""
    return math.exp(statistics.NormalDist().inv_cdf(0.5 + MISFIT_LEVEL / 2) * misfit_sd)


def widened(d: Draw, misfit_sd: float) -> list[Draw]:
    """The draw with every container's mount phase divided and multiplied by the misfit's
    factor, its launch moved by the same amount (the rest of it is not calibrated)."""
    f = misfit_factor(misfit_sd)
    rest = d.launch_s - d.mount_s  # >= 0: the mount phase lies within the launch
    return [Draw(rest + d.mount_s * g, d.mount_s * g) for g in (1.0 / f, f)]


@dataclass(frozen=True)
class Summary:
    """The statistics of a set of replicates with their joint intervals (see the module)."""

    launch_s: dict[str, Interval]
    mount_s: dict[str, Interval]
    miss_chance: Interval  #: the share of the burst's containers past the deadline
    failures: Interval  #: the burst's containers past the deadline


def summarise(
    draws: Sequence[Draw],
    *,
    base_s: float,
    deadline_s: float,
    misfit_sd: float = 0.0,
    corners: Sequence[Draw] = (),
) -> Summary:
    """The replicates' statistics (draws[0]: the nominal replicate): medians over `draws`, each
    with its lowest and highest over the draws, the extremes of the drawn ones (`extremes`,
    above the launch's fixed base `base_s`, bounded by the priors' `corners`) and, with a
    kernel fit's `misfit_sd`, each of those widened by it (`widened`)."""
    every = [*draws, *extremes(draws[1:], base_s, corners)]
    if misfit_sd:
        every = [w for d in every for w in widened(d, misfit_sd)]
    stats = rows(every, deadline_s)  # the draws' own first where no misfit widens them
    values = np.median(stats[: len(draws)] if not misfit_sd else rows(draws, deadline_s), axis=0)
    low, high = stats.min(axis=0), stats.max(axis=0)
    units = {"miss_chance": "fraction of containers", "failures": "containers"}
    out = {
        c: Interval(float(values[k]), float(low[k]), float(high[k]), units.get(c, "s"))
        for k, c in enumerate(COLUMNS)
    }
    return Summary(
        {s: out[f"launch_{s}"] for s in STATS},
        {s: out[f"mount_{s}"] for s in STATS},
        out["miss_chance"],
        out["failures"],
    )


def spread(xs: Sequence[float], unit: str) -> Interval:
    """The median of the replicates' values `xs` with their range."""
    return Interval(float(np.median(xs)), float(min(xs)), float(max(xs)), unit)
