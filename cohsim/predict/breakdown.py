"""Where a container's launch time goes, by mechanism: the launch breakdown of a prediction.

A launch simulation (cohsim.kernel.simulation.launch) records every syscall as (thread, op, start
ns, end ns), the waits inside it included, and per thread the time it waited for a lock, for grace
periods and for a CPU (`ThreadResult`). A thread's time from its arrival to its runtime's end
is its first wait for a CPU, its calls, the think time between them, and its runtime's CPU
work; the breakdown splits it into:

- `namespace`: the runtime's own namespace set-up (unshare's copy of the mount table, the
  propagation change, its own mounts, pivot_root, the old root's detach);
- `bind_mounts`: the idmapped binds (open_tree, mount_setattr, move_mount, the close of
  their fds);
- `overlay`: the overlay mount (mount(2), or fsopen/fsconfig/fsmount with lowerdir+);
- `unmounts`: every umount2 (the binds', the overlay's, refused ones);
- `mountinfo`: the runtime's own reads of /proc/self/mountinfo;
- `other_calls`: any other traced call, and ops this module does not know yet;
- `between_calls`: think time between calls (a replayed trace's gaps; none when synthesised);
- `runtime_cpu`: the runtime's CPU work after its mounts (with SMT slowdown and the spinning
  its CPU repays);
- `run_queue`, `lock_wait`, `rcu_wait`: the waits, as the simulation counts them.

Each call category is its calls' time less the waits inside them. The simulation counts the
waits per thread, not per call, so they are attributed: the grace-period waits, and the waits
for a CPU after them, to the categories in proportion to their calls' grace periods (only
unmounts and a dissolving close wait for one); the lock waits (namespace_sem, mount_lock,
spinning in a path walk, and the wait for a CPU after sleeping on namespace_sem) in proportion
to each category's time left after that. The categories add up to the launch latency less the
kernel's fixed `base_launch_ns`, which is reported apart (`base`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cohsim.kernel.costs import KernelParams
from cohsim.kernel.simulation.records import ThreadResult
from cohsim.units import NS_PER_S

#: each op's mechanism (cohsim.kernel.costs.OPS); an op not named here counts as other_calls
MECHANISM = {
    **dict.fromkeys(
        (
            "ns_copy",
            "umount_oldroot",
            "mount_rslave",
            "pivot_root",
            "mount_bind",
            "mount_new",
            "mount_remount",
            "mount_enotdir",
            "mount_failed",
        ),
        "namespace",
    ),
    **dict.fromkeys(
        (
            "open_tree_clone",
            "mount_setattr",
            "mount_setattr_ro",
            "move_mount",
            "close_attached",
            "close_detached",
        ),
        "bind_mounts",
    ),
    **dict.fromkeys(
        ("mount_overlay", "fsopen", "fsconfig", "fsconfig_create", "fsmount"), "overlay"
    ),
    **dict.fromkeys(("umount", "umount_detach", "umount_overlay", "umount_einval"), "unmounts"),
    **dict.fromkeys(("mountinfo_read", "mountinfo_open", "mountinfo_eof"), "mountinfo"),
}
CALLS = ("namespace", "bind_mounts", "overlay", "unmounts", "mountinfo", "other_calls")
WAITS = ("run_queue", "lock_wait", "rcu_wait")
#: every category, in the order they are reported
CATEGORIES = (*CALLS, "between_calls", "runtime_cpu", *WAITS)

Call = tuple[int, str, int, int]  #: (thread id, op name, start ns, end ns)


def mechanism(op: str) -> str:
    """The breakdown category of an op's calls."""
    return MECHANISM.get(op, "other_calls")


def _share(total: float, weights: dict[str, float]) -> dict[str, float]:
    """`total` split in proportion to `weights` (nothing where they are all 0)."""
    w = sum(weights.values())
    return {c: total * x / w if w else 0.0 for c, x in weights.items()}


@dataclass(frozen=True)
class _Sums:
    """One thread's calls summed: time in calls and grace periods per category (`CALLS`), and
    its first call's start and last call's end (None: none)."""

    gross: dict[str, float]
    gps: dict[str, float]
    first: int | None
    last: int | None


def _call_sums(tids: Sequence[int], calls: Sequence[Call], kernel: KernelParams) -> list[_Sums]:
    """`_Sums` of each thread in `tids` from every call recorded (each thread's in the order
    it made them), in array operations: a replicate records ~50,000 calls. The sums are of
    integer nanoseconds, exact in float64, so they equal a call-by-call loop's to the bit; a
    thread's think time is then its last call's end less its first's start less its time in
    calls (`_finish`)."""
    n, k = len(tids), len(CALLS)
    row_of = {t: i for i, t in enumerate(tids)}
    ops = [c[1] for c in calls]  # columns by comprehension: zip(*calls) is ~10x slower here
    cat_of = {op: CALLS.index(mechanism(op)) for op in set(ops)}
    rcu_of = {op: float(kernel.op(op).rcu) for op in cat_of}
    row = np.array([row_of[c[0]] for c in calls], np.intp)
    cell = row * k + np.array([cat_of[o] for o in ops], np.intp)
    start = np.array([c[2] for c in calls], np.int64)
    end = np.array([c[3] for c in calls], np.int64)
    gross = np.bincount(cell, weights=end - start, minlength=n * k).reshape(n, k)
    rcu = np.array([rcu_of[o] for o in ops], np.float64)
    gps = np.bincount(cell, weights=rcu, minlength=n * k).reshape(n, k)
    rows, first_at = np.unique(row, return_index=True)
    last_at = len(calls) - 1 - np.unique(row[::-1], return_index=True)[1]
    span = {  # each thread's first call's start and last call's end
        r: (int(start[i]), int(end[j]))
        for r, i, j in zip(rows.tolist(), first_at.tolist(), last_at.tolist(), strict=True)
    }
    return [
        _Sums(
            dict(zip(CALLS, gross[r].tolist(), strict=True)),
            dict(zip(CALLS, gps[r].tolist(), strict=True)),
            *span.get(r, (None, None)),
        )
        for r in range(n)
    ]


