"""`cohsim sweep` as a user runs it: the files it writes, and bad input as one line, exit 1,
no output file."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from tinygrid import FLAGS, MACHINES

from cohsim.cli import sweep as cli_sweep
from cohsim.cli.app import main
from cohsim.errors import CohsimError
from cohsim.sweep import COLUMNS, SweepOptions


def run(capsys, *argv):
    code = main(["sweep", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_csv_json_and_plot(capsys, tmp_path):
    files = {k: tmp_path / "out" / f"sweep.{k}" for k in ("csv", "json", "png")}
    (tmp_path / "out").mkdir()  # no folder is made for an output
    code, out, _ = run(capsys, *FLAGS, "--workers", "1", "--cache", str(tmp_path / "c"),
                       "--csv", str(files["csv"]), "--json", str(files["json"]),
                       "--plot", str(files["png"]))  # fmt: skip
    assert code == 0
    rows = list(csv.DictReader(files["csv"].open()))
    assert tuple(rows[0]) == COLUMNS
    assert [(r["instance"], r["containers"]) for r in rows] == [
        (m, n) for m in MACHINES for n in ("2", "6")
    ]
    doc = json.loads(files["json"].read_text())
    assert doc["schema"] == 1 and doc["provenance"]["seed"] == 3
    assert doc["provenance"]["replicates"] == 2 and doc["provenance"]["engine"] == "des"
    assert [r["launch_p99_s"] for r in doc["rows"]] == [float(r["launch_p99_s"]) for r in rows]
    assert files["png"].read_bytes()[:4] == b"\x89PNG"
    assert out.startswith("4 points: 4 computed, 0 from the cache") and out.count("\n") == 1
    code, out, _ = run(capsys, *FLAGS, "--containers", "2,6,8", "--workers", "1",
                       "--cache", str(tmp_path / "c"))  # fmt: skip
    assert code == 0 and "6 points: 2 computed, 4 from the cache" in out
    assert out.count(MACHINES[0]) == 3  # no file: the table on stdout


def test_json_on_stdout(capsys):
    code, out, _ = run(capsys, *FLAGS, "--containers", "2", "--cache", "off", "--json")
    doc = json.loads(out)
    assert code == 0 and [r["instance"] for r in doc["rows"]] == MACHINES


def test_family_and_strategies(capsys):
    code, out, _ = run(capsys, "--family", "graviton2", "--containers", "2", "--layers", "1",
                       "--strategy", "all", "--replicates", "1", "--cache", "off",
                       "--workers", "1", "--no-progress", "--json")  # fmt: skip
    rows = json.loads(out)["rows"]
    assert code == 0 and len(rows) == 2 * 3
    assert [r["strategy"] for r in rows[:3]] == ["per-layer", "common-parent", "lowerdir-plus"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--instances", "m7a.24xlarg"], "unknown instance 'm7a.24xlarg'; did you mean"),
        (["--family", "pentium"], "unknown family 'pentium'"),
        (["--family", "genoa", "--instances", "m7a.24xlarge"], "not both"),
        (["--scheduler", "tcp://127.0.0.1:9"], "cannot reach the Dask scheduler"),
    ],
)
def test_bad_input_is_one_line_and_no_file(capsys, tmp_path, monkeypatch, argv, message):
    # the scheduler is given 1 s to answer, not the 5 s a user gets
    monkeypatch.setattr(cli_sweep, "SweepOptions", partial(SweepOptions, connect_timeout_s=1.0))
    out_csv = tmp_path / "out.csv"
    base = ["--containers", "2", "--layers", "1", "--replicates", "1", "--cache", "off",
            "--no-progress", "--csv", str(out_csv)]  # fmt: skip
    if "--family" not in argv and "--instances" not in argv:
        base += ["--instances", MACHINES[0]]
    code, out, err = run(capsys, *base, *argv)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and message in err and err.startswith("cohsim: error: ")
    assert not out_csv.exists()


@pytest.mark.parametrize("flag", ["--csv", "--json", "--plot"])
def test_an_unwritable_output_is_refused_before_any_work(capsys, tmp_path, flag):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _, err = run(capsys, *FLAGS, flag, str(blocker / "sweep.png"))
    assert code == 1 and "cannot write a file in" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == [blocker]


def test_the_plot_has_a_panel_per_strategy_and_a_curve_per_machine():
    from cohsim.sweep.plot import MAX_BANDS, panels, plot_launch_vs_containers, sweep_figure
    from cohsim.sweep.row import Row

    def row(instance, variant, strategy, n):
        doc = dict.fromkeys(COLUMNS, 0.0)
        doc.update(instance=instance, variant=variant, strategy=strategy, containers=n,
                   layers=5, engine="analytic", seed=1, launch_p99_s=n / 10.0)  # fmt: skip
        return Row.from_dict(doc)

    machines = (("a", "base"), ("a", "smt-off"), ("b", "base"))
    strategies = ("per-layer", "common-parent")
    rows = [row(m, v, s, n) for s in strategies for m, v in machines for n in (20, 10)]
    groups = panels(rows)
    assert list(groups) == [("per-layer", 5), ("common-parent", 5)]
    curves = groups[("per-layer", 5)]
    assert [r.containers for r in curves[("a", "smt-off")]] == [10, 20]
    fig = sweep_figure(rows)
    assert sum(ax.get_visible() for ax in fig.axes) == 2
    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    assert plot_launch_vs_containers(curves, ax) == ["a", "a (smt-off)", "b"]
    assert len(ax.collections) == 2 * 3  # p99 and p50 bands: 3 curves <= MAX_BANDS
    many = {(f"m{i}", "base"): curves[("b", "base")] for i in range(MAX_BANDS + 1)}
    _, ax = plt.subplots()
    plot_launch_vs_containers(many, ax)
    assert len(ax.collections) == 0  # too many curves: no bands
    plt.close("all")


#: a fast grid (the analytic engine: milliseconds a point)
FAST = ["--instances", "r5.metal", "--containers", "2,4", "--layers", "2", "--engine", "analytic",
        "--replicates", "1", "--no-progress"]  # fmt: skip


def run_readonly(folder: Path, argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """`cohsim ARGV` in a process that cannot write in `folder`: for a user, the folder's mode
    0555; for root, whom modes do not stop, a read-only bind mount of it in a mount namespace
    of the process's own."""
    cmd = [sys.executable, "-m", "cohsim.cli", *argv]
    kw = {"capture_output": True, "text": True, "timeout": 120, "env": env}
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            return subprocess.run(cmd, **kw)
        finally:
            folder.chmod(0o755)
    if shutil.which("unshare") is None:
        pytest.skip("root without unshare: no way to make a folder read-only for this test")
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    res = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script,
                          str(folder), *cmd], **kw)  # fmt: skip
    if res.returncode != 0 and "mount" in res.stderr and "cohsim" not in res.stderr:
        pytest.skip(f"cannot make a read-only bind mount here: {res.stderr.strip()}")
    return res


