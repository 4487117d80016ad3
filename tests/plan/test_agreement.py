"""The plan's safe burst against direct predictions: the figure passes at its count and fails
one above, as `cohsim predict` itself says, at the p99 and at both ends of its interval.
The plan runs its points through the sweep engine (cohsim.sweep: the same predictions, kept
in a cache and read back); the check runs `predict` directly."""

from __future__ import annotations

import pytest

from cohsim.plan import PlanOptions, plan
from cohsim.predict import predict


def _p99(row, n: int, engine: str, replicates: int):
    c = row.candidate
    p = predict(
        instance=c.instance, containers=n, layers=5, strategy=c.strategy, smt=c.smt,
        sockets=c.sockets, engine=engine, replicates=replicates, deadline_s=1.0, jobs=1,
    )  # fmt: skip
    return p.launch_s["p99"]


def _check(engine: str, replicates: int, instances: tuple[str, ...]) -> None:
    options = PlanOptions(
        containers=10, layers=5, deadline_s=1.0, instances=instances, engine=engine,
        replicates=replicates, workers=1, max_burst=400,
    )  # fmt: skip
    result = plan(options)
    assert result.engines == (engine,)
    for row in result.rows:
        b = row.burst
        for n, end in ((b.value, "value"), (b.low, "high"), (b.high, "low")):
            if n:  # 0: one container already fails; nothing to pass
                assert getattr(_p99(row, n, engine, replicates), end) <= 1.0, (row, n, end)
            if n < b.max_burst:  # at the ceiling the search stops passing
                assert getattr(_p99(row, n + 1, engine, replicates), end) > 1.0, (row, n, end)
        assert b.low <= b.value <= b.high and not b.capped


def test_the_analytic_plan_agrees_with_direct_predictions():
    _check("analytic", 4, ("m7a.24xlarge", "c6gd.metal"))


@pytest.mark.slow
def test_the_simulated_plan_agrees_with_direct_predictions():
    _check("des", 3, ("m7a.24xlarge",))
