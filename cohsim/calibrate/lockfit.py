"""The lock fit: the cache-line transfer between the host's CPUs, from pause_bench runs.

The PAUSE latency is measured directly (`pause_ns`, mean over repeats); `same_llc_ns` (the
cache-line transfer between the two vCPUs, with the level-2 service time derived from it) is
fitted to the 2-thread ttas and ticket p50 latencies and throughput, the measured clock-read
overhead added to the simulated latencies (`cohsim.lock.handoff` simulates them). Residuals
are log(simulated / measured); the covariance is (J^T J)^-1 s^2 (`cohsim.calibrate.surface`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from cohsim.calibrate.fitjson import round_sig
from cohsim.calibrate.fitparams import Param, PartFit
from cohsim.calibrate.measuredruns import PauseRun
from cohsim.calibrate.surface import lsq_cov
from cohsim.errors import CohsimError
from cohsim.machine.model import Machine

#: the bounds of the fitted transfer, ns
LLC_BOUNDS = (5.0, 2000.0)
#: (lock, threads, placement): a pause_bench configuration
Config = tuple[str, int, str]

#: what the lock fit keeps fixed, and why (the fit JSON's `fixed`)
_FIXED: dict[str, dict[str, Any]] = {
    "llc_service_ns": {
        "value": "same_llc_ns / 2",
        "why": "derived from same_llc_ns by "
        "cohsim.lock.params.params_from_machine; one LLC and two threads cannot separate them",
    },
    "hub_service_ns": {
        "value": "= llc_service_ns",
        "why": "one socket, one LLC: no hub to measure",
    },
    "lock.smt_slowdown": {
        "value": 1.2,
        "why": "no SMT on this machine (threads_per_core 1)",
    },
    "spin_loop_ns": {
        "value": "10 cycles",
        "why": "not separable from the transfer at 2 threads",
    },
}


@dataclass(frozen=True)
class _LockSim:
    """pause_bench's 2+-thread configurations simulated on `machine` (the measured PAUSE)
    at a candidate transfer; `timer`: the clock-read overhead every measured latency has."""

    machine: Machine
    configs: list[Config]
    timer: float
    seed: int

    def __call__(self, llc: float) -> dict[Config, tuple[float, float]]:
        """(p50 latency + timer, acquisitions/s) per configuration at transfer `llc` ns."""
        from cohsim.lock.handoff import simulate as handoff_simulate  # simpy: loaded for fits only
        from cohsim.lock.handoffoptions import HandoffOptions

        m = replace(self.machine, coherence=replace(self.machine.coherence, same_llc_ns=llc))
        out = {}
        for lock, threads, placement in self.configs:
            cpus: str | list[int] = (
                placement
                if not placement.startswith("cpus=")
                else [int(c) for c in placement[5:].split(";")]
            )
            options = HandoffOptions(
                lock=lock,
                placement=cpus,
                cs_ns=100.0,
                think_ns=0.0,
                acquisitions=2000,
                seed=self.seed,
            )
            h = handoff_simulate(m, threads, options)
            out[(lock, threads, placement)] = (h.p50_ns + self.timer, h.acquisitions_per_s)
        return out


def _measured_pause(runs: Sequence[PauseRun]) -> tuple[float, float]:
    """The PAUSE latency (mean over repeats) and its standard error."""
    by_repeat = {r.repeat: r.pause_ns for r in runs}
    pauses = np.array([by_repeat[k] for k in sorted(by_repeat)])
    pause = float(pauses.mean())
    pause_se = float(pauses.std(ddof=1) / math.sqrt(len(pauses))) if len(pauses) > 1 else 0.0
    return pause, pause_se


def _residual_rows(
    multi: Sequence[PauseRun], final: dict[Config, tuple[float, float]]
) -> list[dict[str, Any]]:
    rows = []
    for r in multi:
        p50, acq = final[(r.lock, r.threads, r.placement)]
        for metric, sim_v, meas in (
            ("p50_ns", p50, r.p50_ns),
            ("acquisitions_per_s", acq, r.acquisitions_per_s),
        ):
            rows.append(
                {
                    "kind": "lock",
                    "lock": r.lock,
                    "threads": r.threads,
                    "placement": r.placement,
                    "repeat": r.repeat,
                    "metric": metric,
                    "measured": round_sig(meas),
                    "fitted": round_sig(sim_v),
                    "log_residual": round_sig(math.log(sim_v / meas), 4),
                }
            )
    return rows


def fit_lock(machine: Machine, runs: Sequence[PauseRun], seed: int) -> PartFit:
    """Fit the transfer to pause_bench `runs` measured on `machine` (simulated with `seed`)."""
    pause, pause_se = _measured_pause(runs)
    timer = statistics.median(r.timer_overhead_ns for r in runs)
    m0 = replace(
        machine,
        microarch=replace(machine.microarch, pause_cycles=pause * machine.microarch.freq_ghz),
    )
    multi = [r for r in runs if r.threads >= 2 and r.threads <= machine.vcpus]
    if not multi:
        raise CohsimError(
            "pause_bench data has no run with 2 or more threads: the line transfer cannot be fitted"
        )
    sims = _LockSim(m0, sorted({(r.lock, r.threads, r.placement) for r in multi}), timer, seed)
    lo, hi = LLC_BOUNDS

    def resid(u: np.ndarray) -> np.ndarray:
        s = sims(lo + float(u[0]) * (hi - lo))
        out = []
        for r in multi:
            p50, acq = s[(r.lock, r.threads, r.placement)]
            out += [math.log(p50 / r.p50_ns), math.log(acq / r.acquisitions_per_s)]
        return np.array(out)

    u0 = np.array([(machine.coherence.same_llc_ns - lo) / (hi - lo)])
    from scipy.optimize import least_squares

    res = least_squares(resid, np.clip(u0, 0, 1), bounds=(0.0, 1.0), diff_step=0.02, max_nfev=30)
    llc = lo + float(res.x[0]) * (hi - lo)
    cov = lsq_cov(res.jac, res.fun, np.array([hi - lo]))
    # pause_ns is measured, not fitted: it has a variance of its own, no covariance term
    return PartFit(
        parameters={
            "same_llc_ns": Param("same_llc_ns", llc, float(math.sqrt(max(cov[0, 0], 0.0))), lo, hi),
            "pause_ns": Param("pause_ns", pause, pause_se),
        },
        names=["same_llc_ns"],
        cov=cov,
        residuals=_residual_rows(multi, sims(llc)),
        optimizer={
            "method": "scipy.optimize.least_squares trf, log residuals of 2+-thread p50 and "
            "acquisitions/s; pause_ns measured directly (mean over repeats)",
            "status": int(res.status),
            "message": str(res.message),
            "nfev": int(res.nfev),
            "cost": round_sig(float(res.cost)),
            "residuals": int(res.fun.size),
            "timer_overhead_ns": round_sig(timer),
        },
        fixed={k: dict(v) for k, v in _FIXED.items()},
    )
