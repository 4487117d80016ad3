"""A call's lock sections beside namespace_sem's own, for the launch simulation
(cohsim.kernel.simulation.launch): overlayfs's per-layer clones (a read hold each, with the
clone's per-CPU area allocated under pcpu_alloc_mutex inside it: cohsim.kernel.simulation.pcpu),
a mount's wait for that mutex, a table copy's write section per copied mount, and the part of
an op's mount_lock section that grows with the node (cohsim.kernel.callcost). They read the
conductor's resources; the conductor calls them from its hot loop.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from cohsim.kernel.callcost import CallCosts, OpRow
from cohsim.kernel.calls import Step
from cohsim.kernel.simulation.clock import Yield, iround
from cohsim.kernel.simulation.mountlock import MountLock
from cohsim.kernel.simulation.mounttable import MountTable
from cohsim.kernel.simulation.nssections import NamespaceSections
from cohsim.kernel.simulation.pcpu import PcpuMutex
from cohsim.kernel.simulation.records import CpuTally


class Sections:
    """The lock sections of one simulation's calls (see the module)."""

    def __init__(
        self,
        nss: NamespaceSections,
        pcpu: PcpuMutex,
        ml: MountLock,
        table: MountTable,
        cc: CallCosts,
        tally: CpuTally,
    ) -> None:
        self.nss, self.pcpu, self.ml, self.table, self.cc, self.tally = (
            nss,
            pcpu,
            ml,
            table,
            cc,
            tally,
        )
        self.percpu_sum_ns = cc.sum_ns

    def layer_clones(self, reads: int, work_ns: float) -> Generator[Yield, Any, float]:
        """An overlay's private clone of each of its `reads` layers: a namespace_sem read hold
        each, of `work_ns` and the clone's per-CPU area, which is allocated under
        pcpu_alloc_mutex inside the hold (cohsim.kernel.simulation.pcpu). Returns the waits."""
        nss, pcpu, read_ns = self.nss, self.pcpu, work_ns + self.percpu_sum_ns
        waited = 0.0
        for _ in range(reads):
            if not nss.try_read_alloc(read_ns, pcpu):  # done at once: it waited 0
                waited += yield from nss.read(read_ns, pcpu)
        return waited

    def try_allocate(self) -> bool:
        """A mount's per-CPU area allocated in a section the caller times itself, if
        pcpu_alloc_mutex is free: tallied, True; else False, and the caller waits for it
        (`pcpu.alloc(False)`)."""
        if self.pcpu.free:
            self.pcpu.count()
            return True
        return False

    def in_hold(self, step: Step, o: OpRow) -> int:
        """The mount_lock sections of its own an op runs in its namespace_sem hold besides its
        one nested section: their time. A copy of the table's write sections, one per copied
        mount (copy_tree()'s lock_mount_hash() around each attach), and the locked readers
        (docs/kernel-audit.md C18), each fetching the line from the walks that read it since
        (CallCosts.readers_at, at the CPUs walking now; counted as mount_lock's line cost)."""
        took = 0
        if o.ml_section_ns:
            took = iround(
                self.ml.spaced(o.ml_section_ns, self.table.mounts - 1, o.per_mount_write_ns)
            )
        if o.ml_readers_any:
            ml, table = self.ml, self.table
            spent = self.cc.readers_at(step, o, table.mounts, table.windows, ml.walking)
            ml.stats.wait_ns += spent
            took += iround(spent)
        return took

    def ml_extra(self, step: Step, o: OpRow) -> float:
        """What an op's mount_lock section does beyond its fixed work in the node's state now
        (cohsim.kernel.callcost.CallCosts.ml_hold_at: returned, it is part of the section's
        work), tallied with the per-CPU counter sum planned in that fixed work."""
        t, table = self.tally, self.table
        if o.percpu_sum:
            t.percpu += self.percpu_sum_ns
        if not o.ml_grows:
            return 0.0
        cc = self.cc
        extra = cc.ml_hold_at(step, o, table.mounts, table.ring, table.windows)
        t.hold(cc.part_percpu, cc.part_peers, cc.part_copy, cc.part_prop, 1.0)
        return extra
