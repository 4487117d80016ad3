"""What one planned call costs in the state the node is in: the one definition that the
simulation (cohsim.kernel.simulation.launch) and the analytic burst model
(cohsim.kernel.analytic.burstmodel) share.

A call's uncontended costs are fixed before the run (cohsim.kernel.calls); what grows with the
node is priced here from the state the call finds (`NodeState`: the mounts in the table, the
root's peer group, its binds under the root, the runtimes' live namespace copies; what
cohsim.kernel.simulation.mounttable counts):

- its namespace_sem write hold: the op's own, per mount in the table, each new mount's
  per-CPU area, the walk over the root group's peers and the root's children (a mount's
  propagate_mnt()), the copy into every live slave namespace (`write_hold_ns`); a walk's cost
  bends with its length where the machine says how (cohsim.kernel.walk);
- the part of its mount_lock section that grows with the node, nested in that hold: an old
  root's walk of the whole table, an unmount's walks of the parent's peers, its removal from
  every live slave namespace and the busy check's per-CPU sum of each copy (`ml_hold_at`;
  docs/kernel-audit.md C1-C3: Linux 6.18's do_umount() holds mount_lock across them);
- the detached mounts it puts after its grace period, each a mount_lock section with a per-CPU
  sum (`puts`);
- a mountinfo read in a slave namespace, each line walking the root group (`slave_line_ns`),
  and one whole read at a given table (`full_read_ns`);
- one walk over every CPU's line, the unit of the per-CPU loops (`percpu_sum_ns`);
- the locked readers of mount_lock nested in its write hold, each taking the lock's line
  exclusive from the walks that read it since (`readers_at`; docs/kernel-audit.md C18,
  cohsim.kernel.linetake), and a section's own take (`take_ns`);
- one expedited grace period with so many CPUs busy (`grace_period_ns`; C20).
"""

from __future__ import annotations

from typing import Protocol

from cohsim.kernel.calls import TABLE, Step
from cohsim.kernel.costs import KernelParams, OpCost
from cohsim.kernel.linetake import LineTakes
from cohsim.kernel.walk import units
from cohsim.machine.model import Machine
from cohsim.machine.parts import Band, Walks


class NodeState(Protocol):
    """What a call's costs depend on (cohsim.kernel.simulation.mounttable.MountTable has it)."""

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


#: CPUs per leaf rcu_node: CONFIG_RCU_FANOUT_LEAF's default (kernel/rcu/Kconfig), the CPUs one
#: expedited grace period's worker IPIs one after another
RCU_FANOUT_LEAF = 16


