"""What the burst model works out per call from a plan's arrays (cohsim.kernel.analytic.plans),
for one model or for a joined model's replicates at once: each replicate's row what its own
model gives alone, to the bit."""

from __future__ import annotations

import numpy as np
import pytest

from cohsim.kernel.analytic.plans import hold_slowdowns
from cohsim.kernel.smt import slowdown_array


@pytest.mark.parametrize("machine", ["m7i.metal-24xl", "m7a.24xlarge"])
@pytest.mark.parametrize("mixed", [False, True], ids=["all-spin", "one-row-idle"])
def test_the_rows_slowdowns_are_each_rows_own_to_the_bit(catalog, machine, mixed):
    """Rows priced together (one a replicate, its SMT slowdowns a column) are what each row
    gives alone, also where one row has nobody spinning (slowdown_array's other formula)."""
    m = catalog.get(machine)
    rng = np.random.default_rng(3)
    busy = 1.0 + rng.integers(0, 3, size=(5, 40)) * 33.5
    if mixed:
        busy[2] = 1.0
    smt, spin = rng.uniform(1.1, 1.6, size=(5, 1)), rng.uniform(1.0, 1.3, size=(5, 1))
    rows = hold_slowdowns(m, busy, smt, spin)
    for b, s, p, row in zip(busy, smt[:, 0], spin[:, 0], rows, strict=True):
        alone = slowdown_array(m, float(s), b, b - 1.0, float(p))
        assert np.array_equal(row.view(np.int64), alone.view(np.int64))
