"""What a level-3 engine gives back for one launch: `EngineResult`, filled alike by the
simulation (cohsim.kernel.simulation) and the closed form (cohsim.kernel.analytic).

One typed result, so that a key means one thing whichever engine answered (arviz's
InferenceData habit): each container's launch and mount phase, every lock's totals, where the
CPUs' time went (`Profile`), the mount table's peak, and the raw material of the launch
breakdown (cohsim.predict.breakdown builds it: every call and each thread's waits from the
simulation, namespace_sem's write holds by op from both). What an engine does not model is
None, never a number that means something else.

The profile is what `perf report` would show on that machine for the launch, by kernel site:
CPU time (`CPU_SITES`) and time off the CPU (`OFF_CPU`, what an off-CPU profile shows), and
the share of the CPU time spent on contested cache lines (`CONTESTED`: spinning on a line
another CPU writes, or fetching lines other CPUs own).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cohsim.units import NS_PER_S

#: where CPU time goes, by kernel site (and the runtimes' own user-space work), in report order
CPU_SITES = (
    "path_init_spin",  #: path walks spinning on mount_lock's sequence counter (path_init)
    "legitimize",  #: walks falling back to mount_lock's spinlock (__legitimize_mnt)
    "mount_lock_spin",  #: writers waiting for mount_lock's spinlock and for its line
    "namespace_sem_spin",  #: writers spinning on namespace_sem's owner (optimistic spinning)
    "percpu_loops",  #: per-CPU counter sums and per-CPU area zeroing over every CPU's line
    "peer_walks",  #: walks over a peer group and the root's children (propagate_mnt & co.)
    "copy_tree",  #: namespace copies and an old root's detach, per mount in the table
    "propagation",  #: mount events copied into (removed from) live slave namespaces
    "mountinfo",  #: mountinfo reads: the runtimes', systemd's (with its parsing), probes'
    "mount_work",  #: the rest of the mount syscalls: their path walks, locked and unlocked work
    "runtime",  #: the container runtimes' own work after their mounts (runc, shim)
)
#: time a task waits off its CPU (an off-CPU profile's sites)
OFF_CPU = ("namespace_sem_sleep", "rcu_wait", "run_queue")
#: the CPU sites that are time on contested cache lines
CONTESTED = (
    "path_init_spin",
    "legitimize",
    "mount_lock_spin",
    "namespace_sem_spin",
    "percpu_loops",
)


@dataclass(frozen=True)
class Profile:
    """Where the launch's time went on the machine, ns: CPU time by site (`CPU_SITES`) and off
    the CPU (`OFF_CPU`), over the launch's whole span on `cpus` CPUs."""

    cpu_ns: dict[str, float]
    off_cpu_ns: dict[str, float]
    span_ns: float  #: the launch's span: its first arrival to its last container's end
    cpus: int  #: the machine's CPUs

    def __post_init__(self) -> None:
        for name, want, got in (
            ("cpu_ns", CPU_SITES, self.cpu_ns),
            ("off_cpu_ns", OFF_CPU, self.off_cpu_ns),
        ):
            if tuple(got) != want:
                raise ValueError(f"profile {name} must have the sites {want}, not {tuple(got)}")

    @property
    def cpu_total_ns(self) -> float:
        return sum(self.cpu_ns.values())

    @property
    def contested_share(self) -> float:
        """The share of the CPU time spent on contested lines (`CONTESTED`)."""
        total = self.cpu_total_ns
        return sum(self.cpu_ns[s] for s in CONTESTED) / total if total else 0.0

    @property
    def top(self) -> str:
        """The largest CPU consumer ("" when nothing ran)."""
        if not self.cpu_total_ns:
            return ""
        return max(CPU_SITES, key=lambda s: (self.cpu_ns[s], -CPU_SITES.index(s)))

    def to_dict(self) -> dict[str, Any]:
        total = self.cpu_total_ns
        capacity = self.span_ns * self.cpus
        return {
            "cpu_s": {k: round(v / NS_PER_S, 6) for k, v in self.cpu_ns.items()},
            "cpu_share": {k: round(v / total, 4) if total else 0.0 for k, v in self.cpu_ns.items()},
            "off_cpu_s": {k: round(v / NS_PER_S, 6) for k, v in self.off_cpu_ns.items()},
            "cpu_total_s": round(total / NS_PER_S, 6),
            "busy_fraction": round(total / capacity, 4) if capacity else 0.0,
            "contested_share": round(self.contested_share, 4),
            "contested_sites": list(CONTESTED),
            "top": self.top,
            "span_s": round(self.span_ns / NS_PER_S, 6),
            "cpus": self.cpus,
        }