def grace_period_ns(kernel: KernelParams, vcpus: int, busy: float) -> float:
    """One expedited grace period (synchronize_rcu_expedited(); docs/kernel-audit.md C20) while
    `busy` CPUs are not idle, the worker's own not counted: the fixed part and one IPI's share
    (`rcu_exp_per_cpu_ns`) per busy CPU of the busiest leaf rcu_node. Linux 6.18 skips the CPUs
    in an extended quiescent state (idle: kernel/rcu/tree_exp.h, `rcu_watching_snap_in_eqs`),
    IPIs the others of a leaf one after another (`smp_call_function_single(..., 0)`) and runs
    the leaves in parallel on their own kthread workers; the busy CPUs taken as spread evenly
    over the leaves (the scheduler's balancing), at least one IPI where any is busy.
    Measured: 1.9-2.0 us a busy CPU on the 16-vCPU VM (its walk_bench data's README)."""
    others = busy if busy < vcpus - 1.0 else vcpus - 1.0
    if others <= 0.0:
        return kernel.rcu_exp_base_ns
    leaves = -(-vcpus // RCU_FANOUT_LEAF)
    serial = others / leaves
    if serial < 1.0:
        serial = others if others < 1.0 else 1.0
    elif serial > RCU_FANOUT_LEAF:
        serial = float(RCU_FANOUT_LEAF)
    return kernel.rcu_exp_base_ns + kernel.rcu_exp_per_cpu_ns * serial


class OpRow:
    """An op's costs (cohsim.kernel.costs.OpCost, a Python dataclass: a dict lookup a read)
    as native fields, for the compiled hot loops: what `CallCosts` and the launch simulation
    read of it, call after call. `CallCosts.row` makes one per op."""

    def __init__(self, op: OpCost, peer_scale: float = 1.0) -> None:
        """`peer_scale`: the kernel's `peer_walk_scale`, on the op's per-peer costs."""
        self.op = op
        self.takes_ns_write = bool(op.takes_ns_write)
        self.ns_write_ns: float = op.ns_write_ns
        self.per_mount_write_ns: float = op.per_mount_write_ns
        self.per_peer_ns: float = op.per_peer_ns * peer_scale
        self.per_child_ns: float = op.per_child_ns
        self.layer_read_ns: float = op.layer_read_ns
        self.mount_lock_ns: float = op.mount_lock_ns
        self.per_mount_lock_ns: float = op.per_mount_lock_ns
        self.reads_mountinfo = bool(op.ns_read_ns or op.per_mount_read_ns)
        self.percpu_sum = bool(op.percpu_sum)  #: its mount_lock section sums a per-CPU count
        self.percpu_sum_per_copy = bool(op.percpu_sum_per_copy)
        self.ml_per_peer_ns: float = op.mount_lock_per_peer_ns * peer_scale
        self.ml_reader = bool(op.mount_lock_reader)
        self.ml_section_ns: float = op.per_mount_lock_section_ns  #: per mount, its own section
        #: its mount_lock section's work depends on the node's state (`ml_hold_at`)
        self.ml_grows = bool(
            op.per_mount_lock_ns or op.mount_lock_per_peer_ns or op.percpu_sum_per_copy
        )
        self.rcu: int = op.rcu
        self.ml_readers: int = op.mount_lock_readers
        self.ml_readers_per_copy: int = op.mount_lock_readers_per_copy
        self.ml_readers_per_mount: int = op.mount_lock_readers_per_mount
        self.ml_readers_any = bool(
            op.mount_lock_readers
            or op.mount_lock_readers_per_copy
            or op.mount_lock_readers_per_mount
        )


class CallCosts:
    """The state-dependent costs of planned calls on one machine with one kernel model."""

    def __init__(
        self,
        kernel: KernelParams,
        sum_ns: float,
        takes: LineTakes | None = None,
        walks: Walks | None = None,
    ) -> None:
        """`takes`: mount_lock's line on the machine (None: its fetches are not priced);
        `walks`: how the machine's list walks bend with their length (None or empty: the
        kernel model's line at every length; cohsim.kernel.walk)."""
        self.k, self.sum_ns, self.takes = kernel, sum_ns, takes
        #: the walks' bands (empty: the line), and whether any bends: native fields, read by
        #: every write hold the simulation prices
        self.peer_bands: tuple[Band, ...] = walks.peers if walks else ()
        self.child_bands: tuple[Band, ...] = walks.children if walks else ()
        self.bent = bool(self.peer_bands or self.child_bands)
        #: CPUs walking paths, at which the analytic engine prices the line's fetches (the
        #: simulation passes the number walking at each call)
        self.busy = 0.0
        self.rows: dict[str, OpRow] = {}  #: `row`'s, by op name
        self.service_namespaces = kernel.service_namespaces
        self.per_slave_mount_ns = kernel.prop_per_slave_mount_ns
        self.per_slave_umount_ns = kernel.prop_per_slave_umount_ns
        self.service_mounts = round(kernel.service_namespaces)  #: their copies of a mount
        #: the parts of the last hold `write_hold_at` priced (ns): per-CPU areas, the peer and
        #: child walks, the per-mount copy or detach, the slave namespaces' copies (the rest is
        #: the op's own work); read by the simulation's profile (cohsim.kernel.result)
        self.part_percpu = self.part_peers = self.part_copy = self.part_prop = 0.0

    def unwalked(self) -> CallCosts:
        """These costs with every walk at the kernel model's line (`walks` empty): what the
        analytic engine reads its per-element coefficients off, pricing its states' walks in
        lines itself (cohsim.kernel.analytic.arrays)."""
        if not self.bent:
            return self
        flat = CallCosts(self.k, self.sum_ns, self.takes)
        flat.busy = self.busy
        return flat

    def row(self, name: str, op: OpCost) -> OpRow:
        """The OpRow of `op`, the op named `name` (made once; a plan has one op per name)."""
        r = self.rows.get(name)
        if r is None or r.op is not op:
            r = self.rows[name] = OpRow(op, self.k.peer_walk_scale)
        return r

    def write_hold_ns(self, s: Step, st: NodeState) -> float:
        """`s`'s namespace_sem write hold in state `st`, before the call's own variation (0
        for an op that takes none): `write_hold_at` with the state's numbers."""
        r = self.row(s.name, s.op)
        return self.write_hold_at(s, r, st.mounts, st.ring, st.binds, st.windows)

    def write_hold_at(
        self, s: Step, r: OpRow, mounts: float, ring: float, binds: float, windows: float
    ) -> float:
        """`write_hold_ns` in the state of `mounts` mounts, a root group of `ring`, `binds`
        clones under the root and `windows` live namespace copies, `r` the row of `s`'s op.
        The terms are added in one fixed order: the same inputs give the same float."""
        if not r.takes_ns_write:
            return 0.0
        copy = r.per_mount_write_ns * mounts
        hold = r.ns_write_ns + copy
        percpu = peers = prop = 0.0
        if s.allocs:  # each new mount's per-CPU area, zeroed on every CPU
            percpu = (mounts if s.allocs == TABLE else s.allocs) * self.sum_ns
            hold += percpu
        if s.group_walk:
            if self.bent:  # the walks in lines (cohsim.kernel.walk); else their lengths are
                ring, binds = units(ring, self.peer_bands), units(binds, self.child_bands)
            peers = r.per_peer_ns * ring + r.per_child_ns * binds
            hold += peers
        if s.prop > 0:  # a copy into every live slave namespace, with its per-CPU area
            slaves = windows + self.service_namespaces
            hold += slaves * (self.per_slave_mount_ns + self.sum_ns)
            prop = slaves * self.per_slave_mount_ns
            percpu += slaves * self.sum_ns
        self.part_percpu, self.part_peers, self.part_copy, self.part_prop = (
            percpu,
            peers,
            copy,
            prop,
        )
        return hold

    def ml_hold_at(self, s: Step, r: OpRow, mounts: float, ring: float, windows: float) -> float:
        """What `s`'s mount_lock section does beyond its fixed work (`Step.ml_work`), in the
        state of `mounts` mounts, a root group of `ring` and `windows` live namespace copies
        (`r` the row of its op): a walk of the whole table (an old root's umount_tree()),
        an unmount's walks of the parent's peers, and for a host unmount the removal of its
        copy from every live slave namespace with, for umount2(0), the busy check's per-CPU
        sum of each copy. The parts are kept in `part_*` (percpu, peers, copy, prop) for the
        profile. Added in one fixed order."""
        copy = r.per_mount_lock_ns * mounts
        peers = 0.0
        if s.group_walk:
            peers = r.ml_per_peer_ns * (units(ring, self.peer_bands) if self.bent else ring)
        percpu = prop = 0.0
        if s.prop < 0:
            slaves = windows + self.service_namespaces
            prop = slaves * self.per_slave_umount_ns
            if r.percpu_sum_per_copy:
                percpu = slaves * self.sum_ns
        self.part_percpu, self.part_peers, self.part_copy, self.part_prop = (
            percpu,
            peers,
            copy,
            prop,
        )
        return copy + peers + prop + percpu

    def readers_at(self, s: Step, r: OpRow, mounts: float, windows: float, busy: float) -> float:
        """What `s`'s locked readers nested in its write hold spend fetching mount_lock's line
        (ns), in the state of `mounts` mounts and `windows` live namespace copies, with `busy`
        CPUs walking paths: each takes the line after the op's own previous access (no certain
        sharer), a gap of its share of the op's work later: its fixed ones spread over its own
        write hold, the two per slave copy over that copy, one per copied mount over the copy.
        Added in one fixed order."""
        t = self.takes
        if t is None or not r.ml_readers_any:
            return 0.0
        cost = 0.0
        n = r.ml_readers
        if n:
            cost += n * t.ns(0, busy, r.ns_write_ns / (n + 1))
        n = r.ml_readers_per_copy
        if n and s.prop > 0:
            slaves = windows + self.service_namespaces
            cost += n * slaves * t.ns(0, busy, self.per_slave_mount_ns / n)
        n = r.ml_readers_per_mount
        if n:
            cost += n * mounts * t.ns(0, busy, r.per_mount_write_ns / n)
        return cost

    def take_ns(self, busy: float) -> float:
        """A mount_lock section's take of the line from another CPU's section before it, with
        `busy` CPUs walking paths (the analytic engine's price; the simulation knows who held
        it last and when: cohsim.kernel.simulation.mountlock)."""
        return self.takes.ns(1, busy, 0.0) if self.takes is not None else 0.0

    def puts(self, s: Step, mounts: float, st: NodeState) -> float:
        """Detached mounts `s` puts after its grace period: its own (`mounts`, the table it
        found, for the old root's whole copy), and for a host unmount the slaves' copies in
        state `st`."""
        puts = mounts if s.puts == TABLE else float(s.puts)
        if s.prop < 0:
            puts += st.windows + self.service_mounts
        return puts

    def slave_line_ns(self, st: NodeState) -> float:
        """What each line of a mountinfo read in a runtime's own (slave) namespace costs beyond
        the host's: the root group's members among the lines, each walking the whole group."""
        return st.ring * st.ring * self.k.peer_step_ns * self.k.peer_walk_scale / max(1, st.mounts)

    def full_read_ns(self, mounts: float, ring: float) -> dict[str, float]:
        """One whole read of /proc/self/mountinfo alone, in the host's namespace and in a
        runtime's own copy, at `mounts` mounts and a root group of `ring`."""
        k = self.k
        op, open_op = k.op("mountinfo_read"), k.op("mountinfo_open")
        fixed = open_op.walks * k.walk_ns + open_op.cpu_ns + op.cpu_ns + op.ns_read_ns
        host = fixed + op.per_mount_read_ns * mounts
        return {"host": host, "container": host + ring**2 * k.peer_step_ns * k.peer_walk_scale}
