"""A traced thread's calls, worked out before the launch simulation
(cohsim.kernel.simulation.launch) runs them: what each call costs and does, and the factor by which
each call's own work varies.

Planning: per call, the think time before it, its op (cohsim.kernel.classify), the op's costs
(cohsim.kernel.costs) for the call's layer count, its mount_lock section's work (with the
per-CPU counter sum where the op does one), and what it does to the mount table. Everything a
call needs that does not change during the run, so the simulation's hot loop does not work it
out again.

Call-to-call variation: each call's own work is its cost times exp(`call_sigma` Z), one
standard normal Z per call, drawn in blocks from a stream of its own (`CallFactors`), so that
how often the simulation's other generator is drawn does not move them (common random numbers
in calibration).
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple, cast

import numpy as np

from cohsim.kernel.classify import ThreadState, classify, layers_of
from cohsim.kernel.costs import KernelParams, OpCost
from cohsim.workload.trace import SyscallEvent


class Step(NamedTuple):
    """One planned call (a tuple: the simulation's hot loop unpacks it)."""

    think: int  #: ns after the previous call returned
    name: str  #: the op's name
    op: OpCost
    walk_ns: float  #: its path walks
    cpu: float  #: its unlocked work
    reads: int  #: per-layer namespace_sem read sections (overlayfs's private clones)
    ml_work: float  #: its mount_lock section's fixed work, ns (0: none)
    delta: int  #: what it does to the host's mount table
    ring: int  #: what it does to the root's peer group (cohsim.kernel.simulation.mounttable)
    binds: int  #: what it does to the group's clones attached under the root mount
    #: a host mount event propagated into every slave namespace: +1 a mount, -1 an unmount
    prop: int
    #: it walks the root group's peers and the root's children (an open_tree clone, a bind's
    #: attach or detach in the host's namespace; the op's per_peer_ns and per_child_ns)
    group_walk: bool
    own_ns: bool  #: runs in the thread's own namespace copy (a mountinfo read is a slave's)
    window: int  #: +1 the copy is made (ns_copy), -1 its old root is detached
    allocs: int  #: mounts it allocates (each a per-CPU area); TABLE: one per mount in the table
    puts: int  #: detached mounts it puts after its grace period; TABLE: the table's size
    #: what it does to the bytes of /proc/self/mountinfo (the lines it adds or removes)
    nbytes: float


#: what a successful call in the host's namespace does to the host's mount table (in a
#: runtime's own namespace copy, nothing: it changes the copy)
TABLE_DELTA = {
    "move_mount": +1,
    "mount_overlay": +1,
    "mount_bind": +1,
    "mount_new": +1,
    "umount_detach": -1,
    "umount": -1,
    "umount_overlay": -1,
}
WINDOW = {"ns_copy": +1, "umount_oldroot": -1}

TABLE: Final = -1  #: a count that is the mount table's size when the call runs

#: mounts a call allocates: Linux 6.18 fs/namespace.c alloc_vfsmnt() gives every new mount its
#: per-CPU counters (alloc_percpu(struct mnt_pcp), which mm/percpu.c pcpu_alloc() zeroes in
#: every possible CPU's unit); clone_mnt() and vfs_create_mount() call it. Overlay superblocks
#: also clone each layer's mount, inside their per-layer namespace_sem read sections
#: (clone_private_mount(): priced there by the simulation).
ALLOCS = {
    "open_tree_clone": 1, "mount_bind": 1, "mount_new": 1, "mount_overlay": 1, "fsmount": 1,
    "mount_enotdir": 1, "ns_copy": TABLE,
}  # fmt: skip
#: detached mounts a call puts after its grace period: namespace_unlock() mntput()s every
#: mount umount_tree() took out, and fs/namespace.c mntput_no_expire() takes mount_lock and
#: sums the mount's per-CPU counts (mnt_get_count(), every possible CPU) for a mount no longer
#: in a namespace, each put its own lock_mount_hash(). docs/kernel-audit.md C4: an unmount
#: puts the unmounted mount and path_umount()'s own last reference (2; and each slave
#: namespace's copy: cohsim.kernel.callcost.CallCosts.puts), a dissolved detached clone 2
#: (namespace_unlock()'s and __fput()'s), an overlay's shutdown also its upper layer's and
#: each lower layer's private clone (kern_unmount_array(), after a second grace period).
PUTS = {
    "umount_detach": 2, "umount": 2, "umount_overlay": 3, "close_detached": 2,
    "mount_enotdir": 1, "umount_oldroot": TABLE,
}  # fmt: skip
PER_LAYER_PUTS = ("umount_overlay",)
#: one read() of mountinfo returns at most one seq_file page (fs/seq_file.c seq_read_iter()
#: fills m->buf, PAGE_SIZE on x86-64 and on arm64's default 4 KiB pages), taking namespace_sem
#: once; calibration/data/devvm-2cpu-amd-epyc-f25m1/mountinfo-readers/README.md: no read()
#: returned more than 4,096 bytes whatever it asked
PAGE_BYTES: Final = 4096
#: the bytes one layer added with fsconfig(FSCONFIG_SET_FD, "lowerdir+") adds to its overlay's
#: mountinfo line: ",lowerdir+=/" (ovl_show_options() prints each, fs/overlayfs/params.c:1070,
#: as the d_path() of the layer's mount, :480, and a detached clone's is "/"; measured:
#: calibration/data/devvm-2cpu-intel-xeon-f6m207/mountinfo-lines/README.md)
LOWERDIR_PLUS_ENTRY_BYTES: Final = 12


class Line(NamedTuple):
    """What a call adds to (+) or removes from (-) the mountinfo text, by kind of line: mount
    lines, overlay lines, `lowerdir=` entries and `lowerdir+` entries."""

    mounts: int = 0
    overlays: int = 0
    entries: int = 0
    plus: int = 0

    def nbytes(self, k: KernelParams) -> float:
        return (
            self.mounts * k.mount_line_bytes
            + self.overlays * k.overlay_line_bytes
            + self.entries * k.lowerdir_entry_bytes
            + self.plus * LOWERDIR_PLUS_ENTRY_BYTES
        )


class CallFactors:
    """Per-call work factors exp(sigma Z), drawn in blocks from their own stream of `seed`
    (the simulation takes them one by one: cohsim.kernel.simulation.launch)."""

    def __init__(self, sigma: float, seed: int) -> None:
        self.sigma = sigma
        self.rng = np.random.default_rng([seed, 1])

    def block(self) -> list[float]:
        """The next block of factors (ones, nothing drawn, where sigma is 0)."""
        if not self.sigma:
            return [1.0] * 4096
        return cast(list[float], np.exp(self.sigma * self.rng.standard_normal(4096)).tolist())


class Recent:
    """The last few results of a function of frozen objects, by the objects' identity (the
    objects are kept, so an id is not reused while its entry lives)."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self.entries: dict[tuple[Any, ...], tuple[tuple[object, ...], Any]] = {}

    def get(self, objs: tuple[object, ...], rest: tuple[Any, ...]) -> Any:
        hit = self.entries.get((*map(id, objs), *rest))
        if hit is not None and all(a is b for a, b in zip(hit[0], objs, strict=True)):
            return hit[1]
        return None

    def put(self, objs: tuple[object, ...], rest: tuple[Any, ...], value: Any) -> None:
        if len(self.entries) >= self.size:
            del self.entries[next(iter(self.entries))]
        self.entries[(*map(id, objs), *rest)] = (objs, value)


_PLANS, _CALLS = Recent(), Recent()


class Plan(NamedTuple):
    """A thread's planned calls as its distinct calls (a container's calls repeat: a few
    dozen distinct among hundreds) and, call by call, which of them it is."""

    distinct: tuple[Step, ...]
    which: tuple[int, ...]

    def steps(self) -> list[Step]:
        """The calls in order (a new list; repeated calls are the same `Step` object)."""
        distinct = self.distinct
        return [distinct[i] for i in self.which]


def plan_calls(
    events: tuple[SyscallEvent, ...],
    kernel: KernelParams,
    layers: int | None,
    percpu_sum_ns: float,
) -> list[Step]:
    """Per event: think time before it, op name, op cost, walk and unlocked work (ns), its
    per-layer namespace_sem read sections, its mount_lock section's work (ns; 0: none) and
    what it does to the mount table. `layers` fixes every call's layer count (None: count
    them from the trace); `percpu_sum_ns` is what the per-CPU counter sum costs inside the
    mount_lock section of an op that does one. A new list is returned each time (`plan`'s
    steps)."""
    return plan(events, kernel, layers, percpu_sum_ns).steps()


def plan(
    events: tuple[SyscallEvent, ...],
    kernel: KernelParams,
    layers: int | None,
    percpu_sum_ns: float,
) -> Plan:
    """`plan_calls`' calls as a `Plan`: each distinct call priced once.

    The last few plans are remembered by their inputs' identity (events and kernel are
    frozen: the engines' models of one replicate plan once), and what the calls are and do,
    which no kernel changes, by the events' (each replicate's drawn kernel only re-prices
    the distinct calls)."""
    hit = _PLANS.get((events, kernel), (layers, percpu_sum_ns))
    if hit is not None:
        return cast(Plan, hit)
    distinct, which = _classified(events, layers)
    out = Plan(tuple(_price(c, kernel, percpu_sum_ns) for c in distinct), which)
    _PLANS.put((events, kernel), (layers, percpu_sum_ns), out)
    return out


class _Call(NamedTuple):
    """What one call is and does, whatever the kernel's costs."""

    think: int
    name: str
    layers: int
    delta: int
    ring: int
    binds: int
    group_walk: bool
    own_ns: bool
    window: int
    allocs: int
    puts: int
    line: Line


