"""The validity range: inputs beyond a real node are refused in one line before any work (a
10,000,000-container burst ran for minutes, the analytic engine answered a 1,200-year launch
with 3 GB, a machine of 100,000 cores a socket ended in a numpy MemoryError); inputs outside
the range the model was checked on run, with one warning line and `validity` in the JSON."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO

from cohsim.cli.app import main
from cohsim.errors import CohsimError
from cohsim.machine.parts import MAX_VCPUS
from cohsim.predict import CHECKED, LIMITS, predict
from cohsim.predict.validity import assess, refuse_absurd

FAST = ["--arch", "mesh", "--engine", "analytic", "--replicates", "2"]


def test_the_checked_ranges_cite_files_that_exist():
    for name, r in CHECKED.items():
        assert r.low <= r.high < LIMITS[name][0], name
        assert (REPO / r.source).exists(), r.source
    assert LIMITS["cpus"][0] == MAX_VCPUS == 4096


def test_assess_inside_outside_and_beyond():
    inside = assess(containers=100, layers=50, cpus=96, node_mounts=None)
    assert inside.inside and inside.warning() == ""
    assert inside.to_dict()["inputs"] == {"containers": 100, "layers": 50, "cpus": 96}
    out = assess(containers=500, layers=50, cpus=384, node_mounts=20_000)
    assert not out.inside
    assert out.outside == (
        "500 containers (checked 1-400)",
        "384 CPUs (checked 2-192)",
        "20,000 node mounts (checked 0-5,000)",
    )
    assert out.to_dict()["inside_checked_range"] is False
    for kw in ({"containers": 100_001}, {"layers": 501}, {"node_mounts": 100_001}):
        with pytest.raises(CohsimError, match="beyond what a real node can run"):
            refuse_absurd(**kw)
    refuse_absurd(containers=100_000, layers=500, node_mounts=100_000, cpus=4096)


def _cohsim(*argv: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it; a run that would go on for minutes fails the test."""
    return subprocess.run([sys.executable, "-m", "cohsim.cli", *argv], capture_output=True,
                          text=True, timeout=timeout, cwd=REPO / "tests")  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["predict", "--arch", "mesh", "--containers", "10000000"], "10,000,000 containers: "),
        (["predict", *FAST, "--containers", "10000000"], "10,000,000 containers: "),
        (["predict", *FAST, "--layers", "600"], "600 layers: "),
        (["predict", *FAST, "--node-mounts", "200000"], "200,000 node mounts: "),
        (["plan", "--containers", "10000000", "--max-burst", "10000000"], "10,000,000 containers"),
        (["sweep", "--containers", "10,10000000"], "10,000,000 containers: "),
        (
            [
                "trace",
                "synth",
                "--strategy",
                "per-layer",
                "--containers",
                "10000000",
                "--out",
                "never.strace",
            ],
            "10,000,000 containers: ",
        ),  # fmt: skip
    ],
)
def test_absurd_inputs_are_one_line_before_any_work(argv, message):
    t0 = time.monotonic()
    res = _cohsim(*argv)
    assert time.monotonic() - t0 < 15
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and res.stderr.startswith(f"cohsim: error: {message}")
    assert "beyond what a real node can run" in res.stderr
    assert not (REPO / "tests" / "never.strace").exists()


def test_a_machine_beyond_any_server_is_one_line(tmp_path):
    """100,000 cores a socket: a numpy MemoryError traceback (37 GiB for one matrix)."""
    src = (REPO / "models" / "servers" / "xeon-gold-6242-1s.toml").read_text()
    assert "cores_per_socket = 16\n" in src and "llc_domain_cores = 16\n" in src
    big = tmp_path / "big.toml"
    big.write_text(
        src.replace("cores_per_socket = 16\n", "cores_per_socket = 100000\n").replace(
            "llc_domain_cores = 16\n", "llc_domain_cores = 100000\n"
        )
    )
    for argv in (["show", str(big)], ["predict", "--instance", str(big), *FAST[2:]]):
        res = _cohsim(*argv)
        assert res.returncode == 1 and res.stdout == "" and res.stderr.count("\n") == 1
        assert res.stderr.startswith(f"cohsim: error: {big}: 200,000 hardware threads")


def test_outside_the_checked_range_warns_and_says_so_in_json(capsys):
    assert main(["predict", *FAST, "--containers", "500", "--layers", "5", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == (
        "cohsim: warning: outside the range the model was checked on: 500 containers (checked "
        "1-400): read the answer as an extrapolation\n"
    )
    v = json.loads(out)["validity"]
    assert v["inside_checked_range"] is False and v["outside"] == ["500 containers (checked 1-400)"]
    assert v["checked"]["containers"] == {
        "low": 1,
        "high": 400,
        "source": CHECKED["containers"].source,
    }


def test_inside_the_range_is_quiet_and_says_so_in_json(capsys):
    assert main(["predict", *FAST, "--containers", "20", "--layers", "5", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    v = json.loads(out)["validity"]
    assert v["inside_checked_range"] is True and v["outside"] == []
    assert v["inputs"] == {"containers": 20, "layers": 5, "cpus": 96}


def test_the_warning_comes_before_the_work():
    """on_validity is called before any simulation: a caller can stop there."""
    seen = []

    def stop(validity):
        seen.append(validity)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        predict(arch="mesh", containers=500, layers=5, engine="analytic", on_validity=stop)
    assert not seen[0].inside


def test_a_replay_is_assessed_by_its_containers(tmp_path: Path, capsys):
    trace = REPO / "tests" / "data" / "traces"
    some = trace / "interleaved_tt_T.strace"
    assert main(["replay", str(some), "--arch", "mesh", "--replicates", "1", "--json"]) == 0
    v = json.loads(capsys.readouterr().out)["validity"]
    assert v["inputs"]["containers"] >= 1 and "cpus" in v["inputs"]
