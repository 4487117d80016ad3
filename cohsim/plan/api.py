"""`plan`: which instance type for N containers of an L-layer image, launched at once?

The question (`PlanOptions`: containers, layers, deadline, which candidates, how the points
run) is answered for every candidate (cohsim.plan.candidates): the launch p50 and p99 with
their intervals at the question's count, the failures past the deadline and the chance of
missing it (the share of the containers past it, from the same draws), the mount-table
peak, one whole mountinfo read at the peak, the mechanism that dominates, and the largest
burst that still meets the deadline at the p99 (cohsim.plan.burst: a bracketed search, every
candidate advancing together so that each round's points run side by side). The rows are
ranked by safe burst per vCPU (`SORTS` lists the other orders); ties keep catalog order.

There is no price column: the repository has no sourced price table, and a plan never
invents one (`PRICE_NOTE`).

The points are evaluated by an `Evaluate` function (cohsim.plan.outcome); by default the
sweep engine's (cohsim.plan.evaluate), with the analytic engine unless another is asked for.
Same options and seed, same plan, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from cohsim import __version__
from cohsim.errors import CohsimError
from cohsim.machine.catalog import Catalog
from cohsim.plan.burst import SafeBurst, safe_bursts
from cohsim.plan.candidates import Candidate, select, strategies_of
from cohsim.plan.outcome import Evaluate, Outcome
from cohsim.predict.options import ENGINES, RunOptions, check_seed
from cohsim.predict.validity import refuse_absurd
from cohsim.sweep import SweepOptions

SCHEMA = 1
PRICE_NOTE = (
    "no price column: the repository has no sourced price table, and cohsim does not invent prices"
)
_RUN = RunOptions()


@dataclass(frozen=True)
class PlanOptions:
    """The question and how it is answered; every default is written here."""

    containers: int = 100  #: containers launched at once
    layers: int = 50  #: image layers
    strategy: str = "per-layer"  #: containerd's idmap strategy, or "all"
    deadline_s: float = 30.0  #: each container must be up within this (s)
    instances: tuple[str, ...] | None = None  #: names; None the catalog's instance types
    family: str | None = None  #: or the machines of one family ("genoa", "m7a")
    variants: bool = False  #: also SMT off and one socket where the hardware allows
    engine: str = "analytic"  #: level 3's engine: "analytic" (fast) or "des" (the reference)
    sort: str = "burst_per_vcpu"  #: the column the rows are ranked by (`SORTS`)
    seed: int = 0  #: the one seed of every point
    replicates: int = _RUN.replicates  #: replicates per point (intervals from 3 on)
    max_burst: int = 1000  #: the search's ceiling: more than a node starts at once
    scheduler: str | None = None  #: a Dask scheduler's address (None: this machine)
    workers: int | None = None  #: local worker processes (None: the CPUs; 1: in this process)
    progress: bool = False  #: a progress bar on stderr
    #: priors of the kernel model pinned to given values, (name, value) pairs
    #: (cohsim.predict.pins; `--set`, `--priors`)
    pins: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        check_seed(self.seed)
        if isinstance(self.containers, bool) or self.containers < 1:
            raise CohsimError(f"containers must be a positive integer, not {self.containers}")
        if isinstance(self.layers, bool) or self.layers < 1:
            raise CohsimError(f"layers must be a positive integer, not {self.layers}")
        if not self.deadline_s > 0:
            raise CohsimError(f"deadline must be positive, not {self.deadline_s}")
        if self.replicates < 1:
            raise CohsimError(f"replicates must be at least 1, not {self.replicates}")
        if self.workers is not None and self.workers < 1:
            raise CohsimError(f"workers must be at least 1, not {self.workers}")
        if self.max_burst < self.containers:
            raise CohsimError(
                f"max burst ({self.max_burst}) is below the question's {self.containers} containers"
            )
        refuse_absurd(containers=self.max_burst, layers=self.layers)  # before any point runs
        if self.engine not in ENGINES:
            raise CohsimError(f"unknown engine {self.engine!r} (expected {' or '.join(ENGINES)})")
        if self.sort not in SORTS:
            raise CohsimError(f"unknown sort column {self.sort!r} (expected {', '.join(SORTS)})")
        strategies_of(self.strategy)

    @property
    def run(self) -> RunOptions:
        """How each point runs (cohsim.predict.options)."""
        return RunOptions(
            seed=self.seed,
            replicates=self.replicates,
            deadline_s=self.deadline_s,
            engine=self.engine,
        )

    @property
    def sweep(self) -> SweepOptions:
        """How the points are computed and kept (cohsim.sweep.options)."""
        return SweepOptions(
            run=self.run,
            scheduler=self.scheduler,
            workers=self.workers,
            progress=self.progress,
            pins=self.pins,
        )

    def question(self) -> dict[str, Any]:
        """The question as asked: the burst, the deadline and, if any, the pinned priors."""
        q: dict[str, Any] = {
            "containers": self.containers,
            "layers": self.layers,
            "strategy": self.strategy,
            "deadline_s": self.deadline_s,
            "arrival": "all at once",
        }
        return {**q, "pinned_priors": dict(self.pins)} if self.pins else q


@dataclass(frozen=True)
class PlanRow:
    """One candidate's answer: at the question's count, and its safe burst."""

    candidate: Candidate
    at: Outcome
    burst: SafeBurst

    @property
    def burst_per_vcpu(self) -> float:
        return self.burst.value / self.candidate.vcpus if self.candidate.vcpus else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.candidate.to_dict(),
            **self.at.to_dict(),
            "safe_burst": self.burst.to_dict(),
            "safe_burst_per_vcpu": round(self.burst_per_vcpu, 6),
        }


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
            "engine": {"asked": o.engine, "answered": list(self.engines)},
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
                "replicates": o.replicates,
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
        layers=options.layers,
        deadline_s=options.deadline_s,
        start=options.containers,
        max_burst=options.max_burst,
    )


def plan(
    options: PlanOptions | None = None,
    *,
    catalog: Catalog | None = None,
    evaluate: Evaluate | None = None,
) -> Plan:
    """Rank every candidate of the question (see the module's docstring)."""
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
            from cohsim.plan.evaluate import sweep_evaluator

            evaluate = stack.enter_context(sweep_evaluator(o.sweep))
        counter = _Counter(evaluate)
        bursts = search(o, candidates, counter)
    rows = [PlanRow(c, b.probes[o.containers], b) for c, b in zip(candidates, bursts, strict=True)]
    engines = tuple(sorted({r.at.engine for r in rows}))
    return Plan(o, tuple(rank(rows, o.sort)), counter.points, counter.rounds, engines)


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
