"""The report's full predictions go through the sweep cache (cohsim.plan.pointdetail): a
second report of the same question predicts nothing, and a report from the cache is the same
bytes as one computed afresh (determinism: same inputs and seed, same output bytes)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from cohsim.machine.catalog import Catalog
from cohsim.plan import PlanOptions, plan, pointdetail
from cohsim.plan.api import CONFIRM_ENGINE
from cohsim.plan.evaluate import points_of, predict_evaluator
from cohsim.predict import Burst
from cohsim.report import gather, render
from cohsim.report.content import asks_of
from cohsim.sweep import run_points

#: one instance type, two-stage: the screen analytic, the top row and its fixes simulated
#: (so the details hold the simulation's breakdown, profile and ranked priors): seconds
OPTIONS = PlanOptions(
    burst=Burst(containers=6, layers=3, deadline_s=0.6),
    instances=("r5.metal",),
    confirm=1,
    max_burst=24,
    replicates=2,
)


@pytest.fixture(scope="module")
def planned():
    evaluate = predict_evaluator(OPTIONS.run)
    confirm = predict_evaluator(OPTIONS.run_for(CONFIRM_ENGINE))
    return plan(OPTIONS, evaluate=evaluate, confirm=confirm), evaluate, confirm


def _report(planned, cache) -> str:
    result, evaluate, confirm = planned
    return render(gather(result, evaluate, confirm=confirm, top=1, cache=cache))


def test_a_cached_report_is_the_same_bytes_as_an_uncached_one(planned, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first = _report(planned, cache)
    docs = [json.loads(p.read_text()) for p in sorted(cache.glob("*.json"))]
    kept = [d["detail"] for d in docs if "detail" in d]
    # the top row (its priors ranked) and its four fixes, by the simulation
    assert len(kept) == 5
    assert sum(bool(d["sensitivity"]) for d in kept) == 1
    assert all(d["engine"]["name"] == CONFIRM_ENGINE for d in kept)

    def no_prediction(*args, **kwargs):
        raise AssertionError("a cached detail was predicted again")

    with monkeypatch.context() as m:
        m.setattr(pointdetail, "predict_probe", no_prediction)
        again = _report(planned, cache)
    assert again == first
    assert _report(planned, "off") == first  # no cache at all: the same bytes


def test_an_edited_detail_is_not_believed(planned, tmp_path, capsys):
    cache = tmp_path / "cache"
    first = _report(planned, cache)
    path, doc = next(
        (p, d) for p in sorted(cache.glob("*.json")) if "detail" in (d := json.loads(p.read_text()))
    )
    doc["detail"]["draws_s"] = [0.0 for _ in doc["detail"]["draws_s"]]
    path.write_text(json.dumps(doc))
    capsys.readouterr()
    assert _report(planned, cache) == first
    assert "does not match its key" in capsys.readouterr().err


def test_the_rows_kept_beside_the_details_are_the_sweeps_own(planned, tmp_path):
    """Each point the report predicts also leaves the sweep's row of it (what a confirmation
    asked after reads back): the row the sweep computes itself."""
    result, _, _ = planned
    cache = tmp_path / "cache"
    _report(planned, cache)
    kept = [json.loads(p.read_text()) for p in cache.glob("*.json")]
    rows = {d["digest"]: d["row"] for d in kept if "row" in d}
    _, asks = asks_of(result, 1, Catalog())
    sweep = dataclasses.replace(OPTIONS.sweep_for(CONFIRM_ENGINE), cache="off", workers=1)
    own = run_points(points_of([a.probe for a in asks]), sweep)
    assert len(rows) == len(own) == 5
    assert {r.digest: r.to_dict() for r in own} == rows