def test_a_read_only_cache_holding_every_point_is_used(capsys, tmp_path):
    """It was refused ("cannot write a file in"): it is read, nothing is computed, and one
    line says new points are not kept."""
    cache_dir = tmp_path / "cache"
    out = tmp_path / "out"
    out.mkdir()
    assert main(["sweep", *FAST, "--cache", str(cache_dir), "--csv", str(out / "a.csv")]) == 0
    capsys.readouterr()
    env = {**os.environ, "COHSIM_CACHE": str(tmp_path / "other")}
    argv = ["sweep", *FAST, "--cache", str(cache_dir), "--csv", str(out / "b.csv")]
    res = run_readonly(cache_dir, argv, env)
    assert res.returncode == 0, res.stderr
    assert "2 points: 0 computed, 2 from the cache" in res.stdout
    assert res.stderr == (
        f"cohsim: note: the sweep cache {cache_dir} is read-only: the points it holds are used, "
        "new ones are not kept\n"
    )
    assert (out / "a.csv").read_bytes() == (out / "b.csv").read_bytes()


def test_a_read_only_default_cache_says_so(tmp_path):
    """The default cache ($COHSIM_CACHE/sweep) read-only was skipped silently."""
    base = tmp_path / "cohsim-cache"
    (base / "sweep").mkdir(parents=True)
    env = {**os.environ, "COHSIM_CACHE": str(base)}
    res = run_readonly(base, ["sweep", *FAST], env)
    assert res.returncode == 0, res.stderr
    assert "2 points: 2 computed, 0 from the cache" in res.stdout
    assert res.stderr == (
        f"cohsim: note: the sweep cache {base / 'sweep'} is read-only: the points it holds are "
        "used, new ones are not kept\n"
    )
    assert list((base / "sweep").iterdir()) == []


