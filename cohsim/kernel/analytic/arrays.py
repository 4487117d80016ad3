"""A burst's planned calls as arrays, for the analytic burst model
(cohsim.kernel.analytic.burstmodel).

The model prices every call j of a container at the node's state S it finds (mounts in the
table M, the root's peer group R, its binds under the root B, the live namespace copies W).
What a call costs in a state is defined once, in cohsim.kernel.callcost (`CallCosts`, which
the simulation uses too); this module does not restate it. Every cost there is linear in the
state (a sum of per-mount, per-peer, per-child and per-slave terms), so it is read off
`CallCosts` itself at the zero state and at one unit of each component:

    cost_j(S) = c_j(0) + sum_x [c_j(e_x) - c_j(0)] S_x,     x in {M, R, B, W},

once per distinct call (a burst's plan repeats a few dozen distinct calls hundreds of times),
and the model then prices whole sequences of states at once with numpy. Two terms are not
linear. A mountinfo read in a runtime's own (slave) namespace: each of its M lines walks the
root group, R^2 / M peer steps a line (`CallCosts.slave_line_ns`), R^2 in all; it is read off
the same way at R = 1 and scaled by R^2. And on a machine whose list walks bend with their
length (cohsim.kernel.walk), the walks of R and B: the coefficients are read off with every
walk at the line (`CallCosts.unwalked`) and multiply the lines the state's walks cost
(`StepArrays.walked`). `tests/kernel/analytic/test_arrays.py`
checks the arrays against `CallCosts` at random states.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from cohsim.kernel.callcost import CallCosts, OpRow
from cohsim.kernel.calls import Plan, Step
from cohsim.kernel.walk import BandRows, units_array

Array = NDArray[np.float64]


@dataclass(frozen=True)
class FixedNodeState:
    """A node state (cohsim.kernel.callcost.NodeState) fixed at given values: the basis of the
    read-off."""

    mounts: float
    ring: float
    binds: float
    windows: float


#: the zero state and one unit of each component, in the order of `States` columns
_BASIS = (
    FixedNodeState(0.0, 0.0, 0.0, 0.0),
    FixedNodeState(1.0, 0.0, 0.0, 0.0),
    FixedNodeState(0.0, 1.0, 0.0, 0.0),
    FixedNodeState(0.0, 0.0, 1.0, 0.0),
    FixedNodeState(0.0, 0.0, 0.0, 1.0),
)


#: the parts of a write hold the profile names (CallCosts.part_*), in column order
PARTS = ("percpu", "peers", "copy", "prop")


def per_replicate(x: Array) -> Array:
    """Sums over the calls (`x`: summed along the calls' axis) as one value a replicate
    (`StepArrays.stacked`; a model's own arrays: one)."""
    return np.reshape(x, -1)


def _linear(values: Array) -> Array:
    """[f(0), df/dM, df/dR, df/dB, df/dW] of costs f linear in the state, from their values
    at `_BASIS` (along axis 1: one row of values a call, and any components after it)."""
    zero = values[:, :1]
    return np.concatenate([zero, values[:, 1:] - zero], axis=1)


class _Priced:
    """What CallCosts gives for a plan's distinct calls at the `_BASIS` states, gathered call
    by call (CallCosts asked once a state for each cost; its `part_*` read after each
    pricing) and then combined for all of them at once: the puts of every call, and for the
    calls with a write hold (`takes`) the hold, its nested mount_lock section's
    state-dependent work, their `PARTS`, and its locked readers' fetches of the line. A call
    without a write hold has no nested section: its mount_lock work is its fixed work."""

    def __init__(self, cc: CallCosts) -> None:
        self.cc = cc
        self.puts: list[list[float]] = []
        self.takes: list[int] = []  #: the rows of the calls with a write hold
        self.holds: list[list[float]] = []  #: a hold's value and parts, a nested section's
        self.readers: list[list[float]] = []

    def add(self, s: Step, row: OpRow, takes: bool, readers: bool) -> None:
        cc = self.cc
        self.puts.append([cc.puts(s, p.mounts, p) for p in _BASIS])
        if not takes:
            return
        self.takes.append(len(self.puts) - 1)
        values: list[float] = []
        for p in _BASIS:
            values.append(cc.write_hold_at(s, row, p.mounts, p.ring, p.binds, p.windows))
            values += (cc.part_percpu, cc.part_peers, cc.part_copy, cc.part_prop)
            values.append(cc.ml_hold_at(s, row, p.mounts, p.ring, p.windows))
            values += (cc.part_percpu, cc.part_peers, cc.part_copy, cc.part_prop)
        self.holds.append(values)
        rv = [0.0] * 5
        if readers:  # of the state, they see the mounts and the copies only: at e_R, e_B as at 0
            zero = cc.readers_at(s, row, 0.0, 0.0, cc.busy)
            mounts, windows = (
                cc.readers_at(s, row, p.mounts, p.windows, cc.busy) for p in _BASIS[1::3]
            )
            rv = [zero, mounts, zero, zero, windows]
        self.readers.append(rv)


class StepArrays:
    """The plan of one container as arrays over its calls j = 0..J-1 (module docstring).

    - `effect` (J x 4): what call j does to (M, R, B, W);
    - `write` (J x 5): its namespace_sem write hold's coefficients [const, M, R, B, W], the
      call's mean variation e^{sigma^2/2} and its nested mount_lock section included; zero for
      a call that takes no write hold (`writes` says which do);
    - `read` (J x 2) and `read_r2` (J): its read holds, const + per-mount, and the slave
      read's R^2 coefficient;
    - `puts` (J x 3): the mounts it puts after its grace period, [const, M, W];
    - `unlocked` (J): its path walks and unlocked work, the mean variation included;
    - `ml_alone` (J): its mount_lock section outside namespace_sem (the fixed work);
    - `ml_nested` (J x 5): its mount_lock section nested in its write hold, [const, M, R, B,
      W] (what the lock's hold tally counts; part of `write`);
    - `think`, `rcu` (J): the think time before it and its grace periods;
    - `parts` (name -> J x 5): the parts of its write hold that the profile names
      (cohsim.kernel.result: the per-CPU areas, peer walks, per-mount copy, propagation;
      `CallCosts.part_*`), the mean variation included;
    - `layer_percpu`, `read_allocs` (J): the per-CPU areas of its per-layer read sections,
      and how many (each allocated under pcpu_alloc_mutex);
    - `own` (J + 1 x 4): one container's own contribution to the state before each call;
    - `gates`: the calls with per-layer read sections (an overlay's private clones).
    """

    def __init__(self, plan: Plan, cc: CallCosts, mean_factor: float) -> None:
        #: how the machine's walks bend (cohsim.kernel.walk): the columns are read off per
        #: line, and `walked` puts each state's peer group and binds in lines
        self.peer_bands, self.child_bands, self.bent = cc.peer_bands, cc.child_bands, cc.bent
        #: stacked replicates whose walks bend differently (their kernels' `peer_bytes`
        #: drawn apart): each replicate's peer and child bands (cohsim.kernel.walk.BandRows),
        #: the child walk None where it bends as the peers' (a machine's cache bands)
        self.bands_each: tuple[BandRows, BandRows | None] | None = None
        #: `walked`'s last states and answer (the states held: their id is not reused)
        self._walked: tuple[Array | None, Array] = (None, np.zeros(0))
        #: the distinct calls' columns, and which of them each call is
        self.distinct = self._table(plan.distinct, cc.unwalked(), mean_factor)
        self.which = which = np.array(plan.which, dtype=np.intp)
        table = self.distinct[which]
        self.ops = distinct = [s.name for s in plan.distinct]  #: the distinct calls' ops
        self.names = [distinct[i] for i in plan.which]
        #: the calls' ops as indices into `op_names` (sorted), and whether each reads mountinfo
        self.op_names = sorted(set(distinct))
        ids = {x: i for i, x in enumerate(self.op_names)}
        self.op_ids = np.array([ids[x] for x in distinct], dtype=np.intp)[which]
        self.mountinfo = np.array([x.startswith("mountinfo") for x in self.op_names])[self.op_ids]
        self.effect = table[:, 0:4]
        #: one container's own contribution to the state before each call (J + 1 rows)
        self.own = np.vstack([np.zeros(4), np.cumsum(self.effect, axis=0)])
        self.gates = np.flatnonzero(table[:, 19])
        #: what the arrays' users work out from them alone, once an arrays object (the burst
        #: model's spinning writers: cohsim.kernel.analytic.burstmodel)
        self.derived: dict[str, Array] = {}
        self._values(table)

    def _values(self, table: Array) -> None:
        """The priced columns of `table` (calls along its second-to-last axis, and before
        them, in `stacked` arrays, the replicates)."""
        self.table = table
        self.write = table[..., 4:9]
        self.writes = self.write.any(axis=-1)
        self.read = table[..., 9:11]
        self.read_r2 = table[..., 11]
        self.puts = table[..., 12:15]
        self.unlocked, self.ml_alone, self.think, self.rcu = (table[..., c] for c in range(15, 19))
        self.parts = {n: table[..., 20 + 5 * i : 25 + 5 * i] for i, n in enumerate(PARTS)}
        end = 20 + 5 * len(PARTS)
        self.layer_percpu, self.read_allocs = table[..., end], table[..., end + 1]
        self.ml_nested = table[..., end + 2 : end + 7]

    @classmethod
    def stacked(cls, arrays: Sequence[StepArrays]) -> StepArrays:
        """The arrays of several replicates of one plan (the same calls, each replicate's own
        prices) as one, each priced column with a leading replicate axis; what the calls are
        and do (`effect`, `own`, `gates`, the ops) is the first's. Refused (ValueError) for
        plans whose calls differ."""
        first = arrays[0]
        what = [0, 1, 2, 3, 18, 19]  # what the calls do, their grace periods, their gates
        for a in arrays[1:]:
            same = np.array_equal(a.which, first.which) and a.ops == first.ops
            if not same or not np.array_equal(a.distinct[:, what], first.distinct[:, what]):
                raise ValueError("the arrays are not of one plan's calls")
        out = object.__new__(cls)
        out.__dict__.update(first.__dict__)
        out.derived = {}
        out._values(np.stack([a.distinct for a in arrays])[:, first.which])
        peers, children = [a.peer_bands for a in arrays], [a.child_bands for a in arrays]
        if any(p != peers[0] for p in peers) or any(c != children[0] for c in children):
            alike = peers == children
            out.bands_each = (BandRows(peers), None if alike else BandRows(children))
            out.bent = True
        out._walked = (None, np.zeros(0))
        return out

    @staticmethod
    def _table(steps: Sequence[Step], cc: CallCosts, mf: float) -> Array:
        """The distinct calls' columns: effect (4), write (5), read (2), read_r2, puts (3),
        unlocked, ml_alone, think, rcu, whether it is a gate, its hold's parts (5 each of
        `PARTS`), its read sections' per-CPU areas and its nested mount_lock section (5)."""
        table = np.zeros((len(steps), 20 + 5 * len(PARTS) + 7))
        priced, fixed, mls = _Priced(cc), [], []
        take = cc.take_ns(cc.busy)  # a section's take of the line, from the last holder
        for s in steps:
            op, row = s.op, cc.row(s.name, s.op)
            takes = bool(op.takes_ns_write)
            priced.add(s, row, takes, row.ml_readers_any and takes)
            ml_work = s.ml_work + (take if s.ml_work else 0.0)
            mls.append((ml_work, op.per_mount_lock_section_ns, float(row.ml_readers_any)))
            read = [s.reads * (op.layer_read_ns * mf + cc.sum_ns), 0.0]
            r2 = 0.0
            if op.ns_read_ns or op.per_mount_read_ns:
                read[0] += op.ns_read_ns
                read[1] += op.per_mount_read_ns
                if s.own_ns:  # R^2 / M a line over M lines (CallCosts.slave_line_ns)
                    r2 = cc.slave_line_ns(FixedNodeState(1.0, 1.0, 0.0, 0.0))
            fixed.append(
                [float(s.delta), float(s.ring), float(s.binds), float(s.window), *read, r2,
                 (s.walk_ns + s.cpu) * mf, 0.0 if takes else ml_work, float(s.think),
                 float(op.rcu), float(s.reads > 0)]
            )  # fmt: skip
            table[len(fixed) - 1, -7:-5] = (s.reads * cc.sum_ns, float(s.reads))
        fixed_cols = np.array(fixed, dtype=float)
        table[:, 0:4], table[:, 9:12] = fixed_cols[:, 0:4], fixed_cols[:, 4:7]
        table[:, 15:20] = fixed_cols[:, 7:12]
        table[:, 12:15] = _linear(np.array(priced.puts, dtype=float))[:, [0, 1, 4]]
        if priced.takes:
            StepArrays._holds(table, priced, np.array(mls, dtype=float), mf)
        return table

    @staticmethod
    def _holds(table: Array, priced: _Priced, mls: Array, mf: float) -> None:
        """The write holds' columns of `table` (write, parts, nested), from `priced`; `mls`:
        each call's fixed mount_lock work with its take, its section per mount, and whether
        its section has locked readers."""
        rows = np.array(priced.takes, dtype=np.intp)
        values = np.array(priced.holds, dtype=float).reshape(len(rows), 5, 2, 5)
        hold, ml = values[:, :, 0, 0], _linear(values[:, :, 1, 0])
        ml[:, 0] = ml[:, 0] + mls[rows, 0]
        readers = mls[rows, 2] > 0
        ml = np.where(readers[:, None], ml + _linear(np.array(priced.readers, dtype=float)), ml)
        ml[:, 1] = ml[:, 1] + mls[rows, 1]  # (mounts - 1 sections: one more, a bound)
        w = mf * _linear(hold) + ml
        table[rows, 4:9] = w
        # the parts: the namespace_sem part with the calls' mean variation, the nested one's
        parts = _linear(mf * values[:, :, 0, 1:] + values[:, :, 1, 1:])  # call, basis, part
        table[rows, 20 : 20 + 5 * len(PARTS)] = parts.transpose(0, 2, 1).reshape(len(rows), -1)
        table[rows, -5:] = np.where((w != 0).any(axis=1)[:, None], ml, 0.0)

    # Each of these reads calls `idx` (along the calls' axis, after any replicate axis) at
    # states `st` (J x 4, one row per call; stacked arrays: a J x 4 block per replicate).

    def walked(self, st: Array) -> Array:
        """States `st` with their peer group R and binds B as the lines their walks cost
        (cohsim.kernel.walk.units_array; `st` itself where the machine's walks do not bend):
        what the write holds' R and B coefficients, read off per line, multiply. The last
        answer is kept for the same `st` (the holds, parts and nested sections of one set of
        states ask in turn), read-only."""
        if not self.bent:
            return st
        if st is self._walked[0]:
            return self._walked[1]
        out = self._walk(st)
        out.flags.writeable = False
        self._walked = (st, out)
        return out

    def _walk(self, st: Array) -> Array:
        """`walked`'s answer, made."""
        each = self.bands_each
        if each is None:
            out = np.array(st, dtype=float)
            out[..., 1] = units_array(out[..., 1], self.peer_bands)
            out[..., 2] = units_array(out[..., 2], self.child_bands)
            return out
        # each replicate's block with its own bands (a state without the replicate axis is
        # every replicate's)
        peers, children = each
        st = np.asarray(st, dtype=float)
        shape = st.shape if st.ndim >= 3 else (len(peers.bands), *st.shape)
        out = np.array(np.broadcast_to(st, shape), dtype=float)
        if children is None:  # both walks in one pass
            out[..., 1:3] = peers.units(out[..., 1:3])
        else:
            out[..., 1] = peers.units(out[..., 1])
            out[..., 2] = children.units(out[..., 2])
        return out

    def nested(self, st: Array, idx: slice | Array = slice(None)) -> Array:
        """The mount_lock sections nested in the write holds of calls `idx` at states `st`."""
        w = self.ml_nested[..., idx, :]
        return w[..., 0] + np.einsum("...ij,...ij->...i", w[..., 1:], self.walked(st))

    def part(self, name: str, st: Array, idx: slice | Array = slice(None)) -> Array:
        """The part `name` (`PARTS`) of the write holds of calls `idx` at states `st`."""
        w = self.parts[name][..., idx, :]
        return w[..., 0] + np.einsum("...ij,...ij->...i", w[..., 1:], self.walked(st))

    def holds(self, st: Array, idx: slice | Array = slice(None)) -> Array:
        """Write holds of calls `idx` at states `st` (rows of M, R, B, W; one per call)."""
        w = self.write[..., idx, :]
        return w[..., 0] + np.einsum("...ij,...ij->...i", w[..., 1:], self.walked(st))

    def reads(self, st: Array, idx: slice | Array = slice(None)) -> Array:
        """Read holds of calls `idx` at states `st`."""
        r = self.read[..., idx, :]
        return r[..., 0] + r[..., 1] * st[..., 0] + self.read_r2[..., idx] * st[..., 1] ** 2

    def put_count(self, st: Array, idx: slice | Array = slice(None)) -> Array:
        """Mounts calls `idx` put after their grace periods at states `st`."""
        p = self.puts[..., idx, :]
        return p[..., 0] + p[..., 1] * st[..., 0] + p[..., 2] * st[..., 3]
