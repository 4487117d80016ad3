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

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from cohsim.kernel.analytic.arrays import Array, StepArrays, per_replicate


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
        smt: float | Array,
        sum_ns: float | Array,
        walking: float | Array,
        walk_interval_ns: float | Array,
    ) -> None:
        """Each number is a float, or for a joined model's replicates a column of them."""
        self.a, self.hold_slow, self.busy_holds = a, hold_slow, busy_holds
        self.smt, self.sum_ns = smt, sum_ns
        self.walking, self.walk_interval_ns = walking, walk_interval_ns
        self.op_ids, self.op_names, self.mountinfo = a.op_ids, a.op_names, a.mountinfo

    def add(
        self,
        outs: Sequence[Tallied],
        idx: slice | Array,
        h: Array,
        serial: Array,
        times: float,
        st: Array,
        r: Array,
    ) -> None:
        """Add `times` containers' calls `idx` at states `st` (their write holds `h`, read
        holds `r`, serial mount_lock work `serial`) to the lock tallies and the profile of
        each replicate's result in `outs` (the arrays' rows, one a replicate: a joined model's,
        cohsim.kernel.analytic.burstmodel.BurstModel.joined; a model's own: one)."""
        ids = self.op_ids[idx]
        nested = np.where(h > 0, self.a.nested(st, idx), 0.0)
        held = per_replicate((serial + nested).sum(axis=-1))
        write, count = per_replicate(h.sum(axis=-1)), per_replicate(np.count_nonzero(h, axis=-1))
        rows = np.reshape(h * times, (-1, h.shape[-1]))
        for i, out in enumerate(outs):
            by_op = np.bincount(ids, weights=rows[i], minlength=len(self.op_names))
            for j in np.flatnonzero(by_op):
                name = self.op_names[j]
                out.ns_write_by_op[name] = out.ns_write_by_op.get(name, 0.0) + float(by_op[j])
            out.ns_write_ns += float(write[i]) * times
            out.ns_acquisitions += int(count[i]) * round(times)
            out.ml_hold_ns += float(held[i]) * times
        self._profile(outs, idx, h, serial, nested, times, st, r)

    def _profile(
        self,
        outs: Sequence[Tallied],
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
        a, slow = self.a, self.hold_slow[..., idx]
        named: Array | float = 0.0
        sites: list[tuple[str, Array]] = []
        for part, site in _SITES:
            v = times * per_replicate((a.part(part, st, idx) * slow).sum(axis=-1))
            sites.append((site, v))
            named = named + v
        puts = times * per_replicate((a.put_count(st, idx) * self.sum_ns).sum(axis=-1))
        layer = times * per_replicate(a.layer_percpu[..., idx].sum(axis=-1))
        sites.append(("percpu_loops", puts + layer))
        info = times * per_replicate(np.where(self.mountinfo[idx], r, 0.0).sum(axis=-1))
        sites.append(("mountinfo", info))
        spin = h * (self.busy_holds[..., idx] - 1.0)
        sites.append(("namespace_sem_spin", times * per_replicate(spin.sum(axis=-1))))
        walks = self.walkers(nested) + self.walkers(serial)
        sites.append(("path_init_spin", times * per_replicate(walks.sum(axis=-1))))
        work = a.unlocked[..., idx] * self.smt + h + r + serial
        rest = times * per_replicate(work.sum(axis=-1)) - named - puts - layer - info
        for i, out in enumerate(outs):
            cpu = out.cpu_ns
            for site, v in sites:
                cpu[site] += float(v[i])
            cpu["mount_work"] += max(0.0, float(rest[i]))

    def walkers(self, hold: Array) -> Array:
        """The daemons' CPU spinning in path_init through mount_lock write holds of `hold` ns."""
        b = self.walking
        return b * (1.0 - np.exp(-hold / self.walk_interval_ns)) * hold / 2.0
