"""How one level-2 point is simulated: the one place its options and their defaults are written.

A point of a pause_bench curve is a lock, where its threads run (a named placement or the CPUs
themselves), whether SMT siblings are used, the critical section and think time, how many
acquisitions are measured, the seed, which model answers (the discrete-event simulation or the
Markov chain), the level-2 parameters (default: derived from the machine) and whether to keep
a record of who held the lock when. `HandoffOptions` holds these choices as one frozen, typed
object with its defaults, checked when it is made (a CohsimError, before anything is
simulated). The entry points (cohsim.lock.handoff: `simulate`, `sweep`) take it whole
(`options=`) or as keywords naming its fields (`lock="ticket", acquisitions=300`), which
replace the defaults, as level 3's `RunOptions` does (cohsim.predict.options).

The defaults are pause_bench's own (calibration/bench/pause_bench.c): a test-and-test-and-set
lock, a 100 ns critical section, no think time, 2,000 acquisitions measured after a warm-up.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TypedDict

import numpy as np

from cohsim.errors import CohsimError
from cohsim.lock.params import LOCKS, MODELS, LockParams


@dataclass(frozen=True)
class HandoffOptions:
    """How one level-2 point runs; every default is written here."""

    lock: str = "ttas"  #: the lock algorithm, one of cohsim.lock.params.LOCKS
    #: where the threads run: a named placement (cohsim.machine.placement.PLACEMENTS), a CPU
    #: list as text ("0,48,1,49", "0-7") or the CPU ids themselves
    placement: str | Sequence[int] = "compact"
    smt: bool = True  #: False: one hardware thread per core (the SMT-off machine)
    cs_ns: float = 100.0  #: critical section, ns (pause_bench's default)
    think_ns: float = 0.0  #: time between a release and the thread's next acquisition, ns
    acquisitions: int = 2000  #: acquisitions measured (after a warm-up)
    #: the seed of the simulation's one random stream (a SeedSequence: a child stream, as
    #: `sweep` passes); the result records it where it is an integer
    seed: int | np.random.SeedSequence = 0
    model: str = "des"  #: which model answers: "des" (the simulation) or "markov" (the chain)
    #: level 2's parameters; None: derived from the (placed) machine
    #: (cohsim.lock.params.params_from_machine)
    params: LockParams | None = None
    #: keep who held the lock when and the home queue (the simulation only, for plots)
    record: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.placement, str):  # a list's copy: the options cannot change
            object.__setattr__(self, "placement", tuple(self.placement))
        if self.lock not in LOCKS:
            raise CohsimError(f"unknown lock {self.lock!r} (expected {', '.join(LOCKS)})")
        if self.model not in MODELS:
            raise CohsimError(f"unknown model {self.model!r} (expected {', '.join(MODELS)})")
        if not (self.cs_ns >= 0 and self.think_ns >= 0):
            raise CohsimError(
                f"cs_ns and think_ns must not be negative (got {self.cs_ns}, {self.think_ns})"
            )
        if self.acquisitions < 1:
            raise CohsimError(f"acquisitions must be at least 1, not {self.acquisitions}")
        if self.lock == "seqcount" and self.cs_ns + self.think_ns <= 0:
            raise CohsimError(
                "seqcount readers need a read section or think time: "
                "cs_ns + think_ns must be positive"
            )

    @property
    def placement_label(self) -> str:
        """The placement as a result names it: the name, or the CPU ids joined by commas."""
        p = self.placement
        return p if isinstance(p, str) else ",".join(str(c) for c in p)

    def seed_sequence(self) -> np.random.SeedSequence:
        """The seed as a new numpy SeedSequence: made from the integer, or a copy of the one
        given (spawning child streams from it leaves the options' own untouched, so the same
        options give the same streams every time)."""
        s = self.seed
        if not isinstance(s, np.random.SeedSequence):
            return np.random.SeedSequence(s)
        return np.random.SeedSequence(
            s.entropy,
            spawn_key=s.spawn_key,
            pool_size=s.pool_size,
            n_children_spawned=s.n_children_spawned,
        )

    @property
    def recorded_seed(self) -> int | None:
        """The seed as a result records it: the integer (a SeedSequence's entropy where that
        is one integer), None where it is not one."""
        entropy = self.seed_sequence().entropy
        return entropy if isinstance(entropy, int) else None


class HandoffOverrides(TypedDict, total=False):
    """`HandoffOptions`' fields as keywords (`simulate(m, 8, lock="ticket")`): each replaces
    its default."""

    lock: str
    placement: str | Sequence[int]
    smt: bool
    cs_ns: float
    think_ns: float
    acquisitions: int
    seed: int | np.random.SeedSequence
    model: str
    params: LockParams | None
    record: bool


def resolve_options(options: HandoffOptions | None, overrides: HandoffOverrides) -> HandoffOptions:
    """`options` (default `HandoffOptions()`) with the fields named in `overrides` replaced."""
    base = options if options is not None else HandoffOptions()
    return replace(base, **overrides) if overrides else base
