"""The predictions behind the relations: launch p50s with some priors pinned, safe bursts,
and where a relation flips along one prior.

A prediction here is `cohsim.predict.predict`'s path with more pins: a `Target` (the catalog
instance, SMT, the committed calibration) with priors pinned to given values, one replicate
(replicate 0 runs at the nominal values: nothing is drawn), per seed, the launch p50 averaged
over the seeds. `predict` itself pins only the node's mount table (`node_mounts`); `Target`'s
`pins` is how it does so, for any prior of the kernel model (cohsim.predict.unknowns.pin).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from calibration.analysis.machine_order.relations import (
    CONFIGS,
    SMALL_BURST,
    TRIO,
    Config,
    Relation,
    burst_relation,
    p50_relations,
)
from cohsim.kernel.costs import KernelParams, load_kernel
from cohsim.kernel.priors import Prior
from cohsim.machine.catalog import Catalog
from cohsim.plan import Candidate, Probe, SafeBurst, safe_bursts
from cohsim.plan.outcome import Outcome, from_prediction
from cohsim.predict import (
    Burst,
    Prediction,
    RunOptions,
    Target,
    predict,
    resolve_calibration,
    resolve_machine,
)

STRATEGY = "per-layer"
Pins = tuple[tuple[str, float], ...]  #: (prior key, value) pairs: hashable


@dataclass(frozen=True)
class PriorSettingP50s:
    """The five configurations' launch p50s (s) at one setting of the priors, and R1-R5."""

    pins: Pins
    at_n: dict[str, float]  #: by label, at the question's count
    at_20: dict[str, float]  #: by label, at SMALL_BURST containers
    relations: dict[str, Relation]


@dataclass
class Runner:
    """Runs and remembers predictions for one question (engine, layers, seeds)."""

    engine: str
    layers: int
    seeds: tuple[int, ...]
    catalog: Catalog = field(default_factory=Catalog)
    predictions: int = 0  #: predictions run so far (each seed one)
    calibration: str = ""  #: what the last prediction says it used
    #: the launch p50 (s) of each seed, by (label, containers, pins)
    per_seed: dict[tuple[str, int, Pins], list[float]] = field(default_factory=dict)

    def predict(
        self, cfg: Config, containers: int, pins: Pins, seed: int, engine: str
    ) -> Prediction:
        """One prediction: `cfg` with `containers` launched at once, the priors in `pins`
        at their values, one replicate (nothing drawn)."""
        burst = Burst(containers, self.layers, STRATEGY)
        target = Target(instance=cfg.instance, smt=cfg.smt, pins=pins)
        options = RunOptions(seed=seed, replicates=1, priors=False, engine=engine)
        p = predict(burst, target, options=options, catalog=self.catalog)
        self.predictions += 1
        self.calibration = p.calibration
        return p

    def p50(self, cfg: Config, containers: int, pins: Pins = ()) -> float:
        """The launch p50 (s), averaged over the seeds."""
        key = (cfg.label, containers, pins)
        if key not in self.per_seed:
            runs = [self.predict(cfg, containers, pins, s, self.engine) for s in self.seeds]
            self.per_seed[key] = [r.launch_s["p50"].value for r in runs]
        return statistics.fmean(self.per_seed[key])

    def point(self, containers: int, pins: Pins = ()) -> PriorSettingP50s:
        """R1-R5 at one setting of the priors."""
        at_n = {c.label: self.p50(c, containers, pins) for c in CONFIGS}
        at_20 = {c.label: self.p50(c, SMALL_BURST, pins) for c in CONFIGS}
        return PriorSettingP50s(pins, at_n, at_20, p50_relations(at_n, at_20))


