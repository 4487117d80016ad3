"""What one kernel op, or one mountinfo read, costs alone in a given node state: `cohsim kernel`.

A planner's question ("what does a move_mount cost with 5,000 mounts on the node and 2,000
binds in the root's peer group?") answered from the one cost definition both engines share
(cohsim.kernel.callcost.CallCosts), read, never changed: the op as the strategy's own sequence
issues it (its first call of that name: cohsim.kernel.calls classifies what it does to the peer
group, the table and the slave namespaces), on the machine and kernel a prediction would use
(the committed fit applied, the priors at their nominal values unless pinned), uncontended:
no lock wait, no SMT sibling, no path walker spinning on mount_lock.

Its cost comes in parts, each saying what it grows with:

- unlocked: its path walks and its work outside the locks (fixed), overlayfs's per-layer
  clones (each a namespace_sem read section with a per-CPU area: the CPUs), the per-CPU area
  of a mount made outside namespace_sem (fsmount);
- namespace_sem held for reading, for a mountinfo read (one hold a page of text): a fixed part,
  each line (mounts), in a runtime's own namespace each line's walk of the root's group (ring
  x ring);
- namespace_sem held for writing (`CallCosts.write_hold_at` and its `part_*`): the op's own
  work, the table's copy or detach (mounts), the per-CPU areas (CPUs; the table's size for a
  namespace copy), the walk of the root's peer group (ring) and its binds under the root, the
  copy into every slave namespace (slaves: the runtimes' copies alive and the node services');
  a table copy's own mount_lock section per copied mount (mounts);
- mount_lock held for writing (`CallCosts.ml_hold_at`): its fixed work with any per-CPU sum
  (CPUs), a walk of the table (mounts), of the parent's peers (ring), the removal of a host
  unmount's copy from every slave namespace and their busy checks (slaves, CPUs);
- after the call: its expedited grace periods (each its fixed part: alone, no other CPU is busy
  to be IPIed; `cohsim.kernel.callcost.grace_period_ns`) and the puts of the mounts it
  detached, each a mount_lock section with a per-CPU sum (`CallCosts.puts`).

The lines of mount_lock the locked readers fetch from path walkers (level 2's line costs) are
contention, and left out. A mountinfo read (`CallCosts.full_read_ns`) is one whole read of
/proc/self/mountinfo: per mount in the host's namespace, and in a runtime's own (slave) copy
each line of the root's group walks the whole group (ring x ring steps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from cohsim.errors import UsageError
from cohsim.kernel.callcost import CallCosts, grace_period_ns, percpu_sum_ns
from cohsim.kernel.calls import PAGE_BYTES, TABLE, Step, plan_calls
from cohsim.kernel.costs import KernelParams
from cohsim.kernel.walk import walks_for
from cohsim.machine.model import Machine
from cohsim.predict.pins import close_names
from cohsim.predict.question import Burst
from cohsim.units import NS_PER_MS, NS_PER_US
from cohsim.workload.synth import synthesize


@dataclass(frozen=True)
class State:
    """The node state a query prices the op in."""

    mounts: int  #: mounts in the host's table
    ring: int  #: mounts in the root's peer group (/ and the binds that joined it)
    binds: int  #: the group's binds attached under the root
    slaves: int  #: runtimes' namespace copies alive (the node services' come from the kernel)

    def __post_init__(self) -> None:
        for name in ("mounts", "ring", "binds", "slaves"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise UsageError(f"{name} must be an integer >= 0, not {v!r}")
        if self.ring < 1:
            raise UsageError("the root's peer group holds / at least: ring >= 1")
        if self.binds >= self.ring:
            raise UsageError(f"{self.binds} binds under / but a peer group of {self.ring}")


@dataclass(frozen=True)
class Part:
    """One part of a cost: what it is, ns, and what it grows with ("" fixed)."""

    what: str
    ns: float
    grows_with: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "ns": round(self.ns, 3), "grows_with": self.grows_with}


@dataclass(frozen=True)
class Answer:
    """A query's answer: its parts by section, in the order a call runs them."""

    question: dict[str, Any]
    sections: dict[str, tuple[Part, ...]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    #: the sections add up to one cost (an op's); False: each is a whole answer of its own
    #: (a mountinfo read in the host's namespace, or in a runtime's)
    additive: bool = True

    def section_ns(self, name: str) -> float:
        return sum(p.ns for p in self.sections.get(name, ()))

    @property
    def total_ns(self) -> float | None:
        """The sections' sum where they add up (None where they are alternatives)."""
        return sum(self.section_ns(s) for s in self.sections) if self.additive else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "sections": {
                s: {"ns": round(self.section_ns(s), 3), "parts": [p.to_dict() for p in ps]}
                for s, ps in self.sections.items()
            },
            "total_ns": None if self.total_ns is None else round(self.total_ns, 3),
            "uncontended": True,
            "notes": list(self.notes),
        }


