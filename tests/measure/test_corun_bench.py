"""corun_bench and `cohsim bench corun`: it builds, says its version, runs its three loops alone
and together on the CPUs this process may use, and its summary gives the committed run's
co-run slowdown; every `cohsim bench X` the repository recommends is a command that exists."""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import pytest
from benchtools import run
from conftest import DATA, REPO

from cohsim.cli import bench as cli_bench
from cohsim.cli.app import main
from cohsim.measure import programs
from cohsim.measure.corunbench import CORUN_COLUMNS, corun_expected_runs, summarize_corun

ALLOWED = sorted(os.sched_getaffinity(0))
needs_2_cpus = pytest.mark.skipif(len(ALLOWED) < 2, reason="needs 2 CPUs")
COMMITTED = DATA / "devvm-2cpu-intel-xeon-f6m167" / "corun" / "corun_bench.csv"


def test_builds_and_says_its_version(exes: dict[str, Path]) -> None:
    assert run([exes["corun"], "--version"]).stdout.strip() == "corun_bench 2"
    assert "usage: corun_bench" in run([exes["corun"], "--help"]).stdout


def test_too_many_threads_is_one_line(exes: dict[str, Path]) -> None:
    res = run([exes["corun"], "--threads", str(len(ALLOWED) + 1), "--ms", "1"])
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and "may run on" in res.stderr


@needs_2_cpus
def test_short_run_rows(exes: dict[str, Path]) -> None:
    res = run([exes["corun"], "--threads", "2", "--ms", "5", "--repeats", "2"])
    assert res.returncode == 0, res.stderr
    rows = programs._parse_csv(res.stdout, "corun", "stdout")
    assert res.stdout.splitlines()[0] == ",".join(CORUN_COLUMNS)
    assert len(rows) == 2 * 3 * 2  # repeats x loops x (alone, together)
    assert {r["threads"] for r in rows} == {"1", "2"}
    assert all(float(r["value"]) > 0 for r in rows)
    done = [r for r in rows if r["metric"] == programs._DONE_METRIC["corun"]]
    assert len(done) == corun_expected_runs(2)


def test_summary_of_the_committed_run() -> None:
    """The figures the data's README gives: per loop 1.345, 1.444, 1.255; all 27: 1.363."""
    with COMMITTED.open() as f:
        summary = summarize_corun(list(csv.DictReader(f)))
    assert summary["threads"] == 2
    assert round(summary["corun_slowdown"], 3) == 1.363
    assert {k: round(v["ratio"], 3) for k, v in summary["loops"].items()} == {
        "alu": 1.345,
        "chase": 1.444,
        "sys": 1.255,
    }
    assert all(len(v["ratios"]) == 9 for v in summary["loops"].values())


@needs_2_cpus
def test_cli_corun_writes_csv_sidecar_and_summary(
    tmp_path: Path,
    cache_env: dict[str, str],
    exes: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", cache_env["XDG_CACHE_HOME"])
    out = tmp_path / "results"
    argv = ["bench", "corun", "--threads", "2", "--ms", "5", "--repeats", "1"]
    assert main([*argv, "--out", str(out), "--no-progress", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["bench"] == "corun" and doc["summary"]["threads"] == 2
    assert doc["summary"]["corun_slowdown"] > 0
    side = json.loads((out / "corun_bench.json").read_text())
    assert side["bench_version"] == "2" and side["command"][0] == "corun_bench"
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    assert "co-run slowdown with 2 CPUs busy" in capsys.readouterr().out


def test_cli_usage_errors_exit_2(tmp_path: Path) -> None:
    for args in (["--threads", "1"], ["--threads", str(len(ALLOWED) + 1)], ["--ms", "0"]):
        with pytest.raises(SystemExit) as exc:
            main(["bench", "corun", *args, "--out", str(tmp_path / "out"), "--no-progress"])
        assert exc.value.code == 2
    assert not (tmp_path / "out").exists()


def _recommended_bench_commands() -> dict[str, set[str]]:
    """Every `cohsim bench NAME` in the README, the docs, the model files (a prior's
    `measure`, which --explain and the HTML report print) and cohsim's source."""
    found: dict[str, set[str]] = {}
    files = [REPO / "README.md", *(REPO / "docs").rglob("*.md"), *(REPO / "models").rglob("*.toml")]
    files += [*(REPO / "cohsim").rglob("*.py"), REPO / "calibration" / "bench" / "README.md"]
    for path in files:
        for name in re.findall(r"cohsim bench ([a-z][\w-]*)", path.read_text(encoding="utf-8")):
            found.setdefault(name, set()).add(str(path.relative_to(REPO)))
    return found


def test_every_recommended_bench_command_exists() -> None:
    """--explain, the README and the HTML report named `cohsim bench corun` when there was no
    such command."""
    commands = {*cli_bench._KINDS, "wake-idle"}
    found = _recommended_bench_commands()
    assert "corun" in found
    missing = {name: sorted(where) for name, where in found.items() if name not in commands}
    assert missing == {}
