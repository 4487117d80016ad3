"""`plan`: which instance type for N containers of an L-layer image, launched at once?

The question (`PlanOptions`: the burst, a `Burst` of containers, layers, strategy, runtime,
node mounts and deadline; the target's kernel model, calibration and pins; which candidates;
how the points run) is answered for every candidate (cohsim.plan.candidates): the launch p50
and p99 with their intervals at the question's count, the failures past the deadline and the
chance of missing it (the share of the containers past it, from the same draws), the mount-table
peak, one whole mountinfo read at the peak, the mechanism that dominates, and the largest
burst that still meets the deadline at the p99 (cohsim.plan.burst: a bracketed search, every
candidate advancing together so that each round's points run side by side). The rows are
ranked by safe burst per vCPU (`SORTS` lists the other orders); ties keep catalog order.

There is no price column: the repository has no sourced price table, and a plan never
invents one (`PRICE_NOTE`).

Two stages by default (`TWO_STAGE`): every candidate is screened with the analytic engine
(milliseconds a point: the whole search), then the top `confirm` rows of the screen's ranking
are confirmed with the simulation (the reference, seconds to a minute a point) at the
question's count. A confirmed row shows the simulation's launch p50 and p99, failures, chance
of missing the deadline, peak and dominant mechanism, keeps the screen's answer at that count
beside them (`PlanRow.screen`), and keeps the screen's safe burst (a search with the
simulation would take tens of its points a candidate: its `engine` says analytic). The
confirmed rows stay first, ranked among themselves by the simulation's figures; the others
follow in the screen's order. `engine="des"` or `"analytic"` answers everything with that one
engine; `confirm=0` screens only.

The points are evaluated by `Evaluate` functions (cohsim.plan.outcome): `evaluate` for the
screen (or the one engine), `confirm` for the confirmation; by default the sweep engine's
(cohsim.plan.evaluate), one local cluster for both. Each engine's points run its own number of
replicates (cohsim.predict.options.REPLICATES: many for the fast screen, few for the
simulation) unless `replicates` names one for both. Same options and seed, same plan, byte
for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import Any

from cohsim import __version__
from cohsim.errors import CohsimError
from cohsim.machine.catalog import Catalog
from cohsim.plan.burst import SafeBurst, safe_bursts
from cohsim.plan.candidates import ALL, Candidate, select, strategies_of
from cohsim.plan.outcome import Evaluate, Outcome, Probe
from cohsim.predict.api import pinned
from cohsim.predict.options import ENGINES, RunOptions, check_seed
from cohsim.predict.question import Burst, Target, sorted_pins
from cohsim.predict.validity import refuse_absurd
from cohsim.sweep import SweepOptions

#: the plan document's format: 1, the first; 2, `provenance.replicates` an object of each
#: engine's replicates a point (was one number for every engine)
SCHEMA = 2
#: `PlanOptions.engine` for the two-stage plan: the analytic screen, the simulation confirms
TWO_STAGE = "two-stage"
SCREEN_ENGINE = "analytic"  #: the two-stage plan's screen
CONFIRM_ENGINE = "des"  #: the two-stage plan's confirmation
PRICE_NOTE = (
    "no price column: the repository has no sourced price table, and cohsim does not invent prices"
)


@dataclass(frozen=True)
class PlanOptions:
    """The question (a `Burst`, whose defaults are written there) and how it is answered;
    every other default is written here."""

    #: the question: containers, layers, idmap strategy, runtime, node mounts, deadline
    #: (cohsim.predict.question, where their defaults are written)
    burst: Burst = field(default_factory=Burst)
    #: what every candidate runs besides its machine: the kernel model, the calibration and
    #: the pinned priors (its machine must be left unset: the candidates are the machines)
    target: Target = field(default_factory=Target)
    every_strategy: bool = False  #: compare all idmap strategies, not only the burst's
    instances: tuple[str, ...] | None = None  #: names; None the catalog's instance types
    family: str | None = None  #: or the machines of one family ("genoa", "m7a")
    variants: bool = False  #: also SMT off and one socket where the hardware allows
    #: level 3's engine: TWO_STAGE (the analytic screen, then the simulation confirms the top
    #: `confirm` rows), or one of ENGINES for every point: "analytic" (fast), "des" (the reference)
    engine: str = TWO_STAGE
    confirm: int = 5  #: rows the simulation confirms in the two-stage plan (0: screen only)
    sort: str = "burst_per_vcpu"  #: the column the rows are ranked by (`SORTS`)
    seed: int = 0  #: the one seed of every point
    #: replicates per point (intervals from 3 on); None: each engine's own
    #: (cohsim.predict.options.REPLICATES)
    replicates: int | None = None
    max_burst: int = 1000  #: the search's ceiling: more than a node starts at once
    scheduler: str | None = None  #: a Dask scheduler's address (None: this machine)
    workers: int | None = None  #: local worker processes (None: the CPUs; 1: in this process)
    progress: bool = False  #: a progress bar on stderr

    def __post_init__(self) -> None:
        check_seed(self.seed)
        self.target.no_machine("plan")
        if self.replicates is not None and self.replicates < 1:
            raise CohsimError(f"replicates must be at least 1, not {self.replicates}")
        if self.workers is not None and self.workers < 1:
            raise CohsimError(f"workers must be at least 1, not {self.workers}")
        if self.max_burst < self.burst.containers:
            raise CohsimError(
                f"max burst ({self.max_burst}) is below the question's {self.burst.containers} "
                "containers"
            )
        refuse_absurd(containers=self.max_burst)  # before any point runs
        if self.engine not in (*ENGINES, TWO_STAGE):
            raise CohsimError(
                f"unknown engine {self.engine!r} (expected {', '.join(ENGINES)} or {TWO_STAGE})"
            )
        if isinstance(self.confirm, bool) or not isinstance(self.confirm, int) or self.confirm < 0:
            raise CohsimError(f"confirm must be a whole number from 0, not {self.confirm!r}")
        if self.sort not in SORTS:
            raise CohsimError(f"unknown sort column {self.sort!r} (expected {', '.join(SORTS)})")

    @property
    def strategy(self) -> str:
        """The strategy compared, or "all" (`every_strategy`)."""
        return ALL if self.every_strategy else self.burst.strategy

    @property
    def point_target(self) -> Target:
        """The target of every point: `target` with the burst's node mounts pinned."""
        pins = pinned(self.burst.node_mounts, self.target.pins)
        return replace(self.target, pins=sorted_pins(pins))

    @property
    def screen_engine(self) -> str:
        """The engine of the search over every candidate."""
        return SCREEN_ENGINE if self.engine == TWO_STAGE else self.engine

    @property
    def confirmed(self) -> int:
        """How many rows the simulation confirms (0 unless two-stage)."""
        return self.confirm if self.engine == TWO_STAGE else 0

    @property
    def run(self) -> RunOptions:
        """How each point of the screen runs (cohsim.predict.options)."""
        return self.run_for(self.screen_engine)

    def run_for(self, engine: str) -> RunOptions:
        """How each point runs with `engine`."""
        return RunOptions(
            seed=self.seed,
            replicates=self.replicates,
            deadline_s=self.burst.deadline_s,
            engine=engine,
        )

    @property
    def replicates_by_engine(self) -> dict[str, int]:
        """The replicates a point of each engine the plan asks for runs (the screen's or the
        one engine's, then the confirmation's)."""
        engines = [self.screen_engine] + ([CONFIRM_ENGINE] if self.confirmed else [])
        return {e: self.run_for(e).n_replicates for e in engines}

    @property
    def sweep(self) -> SweepOptions:
        """How the screen's points are computed and kept (cohsim.sweep.sweepoptions)."""
        return self.sweep_for(self.screen_engine)

    def sweep_for(self, engine: str) -> SweepOptions:
        """How the points of `engine` are computed and kept."""
        return SweepOptions(
            run=self.run_for(engine),
            scheduler=self.scheduler,
            workers=self.workers,
            progress=self.progress,
            target=self.point_target,
            runtime=self.burst.runtime,
        )

    def question(self) -> dict[str, Any]:
        """The question as asked: the burst, the deadline and, where they are not the
        defaults, the runtime, the kernel model, the calibration and the pinned priors."""
        b, t = self.burst, self.point_target
        q: dict[str, Any] = {
            "containers": b.containers,
            "layers": b.layers,
            "strategy": self.strategy,
            "deadline_s": b.deadline_s,
            "arrival": "all at once",
        }
        if b.runtime != Burst.runtime:
            q["runtime"] = b.runtime
        for name in ("kernel", "calibration"):
            if getattr(t, name) is not None:
                q[name] = getattr(t, name)
        return {**q, "pinned_priors": dict(t.pins)} if t.pins else q


