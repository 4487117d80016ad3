"""`cohsim plan` on the command line (cohsim.cli.plan): the table, --json as the same table,
and bad input as one error line with exit 1 and no output file."""

from __future__ import annotations

import json
from contextlib import contextmanager
from functools import partial

import pytest
from fakeplan import FakeEvaluator

import cohsim.cli.plan as cli_plan
import cohsim.plan.api as plan_api
from cohsim.cli.app import main
from cohsim.sweep import SweepOptions


@pytest.fixture
def fake(monkeypatch):
    """`plan` answered by the stand-in evaluator (no simulation)."""
    evaluator = FakeEvaluator()

    @contextmanager
    def fake_sweep(options):
        yield lambda engine: evaluator

    monkeypatch.setattr(cli_plan, "sweep_evaluators", fake_sweep)
    return evaluator


def test_table_and_json_give_the_same_rows(fake, capsys):
    argv = ["plan", "--instances", "r5.metal,m7a.24xlarge", "--strategy", "all", "--sort", "p99",
            "--engine", "analytic"]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["question"]["containers"] == 100 and doc["sort"] == "p99"
    assert doc["provenance"]["command"] == "plan" and doc["provenance"]["seed"] == 0
    assert len(doc["rows"]) == 6
    body = text.split("dominant")[1].strip().splitlines()
    assert [line.split()[1:4:2] for line in body] == [
        [r["machine"], r["strategy"]] for r in doc["rows"]
    ]
    p99s = [r["launch_p99_s"]["value"] for r in doc["rows"]]
    assert p99s == sorted(p99s)
    assert "answered by the fake engine" in text and "no price column" in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--instances", "m7a.24xlarg"], "unknown instance 'm7a.24xlarg'; did you mean"),
        (["--family", "zen9"], "unknown family 'zen9'"),
        (["--max-burst", "50"], "max burst (50) is below the question's 100 containers"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(fake, capsys, argv, message):
    assert main(["plan", *argv]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("cohsim: error: ") and message in err
    assert fake.rounds == []  # refused before any point ran


@pytest.mark.parametrize("name", ["sub/dir-is-a-file/r.html", "report.png"])
def test_an_unwritable_report_is_refused_before_any_work(fake, capsys, tmp_path, name):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "dir-is-a-file").write_text("x")
    target = tmp_path / name
    assert main(["plan", "--instances", "r5.metal", "--html", str(target)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(target) in err
    assert fake.rounds == []
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["dir-is-a-file", "sub"]


def test_an_unreachable_scheduler_is_one_line(capsys, monkeypatch):
    monkeypatch.setenv("COHSIM_CACHE", "off")  # a cached point would not need the scheduler
    # the scheduler is given 1 s to answer, not the 5 s a user gets
    monkeypatch.setattr(plan_api, "SweepOptions", partial(SweepOptions, connect_timeout_s=1.0))
    argv = ["plan", "--instances", "m7a.24xlarge", "--containers", "3", "--layers", "2",
            "--scheduler", "tcp://127.0.0.1:9"]  # fmt: skip
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err


def test_html_writes_the_report_beside_the_table(fake, capsys, tmp_path):
    target = tmp_path / "out" / "plan.html"
    target.parent.mkdir()  # no folder is made for an output
    argv = ["plan", "--instances", "r5.metal,m7a.24xlarge", "--html", str(target), "--json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    text = target.read_text(encoding="utf-8")
    assert "<title>cohsim plan: 100 containers x 50 layers, each up within 30 s</title>" in text
    assert text.count('<tr class="candidate">') == len(doc["rows"]) == 2
    assert [p.name for p in target.parent.iterdir()] == ["plan.html"]  # no temporary left


def test_a_read_only_cache_is_said_in_one_line(fake, capsys, monkeypatch, tmp_path):
    """plan keeps its points in the sweep's cache: one it cannot write in is used read-only,
    and said (it was skipped silently). The real read-only folder: tests/sweep/test_sweep_cli."""
    import cohsim.sweep.pointcache as sweep_cache

    monkeypatch.setenv("COHSIM_CACHE", str(tmp_path))
    monkeypatch.setattr(sweep_cache, "writable", lambda folder: False)
    assert main(["plan", "--instances", "r5.metal"]) == 0
    err = capsys.readouterr().err
    assert err == (
        f"cohsim: note: the sweep cache {tmp_path / 'sweep'} is read-only: the points it holds "
        "are used, new ones are not kept\n"
    )


def test_the_question_is_a_burst_and_a_target(capsys, monkeypatch):
    """The plan's flags become a `Burst` and a `Target` (issue 30 item 7): the runtime, the
    node's mounts, the kernel model and the fit reach every point's sweep options and are
    said in the question; the defaults say nothing more than before."""
    seen = []

    @contextmanager
    def fake_sweep(options: SweepOptions):
        seen.append(options)
        yield lambda engine: FakeEvaluator()

    monkeypatch.setattr(cli_plan, "sweep_evaluators", fake_sweep)
    argv = ["plan", "--instances", "r5.metal", "--engine", "analytic", "--json"]
    assert main(argv) == 0
    assert set(json.loads(capsys.readouterr().out)["question"]) == {
        "containers", "layers", "strategy", "deadline_s", "arrival"
    }  # fmt: skip
    more = ["--runtime", "none", "--node-mounts", "300", "--calibration", "none",
            "--set", "propagation.service_namespaces=12"]  # fmt: skip
    assert main([*argv, *more]) == 0
    q = json.loads(capsys.readouterr().out)["question"]
    assert (q["runtime"], q["calibration"]) == ("none", "none")
    assert q["pinned_priors"] == {
        "background.node_mounts": 300.0, "propagation.service_namespaces": 12.0
    }  # fmt: skip
    o = seen[-1]
    assert (o.runtime, o.target.calibration, dict(o.target.pins)) == (
        "none", "none", q["pinned_priors"]
    )  # fmt: skip