def _finish(result: ThreadResult, s: _Sums) -> dict[str, float]:
    """One thread's breakdown (`CATEGORIES`, ns) from its sums and its waits."""
    first = s.first if s.first is not None else result.mounts_done_ns
    first_cpu = float(first - result.start_ns)  # the wait for a CPU before the first call
    in_calls_runq = max(0.0, result.run_queue_ns - first_cpu)
    after_gp = _share(result.rcu_wait_ns + in_calls_runq, s.gps if any(s.gps.values()) else s.gross)
    net = {c: s.gross[c] - after_gp[c] for c in CALLS}
    locks = _share(result.lock_wait_ns, {c: max(0.0, v) for c, v in net.items()})
    out = {c: net[c] - locks[c] for c in CALLS}
    in_calls = sum(s.gross.values())
    out["between_calls"] = 0.0 if s.last is None else float(s.last - first - in_calls)
    out["runtime_cpu"] = float(result.end_ns - (s.last or result.mounts_done_ns))
    out["run_queue"] = result.run_queue_ns
    out["lock_wait"] = result.lock_wait_ns
    out["rcu_wait"] = result.rcu_wait_ns
    return out


def thread_breakdown(
    result: ThreadResult, calls: Sequence[Call], kernel: KernelParams
) -> dict[str, float]:
    """One thread's time (ns) from arrival to its runtime's end, by category (`CATEGORIES`):
    `calls` are its own, in the order it made them."""
    return _finish(result, _call_sums([result.tid], calls, kernel)[0])


@dataclass(frozen=True)
class Breakdown:
    """A prediction's launch breakdown (seconds): the mean container's and the slowest one's,
    by category (`CATEGORIES`), and the fixed base added to every launch."""

    mean_s: dict[str, float]
    slowest_s: dict[str, float]
    base_s: float
    #: namespace_sem held for writing, by the mechanism of the call that held it: what every
    #: lock wait above waited for (the lock is one for the whole node), largest first
    ns_write_s: dict[str, float] = field(default_factory=dict)
    #: how the waits were attributed to the categories
    attribution: str = (
        "waits inside calls split by grace periods (RCU, and the wait for a CPU after one) "
        "and by remaining call time (lock waits)"
    )

    @property
    def dominant(self) -> str:
        """The mechanism that held namespace_sem longest ("" when nothing held it)."""
        return next(iter(self.ns_write_s), "")

    @property
    def holder(self) -> str:
        """`dominant` as tables name it ("namespace_sem: bind mounts"; "" when none)."""
        return f"namespace_sem: {self.dominant.replace('_', ' ')}" if self.dominant else ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "categories": list(CATEGORIES),
            "mean_s": {k: round(v, 6) for k, v in self.mean_s.items()},
            "slowest_s": {k: round(v, 6) for k, v in self.slowest_s.items()},
            "base_s": round(self.base_s, 6),
            "namespace_sem_write_s": {k: round(v, 6) for k, v in self.ns_write_s.items()},
            "dominant_holder": self.dominant,
            "attribution": self.attribution,
        }


def holds_by_mechanism(ns_write_by_op: Mapping[str, float]) -> dict[str, float]:
    """namespace_sem's write holds by op (ns) summed by mechanism (s), largest first."""
    held: dict[str, float] = {}
    for op, ns in ns_write_by_op.items():
        held[mechanism(op)] = held.get(mechanism(op), 0.0) + ns / NS_PER_S
    return dict(sorted(held.items(), key=lambda kv: (-kv[1], kv[0])))


def launch_breakdown(
    results: Sequence[ThreadResult],
    calls: Sequence[Call],
    kernel: KernelParams,
    ns_write_by_op: Mapping[str, float] | None = None,
) -> Breakdown:
    """The breakdown of one simulation's threads (`results`, with every call it recorded);
    `ns_write_by_op`: namespace_sem's write holds by op (ns; LaunchSim.ns_write_by_op)."""
    ns_write = holds_by_mechanism(ns_write_by_op or {})
    sums = _call_sums([r.tid for r in results], calls, kernel)
    per = [_finish(r, s) for r, s in zip(results, sums, strict=True)]
    base = kernel.base_launch_ns / NS_PER_S
    if not per:
        zero = dict.fromkeys(CATEGORIES, 0.0)
        return Breakdown(zero, dict(zero), base, ns_write)
    mean = {c: sum(p[c] for p in per) / len(per) / NS_PER_S for c in CATEGORIES}
    slow = max(range(len(results)), key=lambda i: results[i].end_ns - results[i].start_ns)
    return Breakdown(mean, {c: per[slow][c] / NS_PER_S for c in CATEGORIES}, base, ns_write)
