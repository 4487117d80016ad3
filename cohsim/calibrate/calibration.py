"""The calibration estimator: kernel and lock parameters fitted to real bench data, with
uncertainty.

`Calibration` is the estimator: the constructor stores its settings and nothing else, and
`fit(data)` returns what the fit learned as a frozen `FitResult` (cohsim.calibrate.fitresult),
as lmfit's `Model.fit` returns a `ModelResult`: the parameters with standard errors and
bounds, their covariance, the residual rows, the optimizer's report and where the fit
applies. The result is what predictions load (`load_fit`, `default_fit`), without this
module or the fit's phases; a result that does not exist cannot be used unfitted. The fit
itself is the phases' work:

- `cohsim.calibrate.hostterms`: mount_bench's own time between calls and each op's 1-worker
  excess, measured (not fitted) from the 1-worker runs;
- `cohsim.calibrate.kernelfit`: the critical-section split and the grace period
  (`cohsim.calibrate.fitparams`), fitted to mount_bench runs;
- `cohsim.calibrate.lockfit`: the cache-line transfer fitted to pause_bench runs, the PAUSE
  latency measured;
- the host's terms measured directly (`cohsim.calibrate.measured`: wake_bench's wake-up
  latency, walk_bench's grace period per busy CPU).

A mount_bench run is predicted from a fit by `cohsim.calibrate.hostterms.predict_run`
(the held-out checks, cohsim.calibrate.heldout); a fit is written and read as JSON by
`FitResult.save` and `load_fit` (the format: cohsim.calibrate.fitjson).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from cohsim.calibrate.fitjson import RADIUS, FitSettings, applies_to_doc
from cohsim.calibrate.fitparams import Param, PartFit
from cohsim.calibrate.fitresult import FitResult
from cohsim.calibrate.hostterms import BenchSim, measure_bench_terms
from cohsim.calibrate.kernelfit import KernelSettings, fit_kernel
from cohsim.calibrate.lockfit import fit_lock
from cohsim.calibrate.measured import measured_terms
from cohsim.calibrate.measuredruns import BenchData, load_bench
from cohsim.calibrate.surface import block_diagonal
from cohsim.errors import CohsimError
from cohsim.kernel.costs import DEFAULT_KERNEL, KernelParams, load_kernel
from cohsim.kernel.linecosts import LineCosts
from cohsim.machine.catalog import Catalog
from cohsim.machine.model import Machine


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
        self.radius = RADIUS
        self.free = free  #: kernel parameters to fit (None: all of KERNEL_PARAMS)
        self.progress = progress

    def _machine(self) -> Machine:
        if self.instance is None:
            raise CohsimError("no instance: pass --instance (the machine the data was measured on)")
        return Catalog().get(self.instance)

    def _settings(self, instance: str) -> FitSettings:
        """The settings a fit records (`instance`: the machine's catalog name)."""
        return FitSettings(
            instance=instance,
            kernel=self.kernel,
            seed=self.seed,
            containers=self.containers,
            seeds=self.seeds,
            max_nfev=self.max_nfev,
            starts=self.starts,
            seed_sets=self.seed_sets,
            free=self.free,
            radius=self.radius,
        )

    def fit(self, data: BenchData | Sequence[str | Path]) -> FitResult:
        """Fit to `data` (a BenchData or bench files/directories); returns the fit."""
        if not isinstance(data, BenchData):
            data = load_bench(data)
        if not data.mount and not data.pause:
            raise CohsimError(
                "no mount_bench or pause_bench runs in the data: nothing to fit "
                "(wake_bench data only fixes the wake-up latency next to them)"
            )
        machine = self._machine()
        learned = _Learned()
        base = learned.fix_measured(load_kernel(self.kernel), data)
        if data.wake_idle is not None:
            base = replace(base, wake_table=data.wake_idle)
        think_ns: dict[str, dict[str, float]] = {}
        op_extra_ns: dict[str, dict[str, dict[str, float]]] = {}
        if data.mount:
            costs = LineCosts(machine, seed=self.seed)
            think_ns, op_extra_ns = measure_bench_terms(
                machine, base, costs, data.mount, self.containers, self.seed
            )
            bench = BenchSim(
                machine, costs, think_ns, op_extra_ns, self.containers, self.seed, self.seeds
            )
            learned.take("kernel", fit_kernel(bench, base, data.mount, self._kernel_settings()))
        if data.pause:
            learned.take("lock", fit_lock(machine, data.pause, self.seed))
        kind = "kernel+lock" if data.mount and data.pause else ("kernel" if data.mount else "lock")
        return FitResult(
            settings=self._settings(machine.name),
            kind=kind,
            instance=machine.name,
            kernel_name=base.name,
            parameters=learned.parameters,
            cov={"names": learned.names, "matrix": block_diagonal(learned.blocks)},
            residuals=learned.residuals,
            fixed=learned.fixed,
            data_digests={
                f"{Path(p).parent.name}/{Path(p).name}": d for p, d in sorted(data.digests.items())
            },
            optimizer=learned.optimizer,
            think_ns=think_ns,
            op_extra_ns=op_extra_ns,
            wake_table=data.wake_idle,
            applies_to=applies_to_doc(kind, machine.name, base.name),
        )

    def _kernel_settings(self) -> KernelSettings:
        return KernelSettings(
            free=self.free,
            starts=self.starts,
            max_nfev=self.max_nfev,
            seed_sets=self.seed_sets,
            radius=self.radius,
            seed=self.seed,
            progress=self.progress,
        )


@dataclass
class _Learned:
    """What the fit's parts learned, gathered as they run (`Calibration.fit` makes the
    result of it)."""

    parameters: dict[str, Param] = field(default_factory=dict)
    residuals: list[dict[str, Any]] = field(default_factory=list)
    optimizer: dict[str, Any] = field(default_factory=dict)
    fixed: dict[str, dict[str, Any]] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)  #: the covariance's, block by block
    blocks: list[np.ndarray] = field(default_factory=list)

    def fix_measured(self, base: KernelParams, data: BenchData) -> KernelParams:
        """The host's terms measured directly (cohsim.calibrate.measured: wake_bench's wake-up
        latency, walk_bench's grace period per busy CPU): they describe this host only."""
        wakes = [float(r.wake_ns) for r in data.wake]
        for name, param, note in measured_terms(base, wakes, data.walk, data.wake_step):
            self.fixed[name] = note
            if param is not None:
                self.parameters[name] = param
                base = base.with_values(**{name: param.value})
        return base

    def take(self, part: str, fit: PartFit) -> None:
        """Take in what one part of the fit (kernel or lock) learned."""
        self.parameters.update(fit.parameters)
        self.residuals += fit.residuals
        self.optimizer[part] = fit.optimizer
        self.fixed = {**fit.fixed, **self.fixed}  # a term measured directly stays so
        self.names += fit.names
        self.blocks.append(fit.cov)
