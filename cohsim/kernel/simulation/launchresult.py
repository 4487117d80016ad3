"""What a launch simulation gives back, as both engines give it (cohsim.kernel.result): each
container's launch and mount phase, the locks' totals, and the profile of the CPUs' time.

The profile is read off what the run tallied: the locks' waits (writers waiting for
mount_lock and its line; walks spinning on its counter, the traced ones and the background
CPUs'; namespace_sem's spinning writers and sleepers), and the parts of each call's work the
conductor tallies (`CpuTally`: per-CPU loops, peer walks, copies, propagation, mountinfo
reads, the runtimes' work). What is left of the CPUs' busy time is the mount syscalls' other
work (`mount_work`: their path walks, the locked and unlocked work of each op). The background
CPUs' spinning is CPU time wherever it ran: the part the runtimes' CPUs repaid is inside the
simulated CPUs' busy time, the rest on the node daemons' CPUs beside it.
"""

from __future__ import annotations

from cohsim.kernel.result import CPU_SITES, EngineResult, LockTotals, Profile
from cohsim.kernel.simulation.launch import LaunchSim
from cohsim.kernel.simulation.records import LockStats, ThreadResult
from cohsim.units import NS_PER_S


def _totals(st: LockStats) -> LockTotals:
    return LockTotals(st.acquisitions, st.hold_ns, st.wait_ns, st.max_waiters)


def _planned_areas(sim: LaunchSim) -> int:
    """The per-CPU areas the threads' plans allocate outside a write hold, which the
    conductor does not tally as it goes: one per overlayfs layer clone (its read sections) and
    per mount made without namespace_sem (fsmount). SMT does not slow them here (a few us)."""
    per: dict[int, int] = {}  # by the events' identity: a burst's threads share one tuple
    n = 0
    for thread in sim.trace.threads:
        if thread.events:
            key = id(thread.events)
            if key not in per:
                per[key] = sum(
                    s.reads + (s.allocs if s.allocs > 0 and not s.op.takes_ns_write else 0)
                    for s in sim.plan(thread.events)
                )
            n += per[key]
    return n


def profile(sim: LaunchSim, results: list[ThreadResult]) -> Profile:
    """Where the simulated launch's time went (cohsim.kernel.result.Profile)."""
    t, ml, st = sim.tally, sim.ml, sim.stats
    walk_spin = st["seqcount_spin"].wait_ns
    areas = _planned_areas(sim) * sim.percpu_sum_ns
    cpu = {
        "path_init_spin": walk_spin + ml.bg_spin_ns,
        "legitimize": ml.legitimize_hold_ns,
        "mount_lock_spin": st["mount_lock"].wait_ns,
        "namespace_sem_spin": t.ns_spin,
        "percpu_loops": t.percpu + areas,
        "peer_walks": t.peers,
        "copy_tree": t.copy,
        "propagation": t.prop,
        "mountinfo": t.mountinfo,
        "mount_work": 0.0,
        "runtime": t.runtime,
    }
    inside = sum(cpu.values()) - ml.bg_spin_ns + t.repaid  # what the simulated CPUs did
    cpu["mount_work"] = max(0.0, sim.cpus.busy_ns() - inside)
    start = min((r.start_ns for r in results), default=0)
    end = max((r.end_ns for r in results), default=0)
    off = {
        "namespace_sem_sleep": t.ns_sleep,
        "rcu_wait": st["rcu"].wait_ns,
        "run_queue": float(sum(r.run_queue_ns for r in results)),
    }
    return Profile({s: cpu[s] for s in CPU_SITES}, off, float(end - start), sim.m.vcpus)


def engine_result(sim: LaunchSim, results: list[ThreadResult]) -> EngineResult:
    """The run `sim` made (`results`: its threads', from `run`) as an EngineResult."""
    busy = sum(r.end_ns - r.start_ns for r in results)
    wait = sum(r.lock_wait_ns for r in results)
    st = sim.stats
    rcu = LockTotals(sim.rcu.requests, 0.0, st["rcu"].wait_ns)
    return EngineResult(
        engine="des",
        launch_ns=tuple(float(r.end_ns - r.start_ns) for r in results),
        mount_ns=tuple(float(r.mounts_done_ns - r.start_ns) for r in results),
        lock_wait_fraction=wait / busy if busy else 0.0,
        namespace_sem=_totals(st["namespace_sem"]),
        mount_lock=_totals(st["mount_lock"]),
        seqcount_spin=_totals(st["seqcount_spin"]),
        rcu=rcu,
        grace_periods=sim.rcu.count,
        profile=profile(sim, results),
        peak_mounts=sim.peak_mounts,
        peak_read_ns=sim.peak_read_ns(),
        ns_write_by_op=dict(sim.ns_write_by_op),
        mountinfo_reads=sim.mountinfo_reads,
        legitimize_fallbacks=sim.ml.legitimize,
        background_spin_ns=float(sim.ml.bg_spin_ns),
        systemd={
            "rereads": sim.readers.rereads,
            "longest_reread_s": round(sim.readers.longest_ns / NS_PER_S, 6),
            "max_lag_s": round(sim.readers.max_lag_ns / NS_PER_S, 6),
        },
    )
