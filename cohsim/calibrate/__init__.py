"""Calibration: the model's free parameters fitted to real benchmark runs, with uncertainty.

Two sides. The result, which predictions load (cohsim.predict imports nothing else of this
package; tests/calibrate/test_fit_result.py checks it):

- `fitresult`: a fit's `FitResult`, frozen (parameters, uncertainties, report, how it applies
  to a kernel model and a machine), and `load_fit`;
- `fitjson`: the fit JSON's one definition; `fitparams`: the fitted parameters and how the kernel
  ones apply to a kernel model; `committed`: which committed fit describes an instance
  (`default_fit`); `fitplot`: a fit's picture.

The estimator, which makes a result from bench data:

- `measuredruns`: the runs of mount_bench, pause_bench and wake_bench, read from their CSVs;
- `mountreplay`: a mount_bench run simulated (its calls replayed by the kernel model);
- `hostterms`: how a fit simulates a run, with the host's measured bench terms (`bench_of`,
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

from typing import TYPE_CHECKING

from cohsim._lazy import lazy_exports

if TYPE_CHECKING:  # the names' types, for type checkers: at run time each is imported on use
    from cohsim.calibrate.calibration import Calibration
    from cohsim.calibrate.committed import default_fit
    from cohsim.calibrate.fitparams import KERNEL_PARAMS, apply_kernel_params
    from cohsim.calibrate.fitresult import FitResult, load_fit
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
    from cohsim.calibrate.hostterms import bench_of, fit_bench_kernel, predict_run
    from cohsim.calibrate.measuredruns import (
        BenchData,
        MountRun,
        PauseRun,
        WakeRun,
        group_runs,
        load_bench,
        medians,
    )
    from cohsim.calibrate.mountreplay import SimRun, bench_kernel, mount_bench_trace, simulate_run

#: each public name -> the module that defines it (imported on first use)
_EXPORTS = {
    "BenchData": "cohsim.calibrate.measuredruns",
    "MountRun": "cohsim.calibrate.measuredruns",
    "PauseRun": "cohsim.calibrate.measuredruns",
    "WakeRun": "cohsim.calibrate.measuredruns",
    "group_runs": "cohsim.calibrate.measuredruns",
    "load_bench": "cohsim.calibrate.measuredruns",
    "medians": "cohsim.calibrate.measuredruns",
    "bench_of": "cohsim.calibrate.hostterms",
    "fit_bench_kernel": "cohsim.calibrate.hostterms",
    "predict_run": "cohsim.calibrate.hostterms",
    "Calibration": "cohsim.calibrate.calibration",
    "default_fit": "cohsim.calibrate.committed",
    "BOUND": "cohsim.calibrate.heldout",
    "METRICS": "cohsim.calibrate.heldout",
    "SPLITS": "cohsim.calibrate.heldout",
    "Checked": "cohsim.calibrate.heldout",
    "HeldOut": "cohsim.calibrate.heldout",
    "check_runs": "cohsim.calibrate.heldout",
    "held_out": "cohsim.calibrate.heldout",
    "transfer_kernel": "cohsim.calibrate.heldout",
    "SimRun": "cohsim.calibrate.mountreplay",
    "bench_kernel": "cohsim.calibrate.mountreplay",
    "mount_bench_trace": "cohsim.calibrate.mountreplay",
    "simulate_run": "cohsim.calibrate.mountreplay",
    "KERNEL_PARAMS": "cohsim.calibrate.fitparams",
    "apply_kernel_params": "cohsim.calibrate.fitparams",
    "FitResult": "cohsim.calibrate.fitresult",
    "load_fit": "cohsim.calibrate.fitresult",
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


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
