"""mount_lock's line taken exclusive: the copies other CPUs left on it since it was last
written, fetched before the spinlock's take can complete (docs/kernel-audit.md C18).

Every exclusive access of mount_lock's line — a writer's `spin_lock` and its counter's
increment, a locked reader's `spin_lock` (`read_seqlock_excl`, `guard(mount_locked_reader)`),
each a store or an atomic to the one line that holds the counter and the spinlock — waits for
the copies other CPUs hold to be invalidated (level 1, `cohsim.machine.sharers.fetch_ns`: the
slowest sharer's transfer). Who holds one when a section begins:

- the previous holder, when it ran on another CPU (another task: its Modified copy);
- the walks spinning on the counter now (they read it for sure);
- every CPU that walked a path since the last exclusive access: a walk reads the counter in
  `path_init()` (fs/namei.c:2559, `__read_seqcount_begin(&mount_lock.seqcount)`) and again as it
  leaves RCU mode (`__legitimize_mnt()`'s `read_seqretry`, fs/namespace.c:746-756), so each of
  the B CPUs that start a walk every `walk_interval_ns` has read it within a gap g with the
  chance 1 - exp(-`READS_PER_WALK` g / interval).

The walk_bench run (calibration/data/devvm-2cpu-intel-xeon-f6m207/walk/README.md, "Priced")
measured what one walker adds to mount_setattr and move_mount; the transfers priced this way
explain part of it (`calibration.analysis.walk_inflation.predict`).

Both engines ask `LineTakes.ns`; its answers are kept per count of certain sharers as a table
over the mean number of walkers that read it, interpolated (one array operation a count).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from cohsim.machine.model import Machine
from cohsim.machine.sharers import fetch_ns_poisson

#: the counter's reads a walk makes apart in time: path_init() at its start, __legitimize_mnt()
#: (two read_seqretry's a few ns apart) at its end; fs/namei.c:2559, fs/namespace.c:746-756
READS_PER_WALK = 2
#: the table over the mean number of walkers that read the line: 0, 1/16, ..., `_TOP`; at
#: `_TOP` sharers (and as many certain ones) the slowest is the farthest class on every catalog
#: machine (the chance that 32 random CPUs all sit on the requester's socket or LLC: < 1e-9)
_STEPS, _TOP = 16, 32


@lru_cache(maxsize=256)
def _table(machine: Machine, certain: int) -> tuple[float, ...]:
    """`fetch_ns_poisson` at means 0, 1/_STEPS, ..., _TOP (kept for the process: a machine's
    table is the same in every prediction)."""
    means = np.arange(_TOP * _STEPS + 1) / _STEPS
    return tuple(float(v) for v in fetch_ns_poisson(machine, certain, means))


class LineTakes:
    """What an exclusive access of mount_lock's line costs on one machine (ns)."""

    def __init__(self, machine: Machine, walk_interval_ns: float) -> None:
        self.machine = machine
        self.rate = READS_PER_WALK / walk_interval_ns  #: reads a walking CPU makes per ns
        self._tables: dict[int, tuple[float, ...]] = {}

    def chance(self, gap_ns: float) -> float:
        """That a walking CPU read the line within `gap_ns`."""
        return 1.0 - math.exp(-self.rate * gap_ns) if gap_ns > 0 else 0.0

    def ns(self, certain: float, busy: float, gap_ns: float) -> float:
        """An exclusive access `gap_ns` after the last one, with `certain` other CPUs holding
        the line for sure (the previous holder on another CPU, the walks that spun on it and
        re-read it at its release; a fractional last one present with that fraction as its
        chance) and `busy` CPUs walking paths (a Poisson number of them read it since: mean
        busy x the chance)."""
        whole = int(certain) if certain < _TOP else _TOP
        part = certain - whole if certain < _TOP else 0.0
        x = busy * self.chance(gap_ns) * _STEPS
        v = self._at(whole, x)
        return v + part * (self._at(whole + 1, x) - v) if part > 0.0 else v

    def _at(self, certain: int, x: float) -> float:
        """The table of `certain` sharers at `x` / _STEPS walkers, interpolated."""
        table = self._tables.get(certain)
        if table is None:
            table = self._tables[certain] = _table(self.machine, certain)
        i = int(x)
        if i >= _TOP * _STEPS:
            return table[-1]
        return table[i] + (table[i + 1] - table[i]) * (x - i)
