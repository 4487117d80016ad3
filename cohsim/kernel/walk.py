"""A walk over one of the kernel's lists of mounts, in units of the kernel model's line.

The kernel model prices each element of a walk at one line (an op's `per_peer_ns`,
`per_child_ns`, `mount_lock_per_peer_ns`: measured where the cost was flat in the list's
length). On other hosts it bends with the length (calibration/data/devvm-16cpu-intel-xeon-f6m207
/ring/README.md: 8-20 ns a child below 2,000, 47-118 above 5,000, against the line's 26): where
the machine's file says how (cohsim.machine.parts.Walks), a walk of n elements costs `units(n)`
lines, the sum over its bands of the elements in each times the band's scale; else n.

Both engines price a state's walks through here: the simulation per call
(cohsim.kernel.callcost), the analytic engine over whole arrays of states (`units_array`).

Where a machine's walks were not measured but its caches are known (the catalog's instances:
`Microarch.l2_kib`, `l2_load_ns`, `llc_load_ns`, public figures), `walks_for` gives the bands
its caches imply: a walk is a chase of dependent loads over the ring's mounts, so a peer
costs `peer_l2_loads` loads at the L2's latency while the ring fits in the walker's L2 and
`peer_llc_loads` at the last-level cache's beyond it, the knee where the ring's
`peer_bytes` a peer fill the L2. Measured on the hosts that ran both the ring and a pointer
chase (models/kernel/linux-6.18.toml's sources say where): 2.5-3.0 L2 loads a peer below the
knee on both Emerald Rapids VMs, 1.2-2.6 loads at the LLC's latency beyond it on those and
the AMD VM. Each band's scale is its cost a peer over the kernel model's line
(`move_mount`'s `per_peer_ns`, measured on the AMD VM), on the peers and the children alike.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from cohsim.kernel.costs import KernelParams
from cohsim.machine.model import Machine
from cohsim.machine.parts import Band, Walks


def units(n: float, bands: tuple[Band, ...]) -> float:
    """The cost of walking `n` elements, in lines (`n` itself without bands). Added band by
    band in one order: the same inputs give the same float."""
    if not bands:
        return n
    total = 0.0
    last = len(bands) - 1
    for i in range(len(bands)):
        lo, scale = bands[i]
        if n <= lo:
            break
        hi = bands[i + 1][0] if i < last else n
        total += (min(n, hi) - lo) * scale
    return total


def units_array(n: NDArray[np.float64], bands: tuple[Band, ...]) -> NDArray[np.float64]:
    """`units` of every element of `n`."""
    if not bands:
        return n
    out = np.zeros_like(n, dtype=float)
    for i, (lo, scale) in enumerate(bands):
        hi = bands[i + 1][0] if i + 1 < len(bands) else np.inf
        out += (np.clip(n, lo, hi) - lo) * scale
    return out


class BandRows:
    """Several walks' bands side by side, one row each (a joined analytic model's
    replicates, each its own kernel's knee): `units` prices each row of an array with its own
    bands, the same operations in the same order as `units_array`, so the same floats."""

    def __init__(self, bands: list[tuple[Band, ...]]) -> None:
        self.bands = bands
        count = len(bands[0])
        #: (starts, ends, scales), row x band, where every row has as many bands; else None
        #: (each row on its own)
        self.table: tuple[NDArray[np.float64], ...] | None = None
        if count and all(len(b) == count for b in bands):
            t = np.array(bands, dtype=float)  # row, band, (start, scale)
            starts = t[:, :, 0]
            ends = np.concatenate([starts[:, 1:], np.full((len(bands), 1), np.inf)], axis=1)
            self.table = (starts, ends, t[:, :, 1])

    def units(self, n: NDArray[np.float64]) -> NDArray[np.float64]:
        """`units_array` of each row of `n` (its leading axis) with that row's bands."""
        if self.table is None:
            return np.stack([units_array(r, b) for r, b in zip(n, self.bands, strict=True)])
        starts, ends, scales = self.table
        shape = (len(starts),) + (1,) * (n.ndim - 1)
        out = np.zeros_like(n, dtype=float)
        for i in range(starts.shape[1]):
            lo, hi = starts[:, i].reshape(shape), ends[:, i].reshape(shape)
            out += (np.clip(n, lo, hi) - lo) * scales[:, i].reshape(shape)
        return out


def cache_bands(machine: Machine, kernel: KernelParams) -> tuple[Band, ...]:
    """The bands of a peer walk that `machine`'s caches imply under `kernel` (empty where
    they are not known): the L2's band from 0, the LLC's from the knee."""
    micro = machine.microarch
    line = kernel.op("move_mount").per_peer_ns
    if micro.l2_kib is None or micro.l2_load_ns is None or micro.llc_load_ns is None:
        return ()
    if not line > 0:
        return ()
    knee = micro.l2_kib * 1024.0 / kernel.peer_bytes
    in_l2 = kernel.peer_l2_loads * micro.l2_load_ns / line
    past = kernel.peer_llc_loads * micro.llc_load_ns / line
    return ((0.0, in_l2), (knee, past))


def walks_for(machine: Machine, kernel: KernelParams) -> Walks:
    """How `machine`'s list walks bend with their length under `kernel`: its measured
    [walks] where it has them, else the bands its caches imply (`cache_bands`), else none
    (the kernel model's line at every length)."""
    if machine.walks:
        return machine.walks
    bands = cache_bands(machine, kernel)
    if not bands:
        return machine.walks
    return Walks(children=bands, peers=bands)
