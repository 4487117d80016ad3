"""The kernel fit: the critical-section split and the grace period, from mount_bench runs.

The parameters are `cohsim.calibrate.fitparams`'s; the residuals and their noise
`cohsim.calibrate.noise`'s. The fit runs in phases:

1. set-up (`_Objective`): the free parameters in coordinates scaled to [0, 1] within their
   bounds; every candidate is simulated with the same seeds (common random numbers,
   `cohsim.calibrate.hostterms`), and each residual's noise is fixed before the search (the
   model file's split, every seed set);
2. start (`_sobol_start`): the model file's split and a scrambled Sobol design, the best by
   the mean cost over every seed set (one set's dent must not pick the basin);
3. search (`_nelder_mead`): Nelder-Mead on the fit's own seed set from that start, with a
   simplex of 0.1 (scaled): the simulated objective is rough below a few hundredths, so line
   searches (Powell, BFGS) stop at local dents. Its end is kept only where the cost over every
   seed set agrees it is better than where it started;
4. uncertainty (`_uncertainty`): a quadratic response surface of the cost around the optimum
   and the spread of its minimum over the seed sets (`cohsim.calibrate.surface`);
5. result (`cohsim.calibrate.fitparams.PartFit`): values, standard errors, the residual rows,
   the optimizer's report and what was kept fixed.
"""

from __future__ import annotations

import functools
import math
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cohsim.calibrate.fitjson import round_sig
from cohsim.calibrate.fitparams import (
    KERNEL_PARAMS,
    Param,
    PartFit,
    apply_kernel_params,
    kernel_bounds,
    kernel_start,
)
from cohsim.calibrate.hostterms import BenchSim
from cohsim.calibrate.measuredruns import MountRun, group_runs
from cohsim.calibrate.mountreplay import SimRun
from cohsim.calibrate.noise import NoiseGroup, Shape, kernel_pairs, kernel_terms, noise_sd
from cohsim.calibrate.surface import seed_cov, surface
from cohsim.errors import CohsimError
from cohsim.kernel.costs import KernelParams
from cohsim.machine.model import Machine


@dataclass(frozen=True)
class KernelSettings:
    """The kernel fit's settings (`cohsim.calibrate.calibration.Calibration`'s)."""

    free: Sequence[str] | None  #: kernel parameters to fit (None: all of KERNEL_PARAMS)
    starts: int  #: Sobol starting points tried (plus the model's split)
    max_nfev: int  #: the Nelder-Mead evaluation budget
    seed_sets: int  #: seed sets whose cost surfaces locate the minimum
    radius: float  #: half-width of the response-surface design in scaled units
    seed: int
    progress: bool


def _progress(enabled: bool, desc: str) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=None,
        desc=desc,
        unit="sim",
        file=sys.stderr,
        delay=1.0,
        leave=False,
        disable=not enabled,
    )


def _free_names(free: Sequence[str] | None) -> list[str]:
    names = list(free or KERNEL_PARAMS)
    for n in names:
        if n not in KERNEL_PARAMS:
            raise CohsimError(f"unknown kernel parameter {n!r} ({', '.join(KERNEL_PARAMS)})")
    return names


class _Objective:
    """The cost of a candidate split: half the sum of squared weighted residuals over every
    run shape, simulated (memoised) with seed set `rep`. Coordinates `u` are scaled to [0, 1]
    within the bounds."""

    def __init__(
        self,
        bench: BenchSim,
        base: KernelParams,
        runs: Sequence[MountRun],
        names: list[str],
        bar: Any,
    ) -> None:
        self.bench = bench
        self.base = base
        self.groups = group_runs(runs)
        self.names = names
        self.bounds = kernel_bounds(base)
        self.lo = np.array([self.bounds[n][0] for n in names])
        self.scale = np.array([self.bounds[n][1] for n in names]) - self.lo
        self.memo: dict[tuple[float, ...], dict[Shape, SimRun]] = {}
        self.sd: dict[NoiseGroup, float] = {}
        self.bar = bar  #: a progress bar, one step per simulated shape

    def simulate(self, u: np.ndarray, rep: int = 0) -> dict[Shape, SimRun]:
        """Every run shape simulated at `u` with seed set `rep` (0: the fit's own seeds)."""
        key = (rep, *(round(float(v), 12) for v in np.clip(u, 0.0, 1.0)))
        if key in self.memo:
            return self.memo[key]
        values = self.lo + np.array(key[1:]) * self.scale
        k = apply_kernel_params(self.base, dict(zip(self.names, values, strict=True)))
        sims = {}
        for (s, w, L), group in self.groups.items():
            sims[(s, w, L)] = self.bench.run(
                k, s, w, L, group[0].baseline_mounts, seeds=self.bench.seed_set(w, rep)
            )
            self.bar.update(1)
        self.memo[key] = sims
        return sims

    def fix_noise(self, u0: np.ndarray, seed_sets: int) -> None:
        """Each residual's noise, fixed before the search (at `u0`, every seed set)."""
        self.sd = noise_sd(self.groups, [self.simulate(u0, r) for r in range(max(2, seed_sets))])

    def evaluate(self, u: np.ndarray, rep: int = 0) -> np.ndarray:
        """The weighted residuals at `u` with seed set `rep`."""
        terms = kernel_terms(self.groups, self.simulate(u, rep))
        return np.array([v / self.sd[g] for _, g, _, v in terms])

    def cost(self, u: np.ndarray, rep: int = 0) -> float:
        r = self.evaluate(u, rep)
        return 0.5 * float(r @ r)

    def mean_cost(self, u: np.ndarray, seed_sets: int) -> float:
        return statistics.fmean(self.cost(u, r) for r in range(seed_sets))


