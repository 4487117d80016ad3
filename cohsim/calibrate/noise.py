"""The kernel fit's residuals and the noise each is weighed by.

Residuals are log(simulated / measured) of each mount_bench run's worker time per sequence and
its containers per second, and at 2+ workers of each fitted op's mean time per call, over the
(strategy, workers, layers, repeat) runs (`kernel_terms`). Each is divided by its noise: per
(metric, op, workers), the host's repeat-to-repeat scatter plus the simulation's own over the
seed sets, both taken before the search (`noise_sd`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

from cohsim.calibrate.fitparams import FIT_OPS
from cohsim.calibrate.measuredruns import MountRun
from cohsim.calibrate.mountreplay import SimRun

Shape = tuple[str, int, int]  #: a run shape: (strategy, workers, layers)
NoiseGroup = tuple[str, str, int]  #: the residuals that share one noise: (metric, op, workers)
#: one residual before weighting: (shape, noise group, the run's place in its shape's list,
#: log(simulated / measured))
Term = tuple[Shape, NoiseGroup, int, float]

#: the smallest noise a residual is given (log units): 0.1 %, below the timing resolution of
#: any mean mount_bench reports (thousands of calls of microseconds each)
MIN_NOISE = 1e-3


def kernel_pairs(r: MountRun, sim: SimRun) -> list[tuple[str, str, float, float]]:
    """(metric, op, simulated, measured) compared for one run: its worker time per sequence
    and containers/s, and at 2+ workers each fitted op's mean time per call (at 1 worker
    those means set the op terms and carry no information about the split)."""
    out = [
        ("stride_ns", "", sim.stride_ns, r.stride_ns),
        ("containers_per_s", "", sim.containers_per_s, r.containers_per_s),
    ]
    if r.workers > 1:
        means = r.op_means
        out += [
            ("op_mean_ns", op, sim.op_means[op], means[op])
            for op in FIT_OPS
            if op in means and op in sim.op_means
        ]
    return out


def kernel_terms(
    groups: Mapping[Shape, Sequence[MountRun]], sims: Mapping[Shape, SimRun]
) -> list[Term]:
    """Every residual before weighting: its run shape, its noise group (metric, op, workers),
    which run of the shape, and log(simulated / measured)."""
    return [
        (key, (metric, op, r.workers), i, math.log(s / m))
        for key, group in groups.items()
        for i, r in enumerate(group)
        for metric, op, s, m in kernel_pairs(r, sims[key])
    ]


def noise_sd(
    groups: Mapping[Shape, Sequence[MountRun]], sim_sets: Sequence[Mapping[Shape, SimRun]]
) -> dict[NoiseGroup, float]:
    """Per noise group (metric, op, workers), the standard deviation a residual log(simulated /
    measured) has even where the model is right: the host's repeat-to-repeat scatter (the
    within-shape variance of log(measured), pooled over the group's shapes) plus the
    simulation's own (the variance of log(simulated) over the seed sets `sim_sets`, at one
    point, averaged over the shapes). A residual divided by it is weighted by how much it can
    tell: a 1 us op's per-call mean, which one slow wake-up moves, counts for less than a
    worker time that repeats within a few per cent. Groups whose shapes have one repeat and
    one seed set get `MIN_NOISE`."""
    by_set = [{(key, g, i): v for key, g, i, v in kernel_terms(groups, sims)} for sims in sim_sets]
    cells: dict[tuple[Shape, NoiseGroup], list[tuple[int, float]]] = {}
    for (key, g, i), v in by_set[0].items():
        cells.setdefault((key, g), []).append((i, v))
    zero = (0.0, 0)
    data: dict[NoiseGroup, tuple[float, int]] = {}  # sum of squares, dof
    sim: dict[NoiseGroup, tuple[float, int]] = {}  # sum of variances, shapes
    for (key, g), cell in cells.items():
        vals = [v for _, v in cell]
        ss, dof = data.get(g, zero)
        mean = statistics.fmean(vals)
        data[g] = (ss + sum((v - mean) ** 2 for v in vals), dof + len(vals) - 1)
        first = cell[0][0]  # one run's residual under each seed set: only the simulation moves
        across = [terms[(key, g, first)] for terms in by_set if (key, g, first) in terms]
        total, n = sim.get(g, zero)
        if len(across) > 1:
            sim[g] = (total + statistics.variance(across), n + 1)
    out = {}
    for g in sorted(data):
        ss, dof = data[g]
        total, n = sim.get(g, zero)
        var = (ss / dof if dof else 0.0) + (total / n if n else 0.0)
        out[g] = max(MIN_NOISE, math.sqrt(var))
    return out