def step_of(op: str, strategy: str, runtime: str, kernel: KernelParams, sum_ns: float) -> Step:
    """The first call named `op` in one container's sequence for `strategy` (and `runtime`'s
    calls), planned with the kernel's costs; an op the sequence does not issue is a
    UsageError naming the closest it does."""
    trace = synthesize(strategy, 1, 1, seed=0, runtime=runtime)
    steps = plan_calls(trace.threads[0].events, kernel, 1, sum_ns)
    by_name: dict[str, Step] = {}
    for s in steps:
        by_name.setdefault(s.name, s)
    if op not in by_name:
        known = sorted(by_name)
        raise UsageError(
            f"{strategy}'s sequence ({runtime}) issues no op {op!r} ({close_names(op, known)})"
        )
    return by_name[op]


def _with_layers(step: Step, kernel: KernelParams, layers: int) -> Step:
    """`step` as a call on a `layers`-layer image (its per-layer walks, work and clones)."""
    op = step.op
    walk = (op.walks + op.walks_per_layer * layers) * kernel.walk_ns
    cpu = op.cpu_ns + op.per_layer_cpu_ns * layers
    return step._replace(walk_ns=walk, cpu=cpu, reads=op.layer_reads * layers)


def _unlocked(step: Step, sum_ns: float) -> tuple[Part, ...]:
    op = step.op
    parts = [Part("path walks", step.walk_ns), Part("work outside the locks", step.cpu)]
    if step.reads:
        parts.append(
            Part(f"{step.reads} layer clones' read sections", step.reads * op.layer_read_ns)
        )
        parts.append(Part("their per-CPU areas", step.reads * sum_ns, "CPUs"))
    if step.allocs and not op.takes_ns_write:
        parts.append(Part("the new mount's per-CPU area", step.allocs * sum_ns, "CPUs"))
    return tuple(parts)


def _write_hold(cc: CallCosts, step: Step, st: State) -> tuple[Part, ...]:
    """namespace_sem's write hold split into `write_hold_at`'s parts."""
    row = cc.row(step.name, step.op)
    if not row.takes_ns_write:
        return ()
    hold = cc.write_hold_at(step, row, st.mounts, st.ring, st.binds, st.slaves)
    percpu, peers, copy, prop = cc.part_percpu, cc.part_peers, cc.part_copy, cc.part_prop
    child = row.per_child_ns * st.binds if step.group_walk else 0.0
    areas = "mounts, CPUs" if step.allocs == TABLE else "CPUs"
    if step.prop > 0:
        areas += ", slaves"
    parts = [
        Part("the op's own work", hold - percpu - peers - copy - prop),
        Part("per mount in the table (copy or detach)", copy, "mounts"),
        Part("per-CPU areas (new mounts', slave copies')", percpu, areas),
        Part("walk of the root's peer group", peers - child, "ring"),
        Part("walk of the binds under /", child, "binds"),
        Part("copy into every slave namespace", prop, "slaves"),
    ]
    if row.ml_section_ns:
        n = max(0, st.mounts - 1)
        parts.append(Part("mount_lock section per copied mount", n * row.ml_section_ns, "mounts"))
    return tuple(p for p in parts if p.ns or p.what == "the op's own work")


def _read_holds(cc: CallCosts, step: Step, st: State) -> tuple[Part, ...]:
    """A mountinfo read's namespace_sem read holds: one per read() of a page of text
    (cohsim.kernel.simulation.nssections.read_mountinfo; the node's own mounts' lines and, past
    them, lines of mounts a burst makes), in a runtime's own namespace each line of the root's
    group walking the group (`CallCosts.slave_line_ns`)."""
    op, k = step.op, cc.k
    if not (op.ns_read_ns or op.per_mount_read_ns):
        return ()
    own = min(st.mounts, k.node_mounts)
    text = own * k.node_line_bytes + (st.mounts - own) * k.mount_line_bytes
    holds = max(1, math.ceil(text / PAGE_BYTES))
    parts = [
        Part(f"fixed part ({holds} holds, a page of text each)", op.ns_read_ns),
        Part("one line per mount", op.per_mount_read_ns * st.mounts, "mounts"),
    ]
    if step.own_ns:
        ring = cc.slave_line_ns(_Now(st)) * st.mounts
        parts.append(Part("each line of the root's group walks the group", ring, "ring x ring"))
    return tuple(parts)


def _mount_lock(cc: CallCosts, step: Step, st: State) -> tuple[Part, ...]:
    """mount_lock's write section: its fixed work and what `ml_hold_at` adds."""
    row = cc.row(step.name, step.op)
    if not step.ml_work and not row.ml_grows:
        return ()
    fixed_sum = cc.sum_ns if step.op.percpu_sum else 0.0
    parts = [
        Part("its own work", step.ml_work - fixed_sum),
        Part("per-CPU count sum", fixed_sum, "CPUs"),
    ]
    if row.ml_grows:
        cc.ml_hold_at(step, row, st.mounts, st.ring, st.slaves)
        parts += [
            Part("walk of the table", cc.part_copy, "mounts"),
            Part("walk of the parent's peers", cc.part_peers, "ring"),
            Part("removal from every slave namespace", cc.part_prop, "slaves"),
            Part("busy check of every slave copy", cc.part_percpu, "slaves, CPUs"),
        ]
    return tuple(p for p in parts if p.ns)