def _sobol_start(obj: _Objective, u0: np.ndarray, settings: KernelSettings) -> np.ndarray:
    """The best of the model file's split `u0` and a scrambled Sobol design of
    `settings.starts` points, judged over every seed set: one set's dent (an interleaving that
    happens to suit its seeds at one point) must not pick the basin."""
    from scipy.stats import qmc

    p, n = len(obj.names), settings.starts
    sobol = qmc.Sobol(p, seed=settings.seed)
    starts = np.vstack(
        [u0[None, :], sobol.random_base2(math.ceil(math.log2(n)))[:n]]
        if n > 1
        else [u0[None, :], sobol.random(n)]
    )
    return min(starts, key=lambda u: obj.mean_cost(u, settings.seed_sets))


def _nelder_mead(obj: _Objective, best: np.ndarray, max_nfev: int) -> Any:
    """Nelder-Mead from `best` on the fit's own seed set (common random numbers make it a
    smooth local search), bounded, with a simplex of 0.1 (scaled) pointing into the box."""
    from scipy.optimize import minimize

    p = len(obj.names)
    simplex = np.array(
        [best]
        + [
            best + np.where(np.arange(p) == i, 0.1, 0.0) * (1 if best[i] <= 0.9 else -1)
            for i in range(p)
        ]
    )
    return minimize(
        obj.cost,
        best,
        method="Nelder-Mead",
        bounds=[(0.0, 1.0)] * p,
        options={
            "xatol": 0.01,
            "fatol": 1e-3,
            "initial_simplex": simplex,
            "maxfev": max_nfev,
        },
    )


def _uncertainty(
    obj: _Objective, centre: np.ndarray, settings: KernelSettings
) -> tuple[np.ndarray, np.ndarray]:
    """The optimum (scaled) and its covariance in the parameters' own units, H^-1 + C_seed
    (`cohsim.calibrate.surface`). A quadratic response surface of the cost fitted to a Sobol
    design around `centre`: a finite-difference Jacobian of this rough objective reads its
    dents as slopes and so reports far too small errors. The same surface with other seed
    sets, about the same point: where each puts the minimum is how far the fit's choice of
    seeds alone moves the estimate. The data's part, H^-1, has the residuals in units of their
    noise (measured, not re-estimated from the misfit: the model's own error goes into the
    prediction intervals through the residuals' scatter instead)."""
    p = len(obj.names)
    n_design = (p + 1) * (p + 2)
    u, hess, rough = surface(obj.cost, centre, settings.radius, settings.seed, n_design)
    minima = [u] + [
        surface(functools.partial(obj.cost, rep=r), u, settings.radius, settings.seed, n_design)[0]
        for r in range(1, settings.seed_sets)
    ]
    spread = seed_cov(np.array(minima), rough)
    cov = (np.linalg.pinv(hess) + spread) * np.outer(obj.scale, obj.scale)
    return u, cov


def _residual_rows(
    obj: _Objective, sims: dict[Shape, SimRun]
) -> tuple[list[dict[str, Any]], np.ndarray, float]:
    """The fit JSON's kernel residual rows at the optimum, the weighted residuals the cost is
    made of (in `_Objective.evaluate`'s order) and the unweighted cost (for comparison with
    fits before the weighting)."""
    rows: list[dict[str, Any]] = []
    plain = 0.0
    weighted = []
    for key, group in obj.groups.items():
        sim = sims[key]
        for r in group:
            for metric, op, sim_v, meas in kernel_pairs(r, sim):
                log_residual = math.log(sim_v / meas)
                plain += 0.5 * log_residual**2
                noise = obj.sd[(metric, op, r.workers)]
                weighted.append(log_residual / noise)
                row: dict[str, Any] = {
                    "kind": "kernel",
                    "strategy": r.strategy,
                    "workers": r.workers,
                    "layers": r.layers,
                    "repeat": r.repeat,
                    "metric": metric,
                }
                if op:
                    row["op"] = op
                row.update(
                    {
                        "measured": round_sig(meas),
                        "fitted": round_sig(sim_v),
                        "log_residual": round_sig(log_residual, 4),
                        "noise_sd": round_sig(noise, 4),
                    }
                )
                rows.append(row)
    return rows, np.array(weighted), plain


