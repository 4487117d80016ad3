"""Level 2, the lock hand-off: the one entry point.

`simulate(machine, threads, ...)` answers "what does pause_bench measure on this machine with
this many threads?" with either the discrete-event simulation (`model="des"`, cohsim.lock.des)
or the analytic Markov chain (`model="markov"`, cohsim.lock.markov). Both take the same
`LockParams` and return the same `HandoffResult` (cohsim.lock.params), which says which model
answered. `sweep` runs `simulate` over thread counts with independent seeded streams.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cohsim.errors import CohsimError
from cohsim.lock.des import run_des
from cohsim.lock.markov import run_markov
from cohsim.lock.params import (
    DEFAULT_ACQUISITIONS,
    DEFAULT_CS_NS,
    DEFAULT_THINK_NS,
    LOCKS,
    MODELS,
    HandoffResult,
    LockParams,
    params_from_machine,
)
from cohsim.machine.model import Machine
from cohsim.machine.placement import place


def _label(placement: str | Sequence[int]) -> str:
    return placement if isinstance(placement, str) else ",".join(str(c) for c in placement)


def simulate(
    machine: Machine,
    threads: int,
    *,
    lock: str = "ttas",
    placement: str | Sequence[int] = "compact",
    smt: bool = True,
    cs_ns: float = DEFAULT_CS_NS,
    think_ns: float = DEFAULT_THINK_NS,
    acquisitions: int = DEFAULT_ACQUISITIONS,
    seed: int | np.random.SeedSequence = 0,
    model: str = "des",
    params: LockParams | None = None,
    record: bool = False,
) -> HandoffResult:
    """Simulated pause_bench: `threads` threads of `machine` contend for one `lock`."""
    if lock not in LOCKS:
        raise CohsimError(f"unknown lock {lock!r} (expected {', '.join(LOCKS)})")
    if model not in MODELS:
        raise CohsimError(f"unknown model {model!r} (expected {', '.join(MODELS)})")
    if not (cs_ns >= 0 and think_ns >= 0):
        raise CohsimError(f"cs_ns and think_ns must not be negative (got {cs_ns}, {think_ns})")
    if acquisitions < 1:
        raise CohsimError(f"acquisitions must be at least 1, not {acquisitions}")
    if lock == "seqcount" and cs_ns + think_ns <= 0:
        raise CohsimError(
            "seqcount readers need a read section or think time: cs_ns + think_ns must be positive"
        )
    m, cpus = place(machine, threads, placement, smt)
    p = params if params is not None else params_from_machine(m)
    if not 0 <= p.home_socket < m.topology.sockets:
        raise CohsimError(
            f"LockParams.home_socket {p.home_socket} is out of range 0..{m.topology.sockets - 1}",
            m.name,
        )
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    seed_out = ss.entropy if isinstance(ss.entropy, int) else None
    common = dict(
        machine=m.name,
        lock=lock,
        threads=threads,
        placement=_label(placement),
        smt=smt,
        cpus=cpus,
        cs_ns=float(cs_ns),
        think_ns=float(think_ns),
        seed=seed_out,
        params=p,
    )
    if model == "des":
        return run_des(
            m,
            cpus,
            lock,
            p,
            cs_ns,
            think_ns,
            acquisitions,
            np.random.default_rng(ss),
            record,
            common,
        )
    return run_markov(m, cpus, lock, p, cs_ns, think_ns, acquisitions, common)


def sweep(
    machine: Machine,
    threads: Sequence[int],
    *,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
    **kw: Any,
) -> list[HandoffResult]:
    """`simulate` per thread count; point i uses child stream i of `seed` (SeedSequence.spawn)."""
    children = np.random.SeedSequence(seed).spawn(len(threads))
    out = []
    for n, child in zip(threads, children, strict=True):
        out.append(simulate(machine, n, seed=child, **kw))
        if progress is not None:
            progress(1)
    return out
