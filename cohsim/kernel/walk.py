"""A walk over one of the kernel's lists of mounts, in units of the kernel model's line.

The kernel model prices each element of a walk at one line (an op's `per_peer_ns`,
`per_child_ns`, `mount_lock_per_peer_ns`: measured where the cost was flat in the list's
length). On other hosts it bends with the length (calibration/data/devvm-16cpu-intel-xeon-f6m207
/ring/README.md: 8-20 ns a child below 2,000, 47-118 above 5,000, against the line's 26): where
the machine's file says how (cohsim.machine.parts.Walks), a walk of n elements costs `units(n)`
lines, the sum over its bands of the elements in each times the band's scale; else n.

Both engines price a state's walks through here: the simulation per call
(cohsim.kernel.callcost), the analytic engine over whole arrays of states (`units_array`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from cohsim.machine.parts import Band


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
