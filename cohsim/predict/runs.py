"""One replicate of a prediction: what is run (`ReplicateTask`) and what it gives back (`Run`).

Both engines of level 3 take the same task and give back the same kind of run, so the
replicates, their intervals and the report do not depend on which engine answered: the
discrete-event simulation (`cohsim.predict.replicates`, cohsim.kernel.simulation.launch) and
the closed-form burst model (`cohsim.predict.closedform`, cohsim.kernel.analytic.burstmodel).
Both are picklable: replicates may run in worker processes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cohsim.kernel.costs import KernelParams
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.result import EngineResult
from cohsim.kernel.simulation.records import LaunchRecord
from cohsim.machine.model import Machine
from cohsim.predict.breakdown import Breakdown
from cohsim.units import NS_PER_S
from cohsim.workload.trace import Trace


@dataclass(frozen=True)
class ReplicateTask:
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
    """What one replicate gives back: the engine's result (cohsim.kernel.result), each
    container's launch (the kernel's fixed base included) and mount phase in seconds, and
    what the task asked for besides."""

    result: EngineResult
    launch_s: np.ndarray
    mount_s: np.ndarray
    failures: float  #: containers past the deadline
    record: LaunchRecord | None = None
    breakdown: Breakdown | None = None  #: the launch breakdown, where the task asked for it
    #: mounts in the root's peer group at its largest: / and the clones that joined it
    #: (containerd's binds; the engine's own count, read off it where it ran)
    peak_peer_group: int = 1

    @property
    def lock_wait_fraction(self) -> float:
        return self.result.lock_wait_fraction

    @property
    def peak_mounts(self) -> int:
        return self.result.peak_mounts

    @property
    def peak_read_ns(self) -> dict[str, float]:
        return self.result.peak_read_ns


def run_of(
    task: ReplicateTask,
    result: EngineResult,
    record: LaunchRecord | None = None,
    breakdown: Breakdown | None = None,
    peak_peer_group: int = 1,
) -> Run:
    """The replicate's Run from its engine's result (`peak_peer_group`: the engine's peak of
    the root's peer group, which its result does not carry)."""
    base = task.kernel.base_launch_ns
    launch = (np.asarray(result.launch_ns, dtype=float) + base) / NS_PER_S
    mounts = np.asarray(result.mount_ns, dtype=float) / NS_PER_S
    failures = float((launch > task.deadline_s).sum())
    return Run(result, launch, mounts, failures, record, breakdown, peak_peer_group)
