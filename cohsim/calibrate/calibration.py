"""Calibration: fit kernel and lock parameters to real pause_bench / mount_bench data.

`Calibration` follows the estimator contract (STYLE.md): the constructor stores its arguments,
`fit(data)` returns self, learned attributes end in `_`, and `predict` / `sample_kernels`
refuse to run unfitted.

Kernel fit (mount_bench). Each op's 1-worker total is kept as `models/kernel/*.toml` has it; what
is fitted is how that total splits, which only runs with several workers reveal (two workers
on two CPUs gain nothing from serialized time):

- `ser_bind`: the fraction of the bind-mount ops' unlocked work (open_tree clone, move_mount,
  the common parent's mount_setattr) that is in fact done holding namespace_sem for writing
  (the close of an attached fd takes no lock: dissolve_on_fput returns first);
- `ser_overlay`: the same for the overlay mount's fixed part (its per-layer lowerdir lookups
  stay unlocked: overlayfs parses them before do_new_mount takes the lock);
- `ser_umount`: the same for the unmounts and the dissolving close of a detached clone, after
  the RCU wait is taken out;
- `rcu_exp_base_ns`: the expedited grace period, during which the caller sleeps and its CPU is
  free. The ops' totals stay fixed: a shorter grace period leaves more on-CPU time.

Residuals are log(simulated / measured) of each run's worker time per sequence and its
containers per second, and at 2+ workers of each fitted op's mean time per call, over the
(strategy, workers, layers, repeat) runs, each divided by its noise: per (metric, op, workers),
the host's repeat-to-repeat scatter plus the simulation's own over the seed sets, both taken
before the search (`_noise_sd`). Minimised (Nelder-Mead on the fit's own seed set, from the
start of a Sobol design with the lowest cost over every seed set; its end kept only where that
cost agrees) in parameter coordinates scaled to [0, 1] within the bounds. Every candidate is
simulated with the same seeds (common random numbers). mount_bench's own user-space time
between calls is measured, not fitted: per (strategy, layers) the median 1-worker time the
kernel model leaves unexplained, spread over the sequence's calls.

Lock fit (pause_bench). The PAUSE latency is measured directly (`pause_ns`, mean over repeats);
`same_llc_ns` (the cache-line transfer between the two vCPUs, with the level-2 service time
derived from it) is fitted to the 2-thread ttas and ticket p50 latencies and throughput, the
measured clock-read overhead added to the simulated latencies.

Uncertainty: standard errors and covariance at the optimum. Lock fit: cov = (J^T J)^-1 s^2 with
s^2 = SSR / (n - p). Kernel fit (a simulated, rough cost): cov = H^-1 + C_seed. H is the
curvature of a quadratic surface fitted to the cost around the optimum; with every residual in
units of its measured noise, H^-1 is how far re-measuring the host would move the estimate (the
noise is not rescaled by the misfit, as scipy's curve_fit with absolute_sigma: what the model
cannot fit is its own error, carried into the prediction intervals by the residuals' scatter).
C_seed is the estimate's noise from the simulation itself: the same surface is fitted with
other seed sets (`seed_sets`), and C_seed is the covariance of where they put the minimum — the
fit's own seeds move the estimate by that much — but at least H^-1 cov(g) H^-1, cov(g) from the
costs' scatter about one surface (how well its roughness lets the minimum be placed).
Prediction intervals from parameter samples (multivariate normal, clipped to the bounds)
crossed with seeds, widened in quadrature by the fit's residual scatter.

Fit JSON format history: schema 1 — kind, instance, kernel, applies_to, parameters, covariance,
residuals, think_ns, fixed, data_digests, optimizer, settings, cohsim_version, seed.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from cohsim import __version__, provenance
from cohsim.calibrate.benchdata import (
    BenchData,
    MountRun,
    PauseRun,
    SimRun,
    bench_kernel,
    load_bench,
    simulate_run,
    with_op_extra,
)
from cohsim.errors import CohsimError
from cohsim.io import fits_dir
from cohsim.kernel.costs import DEFAULT_KERNEL, KernelParams, load_kernel
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.waketable import WakeTable
from cohsim.lock.handoff import simulate as handoff_simulate
from cohsim.machine.catalog import Catalog
from cohsim.machine.model import Machine

SCHEMA = 1
KINDS = ("kernel", "lock", "kernel+lock")

#: op groups whose serialized fraction is one parameter
GROUPS: dict[str, tuple[str, ...]] = {
    "ser_bind": ("open_tree_clone", "move_mount", "mount_setattr_ro"),
    "ser_overlay": ("mount_overlay",),
    "ser_umount": ("umount_detach", "umount", "umount_overlay", "close_detached"),
}
KERNEL_PARAMS = (*GROUPS, "rcu_exp_base_ns")
#: ops whose per-call mean at 2+ workers is fitted (those whose split the parameters set)
FIT_OPS = tuple(op for ops in GROUPS.values() for op in ops)
LOCK_PARAMS = ("same_llc_ns",)
_DOC = {
    "ser_bind": "fraction of the bind-mount ops' unlocked work held under namespace_sem (write)",
    "ser_overlay": "fraction of the overlay mount's fixed work held under namespace_sem (write)",
    "ser_umount": "fraction of the unmounts' (and dissolving close's) work, RCU wait excluded, "
    "held under namespace_sem (write)",
    "rcu_exp_base_ns": "synchronize_rcu_expedited() fixed part, ns (caller sleeps)",
    "same_llc_ns": "cache-line transfer between two cores of the LLC (the two vCPUs), ns",
    "pause_ns": "latency of one PAUSE, ns (measured directly, pause_bench pause_ns)",
    "wake_ns": "a task that slept resumes on an idle CPU this much later, ns (measured "
    "directly, wake_bench wake_ns; this host only)",
}
_MIN_BODY_NS = 50.0  # an op keeps at least this much of its own work when the RCU part grows


# --------------------------------------------------------------------------- kernel parameters


def _rcu_ops(kernel: KernelParams) -> list[str]:
    return sorted(n for n, op in kernel.ops.items() if op.rcu)


def kernel_bounds(base: KernelParams) -> dict[str, tuple[float, float]]:
    """Bounds of the kernel parameters: fractions in [0, 1]; the grace period between 1 us and
    what leaves every RCU op `_MIN_BODY_NS` of its own work."""
    room = min(
        (base.op(n).cpu_ns + base.op(n).ns_write_ns) / base.op(n).rcu for n in _rcu_ops(base)
    )
    out = {g: (0.0, 1.0) for g in GROUPS}
    out["rcu_exp_base_ns"] = (1000.0, base.rcu_exp_base_ns + room - _MIN_BODY_NS)
    return out


def kernel_start(base: KernelParams) -> dict[str, float]:
    """The model file's own split, as fractions (the fit's starting point)."""
    out: dict[str, float] = {}
    for g, ops in GROUPS.items():
        tot = [base.op(n).cpu_ns + base.op(n).ns_write_ns for n in ops if n in base.ops]
        ser = [base.op(n).ns_write_ns for n in ops if n in base.ops]
        out[g] = sum(ser) / sum(tot) if sum(tot) else 0.0
    out["rcu_exp_base_ns"] = base.rcu_exp_base_ns
    return out


def apply_kernel_params(base: KernelParams, values: Mapping[str, float]) -> KernelParams:
    """`base` with the fitted split: each op's total (work + RCU wait) unchanged."""
    rcu = float(values.get("rcu_exp_base_ns", base.rcu_exp_base_ns))
    shift = base.rcu_exp_base_ns - rcu  # on-CPU work the shorter grace period leaves
    new: dict[str, float] = {"rcu_exp_base_ns": rcu}
    body = {n: op.cpu_ns + op.ns_write_ns + shift * op.rcu for n, op in base.ops.items()}
    for n in _rcu_ops(base):
        if body[n] < 0:
            raise CohsimError(f"rcu_exp_base_ns {rcu:.0f} exceeds op {n}'s total")
    for g, ops in GROUPS.items():
        f = values.get(g)
        for n in ops:
            if n not in base.ops:
                continue
            if f is None:
                new[f"{n}.cpu_ns"] = body[n] - base.op(n).ns_write_ns
                continue
            f = min(1.0, max(0.0, float(f)))
            new[f"{n}.ns_write_ns"] = f * body[n]
            new[f"{n}.cpu_ns"] = (1.0 - f) * body[n]
    for n in _rcu_ops(base):  # rcu ops outside every group keep their lock split
        if not any(n in ops for ops in GROUPS.values()):
            new[f"{n}.cpu_ns"] = body[n] - base.op(n).ns_write_ns
    return base.with_values(**new)


