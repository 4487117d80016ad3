"""Calibration: the model's free parameters fitted to real benchmark runs, with uncertainty.

- `benchdata`: the runs of mount_bench, pause_bench and wake_bench, read from their CSVs;
- `mountsim`: a mount_bench run simulated (its calls replayed by the kernel model);
- `benchsim`: how a fit simulates a run, with the host's measured bench terms;
- `params`: the fitted parameters and how the kernel ones apply to a kernel model;
- `noise`, `surface`: the kernel fit's residual weights, and the fits' covariances;
- `kernelfit`, `lockfit`: the two fits; `calibration`: the estimator that runs them;
- `fitjson`: the fit JSON (writing, reading, choosing the committed fit); `fitplot`: its plot;
- `heldout`: predictions checked against held-out runs, any runs (`check_runs`) and another
  host's kernel fit (`transfer_kernel`).

Callers outside the package import from here, not from the modules.
"""

from cohsim.calibrate.benchdata import (
    BenchData,
    MountRun,
    PauseRun,
    WakeRun,
    group_runs,
    load_bench,
    medians,
)
from cohsim.calibrate.calibration import Calibration, load_fit
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

__all__ = [
    "BOUND",
    "KERNEL_PARAMS",
    "METRICS",
    "SPLITS",
    "BenchData",
    "Calibration",
    "Checked",
    "HeldOut",
    "MountRun",
    "PauseRun",
    "SimRun",
    "WakeRun",
    "apply_kernel_params",
    "bench_kernel",
    "check_runs",
    "default_fit",
    "group_runs",
    "held_out",
    "load_bench",
    "load_fit",
    "medians",
    "mount_bench_trace",
    "simulate_run",
    "transfer_kernel",
]
