"""The two-stage plan (cohsim.plan.api): every candidate screened, the top `confirm` rows of
the screen confirmed by the simulation, both answers shown with the engine named; `engine`
forcing one; `--confirm` on the command line. On stand-in evaluators (fakeplan): the screen
answers "analytic", the confirmation "des", 1.5 times slower above the base."""

from __future__ import annotations

import json
from contextlib import contextmanager

import pytest
from fakeplan import FakeEvaluator, plan_options

import cohsim.cli.plan as cli_plan
from cohsim import provenance
from cohsim.cli.app import main
from cohsim.errors import CohsimError
from cohsim.plan import PlanOptions, plan
from cohsim.plan.table import render

SOME = ("r5.metal", "m7a.24xlarge", "c6gd.metal", "m7i.metal-48xl", "m7i.metal-24xl")
SMALL = {"containers": 10, "layers": 5, "deadline_s": 2.0, "max_burst": 200}


def _two(catalog, **kw):
    screen, sim = FakeEvaluator("analytic"), FakeEvaluator("des", factor=1.5)
    o = plan_options(instances=SOME, **{**SMALL, **kw})
    return plan(o, catalog=catalog, evaluate=screen, confirm=sim), screen, sim


def test_the_simulation_confirms_exactly_the_top_k(catalog):
    p, screen, sim = _two(catalog, confirm=2)
    alone, _, _ = _two(catalog, confirm=0)
    top = [r.candidate for r in alone.rows[:2]]  # the screen's own ranking
    assert len(sim.rounds) == 1
    assert [(q.candidate, q.containers) for q in sim.rounds[0]] == [(c, 10) for c in top]
    assert [r.stage for r in p.rows] == ["confirmed"] * 2 + ["screened"] * 3
    for r in p.rows[:2]:
        assert r.at.engine == "des" and r.screen is not None and r.screen.engine == "analytic"
        assert r.at.launch_p99.value > r.screen.launch_p99.value  # the simulation's own
        assert r.burst_engine == "analytic"  # the screen's search
    for r in p.rows[2:]:
        assert r.at.engine == "analytic" and r.screen is None
    assert {q.candidate for rnd in screen.rounds for q in rnd} == {r.candidate for r in p.rows}
    assert p.engines == ("analytic", "des")
    assert p.points == sum(map(len, screen.rounds)) + 2


def test_json_and_table_name_the_engine_of_every_row(catalog):
    p, _, _ = _two(catalog, confirm=2)
    doc = p.to_dict()
    assert doc["engine"] == {"asked": "two-stage", "answered": ["analytic", "des"], "confirmed": 2}
    first, last = doc["rows"][0], doc["rows"][-1]
    assert first["engine"] == "des" and first["stage"] == "confirmed"
    assert first["screen"]["engine"] == "analytic" and first["safe_burst"]["engine"] == "analytic"
    assert last["engine"] == "analytic" and last["stage"] == "screened" and "screen" not in last
    text = render(p)
    assert "every candidate screened by the analytic engine, the top 2 confirmed by the des" in text
    body = text.split("dominant")[1].strip().splitlines()
    assert all("des, burst analytic" in line for line in body[:2])
    assert not any("des" in line for line in body[2:])


def test_same_seed_same_bytes(catalog):
    a, _, _ = _two(catalog, confirm=3)
    b, _, _ = _two(catalog, confirm=3)
    assert provenance.dumps(a.to_dict()) == provenance.dumps(b.to_dict())


@pytest.mark.parametrize("engine", ["analytic", "des"])
def test_engine_forces_one_for_everything(catalog, engine):
    p, screen, sim = _two(catalog, engine=engine, confirm=3)
    assert sim.rounds == [] and {r.stage for r in p.rows} == {"single"}
    assert p.to_dict()["engine"]["confirmed"] == 0


def test_confirm_0_screens_only(catalog):
    p, _, sim = _two(catalog, confirm=0)
    assert sim.rounds == [] and {r.stage for r in p.rows} == {"screened"}
    assert p.engines == ("analytic",)


def test_confirm_more_than_the_rows_confirms_them_all(catalog):
    p, _, sim = _two(catalog, confirm=50)
    assert len(sim.rounds[0]) == len(SOME) and {r.stage for r in p.rows} == {"confirmed"}


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_a_bad_confirm_is_refused(bad):
    with pytest.raises(CohsimError, match="confirm must be a whole number"):
        PlanOptions(confirm=bad)


