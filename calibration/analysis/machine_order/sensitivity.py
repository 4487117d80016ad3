"""Which machine is faster, and over which part of the kernel model's priors that holds.

    python -m calibration.analysis.machine_order.sensitivity [--engine analytic|des]
        [--containers 100] [--layers 50] [--seeds 0] [--priors all|none|KEY,KEY]
        [--json OUT]

For r5.metal, m7i.metal-24xl (SMT on and off), m7i.metal-48xl and m7a.24xlarge (per-layer
idmapped mounts, containers launched at once): the launch p50 at `--containers` and at 20
containers, and the published relations among them (calibration.analysis.machine_order.
relations: R1-R5) with their margins, at the nominal priors and with each prior of the kernel
model at its low and at its high end, the others nominal; where a relation flips at an end,
the value between nominal and that end where it flips (bisection, `--bisect` halvings; by
default only with the analytic engine). R6, r5.metal the first to fail the deadline as the
burst grows, from the plan's safe-burst search (cohsim.plan.safe_bursts) with the analytic
engine, at nominal and (`--burst-ends`, the analytic engine's default) at each end too.

Every prediction is one replicate at the nominal values of the committed calibration (nothing
drawn) except the prior at its end, per seed; the p50 is the mean over `--seeds` (with several,
each seed's own margins are shown too: the noise the mean's margins stand on). Run times on
2 shared CPUs at 100 x 50: the analytic engine's whole table (15 priors, the bisections, R6 at
every end: about 2,200 predictions) about 15 s; `--engine des --priors none --seeds 0,1,2`
35-75 s (30 simulations); `--engine des` with every prior and one seed about 7 min (310
simulations; `--priors KEY,KEY` restricts it).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field

from calibration.analysis.machine_order import report
from calibration.analysis.machine_order.relations import P50_RELATIONS, Relation
from calibration.analysis.machine_order.runs import (
    Bursts,
    PriorSettingP50s,
    Runner,
    bursts,
    crossing,
    nominal_kernel,
    priors_of,
)
from cohsim.kernel.costs import KernelParams
from cohsim.kernel.priors import Prior
from cohsim.predict.options import ENGINES


@dataclass(frozen=True)
class End:
    """One prior at one end of its range, the others nominal."""

    prior: Prior
    end: str  #: "low" or "high"
    value: float
    nominal: float
    point: PriorSettingP50s
    bursts: Bursts | None
    flips: tuple[str, ...]  #: relations that hold here and not at nominal, or the reverse
    #: relation -> (last value like nominal, first value like this end)
    crossings: dict[str, tuple[float, float]] = field(default_factory=dict)

    def relations(self) -> dict[str, Relation]:
        rel = dict(self.point.relations)
        if self.bursts is not None:
            rel["R6"] = self.bursts.relation
        return rel


@dataclass(frozen=True)
class Study:
    """Everything the report shows."""

    args: argparse.Namespace
    kernel: KernelParams
    nominal: PriorSettingP50s
    nominal_bursts: Bursts
    ends: list[End]
    runner: Runner
    wall_s: float

    def nominal_relations(self) -> dict[str, Relation]:
        return {**self.nominal.relations, "R6": self.nominal_bursts.relation}


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", choices=ENGINES, default="analytic")
    ap.add_argument("--containers", type=int, default=100)
    ap.add_argument("--layers", type=int, default=50)
    ap.add_argument("--seeds", default="0", help="seeds, comma-separated (p50: their mean)")
    ap.add_argument("--priors", default="all", help="all, none, or prior keys, comma-separated")
    ap.add_argument("--deadline", type=float, default=30.0, help="R6's deadline (s)")
    ap.add_argument("--max-burst", type=int, default=1000, help="R6's search ceiling")
    ap.add_argument("--bisect", type=int, default=None, help="halvings to find a flip "
                    "(default 8 with the analytic engine, 0 with des)")  # fmt: skip
    ap.add_argument("--burst-ends", action=argparse.BooleanOptionalAction, default=None,
                    help="R6 at each prior's end too (default: with analytic)")  # fmt: skip
    ap.add_argument("--json", metavar="OUT", help="write the numbers as JSON")
    args = ap.parse_args(argv)
    args.seeds = tuple(int(s) for s in args.seeds.split(","))
    if args.bisect is None:
        args.bisect = 8 if args.engine == "analytic" else 0
    if args.burst_ends is None:
        args.burst_ends = args.engine == "analytic"
    if args.containers < 1 or args.layers < 1 or min(args.seeds) < 0:
        ap.error("containers and layers must be positive, seeds non-negative")
    return args


def _end(args, runner: Runner, prior: Prior, end: str, nominal: float, base: dict) -> End:
    """The prior at `end`, with the relations that flip there and where they flip."""
    value = prior.low if end == "low" else prior.high
    pins = ((prior.key, value),)
    point = runner.point(args.containers, pins)
    b = _bursts(args, runner, pins) if args.burst_ends else None
    here = {**point.relations, **({"R6": b.relation} if b else {})}
    flips = tuple(k for k in here if _state(here[k]) != _state(base[k]))
    holds = {k: r.holds for k, r in base.items()}
    crossings = {}
    for rel in flips if args.bisect else ():
        if here[rel].undetermined or base[rel].undetermined:
            continue  # a search at its ceiling: nothing to bisect
        test = _test(args, runner, prior, rel)
        crossings[rel] = crossing(holds, rel, prior, nominal, value, test, args.bisect)
    return End(prior, end, value, nominal, point, b, flips, crossings)


def _state(r: Relation) -> bool | None:
    return None if r.undetermined else r.holds


def _test(args, runner: Runner, prior: Prior, rel: str):
    """Whether `rel` holds with `prior` at a value (the others nominal)."""
    if rel in P50_RELATIONS:
        return lambda v: runner.point(args.containers, ((prior.key, v),)).relations[rel].holds
    return lambda v: _bursts(args, runner, ((prior.key, v),)).relation.holds


def _bursts(args, runner: Runner, pins) -> Bursts:
    return bursts(
        runner, pins, start=args.containers, deadline_s=args.deadline, max_burst=args.max_burst
    )


def study(args: argparse.Namespace) -> Study:
    """Run every prediction the report needs."""
    t0 = time.perf_counter()
    runner = Runner(args.engine, args.layers, args.seeds)
    kernel = nominal_kernel(runner.catalog)
    chosen = priors_of(kernel, args.priors)
    nominal = runner.point(args.containers)
    nominal_bursts = _bursts(args, runner, ())
    base = {**nominal.relations, "R6": nominal_bursts.relation}
    ends = [
        _end(args, runner, p, end, kernel.value(p.attr), base)
        for p in chosen
        for end in ("low", "high")
    ]
    wall = time.perf_counter() - t0
    return Study(args, kernel, nominal, nominal_bursts, ends, runner, wall)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    s = study(args)
    sys.stdout.write(report.text(s))
    if args.json:
        report.write_json(s, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
