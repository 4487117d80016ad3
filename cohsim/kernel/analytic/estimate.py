"""What the burst model gives back, as both engines give it (cohsim.kernel.result).

From two estimates (cohsim.kernel.analytic.burstmodel): the burst, and one of its containers
alone on the same machine. What the closed form reports differently from the simulation:

- the lock-wait fraction is the share of each container's launch spent waiting for the
  others: its launch in the burst less the same container's launch alone, over its launch in
  the burst (every wait the burst adds: for namespace_sem, mount_lock and for a CPU);
- no background readers (systemd's re-reads, probes): no `systemd` figures; of the path
  walkers, only the node daemons' spinning through mount_lock's write holds is in the profile
  (the simulation also has the runtimes' and the traced calls' own walks);
- namespace_sem's sleepers are the rest of each container's mount phase: its span less its
  own CPU work, its spinning and its grace periods.
"""

from __future__ import annotations

import numpy as np

from cohsim.kernel.analytic.burstmodel import AnalyticResult
from cohsim.kernel.result import CPU_SITES, EngineResult, LockTotals, Profile


def profile(res: AnalyticResult, cpus: int) -> Profile:
    """Where the burst's time went (cohsim.kernel.result.Profile)."""
    cpu = {s: res.cpu_ns[s] for s in CPU_SITES}
    mounting = sum(v for s, v in cpu.items() if s != "runtime")
    asleep = max(0.0, sum(res.mount_each_ns) - mounting - res.rcu_wait_ns)
    off = {"namespace_sem_sleep": asleep, "rcu_wait": res.rcu_wait_ns, "run_queue": 0.0}
    span = max(res.launch_each_ns, default=0.0)
    return Profile(cpu, off, span, cpus)


def engine_result(burst: AnalyticResult, alone_ns: float, cpus: int) -> EngineResult:
    """The burst's estimate as an EngineResult (`alone_ns`: one of its containers' launch
    alone, `BurstModel.alone_launch_ns`)."""
    each = np.asarray(burst.launch_each_ns, dtype=float)
    waited = float(np.maximum(each - alone_ns, 0.0).sum())
    busy = float(each.sum())
    return EngineResult(
        engine="analytic",
        launch_ns=burst.launch_each_ns,
        mount_ns=burst.mount_each_ns,
        lock_wait_fraction=waited / busy if busy else 0.0,
        namespace_sem=LockTotals(burst.ns_acquisitions, burst.ns_write_ns),
        mount_lock=LockTotals(None, burst.ml_hold_ns),
        seqcount_spin=None,
        rcu=LockTotals(burst.rcu_requests, 0.0, burst.rcu_wait_ns),
        grace_periods=burst.grace_periods,
        profile=profile(burst, cpus),
        peak_mounts=int(burst.peak_mounts),
        peak_read_ns=dict(burst.peak_read_ns),
        ns_write_by_op=dict(burst.ns_write_by_op),
    )
