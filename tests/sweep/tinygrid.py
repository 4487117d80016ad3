"""The sweep tests' tiny grid (a helper module: a conftest.py here would shadow tests/conftest.py
for `from conftest import ...`): machines whose level-2 tables are quick to fill, bursts of a few
containers of a few layers, one or two replicates, so a point takes a fraction of a second."""

from __future__ import annotations

from cohsim.machine.catalog import Catalog
from cohsim.predict.options import RunOptions
from cohsim.sweep import SweepOptions, SweepPoint, grid

#: one-socket machines whose line-cost tables fill in a fraction of a second
MACHINES = ["devvm-2cpu-intel-xeon-f6m167", "xeon-gold-6242-1s"]
RUN = RunOptions(seed=3, replicates=2)
#: the same grid as command-line flags
FLAGS = ["--instances", ",".join(MACHINES), "--containers", "2,6", "--layers", "2",
         "--replicates", "2", "--seed", "3", "--no-progress"]  # fmt: skip


def tiny_points() -> list[SweepPoint]:
    """2 machines x 2 container counts (4 points)."""
    return grid(Catalog(), MACHINES, [2, 6], [2])


def options(cache: object = "off", **kw: object) -> SweepOptions:
    """Sweep options for the tiny grid (no cache unless one is given)."""
    return SweepOptions(run=RUN, cache=cache, **kw)  # type: ignore[arg-type]
