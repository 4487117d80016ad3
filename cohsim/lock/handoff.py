"""Level 2, the lock hand-off: the one entry point.

`simulate(machine, threads, options)` answers "what does pause_bench measure on this machine
with this many threads?" with either the discrete-event simulation (`model="des"`,
cohsim.lock.handoffsim) or the analytic Markov chain (`model="markov"`, cohsim.lock.markov). The
options (the lock, the placement, the critical section, the seed, the model, ...) are one
`HandoffOptions` (cohsim.lock.handoffoptions), or keywords naming its fields. Both models take the
same options and `LockParams` and return the same `HandoffResult` (cohsim.lock.params), which
says which model answered. `sweep` runs `simulate` over thread counts with independent seeded
streams.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Unpack

from cohsim.errors import CohsimError
from cohsim.lock.handoffoptions import HandoffOptions, HandoffOverrides, resolve_options
from cohsim.lock.handoffsim import run_simulation
from cohsim.lock.markov import run_markov
from cohsim.lock.params import HandoffResult, params_from_machine
from cohsim.machine.model import Machine
from cohsim.machine.placement import place


def simulate(
    machine: Machine,
    threads: int,
    options: HandoffOptions | None = None,
    **overrides: Unpack[HandoffOverrides],
) -> HandoffResult:
    """Simulated pause_bench: `threads` threads of `machine` contend for one lock.

    `options` says how (default `HandoffOptions()`: cohsim.lock.handoffoptions, every default
    written there); keywords naming its fields replace them: `simulate(m, 8, lock="ticket")`."""
    o = resolve_options(options, overrides)
    m, cpus = place(machine, threads, o.placement, o.smt)
    p = o.params if o.params is not None else params_from_machine(m)
    if not 0 <= p.home_socket < m.topology.sockets:
        raise CohsimError(
            f"LockParams.home_socket {p.home_socket} is out of range 0..{m.topology.sockets - 1}",
            m.name,
        )
    if o.model == "des":
        return run_simulation(m, cpus, o, p)
    return run_markov(m, cpus, o, p)


def sweep(
    machine: Machine,
    threads: Sequence[int],
    options: HandoffOptions | None = None,
    *,
    progress: Callable[[int], None] | None = None,
    **overrides: Unpack[HandoffOverrides],
) -> list[HandoffResult]:
    """`simulate` per thread count with `options` (and the fields `overrides` names); point i
    uses child stream i of the options' seed (SeedSequence.spawn). `progress`, if given, is
    called with 1 after each point."""
    o = resolve_options(options, overrides)
    children = o.seed_sequence().spawn(len(threads))
    out = []
    for n, child in zip(threads, children, strict=True):
        out.append(simulate(machine, n, replace(o, seed=child)))
        if progress is not None:
            progress(1)
    return out