def test_a_cache_entry_edited_by_hand_is_computed_again(capsys, tmp_path):
    """Valid JSON with its key, a number changed: it was used as it was; now it is a miss,
    with a warning line, and the output is the computed one."""
    cache_dir = tmp_path / "cache"
    first, again = tmp_path / "first.csv", tmp_path / "again.csv"
    assert main(["sweep", *FAST, "--cache", str(cache_dir), "--csv", str(first)]) == 0
    capsys.readouterr()
    entry = sorted(cache_dir.glob("*.json"))[0]
    doc = json.loads(entry.read_text())
    doc["row"]["launch_p99_s"] = 0.001
    entry.write_text(json.dumps(doc, sort_keys=True) + "\n")
    code, out, err = run(capsys, *FAST, "--cache", str(cache_dir), "--csv", str(again))
    assert code == 0 and "2 points: 1 computed, 1 from the cache" in out
    assert err.startswith(f"cohsim: warning: {entry}: does not match its key")
    assert err.count("\n") == 1
    assert first.read_bytes() == again.read_bytes()
    assert json.loads(entry.read_text())["row"]["launch_p99_s"] != 0.001  # written again


@pytest.mark.parametrize(
    ("extra", "replicates"),
    [([], 4), (["--engine", "des"], 4), (["--engine", "analytic"], 17),
     (["--engine", "analytic", "--replicates", "2"], 2), (["--replicates", "6"], 6)],
)  # fmt: skip
def test_replicates_default_per_engine_unless_asked(capsys, monkeypatch, extra, replicates):
    """Issue 30: each point runs its engine's replicates (the simulation 4, the analytic
    engine many more: cohsim.predict.options.REPLICATES); `--replicates N` wins."""
    seen = []

    def stop(points, options):
        seen.append(options)
        raise CohsimError("stop here")

    monkeypatch.setattr(cli_sweep, "run_sweep", stop)
    code, _, _ = run(capsys, "--instances", "r5.metal", "--cache", "off", *extra)
    assert code == 1 and [o.point_run.n_replicates for o in seen] == [replicates]


@pytest.mark.parametrize("workers", ["1", pytest.param("2", marks=pytest.mark.slow, id="dask")])
def test_the_analytic_default_is_in_every_row_and_the_provenance(capsys, workers):
    """Its 17 replicates a point: the same bytes whoever computes the points (3 points: a
    local Dask cluster with 2 workers)."""
    argv = [a for a in FAST if a not in ("--replicates", "1")]
    argv[argv.index("2,4")] = "2,3,4"
    code, out, _ = run(capsys, *argv, "--cache", "off", "--workers", "1", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["provenance"]["replicates"] == 17
    assert [r["replicates"] for r in doc["rows"]] == [17, 17, 17]
    code, again, _ = run(capsys, *argv, "--cache", "off", "--workers", workers, "--json")
    assert code == 0 and again == out
