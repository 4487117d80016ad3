"""What one launch simulation (cohsim.kernel.simulation.launch) records: per-lock tallies, the time
series for plots, and each thread's result.

These are plain records, written by the simulated resources (cohsim.kernel.simulation.mountlock,
cohsim.kernel.simulation.rcu) and by the conductor, and read by whoever ran the simulation. They
live in a module of their own, below every part of the simulation, so the parts that fill them need
not import the conductor that owns them.

The module is compiled with the simulation (setup.py): the resources add to a LockStats on
every hold, and a compiled dataclass's fields are native (no dict to look up and no float
object per addition). Such an object has no `__dict__`: read it with `dataclasses.asdict`, not
`vars()`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cohsim.units import NS_PER_S


@dataclass
class LockStats:
    """Accumulated wait and hold time of one lock (ns) and its acquisitions."""

    acquisitions: int = 0
    wait_ns: float = 0.0
    hold_ns: float = 0.0
    max_waiters: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "acquisitions": self.acquisitions,
            "wait_s": round(self.wait_ns / NS_PER_S, 6),
            "hold_s": round(self.hold_ns / NS_PER_S, 6),
            "max_waiters": self.max_waiters,
        }


@dataclass
class CpuTally:
    """Where the simulated CPUs' time went, as the simulation runs (ns): the parts of the
    profile (cohsim.kernel.result.Profile) that are not read off the locks' own tallies. Each
    part is the CPU time as slowed by SMT or co-running at that moment."""

    ns_spin: float = 0.0  #: writers spinning on namespace_sem
    ns_sleep: float = 0.0  #: tasks asleep waiting for namespace_sem (readers and writers)
    percpu: float = 0.0  #: per-CPU sums and per-CPU area zeroing
    peers: float = 0.0  #: walks over the root's peer group and its children
    copy: float = 0.0  #: copies of the table (and an old root's detach), per mount
    prop: float = 0.0  #: copies into / removals from live slave namespaces
    mountinfo: float = 0.0  #: mountinfo reads' holds, and systemd's parsing
    runtime: float = 0.0  #: the runtimes' own work after their mounts
    repaid: float = 0.0  #: background spinning repaid by the runtimes' CPUs (`runtime` excludes it)

    def hold(self, percpu: float, peers: float, copy: float, prop: float, g: float) -> None:
        """A namespace_sem write hold's parts (cohsim.kernel.callcost.CallCosts.part_*), each
        slowed by `g` as the hold is."""
        self.percpu += percpu * g
        self.peers += peers * g
        self.copy += copy * g
        self.prop += prop * g


@dataclass
class LaunchRecord:
    """Time series for plots: mount-table size and who held the locks when."""

    mount_table: list[tuple[int, int]] = field(default_factory=list)  #: (ns, mounts)
    ns_holds: list[tuple[int, int, int]] = field(default_factory=list)  #: (tid, from, to)
    ml_holds: list[tuple[int, int, int]] = field(default_factory=list)  #: (tid, from, to)
    spinners: list[tuple[int, int]] = field(default_factory=list)  #: (ns, seq spinners)


@dataclass
class ThreadResult:
    """One traced thread (one container for synthesised workloads)."""

    tid: int
    start_ns: int
    mounts_done_ns: int  #: its last mount syscall returned
    end_ns: int  #: its runtime work finished too
    syscalls: int
    lock_wait_ns: float  #: waiting for namespace_sem, mount_lock, or spinning in a walk
    rcu_wait_ns: float
    run_queue_ns: float  #: runnable but no free CPU