def seed_relations(runner: Runner, containers: int) -> list[dict[str, Relation]]:
    """R1-R5 at nominal from each seed's own launch p50s (after `runner.point(containers)`):
    how far the seeds alone move each margin."""
    out = []
    for i in range(len(runner.seeds)):
        at_n = {c.label: runner.per_seed[(c.label, containers, ())][i] for c in CONFIGS}
        at_20 = {c.label: runner.per_seed[(c.label, SMALL_BURST, ())][i] for c in CONFIGS}
        out.append(p50_relations(at_n, at_20))
    return out


@dataclass(frozen=True)
class Bursts:
    """The safe bursts of the three machines at one setting of the priors, and R6."""

    pins: Pins
    bursts: dict[str, SafeBurst]  #: by label
    relation: Relation

    def to_dict(self) -> dict[str, Any]:
        return {
            "safe_burst": {k: b.to_dict() for k, b in self.bursts.items()},
            "relation": self.relation.to_dict(),
        }


def bursts(runner: Runner, pins: Pins, *, start: int, deadline_s: float, max_burst: int) -> Bursts:
    """The largest burst whose launch p99 meets `deadline_s`, for each of the three machines
    (cohsim.plan.safe_bursts: the plan's search), with the analytic engine and the first seed."""

    def evaluate(probes: Sequence[Probe]) -> list[Outcome]:
        by_label = {c.label: c for c in TRIO}
        return [
            from_prediction(
                runner.predict(
                    by_label[p.candidate.machine_label], p.containers, pins, runner.seeds[0],
                    "analytic",
                )
            )
            for p in probes
        ]  # fmt: skip

    cands = [Candidate(c.instance, STRATEGY, c.smt) for c in TRIO]
    found = safe_bursts(
        cands, evaluate, layers=runner.layers, deadline_s=deadline_s, start=start,
        max_burst=max_burst,
    )  # fmt: skip
    by = {c.label: b for c, b in zip(TRIO, found, strict=True)}
    capped = any(b.capped for b in found)
    return Bursts(pins, by, burst_relation({k: b.value for k, b in by.items()}, capped))


def nominal_kernel(catalog: Catalog) -> KernelParams:
    """The kernel model as the predictions use it: the file's, with the committed calibration
    applied (it is the same for the five configurations: a kernel fit applies to every
    instance, and no lock fit names these)."""
    machine, _ = resolve_machine(catalog, arch=None, instance=TRIO[0].instance)
    return resolve_calibration(None, machine, load_kernel(None), 0, 0)[1]


def priors_of(kernel: KernelParams, wanted: str) -> tuple[Prior, ...]:
    """The priors `--priors` names: "all", "none" or keys separated by commas."""
    if wanted == "all":
        return kernel.priors
    if wanted == "none":
        return ()
    by_key = {p.key: p for p in kernel.priors}
    keys = [k.strip() for k in wanted.split(",") if k.strip()]
    unknown = [k for k in keys if k not in by_key]
    if unknown:
        known = ", ".join(by_key)
        raise SystemExit(f"unknown prior(s) {', '.join(unknown)} (priors: {known})")
    return tuple(by_key[k] for k in keys)


def _between(prior: Prior, a: float, b: float) -> float:
    """The middle of [a, b] in the prior's own scale (geometric where it is log-uniform)."""
    if prior.shape == "log-uniform" and a > 0 and b > 0:
        return math.sqrt(a * b)
    return (a + b) / 2.0


def crossing(
    holds_at: Mapping[str, bool],
    relation: str,
    prior: Prior,
    nominal: float,
    end: float,
    test: Any,
    steps: int,
) -> tuple[float, float]:
    """Where `relation` flips between the prior's nominal value and `end` (where it differs
    from nominal): bisection in the prior's scale, `steps` halvings; `test(value)` says
    whether it holds there. The bracket: (last value like nominal, first value like the end).
    It finds one flip, the one bisection lands on if the margin is not monotonic."""
    a, b = nominal, end
    for _ in range(steps):
        mid = _between(prior, a, b)
        if test(mid) == holds_at[relation]:
            a = mid
        else:
            b = mid
    return a, b
