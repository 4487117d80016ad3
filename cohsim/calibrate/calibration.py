"""The calibration estimator: kernel and lock parameters fitted to real bench data, with
uncertainty, and predictions of mount_bench runs from the fit.

`Calibration` follows the estimator contract the library's fitted objects share: the
constructor stores its arguments, `fit(data)` returns self, learned attributes end in `_`, and
`predict` / `sample_kernels` refuse to run unfitted. The fit itself is the phases' work:

- `cohsim.calibrate.benchsim`: mount_bench's own time between calls and each op's 1-worker
  excess, measured (not fitted) from the 1-worker runs;
- `cohsim.calibrate.kernelfit`: the critical-section split and the grace period
  (`cohsim.calibrate.params`), fitted to mount_bench runs;
- `cohsim.calibrate.lockfit`: the cache-line transfer fitted to pause_bench runs, the PAUSE
  latency measured;
- wake_bench's wake-up latency, measured directly (`_fix_wake`).

Prediction intervals come from parameter samples (multivariate normal, clipped to the
bounds) crossed with seeds, widened in quadrature by the fit's residual scatter
(`misfit_sd`). A fit is written and read as JSON by `cohsim.calibrate.fitjson`
(`save`, `load_fit`); `cohsim.calibrate.committed.default_fit` picks the committed fit
(calibration/fits/) that describes an instance.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from cohsim import provenance
from cohsim.calibrate.benchdata import BenchData, load_bench
from cohsim.calibrate.benchsim import BenchSim, fit_bench_kernel, measure_bench_terms
from cohsim.calibrate.fitjson import (
    Covariance,
    FitDoc,
    applies_to_doc,
    parse_doc,
    read_doc,
    to_doc,
)
from cohsim.calibrate.fitplot import plot_fit
from cohsim.calibrate.kernelfit import KernelSettings, fit_kernel
from cohsim.calibrate.lockfit import fit_lock
from cohsim.calibrate.measured import measured_terms
from cohsim.calibrate.mountsim import SimRun
from cohsim.calibrate.params import KERNEL_PARAMS, Param, PartFit, apply_kernel_params
from cohsim.calibrate.surface import block_diagonal
from cohsim.errors import CohsimError
from cohsim.kernel.costs import DEFAULT_KERNEL, KernelParams, load_kernel
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.waketable import WakeTable
from cohsim.machine.catalog import Catalog
from cohsim.machine.model import Machine


class Calibration:
    """Fit of kernel (mount_bench) and lock (pause_bench) parameters, with uncertainty."""

    # learned by fit (or read by load_fit)
    base_kernel_: KernelParams  #: the model file the fit started from (fit only)
    parameters_: dict[str, Param]  #: fitted and measured parameters (see params_ and co.)
    cov_: Covariance  #: the fitted parameters' covariance
    residuals_: list[dict[str, Any]]  #: one row per compared figure (the fit JSON's rows)
    optimizer_: dict[str, Any]  #: per part (kernel, lock), the optimizer's report
    fixed_: dict[str, dict[str, Any]]  #: what was kept fixed, and why
    think_ns_: dict[str, dict[str, float]]  #: strategy -> layers -> mount_bench's time per call
    op_extra_ns_: dict[str, dict[str, dict[str, float]]]  #: ... -> op -> 1-worker excess, ns
    kind_: str  #: "kernel", "lock" or "kernel+lock"
    instance_: str  #: the machine the data was measured on
    kernel_name_: str  #: the kernel model's name
    data_digests_: dict[str, str]  #: bench file -> sha256
    applies_to_: dict[str, Any]  #: where the kernel and lock parts apply

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

    def _machine(self) -> Machine:
        if self.instance is None:
            raise CohsimError("no instance: pass --instance (the machine the data was measured on)")
        return Catalog().get(self.instance)

    def _check_fitted(self) -> None:
        if not hasattr(self, "parameters_"):
            raise CohsimError("this Calibration is not fitted: call fit(data) or load_fit(path)")

    @property
    def params_(self) -> dict[str, float]:
        """Each parameter's value (a view of `parameters_`)."""
        return {n: p.value for n, p in self.parameters_.items()}

    @property
    def stderr_(self) -> dict[str, float]:
        """Each parameter's standard error (a view of `parameters_`)."""
        return {n: p.stderr for n, p in self.parameters_.items()}

    @property
    def bounds_(self) -> dict[str, tuple[float, float]]:
        """Each parameter's bounds, high possibly inf (a view of `parameters_`)."""
        return {n: p.bounds for n, p in self.parameters_.items()}

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
        machine = self._machine()
        base = load_kernel(self.kernel)
        self.base_kernel_ = base
        self._reset()
        names: list[str] = []
        blocks: list[np.ndarray] = []
        base = self._fix_measured(base, data)
        self.wake_table_ = data.wake_idle
        if self.wake_table_ is not None:
            base = replace(base, wake_table=self.wake_table_)
        parts: list[tuple[str, PartFit]] = []
        if data.mount:
            parts.append(("kernel", self._fit_kernel(machine, base, data)))
        if data.pause:
            parts.append(("lock", fit_lock(machine, data.pause, self.seed)))
        for part, learned in parts:
            self._learn_part(part, learned)
            names += learned.names
            blocks.append(learned.cov)
        self.cov_ = {"names": names, "matrix": block_diagonal(blocks)}
        self.kind_ = (
            "kernel+lock" if data.mount and data.pause else ("kernel" if data.mount else "lock")
        )
        self.data_digests_ = {
            f"{Path(p).parent.name}/{Path(p).name}": d for p, d in sorted(data.digests.items())
        }
        self.instance_ = machine.name
        self.kernel_name_ = base.name
        self.__dict__.pop("applies_to_", None)  # a refit describes its own data
        self.applies_to_ = self.applies_to()
        return self

    def _reset(self) -> None:
        """Empty learned attributes, filled by the fit's parts."""
        self.parameters_ = {}
        self.residuals_ = []
        self.optimizer_ = {}
        self.fixed_ = {}
        self.think_ns_ = {}
        self.op_extra_ns_ = {}

    def _fit_kernel(self, machine: Machine, base: KernelParams, data: BenchData) -> PartFit:
        """The bench terms (`think_ns_`, `op_extra_ns_`), then the kernel fit."""
        costs = LineCosts(machine, seed=self.seed)
        self.think_ns_, self.op_extra_ns_ = measure_bench_terms(
            machine, base, costs, data.mount, self.containers, self.seed
        )
        settings = KernelSettings(
            free=self.free,
            starts=self.starts,
            max_nfev=self.max_nfev,
            seed_sets=self.seed_sets,
            radius=self.radius,
            seed=self.seed,
            progress=self.progress,
        )
        return fit_kernel(self._bench(machine, costs), base, data.mount, settings)

    def _learn_part(self, part: str, fit: PartFit) -> None:
        """Take in what one part of the fit (kernel or lock) learned."""
        self.parameters_.update(fit.parameters)
        self.residuals_ += fit.residuals
        self.optimizer_[part] = fit.optimizer
        self.fixed_ = {**fit.fixed, **self.fixed_}  # a term measured directly stays so

    def _fix_measured(self, base: KernelParams, data: BenchData) -> KernelParams:
        """The host's terms measured directly (cohsim.calibrate.measured: wake_bench's wake-up
        latency, walk_bench's grace period per busy CPU): they describe this host only."""
        wakes = [float(r.wake_ns) for r in data.wake]
        for name, param, note in measured_terms(base, wakes, data.walk):
            self.fixed_[name] = note
            if param is not None:
                self.parameters_[name] = param
                base = base.with_values(**{name: param.value})
        return base

    # ----- simulating mount_bench with the fit ---------------------------------------------

    def host_kernel(self, kernel: KernelParams) -> KernelParams:
        """`kernel` with this fit's host-only terms (the measured wake-up latency: wake_bench's
        `wake_ns`, and the table by idle duration where the fit had one; the grace period's
        part per busy CPU where walk_bench measured it)."""
        self._check_fitted()
        for name in ("wake_ns", "rcu_exp_per_cpu_ns"):
            if name in self.parameters_:
                kernel = kernel.with_values(**{name: self.parameters_[name].value})
        if self.wake_table_ is not None:
            kernel = replace(kernel, wake_table=self.wake_table_)
        return kernel

    def _bench(self, machine: Machine, costs: LineCosts) -> BenchSim:
        return BenchSim(
            machine=machine,
            costs=costs,
            think_ns=self.think_ns_,
            op_extra_ns=self.op_extra_ns_,
            containers=self.containers,
            seed=self.seed,
            seeds=self.seeds,
        )

    def mount_bench_kernel(self, kernel: KernelParams, strategy: str, layers: int) -> KernelParams:
        """`kernel` as this fit simulates mount_bench with it: no runtime or node daemons
        (`bench_kernel`) and each op's measured 1-worker excess (`op_extra_ns_`) added."""
        return fit_bench_kernel(kernel, self.op_extra_ns_, strategy, layers)

    def bench_sim(
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
        bench = self._bench(machine, costs)
        return bench.run(kernel, strategy, workers, layers, baseline_mounts, containers, seeds)

    # ----- results ------------------------------------------------------------------------

    def kernel_params(self, base: KernelParams | None = None) -> KernelParams:
        """The fitted kernel (base: the model file the fit started from)."""
        self._check_fitted()
        values = {n: p.value for n, p in self.parameters_.items() if n in KERNEL_PARAMS}
        return apply_kernel_params(base or load_kernel(self.kernel), values)

    def machine(self, machine: Machine | None = None) -> Machine:
        """`machine` (default: the fitted instance) with the fitted PAUSE and transfer."""
        self._check_fitted()
        m = machine or Catalog().get(self.instance_)
        params = self.params_
        if "pause_ns" in params:
            m = replace(
                m,
                microarch=replace(
                    m.microarch, pause_cycles=params["pause_ns"] * m.microarch.freq_ghz
                ),
            )
        if "same_llc_ns" in params:
            m = replace(m, coherence=replace(m.coherence, same_llc_ns=params["same_llc_ns"]))
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
        chosen = [self.parameters_[x] for x in names]
        mean = np.array([p.value for p in chosen])
        rng = np.random.default_rng(seed)
        draws = rng.multivariate_normal(mean, cov, size=n, method="eigh")
        lo = np.array([p.low for p in chosen])
        hi = np.array([p.high for p in chosen])
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
        mountinfo_sample: bool = True,
        machine: Machine | None = None,
    ) -> dict[str, dict[str, float]]:
        """A mount_bench run predicted: worker time per sequence (ns) and containers/s, each
        {value, low, high} (`mountinfo_sample`: False for a `--mountinfo-every 0` run).
        `machine`: simulate there, not on the fitted instance (e.g. it confined to fewer CPUs).
        value: at the fitted parameters (the fit's seeds averaged). The interval is for one
        run (central `level` fraction, lognormal): the spread of `samples` parameter draws
        (each with its own seed) and the fit's residual scatter of that metric (log residuals'
        root mean square), added in quadrature."""
        self._check_fitted()
        if str(layers) not in self.think_ns_.get(strategy, {}):
            raise CohsimError(
                f"no measured think time for {strategy} at {layers} layers "
                f"(the fit saw no 1-worker run of it)"
            )
        machine = machine or Catalog().get(self.instance_)
        base = load_kernel(self.kernel)
        bench = self._bench(machine, LineCosts(machine, seed=self.seed))

        def run(kernel: KernelParams, seeds: list[int] | None = None) -> SimRun:
            shape = (strategy, workers, layers, baseline_mounts, containers, seeds)
            return bench.run(kernel, *shape, mountinfo_sample=mountinfo_sample)

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
        """Measured vs fitted (log-log), one marker per metric; returns the artists drawn
        (`cohsim.calibrate.fitplot`)."""
        self._check_fitted()
        return plot_fit(self.residuals_, getattr(self, "instance_", ""), ax)

    # ----- JSON (the format: cohsim.calibrate.fitjson) -------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The versioned fit document."""
        self._check_fitted()
        return to_doc(self, self.applies_to())

    def applies_to(self) -> dict[str, Any]:
        """Where this fit's parts apply: the kernel part to every instance, the lock part to
        the fitted instance only (as read from a fit file, where it was loaded from one)."""
        if hasattr(self, "applies_to_"):
            return dict(self.applies_to_)
        return applies_to_doc(self.kind_, self.instance_, self.kernel_name_)

    def save(self, path: str | Path) -> None:
        """Write the fit JSON atomically (deterministic bytes; no missing folder is made)."""
        provenance.write_atomic(path, provenance.dumps(self.to_dict()), make_dirs=False)

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], where: str = "") -> Calibration:
        """Rebuild a fitted Calibration from its JSON document (validated)."""
        return cls._from_record(parse_doc(doc, where))

    @classmethod
    def _from_record(cls, d: FitDoc) -> Calibration:
        s = d.settings
        c = cls(
            s.instance,
            kernel=s.kernel,
            seed=s.seed,
            containers=s.containers,
            seeds=s.seeds,
            max_nfev=s.max_nfev,
            starts=s.starts,
            seed_sets=s.seed_sets,
            free=s.free,
        )
        if s.radius is not None:
            c.radius = s.radius
        c.parameters_ = d.parameters
        c.cov_ = d.cov
        c.residuals_ = d.residuals
        c.fixed_ = d.fixed
        c.data_digests_ = d.data_digests
        c.optimizer_ = d.optimizer
        c.think_ns_ = d.think_ns
        c.op_extra_ns_ = d.op_extra_ns
        c.wake_table_ = d.wake_table
        c.kind_ = d.kind
        c.instance_ = d.instance
        c.kernel_name_ = d.kernel_name
        c.applies_to_ = d.applies_to
        return c


def load_fit(path: str | Path) -> Calibration:
    """Read a fit JSON written by `Calibration.save` (validated)."""
    return Calibration.from_dict(read_doc(path), str(path))
