"""`cohsim machines`, `show`, `c2c` as a user runs them: output contracts and bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import C2C_DIR

from cohsim.cli.app import main
from cohsim.cli.machine import TABLE_COLUMNS

C5 = str(C2C_DIR / "aws_c5.metal_xeon-8275CL_2s.csv")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_machines_json_lists_the_catalog(capsys):
    code, out, _ = run(capsys, "machines", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == 1
    instances = [m for m in doc["machines"] if m["kind"] == "instance"]
    assert len(instances) >= 29
    assert {*TABLE_COLUMNS, "source"} <= set(doc["machines"][0])


def test_machines_table(capsys):
    code, out, _ = run(capsys, "machines")
    assert code == 0 and "m7a.24xlarge" in out
    assert out.splitlines()[0].split() == list(TABLE_COLUMNS)


def test_show_json_and_plot(capsys, tmp_path):
    png = tmp_path / "topo.png"
    code, out, _ = run(capsys, "show", "m7a.24xlarge", "--json", "--plot", str(png))
    doc = json.loads(out)["machine"]
    assert code == 0 and doc["llc_domains"] == 12 and doc["vcpus"] == 96
    assert doc["caches"] == {"l2_kib": 1024.0, "l2_load_ns": 3.78, "llc_load_ns": 13.51}
    assert png.read_bytes().startswith(b"\x89PNG")


def test_show_says_the_caches_where_known(capsys):
    _, out, _ = run(capsys, "show", "m7i.metal-24xl")
    assert "  L2 2048 KiB, a load 4.4 ns; a last-level cache load 37 ns" in out.splitlines()
    _, out, _ = run(capsys, "show", "devvm-2cpu-intel-xeon-f6m167")
    assert "last-level cache" not in out


def test_c2c_vs_matrix_json(capsys):
    code, out, _ = run(capsys, "c2c", "c5.metal", "--vs", C5, "--json")
    doc = json.loads(out)
    assert code == 0
    assert doc["median_abs_pct_error"] < 15
    assert set(doc["classes"]) == {"smt", "same_llc", "cross_socket"}
    assert {"model_ns", "measured_median_ns", "pct_error", "pairs"} <= set(doc["classes"]["smt"])
    assert doc["provenance"]["input_digests"]


def test_c2c_fit_is_deterministic(capsys):
    outs = [run(capsys, "c2c", "c5.metal", "--vs", C5, "--fit", "--json")[1] for _ in range(2)]
    assert outs[0] == outs[1]
    doc = json.loads(outs[0])
    assert doc["fitted_coherence_ns"]["cross_socket_ns"] == pytest.approx(134.1, abs=0.5)


def test_c2c_plot_side_by_side(capsys, tmp_path):
    png = tmp_path / "c2c.png"
    code, out, _ = run(capsys, "c2c", "c5.metal", "--vs", C5, "--plot", str(png))
    assert code == 0 and png.stat().st_size > 1000 and "per-pair median" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["show", "m7i.metl-24xl"],
            "unknown instance 'm7i.metl-24xl'; did you mean m7i.metal-24xl",
        ),
        (["c2c", "c5.metal", "--vs", "/nonexistent.csv"], "/nonexistent.csv: no such file"),
        (["c2c", "c5.metal", "--fit"], "--fit needs a measured matrix"),
        (["c2c", "c5.metal", "--vs", C5, "--home", "socket7"], "home socket 7 is out of range"),
        (["c2c", "c6gd.metal", "--vs", C5], "the matrix has 96 CPUs but c6gd.metal has only 64"),
        (["show", "c5.metal", "--plot", "x.gif"], "plot file must end in"),
    ],
)
def test_bad_input_is_one_line_exit_1(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_bad_matrix_file(capsys, tmp_path):
    bad = tmp_path / "ragged.csv"
    bad.write_text(",,\n1,,\n2,3\n")
    code, _, err = run(capsys, "c2c", "c5.metal", "--vs", str(bad))
    assert code == 1 and f"{bad}:3: row has 2 fields" in err


def test_console_script_usage_error_exits_2():
    r = subprocess.run([sys.executable, "-m", "cohsim.cli", "c2c"], capture_output=True, text=True)
    assert r.returncode == 2 and "usage" in r.stderr