@dataclass(frozen=True)
class LockTotals:
    """One lock's totals over the launch (ns); None: the engine does not model it."""

    acquisitions: int | None
    hold_ns: float
    wait_ns: float | None = None
    max_waiters: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.acquisitions is not None:
            out["acquisitions"] = self.acquisitions
        if self.wait_ns is not None:
            out["wait_s"] = round(self.wait_ns / NS_PER_S, 6)
        out["hold_s"] = round(self.hold_ns / NS_PER_S, 6)
        if self.max_waiters is not None:
            out["max_waiters"] = self.max_waiters
        return out


@dataclass(frozen=True)
class EngineResult:
    """One launch as a level-3 engine answers it (see the module). Per container, in trace
    order: `launch_ns` from its arrival to its runtime's end (without the kernel's fixed base)
    and `mount_ns` its mount phase."""

    engine: str  #: "des" or "analytic"
    launch_ns: tuple[float, ...]
    mount_ns: tuple[float, ...]
    #: the share of the containers' time spent waiting (as the engine counts it)
    lock_wait_fraction: float
    namespace_sem: LockTotals
    mount_lock: LockTotals
    #: path walks that spun on mount_lock's counter (traced calls; acquisitions: the spins;
    #: None: walkers not modelled)
    seqcount_spin: LockTotals | None
    #: synchronize_rcu_expedited() calls (acquisitions), grace periods run, their waits
    rcu: LockTotals
    grace_periods: int
    profile: Profile
    peak_mounts: int
    peak_read_ns: dict[str, float]  #: one whole mountinfo read at the peak (host, container)
    #: namespace_sem held for writing, by the op that held it (ns)
    ns_write_by_op: dict[str, float] = field(default_factory=dict)
    mountinfo_reads: int | None = None  #: whole-file mountinfo reads
    legitimize_fallbacks: int | None = None  #: walks that fell back to mount_lock's spinlock
    background_spin_ns: float | None = None  #: CPUs outside the trace spinning in path_init
    #: systemd's re-reads and backlog (cohsim.kernel.simulation.background); None: not modelled
    systemd: dict[str, float] | None = None

    def locks(self) -> dict[str, Any]:
        """The locks' totals as a prediction reports them (`locks` in its JSON)."""
        ns = self.namespace_sem.to_dict()
        if self.mountinfo_reads is not None:
            ns["mountinfo_reads"] = self.mountinfo_reads
        ml = self.mount_lock.to_dict()
        if self.legitimize_fallbacks is not None:
            ml["legitimize_fallbacks"] = self.legitimize_fallbacks
        rcu = self.rcu.to_dict()
        rcu["grace_periods"] = self.grace_periods
        out = {
            "mount_lock": dict(sorted(ml.items())),
            "namespace_sem": dict(sorted(ns.items())),
            "rcu": dict(sorted(rcu.items())),
        }
        if self.seqcount_spin is not None:
            walks = self.seqcount_spin.to_dict()
            if self.background_spin_ns is not None:
                walks["background_spin_s"] = round(self.background_spin_ns / NS_PER_S, 6)
            out["seqcount_spin"] = dict(sorted(walks.items()))
        return out