def _classified(
    events: tuple[SyscallEvent, ...], layers: int | None
) -> tuple[tuple[_Call, ...], tuple[int, ...]]:
    """Each event classified (cohsim.kernel.classify) with its effects, once per events: the
    distinct calls (equal calls cost the same) and which of them each event is."""
    done = _CALLS.get((events,), (layers,))
    if done is not None:
        return cast(tuple[tuple[_Call, ...], tuple[int, ...]], done)
    state = ThreadState()
    layer_counts = layers_of(events) if layers is None else [layers] * len(events)
    overlays: dict[str | None, Line] = {}  # this thread's overlays' lines, by mount point
    made = 0  # the layers of its last fsmount (lowerdir+)
    calls = []
    for i, e in enumerate(events):
        think = 0
        if i and events[i - 1].duration_ns is not None:
            think = max(0, e.start_ns - events[i - 1].end_ns)
        own_ns = state.in_own_ns  # before this call: its unshare itself copies the host's
        name = classify(e, state)
        n = layer_counts[i]
        delta = 0 if own_ns else TABLE_DELTA.get(name, 0)
        ring, binds = state.ring_delta, state.binds_delta
        group_walk = (ring != 0 or binds != 0) and name != "close_detached"
        window = WINDOW.get(name, 0) if e.ok else 0
        allocs, puts = (ALLOCS.get(name, 0), PUTS.get(name, 0)) if e.ok else (0, 0)
        if name in PER_LAYER_PUTS:
            puts += n
        if name == "fsmount":
            made = n
        line = _line(e, name, n, made, delta, overlays)
        calls.append(_Call(think, name, n, delta, ring, binds, group_walk, own_ns, window,
                           allocs, puts, line))  # fmt: skip
    index: dict[_Call, int] = {}
    which = tuple(index.setdefault(c, len(index)) for c in calls)
    out = (tuple(index), which)
    _CALLS.put((events,), (layers,), out)
    return out