# --------------------------------------------------------------------------- helpers


def _round(x: float, digits: int = 6) -> float:
    """Round to `digits` significant figures (stable JSON bytes)."""
    if x == 0 or not math.isfinite(x):
        return 0.0 if not math.isfinite(x) else x
    return float(f"{x:.{digits}g}")


def _cov(jac: np.ndarray, resid: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """(J^T J)^-1 s^2 in the original parameter units (J taken in scaled coordinates)."""
    n, p = jac.shape
    dof = max(1, n - p)
    s2 = float(resid @ resid) / dof
    jtj = jac.T @ jac
    inv = np.linalg.pinv(jtj)
    return inv * s2 * np.outer(scale, scale)


def _group_runs(runs: Sequence[MountRun]) -> dict[tuple[str, int, int], list[MountRun]]:
    out: dict[tuple[str, int, int], list[MountRun]] = {}
    for r in runs:
        out.setdefault(r.key, []).append(r)
    return dict(sorted(out.items()))


def _progress(total: int, enabled: bool, desc: str) -> Any:
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


def _surface(
    cost: Callable[[np.ndarray], float], u: np.ndarray, radius: float, seed: int, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fit cost ~ c + g.d + d'Hd/2 (d = v - u) over >= `n` Sobol points within `radius` of `u`
    (clipped to [0, 1]); return the surface's minimum (kept within the design box, or `u` if
    the surface is not convex), H, positive definite (eigenvalues floored), and how uncertain
    the minimum's place is from the cost's roughness: H^-1 cov(g) H^-1, cov(g) the least
    squares covariance of g with the scatter of the costs about the surface (to first order
    at a stationary point), at most `radius`^2 in any direction (the design box). Simulated
    costs are rough (interleavings flip with small changes), so a minimum found among the
    dents is only known to within that."""
    p = u.size
    from scipy.stats import qmc  # imported here: predictions that only read a fit stay fast

    # Sobol points come in powers of two (their balance needs it): at least n of them
    m = max(1, math.ceil(math.log2(max(n, 2))))
    design = qmc.Sobol(p, seed=seed + 1).random_base2(m)
    pts = np.clip(u + radius * (2 * design - 1), 0.0, 1.0)
    pts = np.vstack([u[None, :], pts])
    y = np.array([cost(v) for v in pts])
    d = pts - u
    iu = [(i, j) for i in range(p) for j in range(i, p)]
    cols = [
        np.ones(len(d)),
        *(d[:, i] for i in range(p)),
        *(d[:, i] * d[:, j] * (0.5 if i == j else 1.0) for i, j in iu),
    ]
    x = np.column_stack(cols)
    coef = np.linalg.lstsq(x, y, rcond=None)[0]
    scatter = y - x @ coef
    dof = max(1, len(y) - x.shape[1])
    cov_coef = np.linalg.pinv(x.T @ x) * float(scatter @ scatter) / dof
    g = coef[1 : p + 1]
    h = np.zeros((p, p))
    for (i, j), c in zip(iu, coef[p + 1 :], strict=True):
        h[i, j] = h[j, i] = c
    w, v = np.linalg.eigh(h)
    best = u
    if w.min() > 0:
        step = -np.linalg.solve(h, g)
        cand = np.clip(u + np.clip(step, -radius, radius), 0.0, 1.0)
        if cost(cand) <= y[0]:
            best = cand
    # a flat or concave direction: curvature floored at what the design could resolve
    w = np.maximum(w, max(float(np.abs(y - y.mean()).max()), 1e-9) * 1e-3 / radius**2)
    h_inv = (v / w) @ v.T
    rough = h_inv @ cov_coef[1 : p + 1, 1 : p + 1] @ h_inv
    # where the roughness swamps the curvature the surface cannot place the minimum at all:
    # it is then only known to lie in the design box (a standard deviation of `radius`)
    rw, rv = np.linalg.eigh((rough + rough.T) / 2)
    rough = (rv * np.clip(rw, 0.0, radius**2)) @ rv.T
    return best, (v * w) @ v.T, rough


#: seed set r simulates with seeds seed + r * this + j (far from the fit's own seed + j)
_SEED_SET_STRIDE = 7919


def _seed_cov(minima: np.ndarray, rough: np.ndarray) -> np.ndarray:
    """The estimate's spread from the simulation's randomness: the covariance of the minima
    that different seed sets' surfaces give (rows of `minima`), and at least the spread the
    roughness of one surface implies (`rough`, from `_surface`) in every direction (a few seed
    sets may agree by chance)."""
    p = minima.shape[1]
    c = np.cov(minima.T, ddof=1).reshape(p, p) if len(minima) > 1 else np.zeros((p, p))
    w, v = np.linalg.eigh((rough - c + (rough - c).T) / 2)
    return c + (v * np.clip(w, 0.0, None)) @ v.T


def _kernel_pairs(r: MountRun, sim: SimRun) -> list[tuple[str, str, float, float]]:
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


Shape = tuple[str, int, int]  #: a run shape: (strategy, workers, layers)
#: one residual before weighting: (shape, noise group, the run's place in its shape's list,
#: log(simulated / measured))
Term = tuple[Shape, tuple[str, str, int], int, float]

#: the smallest noise a residual is given (log units): 0.1 %, below the timing resolution of
#: any mean mount_bench reports (thousands of calls of microseconds each)
_MIN_NOISE = 1e-3


def _kernel_terms(
    groups: Mapping[Shape, Sequence[MountRun]], sims: Mapping[Shape, SimRun]
) -> list[Term]:
    """Every residual before weighting: its run shape, its noise group (metric, op, workers),
    which run of the shape, and log(simulated / measured)."""
    return [
        (key, (metric, op, r.workers), i, math.log(s / m))
        for key, group in groups.items()
        for i, r in enumerate(group)
        for metric, op, s, m in _kernel_pairs(r, sims[key])
    ]


def _noise_sd(
    groups: Mapping[Shape, Sequence[MountRun]], sim_sets: Sequence[Mapping[Shape, SimRun]]
) -> dict[tuple[str, str, int], float]:
    """Per noise group (metric, op, workers), the standard deviation a residual log(simulated /
    measured) has even where the model is right: the host's repeat-to-repeat scatter (the
    within-shape variance of log(measured), pooled over the group's shapes) plus the
    simulation's own (the variance of log(simulated) over the seed sets `sim_sets`, at one
    point, averaged over the shapes). A residual divided by it is weighted by how much it can
    tell: a 1 us op's per-call mean, which one slow wake-up moves, counts for less than a
    worker time that repeats within a few per cent. Groups whose shapes have one repeat and
    one seed set get `_MIN_NOISE`."""
    by_set = [{(key, g, i): v for key, g, i, v in _kernel_terms(groups, sims)} for sims in sim_sets]
    cells: dict[tuple[Shape, tuple[str, str, int]], list[tuple[int, float]]] = {}
    for (key, g, i), v in by_set[0].items():
        cells.setdefault((key, g), []).append((i, v))
    zero = (0.0, 0)
    data: dict[tuple[str, str, int], tuple[float, int]] = {}  # sum of squares, dof
    sim: dict[tuple[str, str, int], tuple[float, int]] = {}  # sum of variances, shapes
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
        out[g] = max(_MIN_NOISE, math.sqrt(var))
    return out


# --------------------------------------------------------------------------- the estimator


class Calibration:
    """Fit of kernel (mount_bench) and lock (pause_bench) parameters, with uncertainty."""

    def __init__(
        self,
        instance: str | None = None,
        *,
        kernel: str = DEFAULT_KERNEL,
        seed: int = 0,
        containers: int = 4,
        seeds: int = 2,
        max_nfev: int = 60,
        starts: int = 16,
        seed_sets: int = 4,
        free: Sequence[str] | None = None,
        progress: bool = False,
    ) -> None:
        self.instance = instance
        self.wake_table_: WakeTable | None = None  #: the host's wake-up table, if fitted with one
        self.kernel = kernel
        self.seed = seed
        self.containers = containers
        self.seeds = seeds  #: simulations (common random numbers) averaged per 2+-worker run
        self.max_nfev = max_nfev  #: the kernel optimizer's evaluation budget (Nelder-Mead)
        self.starts = starts  #: Sobol starting points tried before it (plus the model's split)
        #: seed sets whose cost surfaces locate the minimum (the fit's own and the others):
        #: their spread is how far the fit's seeds alone move the estimate
        self.seed_sets = seed_sets
        #: half-width of the response-surface design in scaled units (bounds -> [0, 1]): 0.15
        #: moves an op's split by thousands of ns, far above the integer-ns and scheduling
        #: granularity that makes the simulated objective rough at the scale of 0.01
        self.radius = 0.15
        self.free = free  #: kernel parameters to fit (None: all of KERNEL_PARAMS)
        self.progress = progress

    # ----- shared -------------------------------------------------------------------------

    def _machine(self, data: BenchData | None = None) -> Machine:
        if self.instance is None:
            raise CohsimError("no instance: pass --instance (the machine the data was measured on)")
        return Catalog().get(self.instance)

    def _check_fitted(self) -> None:
        if not hasattr(self, "params_"):
            raise CohsimError("this Calibration is not fitted: call fit(data) or load_fit(path)")

    # ----- fit ----------------------------------------------------------------------------

    def fit(self, data: BenchData | Sequence[str | Path]) -> Calibration:
        """Fit to `data` (a BenchData or bench files/directories); returns self."""
        if not isinstance(data, BenchData):
            data = load_bench(data)
        if not data.mount and not data.pause:
            raise CohsimError(
                "no mount_bench or pause_bench runs in the data: nothing to fit "
                "(wake_bench data only fixes the wake-up latency next to them)"
            )
        machine = self._machine(data)
        base = load_kernel(self.kernel)
        self.base_kernel_ = base
        self.params_: dict[str, float] = {}
        self.stderr_: dict[str, float] = {}
        self.bounds_: dict[str, tuple[float, float]] = {}
        self.residuals_: list[dict[str, Any]] = []
        self.optimizer_: dict[str, Any] = {}
        self.fixed_: dict[str, dict[str, Any]] = {}
        self.think_ns_: dict[str, dict[str, float]] = {}
        self.op_extra_ns_: dict[str, dict[str, dict[str, float]]] = {}
        names: list[str] = []
        blocks: list[np.ndarray] = []
        base = self._fix_wake(base, getattr(data, "wake", ()))
        self.wake_table_ = data.wake_idle
        if self.wake_table_ is not None:
            base = replace(base, wake_table=self.wake_table_)
        if data.mount:
            n, c = self._fit_kernel(machine, base, data.mount)
            names += n
            blocks.append(c)
        if data.pause:
            n, c = self._fit_lock(machine, data.pause)
            names += n
            blocks.append(c)
        size = sum(b.shape[0] for b in blocks)
        cov = np.zeros((size, size))
        i = 0
        for b in blocks:
            cov[i : i + b.shape[0], i : i + b.shape[0]] = b
            i += b.shape[0]
        self.cov_ = {"names": names, "matrix": cov}
        self.kind_ = (
            "kernel+lock" if data.mount and data.pause else ("kernel" if data.mount else "lock")
        )
        self.data_digests_ = {
            f"{Path(p).parent.name}/{Path(p).name}": d for p, d in sorted(data.digests.items())
        }
        self.instance_ = machine.name
        self.kernel_name_ = base.name
        self.__dict__.pop("applies_to_", None)  # a refit describes its own data
        self.applies_to_ = self._applies_to()
        return self

    def _fix_wake(self, base: KernelParams, runs: Sequence[Any]) -> KernelParams:
        """The host's wake-up latency, measured directly (wake_bench, median over repeats):
        every simulation of this host's runs uses it; it describes this host only."""
        if not runs:
            return base
        values = sorted(float(r.wake_ns) for r in runs)
        wake = statistics.median(values)
        se = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
        self.params_["wake_ns"] = _round(wake)
        self.stderr_["wake_ns"] = _round(se)
        self.bounds_["wake_ns"] = (0.0, math.inf)
        self.fixed_["wake_ns"] = {
            "value": _round(wake),
            "why": f"measured directly: wake_bench's wake_ns, median of {len(values)} repeats "
            "(half the cross-CPU minus same-CPU futex round trip); a property of this host "
            "(idle exit, VM wake-up), applied only where the fit's lock part applies",
        }
        return base.with_values(wake_ns=wake)

    def host_kernel(self, kernel: KernelParams) -> KernelParams:
        """`kernel` with this fit's host-only terms (the measured wake-up latency: wake_bench's
        `wake_ns`, and the table by idle duration where the fit had one)."""
        self._check_fitted()
        if "wake_ns" in self.params_:
            kernel = kernel.with_values(wake_ns=self.params_["wake_ns"])
        if self.wake_table_ is not None:
            kernel = replace(kernel, wake_table=self.wake_table_)
        return kernel

    def _bench_terms(
        self, machine: Machine, base: KernelParams, costs: LineCosts, runs: Sequence[MountRun]
    ) -> None:
        """Per (strategy, layers), from the 1-worker runs: mount_bench's own time per call
        (`think_ns_`, measured directly: sequence wall time minus the timed calls) and how much
        each timed op's mean exceeds the model's p50-based total (`op_extra_ns_`); the mountinfo
        sample (timed as a whole) puts its difference on its one untimed call, the open."""
        k0 = bench_kernel(base)
        self.think_ns_ = {}
        self.op_extra_ns_ = {}
        for (strategy, workers, layers), group in _group_runs(runs).items():
            if workers != 1:
                continue
            think = max(0.0, statistics.median(r.user_ns for r in group))
            kw = {
                "containers": self.containers,
                "think_ns": think,
                "seed": self.seed,
                "costs": costs,
                "baseline_mounts": group[0].baseline_mounts,
            }
            sim = simulate_run(machine, k0, strategy, 1, layers, **kw)
            extra = {
                op: statistics.median(r.op_means[op] for r in group) - sim.op_means[op]
                for op in sorted(group[0].op_means)
                if op in sim.op_means and all(op in r.op_means for r in group)
            }
            sim = simulate_run(machine, with_op_extra(k0, extra, layers), strategy, 1, layers, **kw)
            opens = sim.op_calls.get("mountinfo_open", 0.0)
            if opens:
                measured = statistics.median(r.stride_ns for r in group)
                extra["mountinfo_open"] = (measured - sim.stride_ns) / opens
            self.think_ns_.setdefault(strategy, {})[str(layers)] = _round(think)
            self.op_extra_ns_.setdefault(strategy, {})[str(layers)] = {
                op: _round(v) for op, v in sorted(extra.items())
            }
        for r in runs:
            if str(r.layers) not in self.think_ns_.get(r.strategy, {}):
                raise CohsimError(
                    f"no 1-worker run of {r.strategy} at {r.layers} layers: "
                    f"mount_bench's own time per call cannot be measured"
                )

    def _seeds(self, workers: int, rep: int = 0) -> list[int]:
        """Seed set `rep`'s seeds for a run with `workers` workers (0: the fit's own): one at 1
        worker, where there is no interleaving to average over, else `seeds`."""
        n = self.seeds if workers > 1 else 1
        return [self.seed + _SEED_SET_STRIDE * rep + j for j in range(n)]

    def mount_bench_kernel(self, kernel: KernelParams, strategy: str, layers: int) -> KernelParams:
        """`kernel` as this fit simulates mount_bench with it: no runtime or node daemons
        (`bench_kernel`) and each op's measured 1-worker excess (`op_extra_ns_`) added."""
        extra = self.op_extra_ns_.get(strategy, {}).get(str(layers), {})
        return with_op_extra(bench_kernel(kernel), extra, layers)

    def _bench_sim(
        self,
        machine: Machine,
        kernel: KernelParams,
        costs: LineCosts,
        strategy: str,
        workers: int,
        layers: int,
        baseline_mounts: int,
        containers: int | None = None,
        seeds: Sequence[int] | None = None,
    ) -> SimRun:
        """A mount_bench run with the fit's think and op terms, averaged over `seeds` (common
        random numbers: the same seeds for every candidate; one run at 1 worker, where there
        is no interleaving to average over)."""
        think = self.think_ns_[strategy][str(layers)]
        k = self.mount_bench_kernel(kernel, strategy, layers)
        if seeds is None:
            seeds = self._seeds(workers)
        sims = [
            simulate_run(
                machine,
                k,
                strategy,
                workers,
                layers,
                containers=containers or self.containers,
                think_ns=think,
                seed=s,
                costs=costs,
                baseline_mounts=baseline_mounts,
                jitter=True,
            )
            for s in seeds
        ]
        ops = sorted(set.intersection(*(set(x.op_means) for x in sims)))
        return SimRun(
            statistics.fmean(x.stride_ns for x in sims),
            statistics.fmean(x.containers_per_s for x in sims),
            {op: statistics.fmean(x.op_means[op] for x in sims) for op in ops},
            {op: statistics.fmean(x.op_calls[op] for x in sims) for op in ops},
        )

    def _fit_kernel(
        self, machine: Machine, base: KernelParams, runs: Sequence[MountRun]
    ) -> tuple[list[str], np.ndarray]:
        costs = LineCosts(machine, seed=self.seed)
        self._bench_terms(machine, base, costs, runs)
        groups = _group_runs(runs)
        bounds = kernel_bounds(base)
        start = kernel_start(base)
        names = list(self.free or KERNEL_PARAMS)
        for n in names:
            if n not in KERNEL_PARAMS:
                raise CohsimError(f"unknown kernel parameter {n!r} ({', '.join(KERNEL_PARAMS)})")
        for n in KERNEL_PARAMS:
            if n not in names:
                self.fixed_[n] = {"value": _round(start[n]), "why": "not fitted (free=)"}
        lo = np.array([bounds[n][0] for n in names])
        hi = np.array([bounds[n][1] for n in names])
        scale = hi - lo
        u0 = np.clip((np.array([start[n] for n in names]) - lo) / scale, 0.0, 1.0)
        bar = _progress(0, self.progress, "calibrate kernel")
        memo: dict[tuple[float, ...], dict[Shape, SimRun]] = {}

        def simulate(u: np.ndarray, rep: int = 0) -> dict[Shape, SimRun]:
            """Every run shape simulated at `u` with seed set `rep` (0: the fit's own seeds)."""
            key = (rep, *(round(float(v), 12) for v in np.clip(u, 0.0, 1.0)))
            if key in memo:
                return memo[key]
            k = apply_kernel_params(
                base, dict(zip(names, lo + np.array(key[1:]) * scale, strict=True))
            )
            sims = {}
            for (s, w, L), group in groups.items():
                sims[(s, w, L)] = self._bench_sim(
                    machine, k, costs, s, w, L, group[0].baseline_mounts, seeds=self._seeds(w, rep)
                )
                bar.update(1)
            memo[key] = sims
            return sims

        # each residual's noise, fixed before the search (the model's split, every seed set)
        sd = _noise_sd(groups, [simulate(u0, r) for r in range(max(2, self.seed_sets))])

        def evaluate(u: np.ndarray, rep: int = 0) -> np.ndarray:
            """The weighted residuals at `u` with seed set `rep`."""
            return np.array([v / sd[g] for _, g, _, v in _kernel_terms(groups, simulate(u, rep))])

        def cost(u: np.ndarray, rep: int = 0) -> float:
            r = evaluate(u, rep)
            return 0.5 * float(r @ r)

        # a design of starts (the model file's split and a scrambled Sobol set), then
        # Nelder-Mead from the best with a simplex of 0.1 (scaled): the simulated objective is
        # rough below a few hundredths, so line searches (Powell, BFGS) stop at local dents
        p = len(names)
        from scipy.optimize import minimize
        from scipy.stats import qmc

        sobol = qmc.Sobol(p, seed=self.seed)
        starts = np.vstack(
            [u0[None, :], sobol.random_base2(math.ceil(math.log2(self.starts)))[: self.starts]]
            if self.starts > 1
            else [u0[None, :], sobol.random(self.starts)]
        )

        def mean_cost(u: np.ndarray) -> float:
            return statistics.fmean(cost(u, r) for r in range(self.seed_sets))

        # the starts are judged over every seed set: one set's dent (an interleaving that
        # happens to suit its seeds at one point) must not pick the basin
        best = min(starts, key=mean_cost)
        simplex = np.array(
            [best]
            + [
                best + np.where(np.arange(p) == i, 0.1, 0.0) * (1 if best[i] <= 0.9 else -1)
                for i in range(p)
            ]
        )
        res = minimize(
            cost,
            best,
            method="Nelder-Mead",
            bounds=[(0.0, 1.0)] * p,
            options={
                "xatol": 0.01,
                "fatol": 1e-3,
                "initial_simplex": simplex,
                "maxfev": self.max_nfev,
            },
        )
        # the covariance (and a last step) from a quadratic response surface of the cost fitted
        # to a Sobol design around the optimum: a finite-difference Jacobian of this rough
        # objective reads its dents as slopes and so reports far too small errors
        # Nelder-Mead follows the fit's own seed set (common random numbers make it a smooth
        # local search), so it can end in that set's dent: its end is kept only where the
        # cost over every seed set agrees it is better than where it started
        end = np.clip(res.x, 0.0, 1.0)
        kept = mean_cost(end) <= mean_cost(best)
        n_design = (p + 1) * (p + 2)
        u, hess, rough = _surface(cost, end if kept else best, self.radius, self.seed, n_design)
        # the same surface with other seed sets, about the same point: where each puts the
        # minimum is how far the fit's choice of seeds alone moves the estimate
        minima = [u] + [
            _surface(lambda v, r=r: cost(v, r), u, self.radius, self.seed, n_design)[0]
            for r in range(1, self.seed_sets)
        ]
        seed_cov = _seed_cov(np.array(minima), rough)
        sims = simulate(u)
        bar.close()
        x = lo + u * scale
        # the data's part: H^-1 with the residuals in units of their noise (the noise is
        # measured, not re-estimated from the misfit: the model's own error goes into the
        # prediction intervals through the residuals' scatter instead)
        cov = (np.linalg.pinv(hess) + seed_cov) * np.outer(scale, scale)
        for i, n in enumerate(names):
            self.params_[n] = float(x[i])
            self.stderr_[n] = float(math.sqrt(max(cov[i, i], 0.0)))
            self.bounds_[n] = bounds[n]
        plain = 0.0  # the unweighted cost, for comparison with fits before the weighting
        weighted = []  # the residuals the cost is made of, in `evaluate`'s order
        for key, group in groups.items():
            sim = sims[key]
            for r in group:
                for metric, op, sim_v, meas in _kernel_pairs(r, sim):
                    log_residual = math.log(sim_v / meas)
                    plain += 0.5 * log_residual**2
                    noise = sd[(metric, op, r.workers)]
                    weighted.append(log_residual / noise)
                    row = {
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
                            "measured": _round(meas),
                            "fitted": _round(sim_v),
                            "log_residual": _round(log_residual, 4),
                            "noise_sd": _round(noise, 4),
                        }
                    )
                    self.residuals_.append(row)
        fun = np.array(weighted)
        self.optimizer_["kernel"] = {
            "method": f"best of the model's split and {self.starts} Sobol starts (by the "
            "mean cost over the seed sets), then scipy.optimize.minimize Nelder-Mead "
            "(bounded, scaled coordinates; its end kept where the mean cost over the seed "
            "sets is no higher than at its start) on the sum "
            "of squared log residuals (per-run worker time per sequence and "
            "containers/s, per-op mean times at 2+ workers), each divided by its noise_sd "
            "(per metric, op and worker count: the host's repeat scatter plus the "
            "simulation's over the seed sets); covariance H^-1 + C_seed, H the curvature "
            "of a quadratic surface fitted to the cost over a Sobol design of half-width "
            f"{self.radius} (scaled) around the optimum (the noise taken as measured, not "
            "rescaled by the misfit), C_seed the covariance of the minima of the surface "
            f"under {self.seed_sets} seed sets, at least H^-1 cov(g) H^-1 (cov(g) from the "
            "costs' scatter about it)",
            "seed_sets": self.seed_sets,
            "status": int(res.status),
            "message": str(res.message),
            "nfev": int(res.nfev),
            "nelder_mead_end_kept": bool(kept),
            "evaluations": len(memo),
            "cost": _round(float(0.5 * fun @ fun)),
            "cost_unweighted": _round(plain),
            "residuals": int(fun.size),
            "containers_per_worker": self.containers,
            "seeds": self.seeds,
        }
        self.fixed_["rcu_exp_per_cpu_ns"] = {
            "value": base.rcu_exp_per_cpu_ns,
            "why": f"not identifiable: every run had the same {machine.vcpus} online CPUs, so "
            "the per-CPU part cannot be told from the fixed part (model file value kept)",
        }
        self.fixed_["ops.totals"] = {
            "value": "models/kernel/" + base.name + ".toml",
            "why": "each op's 1-worker total (work + RCU wait) is kept as measured; only its "
            "split into unlocked work, namespace_sem section and RCU sleep is fitted",
        }
        self.fixed_["mount_lock_ns"] = {
            "value": "model file",
            "why": "mount_lock sections (a few hundred ns) are too short "
            "to move the runs' wall times on 2 CPUs; kept as the model file has them",
        }
        self.fixed_["unlocked_ops"] = {
            "value": "fsopen, fsconfig, fsconfig_create, fsmount, mount_setattr (IDMAP only), "
            "close of an attached fd, umount_einval, mountinfo_*",
            "why": "no namespace_sem write section in the kernel (fs/namespace.c; "
            "dissolve_on_fput returns before namespace_lock for an attached mount); overlay "
            "per-layer work stays unlocked too (parsed before do_new_mount locks)",
        }
        self.fixed_["smt_slowdown"] = {
            "value": base.smt_slowdown,
            "why": f"{machine.name} has no SMT: nothing in the data can show it",
        }
        return names, cov

    def _fit_lock(self, machine: Machine, runs: Sequence[PauseRun]) -> tuple[list[str], np.ndarray]:
        by_repeat = {r.repeat: r.pause_ns for r in runs}
        pauses = np.array([by_repeat[k] for k in sorted(by_repeat)])
        pause = float(pauses.mean())
        pause_se = float(pauses.std(ddof=1) / math.sqrt(len(pauses))) if len(pauses) > 1 else 0.0
        timer = statistics.median(r.timer_overhead_ns for r in runs)
        m0 = replace(
            machine,
            microarch=replace(machine.microarch, pause_cycles=pause * machine.microarch.freq_ghz),
        )
        multi = [r for r in runs if r.threads >= 2 and r.threads <= machine.vcpus]
        if not multi:
            raise CohsimError(
                "pause_bench data has no run with 2 or more threads: the "
                "line transfer cannot be fitted"
            )
        keys = sorted({(r.lock, r.threads, r.placement) for r in multi})
        lo, hi = 5.0, 2000.0

        def sims(llc: float) -> dict[tuple[str, int, str], tuple[float, float]]:
            m = replace(m0, coherence=replace(m0.coherence, same_llc_ns=llc))
            out = {}
            for lock, threads, placement in keys:
                cpus: Any = (
                    placement
                    if not placement.startswith("cpus=")
                    else [int(c) for c in placement[5:].split(";")]
                )
                h = handoff_simulate(
                    m,
                    threads,
                    lock=lock,
                    placement=cpus,
                    cs_ns=100.0,
                    think_ns=0.0,
                    acquisitions=2000,
                    seed=self.seed,
                )
                out[(lock, threads, placement)] = (h.p50_ns + timer, h.acquisitions_per_s)
            return out

        def resid(u: np.ndarray) -> np.ndarray:
            s = sims(lo + float(u[0]) * (hi - lo))
            out = []
            for r in multi:
                p50, acq = s[(r.lock, r.threads, r.placement)]
                out += [math.log(p50 / r.p50_ns), math.log(acq / r.acquisitions_per_s)]
            return np.array(out)

        u0 = np.array([(machine.coherence.same_llc_ns - lo) / (hi - lo)])
        from scipy.optimize import least_squares

        res = least_squares(
            resid, np.clip(u0, 0, 1), bounds=(0.0, 1.0), diff_step=0.02, max_nfev=30
        )
        llc = lo + float(res.x[0]) * (hi - lo)
        cov = _cov(res.jac, res.fun, np.array([hi - lo]))
        final = sims(llc)
        for r in multi:
            p50, acq = final[(r.lock, r.threads, r.placement)]
            for metric, sim_v, meas in (
                ("p50_ns", p50, r.p50_ns),
                ("acquisitions_per_s", acq, r.acquisitions_per_s),
            ):
                self.residuals_.append(
                    {
                        "kind": "lock",
                        "lock": r.lock,
                        "threads": r.threads,
                        "placement": r.placement,
                        "repeat": r.repeat,
                        "metric": metric,
                        "measured": _round(meas),
                        "fitted": _round(sim_v),
                        "log_residual": _round(math.log(sim_v / meas), 4),
                    }
                )
        self.params_["same_llc_ns"] = llc
        self.stderr_["same_llc_ns"] = float(math.sqrt(max(cov[0, 0], 0.0)))
        self.bounds_["same_llc_ns"] = (lo, hi)
        self.params_["pause_ns"] = pause
        self.stderr_["pause_ns"] = pause_se
        self.bounds_["pause_ns"] = (0.0, math.inf)
        self.optimizer_["lock"] = {
            "method": "scipy.optimize.least_squares trf, log residuals of 2+-thread p50 and "
            "acquisitions/s; pause_ns measured directly (mean over repeats)",
            "status": int(res.status),
            "message": str(res.message),
            "nfev": int(res.nfev),
            "cost": _round(float(res.cost)),
            "residuals": int(res.fun.size),
            "timer_overhead_ns": _round(timer),
        }
        self.fixed_["llc_service_ns"] = {
            "value": "same_llc_ns / 2",
            "why": "derived from same_llc_ns by "
            "cohsim.lock.handoff.params_from_machine; one LLC and two threads cannot separate them",
        }
        self.fixed_["hub_service_ns"] = {
            "value": "= llc_service_ns",
            "why": "one socket, one LLC: no hub to measure",
        }
        self.fixed_["lock.smt_slowdown"] = {
            "value": 1.2,
            "why": "no SMT on this machine (threads_per_core 1)",
        }
        self.fixed_["spin_loop_ns"] = {
            "value": "10 cycles",
            "why": "not separable from the transfer at 2 threads",
        }
        # pause_ns is measured, not fitted: it has a variance of its own, no covariance term
        return ["same_llc_ns"], cov

    # ----- results ------------------------------------------------------------------------

    def kernel_params(self, base: KernelParams | None = None) -> KernelParams:
        """The fitted kernel (base: the model file the fit started from)."""
        self._check_fitted()
        values = {n: self.params_[n] for n in KERNEL_PARAMS if n in self.params_}
        return apply_kernel_params(base or load_kernel(self.kernel), values)

    def machine(self, machine: Machine | None = None) -> Machine:
        """`machine` (default: the fitted instance) with the fitted PAUSE and transfer."""
        self._check_fitted()
        m = machine or Catalog().get(self.instance_)
        if "pause_ns" in self.params_:
            m = replace(
                m,
                microarch=replace(
                    m.microarch, pause_cycles=self.params_["pause_ns"] * m.microarch.freq_ghz
                ),
            )
        if "same_llc_ns" in self.params_:
            m = replace(m, coherence=replace(m.coherence, same_llc_ns=self.params_["same_llc_ns"]))
        return m

    def _kernel_names(self) -> list[str]:
        return [n for n in self.cov_["names"] if n in KERNEL_PARAMS]

    def sample_kernels(self, base: KernelParams | None, n: int, seed: int) -> list[KernelParams]:
        """`n` kernels with parameters drawn from the fit's normal approximation (clipped to
        the bounds); base: the model file the fit started from (default: load it)."""
        self._check_fitted()
        base = base or load_kernel(self.kernel)
        names = self._kernel_names()
        if not names:
            raise CohsimError("this fit has no kernel parameters (no mount_bench data)")
        idx = [self.cov_["names"].index(x) for x in names]
        cov = np.asarray(self.cov_["matrix"])[np.ix_(idx, idx)]
        mean = np.array([self.params_[x] for x in names])
        rng = np.random.default_rng(seed)
        draws = rng.multivariate_normal(mean, cov, size=n, method="eigh")
        lo = np.array([self.bounds_[x][0] for x in names])
        hi = np.array([self.bounds_[x][1] for x in names])
        draws = np.clip(draws, lo, hi)
        return [apply_kernel_params(base, dict(zip(names, d, strict=True))) for d in draws]

    def predict(
        self,
        strategy: str,
        workers: int,
        layers: int,
        *,
        samples: int = 8,
        containers: int | None = None,
        level: float = 0.9,
        seed: int = 0,
        baseline_mounts: int = 21,
    ) -> dict[str, dict[str, float]]:
        """A mount_bench run predicted: worker time per sequence (ns) and containers/s, each
        {value, low, high}. value: at the fitted parameters (the fit's seeds averaged). The
        interval is for one run (central `level` fraction, lognormal): the spread of `samples`
        parameter draws (each with its own seed) and the fit's residual scatter of that metric
        (log residuals' root mean square), added in quadrature."""
        self._check_fitted()
        if str(layers) not in self.think_ns_.get(strategy, {}):
            raise CohsimError(
                f"no measured think time for {strategy} at {layers} layers "
                f"(the fit saw no 1-worker run of it)"
            )
        machine = Catalog().get(self.instance_)
        base = load_kernel(self.kernel)
        costs = LineCosts(machine, seed=self.seed)

        def run(kernel: KernelParams, seeds: list[int] | None = None) -> SimRun:
            return self._bench_sim(
                machine, kernel, costs, strategy, workers, layers, baseline_mounts, containers,
                seeds=seeds,
            )  # fmt: skip

        point = run(self.host_kernel(self.kernel_params(base)))
        draws = [
            run(k, seeds=[seed + 1000 + j])
            for j, k in enumerate(
                self.host_kernel(d) for d in self.sample_kernels(base, samples, seed)
            )
        ]
        z = float(statistics.NormalDist().inv_cdf(0.5 + level / 2))
        out = {}
        for name in ("stride_ns", "containers_per_s"):
            v = float(getattr(point, name))
            logs = np.log([getattr(d, name) / v for d in draws])
            spread = float(np.sqrt(np.mean(logs**2))) if len(logs) else 0.0
            half = z * math.hypot(spread, self.misfit_sd(name))
            out[name] = {"value": v, "low": v * math.exp(-half), "high": v * math.exp(half)}
        return out

    def misfit_sd(self, metric: str = "stride_ns") -> float:
        """The model's own error on the fitted host, which the parameters' errors leave out:
        the root mean square of the fit's log residuals of a run metric (`stride_ns`, the
        worker time per sequence, or `containers_per_s`), over every run it saw."""
        self._check_fitted()
        res = [
            r["log_residual"]
            for r in self.residuals_
            if r.get("kind") == "kernel" and r["metric"] == metric
        ]
        return float(np.sqrt(np.mean(np.square(res)))) if res else 0.0

    def plot(self, ax: Any) -> list[Any]:
        """Measured vs fitted (log-log), one marker per metric; returns the artists drawn."""
        self._check_fitted()
        artists = []
        for metric, marker in (
            ("stride_ns", "o"),
            ("containers_per_s", "s"),
            ("op_mean_ns", "x"),
            ("p50_ns", "^"),
            ("acquisitions_per_s", "v"),
        ):
            pts = [(r["measured"], r["fitted"]) for r in self.residuals_ if r["metric"] == metric]
            if pts:
                m, f = zip(*pts, strict=True)
                artists.append(ax.scatter(m, f, marker=marker, s=14, label=metric))
        vals = [v for r in self.residuals_ for v in (r["measured"], r["fitted"]) if v > 0]
        if vals:
            lo, hi = min(vals) / 1.5, max(vals) * 1.5
            artists += ax.plot([lo, hi], [lo, hi], "k:", lw=1)
            ax.set_xscale("log")
            ax.set_yscale("log")
        ax.set_xlabel("measured")
        ax.set_ylabel("fitted (simulated)")
        ax.set_title(f"{getattr(self, 'instance_', '')}: calibration fit")
        ax.legend(fontsize="small")
        return artists

    # ----- JSON ---------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The versioned fit document."""
        self._check_fitted()
        applies = self._applies_to()
        params = {}
        for n in sorted(self.params_):
            lo, hi = self.bounds_[n]
            params[n] = {
                "value": _round(self.params_[n]),
                "stderr": _round(self.stderr_[n]),
                "low": _round(lo),
                "high": None if math.isinf(hi) else _round(hi),
                "group": "kernel" if n in KERNEL_PARAMS else "lock",
                "doc": _DOC[n],
            }
        return {
            "schema": SCHEMA,
            "kind": self.kind_,
            "instance": self.instance_,
            "kernel": self.kernel_name_,
            "applies_to": applies,
            "parameters": params,
            "covariance": {
                "names": list(self.cov_["names"]),
                "matrix": [
                    [_round(float(v)) for v in row] for row in np.asarray(self.cov_["matrix"])
                ],
            },
            "residuals": self.residuals_,
            "think_ns": self.think_ns_,
            "op_extra_ns": self.op_extra_ns_,
            "wake_table": self.wake_table_.to_doc() if self.wake_table_ else None,
            "fixed": self.fixed_,
            "data_digests": self.data_digests_,
            "optimizer": self.optimizer_,
            "settings": {
                "containers_per_worker": self.containers,
                "seeds": self.seeds,
                "max_nfev": self.max_nfev,
                "starts": self.starts,
                "seed_sets": self.seed_sets,
                "radius": self.radius,
                "free": list(self.free) if self.free else None,
            },
            "cohsim_version": __version__,
            "seed": self.seed,
        }

    def _applies_to(self) -> dict[str, Any]:
        if hasattr(self, "applies_to_"):
            return dict(self.applies_to_)
        applies: dict[str, Any] = {}
        if self.kind_ in ("kernel", "kernel+lock"):
            applies["kernel"] = {
                "instances": "*",
                "kernel": self.kernel_name_,
                "caveat": f"measured on {self.instance_} (2 vCPUs): the critical-section split "
                "and the grace period are properties of the kernel, but were seen "
                "only at 1-4 workers on 2 CPUs; per-CPU effects are not identified",
            }
        if self.kind_ in ("lock", "kernel+lock"):
            fam = Catalog().get(self.instance_).family
            applies["lock"] = {
                "instances": [self.instance_],
                "families": [],
                "caveat": f"a VM's vCPU-to-vCPU transfer; do not apply to bare-metal {fam} "
                "hosts (calibration/data README)",
            }
        return applies

    def save(self, path: str | Path) -> None:
        """Write the fit JSON atomically (deterministic bytes)."""
        provenance.write_atomic(path, provenance.dumps(self.to_dict()))

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], where: str = "") -> Calibration:
        """Rebuild a fitted Calibration from its JSON document (validated)."""
        if not isinstance(doc, Mapping):
            raise CohsimError("a fit must be a JSON object", where)
        if doc.get("schema") != SCHEMA:
            raise CohsimError(
                f"fit schema {doc.get('schema')!r} is not supported (expected {SCHEMA})", where
            )
        for key in (
            "kind",
            "instance",
            "kernel",
            "parameters",
            "covariance",
            "residuals",
            "fixed",
            "data_digests",
            "optimizer",
            "seed",
            "think_ns",
            "applies_to",
        ):
            if key not in doc:
                raise CohsimError(f"missing key {key}", where)
        if doc["kind"] not in KINDS:
            raise CohsimError(f"kind {doc['kind']!r} is not one of {', '.join(KINDS)}", where)
        settings = doc.get("settings", {})
        c = cls(
            doc["instance"],
            kernel=doc["kernel"],
            seed=int(doc["seed"]),
            containers=int(settings.get("containers_per_worker", 2)),
            seeds=int(settings.get("seeds", 2)),
            max_nfev=int(settings.get("max_nfev", 60)),
            starts=int(settings.get("starts", 8)),
            seed_sets=int(settings.get("seed_sets", 1)),
            free=settings.get("free"),
        )
        c.radius = float(settings.get("radius", c.radius))
        c.params_, c.stderr_, c.bounds_ = {}, {}, {}
        for n, p in doc["parameters"].items():
            if n not in _DOC:
                raise CohsimError(f"unknown parameter parameters.{n}", where)
            try:
                c.params_[n] = float(p["value"])
                c.stderr_[n] = float(p["stderr"])
                hi = math.inf if p["high"] is None else float(p["high"])
                c.bounds_[n] = (float(p["low"]), hi)
            except (KeyError, TypeError, ValueError):
                raise CohsimError(
                    f"parameters.{n} needs numeric value, stderr, low, high", where
                ) from None
        names = list(doc["covariance"].get("names", []))
        matrix = (
            np.array(doc["covariance"].get("matrix", []), dtype=float).reshape(
                len(names), len(names)
            )
            if names
            else np.zeros((0, 0))
        )
        for n in names:
            if n not in c.params_:
                raise CohsimError(f"covariance names {n}, which is not a parameter", where)
        c.cov_ = {"names": names, "matrix": matrix}
        c.residuals_ = list(doc["residuals"])
        c.fixed_ = dict(doc["fixed"])
        c.data_digests_ = dict(doc["data_digests"])
        c.optimizer_ = dict(doc["optimizer"])
        c.think_ns_ = {s: dict(v) for s, v in doc["think_ns"].items()}
        c.op_extra_ns_ = {
            s: {L: dict(ops) for L, ops in v.items()} for s, v in doc.get("op_extra_ns", {}).items()
        }
        table = doc.get("wake_table")
        c.wake_table_ = WakeTable.from_doc(table, where) if table is not None else None
        c.kind_ = doc["kind"]
        c.instance_ = doc["instance"]
        c.kernel_name_ = doc["kernel"]
        c.applies_to_ = dict(doc["applies_to"])
        return c


