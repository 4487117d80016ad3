"""The plan itself (cohsim.plan.api) and its table (cohsim.plan.table), on the stand-in
evaluator: ranking, the JSON document, the options' checks."""

from __future__ import annotations

import json

import pytest
from fakeplan import FakeEvaluator, largest_meeting, plan_options

from cohsim import provenance
from cohsim.errors import CohsimError
from cohsim.plan import PRICE_NOTE, PlanOptions, plan
from cohsim.plan.table import answer, render

SOME = ("r5.metal", "m7a.24xlarge", "c6gd.metal", "m7i.metal-48xl")


def _plan(catalog, **kw):
    """One engine answers every point (the two-stage plan: test_stage)."""
    fake = FakeEvaluator()
    kw = {"engine": "analytic", **kw}
    return plan(plan_options(instances=SOME, **kw), catalog=catalog, evaluate=fake), fake


def test_rows_ranked_by_safe_burst_per_vcpu(catalog):
    p, _ = _plan(catalog)
    per_vcpu = [r.burst_per_vcpu for r in p.rows]
    assert per_vcpu == sorted(per_vcpu, reverse=True)
    for r in p.rows:
        assert r.burst.value == largest_meeting(30.0, r.candidate.vcpus)
        assert r.at.containers == 100 and r.at is r.burst.probes[100]
    # the stand-in's burst grows as sqrt(vCPUs): per vCPU the smallest machine wins; ties
    # (r5.metal and m7a.24xlarge, 96 each) keep catalog order
    assert [r.candidate.instance for r in p.rows] == [
        "c6gd.metal",
        "r5.metal",
        "m7a.24xlarge",
        "m7i.metal-48xl",
    ]
    assert p.engines == ("fake",)


@pytest.mark.parametrize(
    ("sort", "first"), [("burst", "m7i.metal-48xl"), ("p99", "m7i.metal-48xl"),
                        ("vcpus", "c6gd.metal"), ("instance", "c6gd.metal")]
)  # fmt: skip
def test_sort_picks_the_column(catalog, sort, first):
    p, _ = _plan(catalog, sort=sort)
    assert p.rows[0].candidate.instance == first


def test_json_is_the_table_as_data_and_the_same_every_time(catalog):
    p, fake = _plan(catalog, strategy="all")
    doc = p.to_dict()
    assert doc["question"] == {
        "containers": 100, "layers": 50, "strategy": "all", "deadline_s": 30.0,
        "arrival": "all at once",
    }  # fmt: skip
    assert doc["selection"] == {"instances": list(SOME), "family": None, "variants": False}
    assert doc["price"] == PRICE_NOTE and "price" not in doc["rows"][0]
    assert len(doc["rows"]) == 3 * len(SOME) == doc["candidates"]
    assert doc["points"] == sum(len(r) for r in fake.rounds) and doc["rounds"] == len(fake.rounds)
    row = doc["rows"][0]
    for key in ("machine", "vcpus", "strategy", "launch_p50_s", "launch_p99_s", "failures",
                "safe_burst", "safe_burst_per_vcpu", "peak_mount_table", "peak_peer_group",
                "mountinfo_read_at_peak_s", "dominant", "engine"):  # fmt: skip
        assert key in row
    assert set(row["safe_burst"]) >= {"value", "low", "high", "capped"}
    text = provenance.dumps(doc)
    assert json.loads(text) == doc
    again, _ = _plan(catalog, strategy="all")
    assert provenance.dumps(again.to_dict()) == text


def test_the_table_names_the_question_the_engine_and_every_row(catalog):
    p, _ = _plan(catalog)
    text = render(p)
    assert "100 containers x 50 layers" in text and "within 30 s" in text
    assert "answered by the fake engine" in text and PRICE_NOTE in text
    body = text.split("dominant")[1].splitlines()[1:]
    assert len(body) == len(SOME)
    assert body[0].split()[:4] == ["1", "c6gd.metal", "64", "per-layer"]
    assert "namespace" in body[0]


def test_the_answer_comes_before_the_table_in_words(catalog):
    p, _ = _plan(catalog)
    lines = render(p).splitlines()
    first = p.rows[0]
    assert lines[1] == "  " + answer(p)
    assert lines[1].startswith(
        f"  answer (first by burst_per_vcpu): c6gd.metal, 64 vCPUs, per-layer: a safe burst of "
        f"{first.burst.value} "
    )
    assert f"at 100 containers the launch p50 is {first.at.launch_p50.value:.2f} [" in lines[1]
    assert "the chance of missing the deadline " in lines[1]
    assert "tied with" not in lines[1]
    both = PlanOptions(instances=("r5.metal", "m7a.24xlarge"))  # 96 vCPUs each: a tie
    tied = plan(both, catalog=catalog, evaluate=FakeEvaluator())
    assert answer(tied).startswith("answer (first by burst_per_vcpu): r5.metal, 96 vCPUs, "
                                   "per-layer (tied with m7a.24xlarge): ")  # fmt: skip


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"containers": -5}, "containers must be a positive integer, not -5"),
        ({"layers": 0}, "layers must be a positive integer"),
        ({"deadline_s": 0.0}, "deadline must be positive"),
        ({"engine": "magic"}, "unknown engine"),
        ({"sort": "price"}, "unknown sort column 'price'"),
        ({"strategy": "x"}, "unknown strategy"),
        ({"containers": 2000}, r"max burst \(1000\) is below"),
        ({"seed": -1}, "seed must be a non-negative integer"),
    ],
)
def test_bad_options_are_refused_before_anything_runs(kw, message):
    with pytest.raises(CohsimError, match=message):
        plan_options(**kw)
