"""How a prediction is run: the one place its run options and their defaults are written.

A prediction simulates its workload several times (replicates) from one seed, counts the
containers slower than a deadline as failures, prices line transfers with one of level 2's
models, and may keep a record of who held which lock when (for the plots). `RunOptions` holds
these choices as one frozen, typed object with its defaults; the command line builds it once
from its flags, and the library's entry points (`predict`, `replay`, `run_workload`) take it
whole (`options=`) or as keywords naming its fields (`seed=3, replicates=4`), which replace
the defaults. A bad value (a negative seed, no replicates, a deadline that is not positive)
is a CohsimError when the object is made, before anything is simulated. `engine` picks what
answers level 3: the discrete-event simulation (the reference, the default) or the closed-form
burst model (milliseconds; bursts of identical containers launched at once only). How many
replicates run depends on the engine unless it is given (`REPLICATES`): an interval's width
comes from Student's t at the draws less one degrees of freedom, so the fast engine affords
the draws that keep it narrow.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TypedDict

from cohsim.errors import CohsimError
from cohsim.predict.question import Burst, check_deadline


def check_seed(seed: int) -> int:
    """`seed` if it is a non-negative integer (what numpy's seeding takes), else a CohsimError."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise CohsimError(f"seed must be a non-negative integer, not {seed!r}")
    return seed


#: level 3's engines: the simulation (the reference) and the closed-form burst model
ENGINES = ("des", "analytic")
#: each engine's replicates when none are asked for (`RunOptions.replicates` None): 1 nominal
#: + the draws. The simulation takes seconds a replicate: 3 draws, the fewest for a 90 %
#: interval (t at 2 degrees of freedom, +- 3.37 sd: wide). The closed form takes milliseconds:
#: 16 draws (t at 15, +- 1.81 sd). More buy little: an interval also spans the draws' own
#: lowest and highest, which spread further the more there are (about +- 1.8 sd for 16
#: normal draws, 2.1 for 32). Measured on the 2-CPU VM (docs/analytic.md, "Replicates"):
#: a prediction's work 18 -> about 55 ms (100 x 50), the analytic plan's CPU time 2.5-fold.
REPLICATES = MappingProxyType({"des": 4, "analytic": 17})


@dataclass(frozen=True)
class RunOptions:
    """How the replicates of one prediction run; every default is written here."""

    seed: int = 0  #: the one seed: replicate i runs with child seed i of it
    #: runs of the engine: 1 nominal + the draws; None: the engine's own count (`REPLICATES`;
    #: `n_replicates` is the one that runs)
    replicates: int | None = None
    #: containers slower than this count as failures, and in the chance of missing the
    #: deadline: the question's (`Burst.deadline_s`, whose default this is), which `predict`
    #: and `replay` set here; a sweep's points share it
    deadline_s: float = Burst.deadline_s
    handoff_model: str = "des"  #: level 2's model pricing line transfers: "des" or "markov"
    background: bool = True  #: simulate systemd, probes and background path walkers
    record: bool = False  #: keep replicate 0's lock ownership and mount table (for plots)
    jobs: int | None = None  #: worker processes; None: the CPUs this process may use
    priors: bool = True  #: draw the kernel model's priors in the replicates after the first
    explain: bool = False  #: rank the unknowns: each prior at its low and high end (2 runs each)
    #: level 3's engine: "des" (the discrete-event simulation, the reference) or "analytic"
    #: (the closed-form burst model, cohsim.kernel.analytic.burstmodel: bursts of identical
    #: containers)
    engine: str = "des"
    #: a progress bar on stderr over the simulations, where stderr is a terminal and the work
    #: takes more than a second (a long replay: cohsim.predict.api.MAX_REPLAY_SPAN_NS)
    progress: bool = False

    def __post_init__(self) -> None:
        check_seed(self.seed)
        if self.replicates is not None and self.replicates < 1:
            raise CohsimError(f"replicates must be at least 1, not {self.replicates}")
        check_deadline(self.deadline_s)
        if self.engine not in ENGINES:
            raise CohsimError(f"unknown engine {self.engine!r} (expected {' or '.join(ENGINES)})")

    @property
    def n_replicates(self) -> int:
        """The replicates that run: `replicates`, or the engine's default (`REPLICATES`).
        Kept apart from the field so that `replace(options, engine=...)` takes the other
        engine's default rather than this one's."""
        return self.replicates if self.replicates is not None else REPLICATES[self.engine]


class RunOverrides(TypedDict, total=False):
    """`RunOptions`' fields as keywords (`predict(..., seed=3)`): each replaces its default.
    (The deadline is the question's: `Burst.deadline_s`, `deadline_s=` to `predict`.)"""

    seed: int
    replicates: int | None
    handoff_model: str
    background: bool
    record: bool
    jobs: int | None
    priors: bool
    explain: bool
    engine: str
    progress: bool


def resolve_options(
    options: RunOptions | None, overrides: RunOverrides, deadline_s: float | None = None
) -> RunOptions:
    """`options` (default `RunOptions()`) with the fields named in `overrides` replaced, and
    the question's deadline, if given: `options` naming another deadline than the default
    and the question's is a CohsimError (one deadline, the question's)."""
    base = options if options is not None else RunOptions()
    out = replace(base, **overrides) if overrides else base
    if deadline_s is None or out.deadline_s == deadline_s:
        return out
    if out.deadline_s != RunOptions.deadline_s:
        raise CohsimError(
            f"two deadlines: the burst's {deadline_s:g} s and the run options' "
            f"{out.deadline_s:g} s (give it once, as the burst's deadline_s)"
        )
    return replace(out, deadline_s=deadline_s)