def _after(
    cc: CallCosts, step: Step, st: State, kernel: KernelParams, cpus: int
) -> tuple[Part, ...]:
    """The call's grace periods (alone: no other CPU busy) and its puts."""
    parts = []
    if step.op.rcu:
        gp = grace_period_ns(kernel, cpus, 0.0)
        parts.append(Part(f"{step.op.rcu} expedited grace period(s)", step.op.rcu * gp))
    if step.puts:
        puts = cc.puts(step, float(st.mounts), _Now(st))
        grows = "mounts, CPUs" if step.puts == TABLE else "CPUs"
        if step.prop < 0:
            grows += ", slaves"
        parts.append(Part(f"{puts:g} puts, each a mount_lock section", puts * cc.sum_ns, grows))
    return tuple(parts)


class _Now:
    """A `State` as cohsim.kernel.callcost.NodeState."""

    def __init__(self, st: State) -> None:
        self.mounts, self.ring = float(st.mounts), float(st.ring)
        self.binds, self.windows = float(st.binds), float(st.slaves)


def op_cost(
    machine: Machine,
    kernel: KernelParams,
    op: str,
    state: State,
    *,
    strategy: str = Burst.strategy,
    runtime: str = Burst.runtime,
    layers: int = 1,
) -> Answer:
    """What `op` costs alone in `state` on `machine` (see the module)."""
    if layers < 1:
        raise UsageError(f"layers must be at least 1, not {layers}")
    sum_ns = percpu_sum_ns(machine, kernel)
    step = _with_layers(step_of(op, strategy, runtime, kernel, sum_ns), kernel, layers)
    cc = CallCosts(kernel, sum_ns, walks=walks_for(machine, kernel))
    sections = {
        "unlocked": _unlocked(step, sum_ns),
        "namespace_sem write hold": _write_hold(cc, step, state),
        "namespace_sem read holds": _read_holds(cc, step, state),
        "mount_lock write section": _mount_lock(cc, step, state),
        "after the call": _after(cc, step, state, kernel, machine.vcpus),
    }
    question = {
        "op": op,
        "strategy": strategy,
        "runtime": runtime,
        "layers": layers,
        **_state_dict(state, kernel, machine),
        "percpu_sum_ns": round(sum_ns, 3),
    }
    notes = (
        "uncontended: no lock waits, no SMT sibling, no walkers on mount_lock's line",
        f"slave namespaces: {state.slaves} runtime copies + "
        f"{kernel.service_namespaces:g} node services' (propagation.service_namespaces)",
    )
    return Answer(question, {k: v for k, v in sections.items() if v}, notes)


def mountinfo_cost(machine: Machine, kernel: KernelParams, state: State) -> Answer:
    """One whole /proc/self/mountinfo read alone, in the host's namespace and in a runtime's
    own copy (`CallCosts.full_read_ns`)."""
    cc = CallCosts(kernel, percpu_sum_ns(machine, kernel))
    read = cc.full_read_ns(float(state.mounts), float(state.ring))
    per_mount = kernel.op("mountinfo_read").per_mount_read_ns * state.mounts
    host = (
        Part("open and the fixed part of the read", read["host"] - per_mount),
        Part("one line per mount", per_mount, "mounts"),
    )
    ring = read["container"] - read["host"]
    slave = (*host, Part("each line of the root's group walks the group", ring, "ring x ring"))
    return Answer(
        {"read": "mountinfo", **_state_dict(state, kernel, machine)},
        {"in the host's namespace": host, "in a runtime's own namespace": slave},
        ("each section is a whole read: they are alternatives, not added",),
        additive=False,
    )


def _state_dict(state: State, kernel: KernelParams, machine: Machine) -> dict[str, Any]:
    return {
        "machine": machine.name,
        "cpus": machine.vcpus,
        "kernel": kernel.name,
        "mounts": state.mounts,
        "ring": state.ring,
        "binds": state.binds,
        "slaves": state.slaves,
    }


def human(ns: float) -> str:
    """A time for people in ns, us or ms, to 3 significant digits below 100 of the unit
    ("12.3 us", "4.55 ms", "300 ns", "10,000 ms")."""
    value, unit = ns, "ns"
    for name, scale in (("ms", NS_PER_MS), ("us", NS_PER_US)):
        if abs(ns) >= 0.9995 * scale:
            value, unit = ns / scale, name
            break
    return f"{value:,.0f} {unit}" if abs(value) >= 100 else f"{value:.3g} {unit}"