@dataclass(frozen=True)
class PlanRow:
    """One candidate's answer: at the question's count, and its safe burst."""

    candidate: Candidate
    at: Outcome  #: the answer at the question's count (the simulation's, when confirmed)
    burst: SafeBurst
    #: a confirmed row's screen at the question's count (None: `at` is the screen's, or the
    #: one engine's)
    screen: Outcome | None = None
    #: "confirmed" (the simulation over the screen), "screened" (the screen only, in a
    #: two-stage plan) or "single" (one engine answered the whole plan)
    stage: str = "single"

    @property
    def burst_per_vcpu(self) -> float:
        return self.burst.value / self.candidate.vcpus if self.candidate.vcpus else 0.0

    @property
    def burst_engine(self) -> str:
        """The engine of the safe-burst search (the screen's, for a confirmed row)."""
        return self.screen.engine if self.screen is not None else self.at.engine

    def to_dict(self) -> dict[str, Any]:
        out = {
            **self.candidate.to_dict(),
            **self.at.to_dict(),
            "safe_burst": {**self.burst.to_dict(), "engine": self.burst_engine},
            "safe_burst_per_vcpu": round(self.burst_per_vcpu, 6),
            "stage": self.stage,
        }
        return {**out, "screen": self.screen.to_dict()} if self.screen is not None else out


