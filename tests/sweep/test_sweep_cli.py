"""`cohsim sweep` as a user runs it: the files it writes, and bad input as one line, exit 1,
no output file."""

from __future__ import annotations

import csv
import json
from functools import partial

import pytest
from tinygrid import FLAGS, MACHINES

from cohsim.cli import sweep as cli_sweep
from cohsim.cli.app import main
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
