"""What one planned call costs in the state the node is in: the one definition that the
simulation (cohsim.kernel.launch) and the analytic burst model (cohsim.kernel.analytic) share.

A call's uncontended costs are fixed before the run (cohsim.kernel.plan); what grows with the
node is priced here from the state the call finds (`NodeState`: the mounts in the table, the
root's peer group, its binds under the root, the runtimes' live namespace copies; what
cohsim.kernel.mounttable counts):

- its namespace_sem write hold: the op's own, per mount in the table, each new mount's
  per-CPU area, the walk over the root group's peers and the root's children, the copy into
  (or removal from) every live slave namespace (`write_hold_ns`);
- the detached mounts it puts after its grace period, each a mount_lock section with a per-CPU
  sum (`puts`);
- a mountinfo read in a slave namespace, each line walking the root group (`slave_line_ns`),
  and one whole read at a given table (`full_read_ns`);
- one walk over every CPU's line, the unit of the per-CPU loops (`percpu_sum_ns`).
"""

from __future__ import annotations

from typing import Protocol

from cohsim.kernel.costs import KernelParams
from cohsim.kernel.plan import TABLE, Step
from cohsim.machine.model import Machine


class NodeState(Protocol):
    """What a call's costs depend on (cohsim.kernel.mounttable.MountTable has it)."""

    @property
    def mounts(self) -> float: ...
    @property
    def ring(self) -> float: ...
    @property
    def binds(self) -> float: ...
    @property
    def windows(self) -> float: ...


def percpu_sum_ns(machine: Machine, kernel: KernelParams) -> float:
    """One walk over every CPU's line (a per-CPU counter sum, a per-CPU area's zeroing): the
    mean level-1 latency from a CPU, summed over the CPUs, over the lines fetched at a time
    (`percpu_mlp`)."""
    return machine.percpu_walk_ns / kernel.percpu_mlp


class CallCosts:
    """The state-dependent costs of planned calls on one machine with one kernel model."""

    __slots__ = ("k", "sum_ns")

    def __init__(self, kernel: KernelParams, sum_ns: float) -> None:
        self.k, self.sum_ns = kernel, sum_ns

    def write_hold_ns(self, s: Step, st: NodeState) -> float:
        """`s`'s namespace_sem write hold in state `st`, before the call's own variation (0
        for an op that takes none). The terms are added in one fixed order: the same inputs
        give the same float."""
        op = s.op
        if not op.takes_ns_write:
            return 0.0
        hold = op.ns_write_ns + op.per_mount_write_ns * st.mounts
        if s.allocs:  # each new mount's per-CPU area, zeroed on every CPU
            hold += (st.mounts if s.allocs == TABLE else s.allocs) * self.sum_ns
        if s.group_walk:
            hold += op.per_peer_ns * st.ring + op.per_child_ns * st.binds
        if s.prop:  # a copy into (a removal from) every live slave namespace
            k = self.k
            slaves = st.windows + k.service_namespaces
            per = k.prop_per_slave_mount_ns if s.prop > 0 else k.prop_per_slave_umount_ns
            hold += slaves * (per + (self.sum_ns if s.prop > 0 else 0.0))
        return hold

    def puts(self, s: Step, mounts: float, st: NodeState) -> float:
        """Detached mounts `s` puts after its grace period: its own (`mounts`, the table it
        found, for the old root's whole copy), and for a host unmount the slaves' copies in
        state `st`."""
        puts = mounts if s.puts == TABLE else float(s.puts)
        if s.prop < 0:
            puts += st.windows + round(self.k.service_namespaces)
        return puts

    def slave_line_ns(self, st: NodeState) -> float:
        """What each line of a mountinfo read in a runtime's own (slave) namespace costs beyond
        the host's: the root group's members among the lines, each walking the whole group."""
        return st.ring * st.ring * self.k.peer_step_ns / max(1, st.mounts)

    def full_read_ns(self, mounts: float, ring: float) -> dict[str, float]:
        """One whole read of /proc/self/mountinfo alone, in the host's namespace and in a
        runtime's own copy, at `mounts` mounts and a root group of `ring`."""
        k = self.k
        op, open_op = k.op("mountinfo_read"), k.op("mountinfo_open")
        fixed = open_op.walks * k.walk_ns + open_op.cpu_ns + op.cpu_ns + op.ns_read_ns
        host = fixed + op.per_mount_read_ns * mounts
        return {"host": host, "container": host + ring**2 * k.peer_step_ns}