#: sort column -> (key of a row, largest first?)
SORTS: dict[str, tuple[Callable[[PlanRow], Any], bool]] = {
    "burst_per_vcpu": (lambda r: r.burst_per_vcpu, True),
    "burst": (lambda r: r.burst.value, True),
    "p50": (lambda r: r.at.launch_p50.value, False),
    "p99": (lambda r: r.at.launch_p99.value, False),
    "failures": (lambda r: r.at.failures.value, False),
    "miss": (lambda r: r.at.miss_chance.value, False),
    "vcpus": (lambda r: r.candidate.vcpus, False),
    "peak": (lambda r: r.at.peak_mount_table, False),
    "read": (lambda r: r.at.read_host_s, False),
    "instance": (lambda r: r.candidate.label, False),
}


@dataclass(frozen=True)
class Plan:
    """The ranked answer."""

    options: PlanOptions
    rows: tuple[PlanRow, ...]
    points: int  #: points evaluated
    rounds: int  #: the search's rounds
    engines: tuple[str, ...] = field(default=())  #: the engines that answered

    def to_dict(self) -> dict[str, Any]:
        o = self.options
        return {
            "schema": SCHEMA,
            "question": o.question(),
            "engine": {
                "asked": o.engine,
                "answered": list(self.engines),
                "confirmed": sum(r.stage == "confirmed" for r in self.rows),
            },
            "sort": o.sort,
            "selection": {
                "instances": list(o.instances) if o.instances else "all",
                "family": o.family,
                "variants": o.variants,
            },
            "price": PRICE_NOTE,
            "candidates": len(self.rows),
            "points": self.points,
            "rounds": self.rounds,
            "rows": [r.to_dict() for r in self.rows],
            "provenance": {
                "cohsim_version": __version__,
                "seed": o.seed,
                "replicates": o.replicates_by_engine,
                "max_burst": o.max_burst,
            },
        }


