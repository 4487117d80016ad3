"""Who finishes when in the analytic burst model: the containers' spread over the burst.

The burst model (cohsim.kernel.analytic.burstmodel) prices the cohort's calls and gives the
time T at which the last container's mount phase ends. A planner also asks how the others
are spread before it: the launch p50 against the p99. The model's own mechanism answers it.

A call whose cohort time is set by the locks (its N containers' lock work one after another
takes longer than one container's own path: N w_j >= o_j, w_j = h_j + p_j, its
namespace_sem write hold and the mount_lock work it leaves to be served one after another)
is a single server the containers pass in turn: the k-th through it leaves (k - 1) w_j
after the first. A container ahead stays ahead: it reaches the next call first, and a
writer that comes back to a writer-owned namespace_sem spins and takes it before the
sleepers (cohsim.kernel.simulation.nssections), so the order holds from call to call. The
containers thus pass the burst's serialised calls as jobs pass a line of single servers, all
present at the start: in such a line the k-th job's departure from stage j is
d(k, j) = max(d(k, j - 1), d(k - 1, j)) + w_j, and the gap between consecutive departures
from the last stage is the largest service time of the line, max_j w_j (the bottleneck sets
the pace: a faster stage after it cannot close the gaps, a slower one widens them).

A read section gathers the cohort again: a reader that finds writers queued sleeps behind
them, the containers ahead wait there for the ones behind, and the rwsem grants the queued
readers together (the 4 ms hand-off of Linux 6.x, cohsim.kernel.simulation.rwsem: why the
model runs in step through the overlays). The line so starts again at the burst's last call
with read sections (runc's mountinfo reads, an overlay's per-layer clones). So the
containers finish one gap s apart, s = max_j w_j over the lock-bound calls from that one on,
the last at T:

    mount phase of the k-th = T - (N - k) s,     k = 1 .. N,

uniform over the last (N - 1) s of the burst, which the burst holds (the bottleneck call
alone takes N s of the lock). Without a lock-bound call there (a burst smaller than its CPUs'
own paths need), s = 0: they finish together. Each launch adds the runtime's work after its
mount phase, the same for every container. In runc's sequence the bottleneck after its last
mountinfo read is the old root's detach (umount_oldroot: its hold and its puts).

What it leaves out: the simulation's leaders, the few containers that run ahead of the
cohort through whole stretches from the start and gather with nobody (common-parent 100 x 50
on m7i.metal-24xl: the first finishes its mount phase at 21 ms of 177), and a gathering that
is only partial (readers granted in 4 ms batches through a long write stretch).
docs/analytic.md has the agreement with the simulation.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


def gap(n: int, work_ns: Array, own_ns: Array, read_ns: Array) -> float:
    """The gap between consecutive containers' finishing times, ns: the largest lock work
    `work_ns` (one container's, per call) of the calls whose cohort queues for the locks
    (`n` times the lock work at least one container's own path `own_ns`), from the last call
    with read sections (`read_ns` > 0) on; 0 where none queues or `n` is 1."""
    if n < 2:
        return 0.0
    reads = np.flatnonzero(read_ns > 0)
    start = int(reads[-1]) if len(reads) else 0
    work, own = work_ns[start:], own_ns[start:]
    queued = (work > 0) & (n * work >= own)
    return float(work[queued].max()) if queued.any() else 0.0


def gaps(n: int, work_ns: Array, own_ns: Array, read_ns: Array) -> Array:
    """`gap` of each replicate: the arrays' rows, one a replicate (one row: a model's own;
    cohsim.kernel.analytic.burstmodel.BurstModel.joined)."""
    rows = (np.reshape(x, (-1, x.shape[-1])) for x in (work_ns, own_ns, read_ns))
    return np.array([gap(n, w, o, r) for w, o, r in zip(*rows, strict=True)])


def finishing(last_ns: float, n: int, gap_ns: float) -> Array:
    """The `n` containers' mount phases, ns, in finishing order: the last at `last_ns`, the
    others `gap_ns` apart before it (never below 0)."""
    return np.maximum(0.0, last_ns - (n - 1 - np.arange(n)) * gap_ns)
