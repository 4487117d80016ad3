"""`--set NAME=VALUE` and `--priors FILE` on predict, replay, plan and sweep (cohsim.cli.args):
a pin shows in the human output and the JSON; an unknown name or an impossible value is one
line and exit 2; a value outside the prior's range one warning line."""

from __future__ import annotations

import json

import pytest
from conftest import DATA

from cohsim.cli.app import main

FAST = ["--containers", "6", "--layers", "2", "--replicates", "2", "--engine", "analytic"]
TRACE = str(
    DATA / "devvm-2cpu-intel-xeon-f6m167" / "strace" / "common-parent-2workers-3layers.strace"
)
TINY = ["--instances", "xeon-gold-6242-1s", "--layers", "2", "--replicates", "1",
        "--engine", "analytic", "--workers", "1"]  # fmt: skip


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_predict_shows_the_pins_in_words_and_json(capsys, tmp_path):
    f = tmp_path / "node.toml"
    f.write_text("[propagation]\nservice_namespaces = 12\n")
    argv = ["predict", "--arch", "mesh", *FAST, "--priors", str(f), "--set", "cpu.wake_ns=5000"]
    code, out, err = run(capsys, *argv)
    assert code == 0 and err == ""
    assert "pinned: propagation.service_namespaces = 12 (user; its prior's range 0-30)" in out
    assert "pinned: cpu.wake_ns = 5000 (user; its prior's range 1000-30000)" in out
    code, out, _ = run(capsys, *argv, "--set", "propagation.service_namespaces=3", "--json")
    doc = json.loads(out)
    assert doc["priors"]["pinned"]["propagation.service_namespaces"]["value"] == 3  # --set wins
    assert "cpu.wake_ns" not in doc["priors"]["drawn"]


def test_outside_the_range_is_one_warning_line(capsys):
    code, out, err = run(capsys, "predict", "--arch", "mesh", *FAST, "--set", "cpu.wake_ns=50000")
    assert code == 0 and err.count("\n") == 1 and "cpu.wake_ns = 50000" in err
    assert "outside its prior's range 1000-30000" in out


@pytest.mark.parametrize(
    ("pin", "message"),
    [
        ("service_namespaces=3", "closest: propagation.service_namespaces"),
        ("cpu.smt_slowdown=0.5", "slowdown below 1"),
        ("background.probe_reads_per_s=-2", "below 0"),
    ],
)
@pytest.mark.parametrize("command", ["predict", "replay", "plan", "sweep"])
def test_unknown_or_impossible_is_one_line_exit_2(capsys, tmp_path, command, pin, message):
    head = {
        "predict": ["predict", "--arch", "mesh", *FAST],
        "replay": ["replay", TRACE, "--arch", "mesh", "--replicates", "1"],
        "plan": ["plan", *TINY[:2], "--containers", "2", "--workers", "1"],
        "sweep": ["sweep", *TINY, "--containers", "2", "--cache", str(tmp_path / "c")],
    }[command]
    code, out, err = run(capsys, *head, "--set", pin)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err
    assert not (tmp_path / "c").exists()


def test_a_malformed_set_or_missing_file_is_refused(capsys):
    with pytest.raises(SystemExit) as e:
        main(["predict", "--arch", "mesh", "--set", "cpu.wake_ns"])
    assert e.value.code == 2 and "is not NAME=VALUE" in capsys.readouterr().err
    code, out, err = run(capsys, "predict", "--arch", "mesh", "--priors", "/no/such.toml")
    assert code == 1 and "no such priors file" in err and err.count("\n") == 1


def test_replay_takes_pins(capsys):
    argv = ["replay", TRACE, "--arch", "mesh", "--replicates", "1", "--json"]
    code, out, _ = run(capsys, *argv, "--set", "propagation.service_namespaces=7")
    assert json.loads(out)["priors"]["pinned"]["propagation.service_namespaces"]["value"] == 7


def test_sweep_and_plan_take_pins(capsys, tmp_path):
    cache = str(tmp_path / "c")
    base = ["sweep", *TINY, "--containers", "2", "--cache", cache, "--json", "--no-progress"]
    rows = {}
    for n in ("0", "30"):
        code, out, _ = run(capsys, *base, "--set", f"propagation.service_namespaces={n}")
        assert code == 0
        doc = json.loads(out)
        assert doc["provenance"]["pinned_priors"] == {"propagation.service_namespaces": float(n)}
        rows[n] = doc["rows"][0]
    # the pin is part of the point's key: another value is another point, not a cached one
    assert rows["0"]["digest"] != rows["30"]["digest"]
    assert rows["30"]["launch_p99_s"] > rows["0"]["launch_p99_s"]
    argv = ["plan", *TINY[:2], "--containers", "2", "--layers", "2", "--workers", "1"]
    code, out, err = run(capsys, *argv, "--set", "cpu.wake_ns=50000", "--json")
    assert code == 0 and "cpu.wake_ns = 50000" in err
    assert json.loads(out)["question"]["pinned_priors"] == {"cpu.wake_ns": 50000.0}