@pytest.fixture
def engines(monkeypatch):
    """`plan` on the command line with a stand-in evaluator per engine."""
    fakes = {"analytic": FakeEvaluator("analytic"), "des": FakeEvaluator("des", factor=1.5)}

    @contextmanager
    def fake_sweep(options):
        yield fakes.__getitem__

    monkeypatch.setattr(cli_plan, "sweep_evaluators", fake_sweep)
    return fakes


ARGV = ["plan", "--instances", ",".join(SOME), "--containers", "10", "--layers", "5",
        "--deadline", "2", "--max-burst", "200", "--json"]  # fmt: skip


@pytest.mark.parametrize(
    ("extra", "confirmed"), [([], 5), (["--confirm", "1"], 1), (["--confirm", "0"], 0),
                             (["--engine", "des"], 0), (["--engine", "analytic"], 0)]
)  # fmt: skip
def test_cli_confirm_and_engine(engines, capsys, extra, confirmed):
    assert main([*ARGV, *extra]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["engine"]["confirmed"] == confirmed
    assert [r["stage"] == "confirmed" for r in doc["rows"]].count(True) == confirmed
    if extra[:1] == ["--engine"]:  # the other engine is never asked
        assert engines["analytic" if extra[1] == "des" else "des"].rounds == []
    else:
        assert sum(map(len, engines["des"].rounds)) == confirmed


@pytest.mark.parametrize("bad", ["-1", "x", "1.5"])
def test_cli_bad_confirm_exits_2_with_one_line(engines, capsys, bad):
    with pytest.raises(SystemExit) as exc:
        main([*ARGV, "--confirm", bad])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error" in line]
    assert errors == [f"cohsim plan: error: argument --confirm: {bad!r} is not "
                      + ("an integer" if bad != "-1" else "a non-negative integer")]  # fmt: skip
    assert engines["analytic"].rounds == []


def test_the_report_names_the_engine_of_every_row(catalog):
    from cohsim.report.content import ReportData
    from cohsim.report.html import _question, _ranking

    p, _, _ = _two(catalog, confirm=2)
    data = ReportData(plan=p, curves=(), fixes=(), details=(), priors={})
    table = _ranking(data)
    assert "<th>engine</th>" in table and "<th>screen p50 / p99 s</th>" in table
    assert table.count("<td>des, burst analytic</td>") == 2
    assert table.count("<td>analytic</td>") == len(SOME) - 2
    assert "the top 2 confirmed by the des engine" in _question(data)


@pytest.mark.parametrize(
    ("extra", "replicates"),
    [([], {"analytic": 17, "des": 4}), (["--replicates", "3"], {"analytic": 3, "des": 3}),
     (["--confirm", "0"], {"analytic": 17}), (["--engine", "des"], {"des": 4}),
     (["--engine", "analytic", "--replicates", "7"], {"analytic": 7})],
)  # fmt: skip
def test_each_engine_runs_its_own_replicates_unless_asked(engines, capsys, extra, replicates):
    """Issue 30: the analytic screen draws many replicates a point (milliseconds each), the
    simulation's confirmation its 4; `--replicates N` is both's. The document and the
    table say each."""
    assert main([*ARGV, *extra]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == 2 and doc["provenance"]["replicates"] == replicates
    assert main([a for a in [*ARGV, *extra] if a != "--json"]) == 0
    text = capsys.readouterr().out
    said = (
        f"{next(iter(replicates.values()))} replicates a point"
        if len(set(replicates.values())) == 1
        else "replicates a point: 17 analytic, 4 des"
    )
    assert f"seed 0, {said}" in text


@pytest.mark.parametrize(("asked", "runs"), [(None, {"analytic": 17, "des": 4}), (6, None)])
def test_the_sweep_evaluators_run_each_engines_replicates(monkeypatch, asked, runs):
    """What the default evaluators hand the sweep engine for each engine's points."""
    import cohsim.plan.evaluate as plan_evaluate

    seen = {}

    def run_points(points, sweep):
        seen[sweep.run.engine] = sweep.run.n_replicates
        return []

    monkeypatch.setattr(plan_evaluate, "run_points", run_points)
    o = PlanOptions(replicates=asked, workers=1)
    with plan_evaluate.sweep_evaluators(o.sweep) as evaluators:
        for engine in ("analytic", "des"):
            evaluators(engine)([])
    assert seen == (runs or {"analytic": asked, "des": asked}) == o.replicates_by_engine
