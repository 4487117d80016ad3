"""`cohsim predict` / `cohsim replay` as a user runs them."""

from __future__ import annotations

import json

import pytest
from conftest import DATA

from cohsim.cli.app import main
from cohsim.errors import CohsimError
from cohsim.workload.runtime import runtime_mount_ops

TRACE = str(
    DATA / "devvm-2cpu-intel-xeon-f6m167" / "strace" / "common-parent-2workers-3layers.strace"
)
FAST = ["--containers", "8", "--layers", "3", "--replicates", "1"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_predict_json(capsys):
    code, out, _ = run(capsys, "predict", "--arch", "mesh", *FAST, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == 1 and doc["machine"] == "m7i.metal-24xl"
    assert doc["mount_ops"] == 8 * (2 * 7 + runtime_mount_ops("runc"))
    assert doc["provenance"]["seed"] == 0 and doc["workload"]["runtime"] == "runc"


def test_predict_table_and_plot(capsys, tmp_path):
    png = tmp_path / "launch.png"
    code, out, _ = run(
        capsys,
        "predict",
        "--instance",
        "m7a.24xlarge",
        *FAST,
        "--strategy",
        "common-parent",
        "--plot",
        str(png),
    )
    assert code == 0 and "launch latency" in out and "calibration:" in out
    assert png.read_bytes().startswith(b"\x89PNG")


def test_replay(capsys):
    code, out, _ = run(
        capsys, "replay", TRACE, "--instance", "c6a.metal", "--replicates", "1", "--json"
    )
    doc = json.loads(out)
    assert code == 0 and doc["workload"]["trace"].endswith(".strace")
    assert doc["provenance"]["input_digests"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["predict", *FAST], "say which machine"),
        (["predict", "--instance", "m9z.metal", *FAST], "unknown instance 'm9z.metal'"),
        (["replay", "/nonexistent.strace", "--arch", "mesh"], "/nonexistent.strace"),
    ],
)
def test_bad_input_one_line_exit_1(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == "" and err.count("\n") == 1 and message in err


def test_foreign_trace_line(capsys, tmp_path):
    bad = tmp_path / "bad.strace"
    bad.write_text(
        '1234 00:00:01.000000 open_tree(-9, "/a", OPEN_TREE_CLONE) = 3 <0.000010>\n'
        "this is not strace\n"
    )
    code, out, err = run(capsys, "replay", str(bad), "--arch", "mesh")
    assert code == 1 and f"{bad}:2" in err


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        main(["predict", "--arch", "mesh", "--containers", "0"])
    assert e.value.code == 2


def test_calibration_choice_is_reported(capsys, tmp_path):
    code, out, _ = run(
        capsys, "predict", "--arch", "mesh", *FAST, "--calibration", "none", "--json"
    )
    assert code == 0 and json.loads(out)["calibration"].startswith("none")
    code, out, _ = run(capsys, "predict", "--arch", "mesh", *FAST, "--json")
    assert code == 0 and "committed fit" in json.loads(out)["calibration"]
    bad = tmp_path / "fit.json"
    bad.write_text("{not json")
    code, out, err = run(capsys, "predict", "--arch", "mesh", *FAST, "--calibration", str(bad))
    assert code == 1 and str(bad) in err and "invalid JSON" in err


def test_explain_ranks_the_unknowns_and_plots_them(capsys, tmp_path):
    png = tmp_path / "explain.png"
    argv = ["predict", "--arch", "chiplet", "--containers", "6", "--layers", "2"]
    code, out, _ = run(capsys, *argv, "--replicates", "2", "--explain-plot", str(png))
    assert code == 0 and png.read_bytes().startswith(b"\x89PNG")
    assert "launch breakdown (ms, nominal replicate)" in out and "base (fixed" in out
    assert "unknowns ranked by their effect on the launch p99" in out
    ranked = out.split("to pin it\n")[1].splitlines()
    assert ranked[0].split()[0] == "1" and "launch.runtime_cpu_ns" in out
    code, out, _ = run(capsys, *argv, "--replicates", "2", "--explain", "--json")
    doc = json.loads(out)
    assert doc["sensitivity"][0]["swing_s"] >= doc["sensitivity"][-1]["swing_s"]
    assert doc["breakdown"]["base_s"] > 0 and doc["interval"]["level"] is None


def test_node_mounts_pins_its_prior(capsys):
    code, out, _ = run(capsys, "predict", "--arch", "mesh", *FAST, "--node-mounts", "2204")
    assert code == 0 and "pinned: background.node_mounts = 2204 (user; its prior" in out
    code, out, _ = run(capsys, "predict", "--arch", "mesh", *FAST, "--no-priors", "--json")
    assert json.loads(out)["priors"]["drawn"] == []
    with pytest.raises(SystemExit) as e:
        main(["predict", "--arch", "mesh", "--node-mounts", "-1"])
    assert e.value.code == 2


def test_a_bad_explain_plot_is_one_line_and_no_file(capsys, tmp_path):
    bad = tmp_path / "explain.gif"
    code, out, err = run(capsys, "predict", "--arch", "mesh", *FAST, "--explain-plot", str(bad))
    assert code == 1 and out == "" and err.count("\n") == 1 and not bad.exists()


def test_replay_by_process_tree_counts_one_runtime_start_as_one_container(capsys):
    runc = str(DATA / "devvm-2cpu-amd-epyc-f25m1" / "runc-strace" / "plain.strace")
    args = ("replay", runc, "--instance", "c5.metal", "--replicates", "1", "--json")
    threads = json.loads(run(capsys, *args)[1])
    trees = json.loads(run(capsys, *args, "--by-process-tree")[1])
    assert threads["containers"] == 4 and trees["containers"] == 1
    assert trees["workload"]["containers_by"] == "process tree"
    assert trees["mount_ops"] == threads["mount_ops"] == 45


def test_replay_refuses_a_clock_step_in_one_line(capsys, tmp_path, monkeypatch):
    """issue 30: a 2.5e9 s step in a -ttt trace parsed silently, then replay ran for more than
    300 s showing nothing."""

    def simulate(*args, **kwargs):
        raise AssertionError("the trace was simulated")

    monkeypatch.setattr("cohsim.predict.api.simulate", simulate)
    path = tmp_path / "jump.strace"
    path.write_text(
        '7 1795305658.387786 umount2("/a", 0) = 0 <0.000022>\n'
        '7 4295305658.388277 umount2("/b", 0) = 0 <0.000026>\n'
    )
    for lenient in ([], ["--lenient"]):
        code, out, err = run(capsys, "replay", str(path), "--arch", "mesh", *lenient)
        assert (code, out) == (1, "") and err.count("\n") == 1
        assert err.startswith(f"cohsim: error: {path}:2: the trace spans 2.5e+09 s")


def test_replay_of_a_bad_escape_is_one_line_or_skipped(capsys, tmp_path):
    """issue 30: `"/var/lib/x\\unts/0"` was a ValueError traceback, with --lenient too."""
    path = tmp_path / "escape.strace"
    path.write_text(
        '7 12:00:00.000001 umount2("/a", MNT_DETACH) = 0 <0.000010>\n'
        '7 12:00:00.000050 umount2("/var/lib/x\\unts/0", 0) = 0 <0.000010>\n'
    )
    code, out, err = run(capsys, "replay", str(path), "--arch", "mesh", "--replicates", "1")
    assert (code, out) == (1, "") and err.count("\n") == 1
    assert err.startswith(f"cohsim: error: {path}:2: malformed strace line (unknown string escape")
    argv = ("replay", str(path), "--arch", "mesh", "--replicates", "1", "--lenient", "--json")
    code, out, err = run(capsys, *argv)
    assert code == 0 and json.loads(out)["workload"]["malformed_skipped"] == 1


def test_replay_shows_progress_unless_told_not_to(capsys, monkeypatch):
    seen = []

    def replay(path, target=None, **kw):
        seen.append(kw["options"].progress)
        raise CohsimError("stop here")

    monkeypatch.setattr("cohsim.cli.predict.replay", replay)
    run(capsys, "replay", TRACE, "--arch", "mesh")
    run(capsys, "replay", TRACE, "--arch", "mesh", "--no-progress")
    assert seen == [True, False]


def test_the_peak_peer_group_has_its_line_and_key(capsys):
    code, out, _ = run(capsys, "predict", "--arch", "mesh", *FAST)
    assert code == 0 and "peak peer group of /: " in out
    code, out, _ = run(capsys, "predict", "--arch", "mesh", *FAST, "--json")
    assert json.loads(out)["peak_peer_group"] > 1


@pytest.mark.parametrize(
    ("extra", "replicates"),
    [([], 4), (["--engine", "des"], 4), (["--engine", "analytic"], 17),
     (["--engine", "analytic", "--replicates", "4"], 4), (["--replicates", "9"], 9)],
)  # fmt: skip
def test_replicates_default_per_engine_unless_asked(capsys, monkeypatch, extra, replicates):
    """Issue 30: the simulation keeps 4 replicates, the analytic engine draws many more
    (cohsim.predict.options.REPLICATES); `--replicates N` wins over either, replay too."""
    seen = []

    def stop(*args, **kw):
        seen.append(kw["options"])
        raise CohsimError("stop here")

    monkeypatch.setattr("cohsim.cli.predict.predict", stop)
    monkeypatch.setattr("cohsim.cli.predict.replay", stop)
    run(capsys, "predict", "--arch", "mesh", *extra)
    run(capsys, "replay", TRACE, "--arch", "mesh", *extra)
    assert [o.n_replicates for o in seen] == [replicates, replicates]


def test_the_analytic_default_runs_and_says_so(capsys):
    argv = ("predict", "--arch", "mesh", "--engine", "analytic", "--containers", "20")
    code, out, _ = run(capsys, *argv, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["replicates"] == 17 and doc["interval"]["draws"] == 16
    code, out, _ = run(capsys, *argv)
    assert code == 0 and "90% prediction intervals from 17 replicates" in out
    help_text = " ".join(run_help(capsys, "predict").split())
    assert (
        "(default: 4 with --engine des: two rounds on a 2-CPU machine; 17 with --engine "
        "analytic: milliseconds each)" in help_text
    )


def run_help(capsys, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    return capsys.readouterr().out
