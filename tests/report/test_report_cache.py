"""The report's full predictions go through the sweep cache (cohsim.plan.pointdetail): a
second report of the same question predicts nothing, and a report from the cache is the same
bytes as one computed afresh (determinism: same inputs and seed, same output bytes)."""

from __future__ import annotations

import json

import pytest

from cohsim.plan import PlanOptions, plan, pointdetail
from cohsim.plan.api import CONFIRM_ENGINE
from cohsim.plan.evaluate import predict_evaluator
from cohsim.predict import Burst
from cohsim.report import gather, render

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
    kept = sorted(cache.glob("*.json"))
    # the top row (its priors ranked) and its four fixes, by the simulation
    assert len(kept) == 5
    docs = [json.loads(p.read_text()) for p in kept]
    assert sum(bool(d["detail"]["sensitivity"]) for d in docs) == 1
    assert all(d["detail"]["engine"]["name"] == CONFIRM_ENGINE for d in docs)

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
    path = sorted(cache.glob("*.json"))[0]
    doc = json.loads(path.read_text())
    doc["detail"]["draws_s"] = [0.0 for _ in doc["detail"]["draws_s"]]
    path.write_text(json.dumps(doc))
    capsys.readouterr()
    assert _report(planned, cache) == first
    assert "does not match its key" in capsys.readouterr().err
