"""What a burst's calls leave behind in the closed form's result: the lock tallies (namespace_sem
write holds by op, mount_lock's holds) and the CPU profile by kernel site
(cohsim.kernel.result), the same sites the simulation fills.

`BurstTally.add` takes calls as the burst model priced them (cohsim.kernel.analytic.burstmodel:
their write holds, read holds and serial mount_lock work at the states they found) and how many
containers made them. The node daemons' walks that start while mount_lock is write-held spin
in path_init until its release, half the hold on average: B (1 - exp(-hold / interval)) of the
B walking CPUs (counted at a runtime's walk rate, as the simulation's mountlock does).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from cohsim.kernel.analytic.arrays import Array, StepArrays


class Tallied(Protocol):
    """The parts of a burst's result the tallies fill (cohsim.kernel.analytic.burstmodel's
    AnalyticResult, which imports this module)."""

    ns_write_by_op: dict[str, float]
    ns_write_ns: float
    ns_acquisitions: int
    ml_hold_ns: float
    cpu_ns: dict[str, float]


#: the write holds' parts (StepArrays.parts) and the profile site each one's CPU goes to
_SITES = (
    ("percpu", "percpu_loops"),
    ("peers", "peer_walks"),
    ("copy", "copy_tree"),
    ("prop", "propagation"),
)


class BurstTally:
    """The tallies of one burst's plan `a` (StepArrays): its ops, the slowdown and the CPUs busy
    at each call's holds, the unlocked work's slowdown `smt`, a per-CPU walk `sum_ns`, and the
    `walking` daemons' CPUs, each walking every `walk_interval_ns`."""

    def __init__(
        self,
        a: StepArrays,
        hold_slow: Array,
        busy_holds: Array,
        smt: float,
        sum_ns: float,
        walking: float,
        walk_interval_ns: float,
    ) -> None:
        self.a, self.hold_slow, self.busy_holds = a, hold_slow, busy_holds
        self.smt, self.sum_ns = smt, sum_ns
        self.walking, self.walk_interval_ns = walking, walk_interval_ns
        self.op_ids, self.op_names, self.mountinfo = a.op_ids, a.op_names, a.mountinfo

    def add(
        self,
        out: Tallied,
        idx: slice | Array,
        h: Array,
        serial: Array,
        times: float,
        st: Array,
        r: Array,
    ) -> None:
        """Add `times` containers' calls `idx` at states `st` (their write holds `h`, read
        holds `r`, serial mount_lock work `serial`) to the lock tallies and the profile."""
        by_op = np.bincount(self.op_ids[idx], weights=h * times, minlength=len(self.op_names))
        for i in np.flatnonzero(by_op):
            name = self.op_names[i]
            out.ns_write_by_op[name] = out.ns_write_by_op.get(name, 0.0) + float(by_op[i])
        out.ns_write_ns += float(h.sum()) * times
        out.ns_acquisitions += int(np.count_nonzero(h)) * round(times)
        nested = np.where(h > 0, self.a.nested(st, idx), 0.0)
        out.ml_hold_ns += float((serial + nested).sum()) * times
        self._profile(out, idx, h, serial, nested, times, st, r)

    def _profile(
        self,
        out: Tallied,
        idx: slice | Array,
        h: Array,
        serial: Array,
        nested: Array,
        times: float,
        st: Array,
        r: Array,
    ) -> None:
        """The CPU time of `add`'s calls by profile site: each write hold's parts (slowed as
        the hold is), the writers spinning beside each hold, the per-CPU areas of the read
        sections and of the puts, the mountinfo reads, the daemons' walkers spinning through
        the `nested` and `serial` mount_lock holds; the rest of the calls' work is
        `mount_work`."""
        a, cpu, slow = self.a, out.cpu_ns, self.hold_slow[idx]
        named = 0.0
        for part, site in _SITES:
            v = times * float((a.part(part, st, idx) * slow).sum())
            cpu[site] += v
            named += v
        puts = times * float((a.put_count(st, idx) * self.sum_ns).sum())
        layer = times * float(a.layer_percpu[idx].sum())
        cpu["percpu_loops"] += puts + layer
        info = times * float(np.where(self.mountinfo[idx], r, 0.0).sum())
        cpu["mountinfo"] += info
        cpu["namespace_sem_spin"] += times * float((h * (self.busy_holds[idx] - 1.0)).sum())
        cpu["path_init_spin"] += times * float((self.walkers(nested) + self.walkers(serial)).sum())
        work = a.unlocked[idx] * self.smt + h + r + serial
        cpu["mount_work"] += max(0.0, times * float(work.sum()) - named - puts - layer - info)

    def walkers(self, hold: Array) -> Array:
        """The daemons' CPU spinning in path_init through mount_lock write holds of `hold` ns."""
        b = self.walking
        return b * (1.0 - np.exp(-hold / self.walk_interval_ns)) * hold / 2.0