def load_fit(path: str | Path) -> Calibration:
    """Read a fit JSON written by `Calibration.save` (validated)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CohsimError("no such fit file", str(path)) from None
    except json.JSONDecodeError as exc:
        raise CohsimError(f"invalid JSON: {exc}", str(path)) from None
    return Calibration.from_dict(doc, str(path))


def default_fit(instance_or_family: str) -> Calibration | None:
    """The committed fit that describes this instance or family, if any.

    A fit with kernel parameters applies to every instance (its `applies_to.kernel.instances`
    is "*"); its lock parameters only to the instances/families it names. Exact instance
    matches win; then a family match; then any kernel fit.
    """
    fits = sorted(fits_dir().glob("*.json"))
    loaded = [load_fit(p) for p in fits]
    family = None
    try:
        family = Catalog().get(instance_or_family).family
    except CohsimError:
        family = instance_or_family
    for c in loaded:
        if c.instance_ == instance_or_family:
            return c
    for c in loaded:
        lock = getattr(c, "applies_to_", {}).get("lock", {})
        if instance_or_family in lock.get("instances", []) or family in lock.get("families", []):
            return c
    for c in loaded:
        if getattr(c, "applies_to_", {}).get("kernel", {}).get("instances") == "*":
            return c
    return None


def calibrate(
    paths: Sequence[str | Path],
    *,
    instance: str | None,
    kernel: str = DEFAULT_KERNEL,
    seed: int = 0,
    progress: bool = False,
    on_data: Callable[[BenchData], None] | None = None,
) -> Calibration:
    """Read the bench data and fit (the library call behind `cohsim calibrate`)."""
    data = load_bench(paths)
    if on_data is not None:
        on_data(data)
    return Calibration(instance, kernel=kernel, seed=seed, progress=progress).fit(data)
