"""A burst's planned calls as the burst model (cohsim.kernel.analytic.burstmodel) reads them:
the plan's arrays (cohsim.kernel.analytic.arrays), kept for the next model of the same calls,
and what the model works out per call from them: the writers spinning at each call's holds,
the CPUs they keep busy there, and the holds' slowdown by those CPUs' SMT siblings.

What is kept (docs/architecture.md, "What a process keeps"): a prediction's replicates each
ask for the arrays of one burst's calls at their own kernel, and again for one container alone
(the same calls); a warm process's next prediction of the burst draws equal kernels (the same
seed) in new objects, so the arrays are kept by the kernel's and the machine's values. The
replicates' arrays stacked (`StepArrays.stacked`) are kept by those arrays' identity, and what
the model reads off one arrays object alone (`spinning`) on the object.
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np

from cohsim.kernel.analytic.arrays import Array, StepArrays
from cohsim.kernel.callcost import CallCosts
from cohsim.kernel.calls import Recent, plan
from cohsim.kernel.costs import KernelParams
from cohsim.kernel.smt import slowdown_array
from cohsim.machine.model import Machine
from cohsim.workload.trace import SyscallEvent

#: the last plans' arrays, by the events' identity and the kernel's and machine's values (both
#: frozen; what the arrays read of them compares), the layers, the per-CPU sum and the daemons'
#: walking CPUs. At most 64: a prediction's replicates (17 by default) and its sensitivity runs
_ARRAYS = Recent(64)

#: the last replicates' arrays stacked, by the arrays' identity (kept by the entry; `_ARRAYS`
#: gives a warm process's next prediction of a burst the same objects)
_STACKED = Recent(2)


def planned(
    events: tuple[SyscallEvent, ...],
    kernel: KernelParams,
    layers: int | None,
    sum_ns: float,
    cc: CallCosts,
) -> StepArrays:
    """The planned calls' arrays (cohsim.kernel.calls), reused while the same events object
    comes again (the entry keeps it: an id is not reused meanwhile) with an equal kernel and
    machine (`_ARRAYS`: the arrays are a function of these values)."""
    machine = cc.takes.machine if cc.takes is not None else None  # the line takes' prices
    key = (kernel, machine, layers, sum_ns, cc.busy)
    hit = _ARRAYS.get((events,), key)
    if hit is not None:
        return cast(StepArrays, hit)
    calls = plan(events, kernel, layers, sum_ns)
    arrays = StepArrays(calls, cc, math.exp(kernel.call_sigma**2 / 2))
    _ARRAYS.put((events,), key, arrays)
    return arrays


def stacked(arrays: list[StepArrays]) -> StepArrays:
    """`StepArrays.stacked(arrays)`, reused while the same arrays objects come again."""
    hit = _STACKED.get(tuple(arrays), ())
    if hit is None:
        hit = StepArrays.stacked(arrays)
        _STACKED.put(tuple(arrays), (), hit)
    return cast(StepArrays, hit)


def spinning(a: StepArrays) -> Array:
    """Which of `busy_at_holds`' halves spin at each call's holds, 0, 1 or 2 (the writers
    still to write, and those that have held and write again): the same at any number of
    containers and in every model of these arrays, worked out once an arrays object
    (`StepArrays.derived`)."""
    kept = a.derived.get("spinning")
    if kept is not None:
        return kept
    locked = a.writes | (a.read[:, 0] > 0) | (a.read[:, 1] > 0) | (a.read_r2 > 0)
    pure_write = a.writes & (a.read[:, 0] == 0) & (a.read[:, 1] == 0) & (a.read_r2 == 0)
    # the next lock section after call j is a pure write
    at = np.flatnonzero(locked)
    following = np.searchsorted(at, np.arange(len(a.names)), side="right")
    again = np.append(pure_write[at], False)[following].astype(float)
    again[a.rcu > 0] = 0.0
    spin = np.ones(len(a.names))
    whole = np.flatnonzero((a.read[:, 1] > 0) | (a.read_r2 > 0))
    if len(whole):
        spin[whole[0] :] = 0.0
    a.derived["spinning"] = out = spin + again
    return out


def busy_at_holds(n: int, halves: Array, vcpus: int) -> Array:
    """The CPUs busy while the cohort's write holds of each call are served in step (`n`
    containers, `halves`: `spinning`, or rows of it, each row's own element-wise): the
    holder, and the containers waiting to write, which spin on it (a writer spins while a
    writer owns the lock and nobody waits for a CPU: cohsim.kernel.simulation.nssections),
    (n - 1)/2 on average; and the (n - 1)/2 that have held, if their next lock section is a
    write again with no grace period between (they spin again; after a grace period or before
    a read they sleep). From the cohort's first read of the whole table on (runc's mountinfo
    reads: reader-owned far past the reader-spin threshold, 10.5-25 us), a spinner behind
    readers times out and marks the lock non-spinnable: the writers still to write sleep.
    The mark is cleared when a writer takes the lock, so those that have held come back to
    a writer-owned lock and spin again (common-parent 200 x 20 on m7i.metal-24xl: 52 of
    the 199 others spinning at a hold; 90-94 through the ns_copy stretch at 400)."""
    return np.minimum(1.0 + (n - 1) / 2.0 * halves, float(vcpus))


def hold_slowdowns(machine: Machine, busy: Array, smt: float | Array, spin: float | Array) -> Array:
    """The holds' slowdowns at `busy` CPUs busy at each call, the others spinning beside the
    holder (cohsim.kernel.smt.slowdown_array), SMT slowing them `smt` and `spin` times (a
    joined model's: a row of `busy` and a column of each, one a replicate). The rows are
    priced together, element-wise as each row alone, where they agree on whether anyone
    spins at all (slowdown_array's formula depends on it), else one by one."""
    others = busy - 1.0
    some = np.reshape(others, (-1, others.shape[-1])).any(axis=-1)
    if some.all() or not some.any():
        return slowdown_array(machine, smt, busy, others, spin)
    smts = np.broadcast_to(smt, (*some.shape, 1))
    spins = np.broadcast_to(spin, (*some.shape, 1))
    return np.stack(
        [slowdown_array(machine, float(s[0]), b, b - 1.0, float(p[0]))
         for b, s, p in zip(busy, smts, spins, strict=True)]
    )  # fmt: skip
