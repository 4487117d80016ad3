"""One replicate of a prediction: what is run (`Task`) and what it gives back (`Run`).

Both engines of level 3 take the same task and give back the same kind of run, so the
replicates, their intervals and the report do not depend on which engine answered: the
discrete-event simulation (`cohsim.predict.replicates`, cohsim.kernel.simulation.launch) and
the closed-form burst model (`cohsim.predict.closedform`, cohsim.kernel.analytic.burstmodel).
Both are picklable: replicates may run in worker processes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cohsim.kernel.costs import KernelParams
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.simulation.records import LaunchRecord
from cohsim.machine.model import Machine
from cohsim.predict.breakdown import Breakdown
from cohsim.workload.trace import Trace


@dataclass(frozen=True)
class Task:
    """One replicate to run."""

    machine: Machine
    kernel: KernelParams
    trace: Trace
    costs: LineCosts
    seed: int
    layers: int | None
    background: bool
    record: bool
    deadline_s: float
    breakdown: bool = False  #: record every call and return the launch breakdown
    engine: str = "des"  #: which engine answers (cohsim.predict.options.ENGINES)


@dataclass(frozen=True)
class Run:
    """What one replicate gives back."""

    launch_s: np.ndarray
    mount_s: np.ndarray
    failures: float
    lock_wait_fraction: float
    locks: dict[str, Any]
    peak_mounts: int
    record: LaunchRecord | None
    peak_read_ns: dict[str, float]  #: one whole mountinfo read at the peak (host, container)
    #: systemd's re-reads and backlog (cohsim.kernel.simulation.background)
    systemd: dict[str, float]
    breakdown: Breakdown | None = None  #: the launch breakdown, where the task asked for it