def _method(settings: KernelSettings) -> str:
    return (
        f"best of the model's split and {settings.starts} Sobol starts (by the "
        "mean cost over the seed sets), then scipy.optimize.minimize Nelder-Mead "
        "(bounded, scaled coordinates; its end kept where the mean cost over the seed "
        "sets is no higher than at its start) on the sum "
        "of squared log residuals (per-run worker time per sequence and "
        "containers/s, per-op mean times at 2+ workers), each divided by its noise_sd "
        "(per metric, op and worker count: the host's repeat scatter plus the "
        "simulation's over the seed sets); covariance H^-1 + C_seed, H the curvature "
        "of a quadratic surface fitted to the cost over a Sobol design of half-width "
        f"{settings.radius} (scaled) around the optimum (the noise taken as measured, not "
        "rescaled by the misfit), C_seed the covariance of the minima of the surface "
        f"under {settings.seed_sets} seed sets, at least H^-1 cov(g) H^-1 (cov(g) from the "
        "costs' scatter about it)"
    )


def _fixed_notes(base: KernelParams, machine: Machine) -> dict[str, dict[str, Any]]:
    """What the kernel fit keeps as the model file has it, and why."""
    return {
        "rcu_exp_per_cpu_ns": {
            "value": base.rcu_exp_per_cpu_ns,
            "why": f"not identifiable from mount_bench: its runs keep at most {machine.vcpus} "
            "CPUs busy, too few to tell the part per busy CPU from the fixed part (model file "
            "value kept, unless walk_bench measured it: cohsim.calibrate.measured)",
        },
        "ops.totals": {
            "value": "models/kernel/" + base.name + ".toml",
            "why": "each op's 1-worker total (work + RCU wait) is kept as measured; only its "
            "split into unlocked work, namespace_sem section and RCU sleep is fitted",
        },
        "mount_lock_ns": {
            "value": "model file",
            "why": "mount_lock sections (a few hundred ns) are too short "
            "to move the runs' wall times on 2 CPUs; kept as the model file has them",
        },
        "unlocked_ops": {
            "value": "fsopen, fsconfig, fsconfig_create, fsmount, mount_setattr (IDMAP only), "
            "close of an attached fd, umount_einval, mountinfo_*",
            "why": "no namespace_sem write section in the kernel (fs/namespace.c; "
            "dissolve_on_fput returns before namespace_lock for an attached mount); overlay "
            "per-layer work stays unlocked too (parsed before do_new_mount locks)",
        },
        "smt_slowdown": {
            "value": base.smt_slowdown,
            "why": f"{machine.name} has no SMT: nothing in the data can show it",
        },
    }


def fit_kernel(
    bench: BenchSim, base: KernelParams, runs: Sequence[MountRun], settings: KernelSettings
) -> PartFit:
    """Fit the kernel parameters to mount_bench `runs` (simulated as `bench` says)."""
    names = _free_names(settings.free)
    start = kernel_start(base)
    fixed = {
        n: {"value": round_sig(start[n]), "why": "not fitted (free=)"}
        for n in KERNEL_PARAMS
        if n not in names
    }
    bar = _progress(settings.progress, "calibrate kernel")
    obj = _Objective(bench, base, runs, names, bar)
    u0 = np.clip((np.array([start[n] for n in names]) - obj.lo) / obj.scale, 0.0, 1.0)
    obj.fix_noise(u0, settings.seed_sets)
    best = _sobol_start(obj, u0, settings)
    res = _nelder_mead(obj, best, settings.max_nfev)
    end = np.clip(res.x, 0.0, 1.0)
    kept = obj.mean_cost(end, settings.seed_sets) <= obj.mean_cost(best, settings.seed_sets)
    u, cov = _uncertainty(obj, end if kept else best, settings)
    sims = obj.simulate(u)
    bar.close()
    x = obj.lo + u * obj.scale
    rows, fun, plain = _residual_rows(obj, sims)
    optimizer = {
        "method": _method(settings),
        "seed_sets": settings.seed_sets,
        "status": int(res.status),
        "message": str(res.message),
        "nfev": int(res.nfev),
        "nelder_mead_end_kept": bool(kept),
        "evaluations": len(obj.memo),
        "cost": round_sig(float(0.5 * fun @ fun)),
        "cost_unweighted": round_sig(plain),
        "residuals": int(fun.size),
        "containers_per_worker": bench.containers,
        "seeds": bench.seeds,
    }
    return PartFit(
        parameters={
            n: Param(n, float(x[i]), float(math.sqrt(max(cov[i, i], 0.0))), *obj.bounds[n])
            for i, n in enumerate(names)
        },
        names=names,
        cov=cov,
        residuals=rows,
        optimizer=optimizer,
        fixed={**fixed, **_fixed_notes(base, bench.machine)},
    )
