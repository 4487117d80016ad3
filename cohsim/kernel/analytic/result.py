"""What the analytic burst model (cohsim.kernel.analytic.burstmodel) gives for one burst:
`AnalyticResult`, which cohsim.kernel.analytic.estimate turns into the engines' common result
(cohsim.kernel.result) and cohsim.kernel.analytic.tally fills with the locks' tallies and the
CPU profile.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from cohsim.kernel.result import CPU_SITES

Array = NDArray[np.float64]


@dataclass
class AnalyticResult:
    """What the burst model gives for one burst (ns unless said)."""

    containers: int
    mount_ns: float  #: the last container's mount phase
    launch_ns: float  #: the last container's launch, the fixed base included
    ns_write_ns: float  #: namespace_sem held for writing, all containers
    ns_write_by_op: dict[str, float] = field(default_factory=dict)
    ns_acquisitions: int = 0
    ml_hold_ns: float = 0.0  #: mount_lock held (nested sections and puts)
    grace_periods: int = 0  #: expedited grace periods run
    rcu_requests: int = 0  #: synchronize_rcu_expedited() calls, all containers
    peak_mounts: int = 0
    ring_peak: int = 1
    windows_peak: int = 0
    peak_read_ns: dict[str, float] = field(default_factory=dict)
    #: each container's mount phase (its first mount call to its last), in finishing order
    mount_each_ns: tuple[float, ...] = ()
    #: each container's launch (first call to the runtime's end), without the fixed base
    launch_each_ns: tuple[float, ...] = ()
    #: CPU time by profile site (cohsim.kernel.result.CPU_SITES), all containers, ns
    cpu_ns: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CPU_SITES, 0.0))
    rcu_wait_ns: float = 0.0  #: the containers' waits for grace periods

    def peaks(self, states: Array) -> None:
        """Raise the peaks to the largest of `states` (rows of M, R, B, W)."""
        if len(states):
            top = states.max(axis=0)
            self.peak_mounts = max(self.peak_mounts, round(float(top[0])))
            self.ring_peak = max(self.ring_peak, round(float(top[1])))
            self.windows_peak = max(self.windows_peak, round(float(top[3])))
