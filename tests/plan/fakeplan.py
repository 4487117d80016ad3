"""A stand-in evaluator for the plan's tests: a closed-form launch model, no simulation.

The launch p99 of N containers on a machine with V vCPUs is 0.5 + N^2 / (100 V) seconds (a
base plus a burst that grows faster than linearly and is shared over the CPUs), with an
interval of -10 % / +20 % around the part above the base; strategies other than per-layer
are four times cheaper. It records every round it is asked, to check the batching.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from cohsim.plan import Outcome, PlanOptions, Probe
from cohsim.plan.candidates import ALL
from cohsim.predict.intervals import Interval
from cohsim.predict.question import BURST_FIELDS, Burst

BASE_S = 0.5


def p99_s(probe: Probe) -> float:
    c = probe.candidate
    scale = 1.0 if c.strategy == "per-layer" else 0.25
    return BASE_S + scale * probe.containers**2 / (100 * c.vcpus)


def largest_meeting(deadline_s: float, vcpus: int, factor: float = 1.0, scale: float = 1.0) -> int:
    """The closed form of the safe burst: the largest N with BASE + f s N^2/(100 V) <= D."""
    n = math.isqrt(int((deadline_s - BASE_S) * 100 * vcpus / (factor * scale)))
    while BASE_S + factor * scale * (n + 1) ** 2 / (100 * vcpus) <= deadline_s:
        n += 1
    while n and BASE_S + factor * scale * n**2 / (100 * vcpus) > deadline_s:
        n -= 1
    return n


class FakeEvaluator:
    """`engine`: the name its outcomes give; `factor` scales the launch (a second engine that
    answers differently)."""

    def __init__(self, engine: str = "fake", factor: float = 1.0) -> None:
        self.rounds: list[list[Probe]] = []
        self.engine = engine
        self.factor = factor

    def __call__(self, probes: Sequence[Probe]) -> list[Outcome]:
        self.rounds.append(list(probes))
        return [self.outcome(p) for p in probes]

    def outcome(self, p: Probe) -> Outcome:
        v = BASE_S + self.factor * (p99_s(p) - BASE_S)
        burst = v - BASE_S
        p99 = Interval(v, BASE_S + 0.9 * burst, BASE_S + 1.2 * burst, "s")
        p50 = Interval(v * 0.9, v * 0.8, v, "s")
        return Outcome(
            containers=p.containers,
            launch_p50=p50,
            launch_p99=p99,
            failures=Interval(0.0, 0.0, 0.0, "containers"),
            miss_chance=Interval(0.0, 0.0, 0.0, "fraction of containers"),
            peak_mount_table=100 * p.containers,
            read_host_s=p.containers * 1e-4,
            read_container_s=p.containers * 2e-4,
            dominant="namespace_sem: namespace",
            engine=self.engine,
            digest=f"sha256:{p.candidate.label}:{p.containers}",
        )


def plan_options(**kw: object) -> PlanOptions:
    """`PlanOptions` with the burst's fields given flat (containers=10, strategy="all")."""
    burst = {k: kw.pop(k) for k in list(kw) if k in BURST_FIELDS}
    if burst.get("strategy") == ALL:
        del burst["strategy"]
        kw["every_strategy"] = True
    return PlanOptions(burst=Burst(**burst), **kw)  # type: ignore[arg-type]
