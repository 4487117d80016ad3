"""cohsim: cache coherence under lock contention, and container launch latency, on server CPUs.

The public API, importable from here::

    from cohsim import Burst, Target, predict

    p = predict(Burst(containers=100, layers=50), Target(instance="m7a.24xlarge"))
    print(p.launch_s["p99"], p.miss_chance)

- the question and what it runs on: `Burst`, `Target` (cohsim.predict.question), how the
  replicates run: `RunOptions`;
- predictions: `predict` (a synthesised burst), `replay` (a strace/perf trace), their
  `Prediction` with `Interval`s and `Validity`;
- sweeps: `grid` of `SweepPoint`s, `run_sweep` with `SweepOptions` giving a `Sweep` of `Row`s;
- capacity plans: `plan` with `PlanOptions` giving a `Plan` of `PlanRow`s;
- the machines: `Catalog`, `Machine`; calibration: the estimator `Calibration`, whose fit is a
  `FitResult`, and `load_fit`;
- the one error type: `CohsimError` (and its `UsageError`).

`import cohsim` stays cheap (a few milliseconds: no numpy, no simulation): each name is
imported the first time it is used. `predict` and `plan` are the subpackages of those names,
which are callable as their entry points (cohsim.predict.api.predict, cohsim.plan.api.plan),
so that `from cohsim import plan` and `import cohsim.plan.api` both work. The names' types
are in `__init__.pyi` (for type checkers: this module imports nothing it exports).
"""

from __future__ import annotations

from cohsim import _pure
from cohsim._lazy import lazy_exports

__version__ = "0.1.0"

if _pure.wanted():  # COHSIM_PURE_PYTHON: the sources, not the compiled modules (cohsim._pure)
    _pure.install()

#: each public name -> the module that defines it (imported on first use)
_EXPORTS = {
    "Burst": "cohsim.predict.question",
    "Target": "cohsim.predict.question",
    "RunOptions": "cohsim.predict.options",
    "predict": "cohsim.predict",
    "replay": "cohsim.predict.api",
    "Prediction": "cohsim.predict.results",
    "Interval": "cohsim.predict.intervals",
    "Validity": "cohsim.predict.validity",
    "grid": "cohsim.sweep.grid",
    "SweepPoint": "cohsim.sweep.grid",
    "run_sweep": "cohsim.sweep.runner",
    "SweepOptions": "cohsim.sweep.sweepoptions",
    "Sweep": "cohsim.sweep.runner",
    "Row": "cohsim.sweep.row",
    "plan": "cohsim.plan",
    "PlanOptions": "cohsim.plan.api",
    "Plan": "cohsim.plan.api",
    "PlanRow": "cohsim.plan.api",
    "Catalog": "cohsim.machine.catalog",
    "Machine": "cohsim.machine.model",
    "Calibration": "cohsim.calibrate.calibration",
    "FitResult": "cohsim.calibrate.fitresult",
    "load_fit": "cohsim.calibrate.fitresult",
    "CohsimError": "cohsim.errors",
    "UsageError": "cohsim.errors",
}

#: the public API: every name of `_EXPORTS`, and the version
__all__ = [
    "Burst",
    "Calibration",
    "Catalog",
    "CohsimError",
    "FitResult",
    "Interval",
    "Machine",
    "Plan",
    "PlanOptions",
    "PlanRow",
    "Prediction",
    "Row",
    "RunOptions",
    "Sweep",
    "SweepOptions",
    "SweepPoint",
    "Target",
    "UsageError",
    "Validity",
    "__version__",
    "grid",
    "load_fit",
    "plan",
    "predict",
    "replay",
    "run_sweep",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