def rank(rows: list[PlanRow], sort: str) -> list[PlanRow]:
    """`rows` in `sort`'s order; ties keep their order (catalog order)."""
    key, largest_first = SORTS[sort]
    return sorted(rows, key=key, reverse=largest_first)


def search(
    options: PlanOptions, candidates: Sequence[Candidate], evaluate: Evaluate
) -> list[SafeBurst]:
    """The safe burst of each candidate for the question in `options` (same order)."""
    return safe_bursts(
        candidates,
        evaluate,
        layers=options.burst.layers,
        deadline_s=options.burst.deadline_s,
        start=options.burst.containers,
        max_burst=options.max_burst,
    )


def plan(
    options: PlanOptions | None = None,
    *,
    catalog: Catalog | None = None,
    evaluate: Evaluate | None = None,
    confirm: Evaluate | None = None,
) -> Plan:
    """Rank every candidate of the question (see the module's docstring). `evaluate` answers
    the screen (or the one engine), `confirm` the confirmation; None: the sweep engine's, or,
    for `confirm` beside a given `evaluate`, `evaluate` itself."""
    o = options if options is not None else PlanOptions()
    candidates = select(
        catalog or Catalog(),
        instances=o.instances,
        family=o.family,
        strategies=strategies_of(o.strategy),
        variants=o.variants,
    )
    with ExitStack() as stack:
        if evaluate is None:
            from cohsim.plan.evaluate import sweep_evaluators

            engines = stack.enter_context(sweep_evaluators(o.sweep))
            evaluate = engines(o.screen_engine)
            confirm = confirm or engines(CONFIRM_ENGINE)
        counter = _Counter(evaluate)
        bursts = search(o, candidates, counter)
        rows = rank(
            [
                PlanRow(c, b.probes[o.burst.containers], b)
                for c, b in zip(candidates, bursts, strict=True)
            ],
            o.sort,
        )
        if o.engine == TWO_STAGE:
            confirmer = _Counter(confirm or evaluate)
            rows = confirm_top(o, rows, confirmer)
            counter.points, counter.rounds = (
                counter.points + confirmer.points,
                counter.rounds + confirmer.rounds,
            )
    engines_used = tuple(sorted({r.at.engine for r in rows} | {r.burst_engine for r in rows}))
    return Plan(o, tuple(rows), counter.points, counter.rounds, engines_used)


def confirm_top(options: PlanOptions, rows: list[PlanRow], confirm: Evaluate) -> list[PlanRow]:
    """The two-stage plan's second stage: the first `options.confirm` of the screen's ranked
    `rows` answered again by `confirm` at the question's count (the screen's answer kept
    beside), ranked among themselves by that answer, ahead of the rest, screened."""
    o = options
    top, rest = rows[: o.confirm], rows[o.confirm :]
    n, layers = o.burst.containers, o.burst.layers
    outs = confirm([Probe(r.candidate, n, layers) for r in top]) if top else []
    if len(outs) != len(top):
        raise CohsimError(f"the evaluator answered {len(outs)} points for {len(top)} asked")
    confirmed = [
        replace(r, at=out, screen=r.at, stage="confirmed") for r, out in zip(top, outs, strict=True)
    ]
    return rank(confirmed, o.sort) + [replace(r, stage="screened") for r in rest]


class _Counter:
    """An evaluator that counts the rounds and points it was asked for."""

    def __init__(self, evaluate: Evaluate) -> None:
        self.evaluate = evaluate
        self.points = 0
        self.rounds = 0

    def __call__(self, probes: Any) -> list[Outcome]:
        self.rounds += 1
        self.points += len(probes)
        return self.evaluate(probes)