def _line(
    e: SyscallEvent, name: str, layers: int, made: int, delta: int, overlays: dict[str | None, Line]
) -> Line:
    """The mountinfo line a call with table change `delta` adds or removes: an overlay's with
    its lower layers (a `lowerdir=` list, or `made` lowerdir+ layers when an fsmount'ed overlay
    is attached), remembered by mount point until it is unmounted; else a mount line."""
    if not delta:
        return Line()
    if name == "mount_overlay" or (name == "move_mount" and e.fd_source == "fsmount"):
        line = Line(0, 1, layers, 0) if name == "mount_overlay" else Line(0, 1, 0, made)
        overlays[e.path] = line
        return line
    if name == "umount_overlay":
        line = overlays.pop(e.path, Line(0, 1, layers, 0))
        return Line(0, -line.overlays, -line.entries, -line.plus)
    return Line(delta, 0, 0, 0)


def _price(c: _Call, k: KernelParams, percpu_sum_ns: float) -> Step:
    """A call with the kernel's costs."""
    op, n = k.op(c.name), c.layers
    walk_ns = (op.walks + op.walks_per_layer * n) * k.walk_ns
    cpu = op.cpu_ns + op.per_layer_cpu_ns * n
    ml_work = op.mount_lock_ns + (percpu_sum_ns if op.percpu_sum else 0.0)
    reads = op.layer_reads * n
    return Step(c.think, c.name, op, walk_ns, cpu, reads, ml_work, c.delta, c.ring, c.binds,
                c.delta, c.group_walk, c.own_ns, c.window, c.allocs, c.puts,
                c.line.nbytes(k))  # fmt: skip
