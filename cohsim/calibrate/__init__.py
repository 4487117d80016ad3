"""Calibration: the model's free parameters fitted to real benchmark runs, with uncertainty.

Two sides. The result, which predictions load (cohsim.predict imports nothing else of this
package; tests/calibrate/test_fit_result.py checks it):

- `result`: a fit's `FitResult`, frozen (parameters, uncertainties, report, how it applies
  to a kernel model and a machine), and `load_fit`;
- `fitjson`: the fit JSON's one definition; `params`: the fitted parameters and how the kernel
  ones apply to a kernel model; `committed`: which committed fit describes an instance
  (`default_fit`); `fitplot`: a fit's picture.

The estimator, which makes a result from bench data:

- `benchdata`: the runs of mount_bench, pause_bench and wake_bench, read from their CSVs;
- `mountsim`: a mount_bench run simulated (its calls replayed by the kernel model);
- `benchsim`: how a fit simulates a run, with the host's measured bench terms (`bench_of`,
  `fit_bench_kernel`), and a run predicted from a fit (`predict_run`);
- `noise`, `surface`, `measured`: the kernel fit's residual weights, the fits' covariances,
  the host's terms measured directly;
- `kernelfit`, `lockfit`: the two fits; `calibration`: the estimator that runs them;
- `heldout`: predictions checked against held-out runs, any runs (`check_runs`) and another
  host's kernel fit (`transfer_kernel`).

Callers outside the package import from here, not from the modules. Each name is imported
the first time it is asked for (PEP 562, as `cohsim` does), so that importing the result
side does not import the estimator.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names' types, for type checkers: at run time each is imported on use
    from cohsim.calibrate.benchdata import (
        BenchData,
        MountRun,
        PauseRun,
        WakeRun,
        group_runs,
        load_bench,
        medians,
    )
    from cohsim.calibrate.benchsim import bench_of, fit_bench_kernel, predict_run
    from cohsim.calibrate.calibration import Calibration
    from cohsim.calibrate.committed import default_fit
    from cohsim.calibrate.heldout import (
        BOUND,
        METRICS,
        SPLITS,
        Checked,
        HeldOut,
        check_runs,
        held_out,
        transfer_kernel,
    )
    from cohsim.calibrate.mountsim import SimRun, bench_kernel, mount_bench_trace, simulate_run
    from cohsim.calibrate.params import KERNEL_PARAMS, apply_kernel_params
    from cohsim.calibrate.result import FitResult, load_fit

#: each public name -> the module that defines it (imported on first use)
_EXPORTS = {
    "BenchData": "benchdata",
    "MountRun": "benchdata",
    "PauseRun": "benchdata",
    "WakeRun": "benchdata",
    "group_runs": "benchdata",
    "load_bench": "benchdata",
    "medians": "benchdata",
    "bench_of": "benchsim",
    "fit_bench_kernel": "benchsim",
    "predict_run": "benchsim",
    "Calibration": "calibration",
    "default_fit": "committed",
    "BOUND": "heldout",
    "METRICS": "heldout",
    "SPLITS": "heldout",
    "Checked": "heldout",
    "HeldOut": "heldout",
    "check_runs": "heldout",
    "held_out": "heldout",
    "transfer_kernel": "heldout",
    "SimRun": "mountsim",
    "bench_kernel": "mountsim",
    "mount_bench_trace": "mountsim",
    "simulate_run": "mountsim",
    "KERNEL_PARAMS": "params",
    "apply_kernel_params": "params",
    "FitResult": "result",
    "load_fit": "result",
}

__all__ = [
    "BOUND",
    "KERNEL_PARAMS",
    "METRICS",
    "SPLITS",
    "BenchData",
    "Calibration",
    "Checked",
    "FitResult",
    "HeldOut",
    "MountRun",
    "PauseRun",
    "SimRun",
    "WakeRun",
    "apply_kernel_params",
    "bench_kernel",
    "bench_of",
    "check_runs",
    "default_fit",
    "fit_bench_kernel",
    "group_runs",
    "held_out",
    "load_bench",
    "load_fit",
    "medians",
    "mount_bench_trace",
    "predict_run",
    "simulate_run",
    "transfer_kernel",
]


def __getattr__(name: str) -> Any:
    """A public name, imported the first time it is asked for (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'cohsim.calibrate' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"cohsim.calibrate.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
