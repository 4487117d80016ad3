"""`cohsim pause-bench`: tables, JSON with schema and provenance, plots, errors exit 1."""

import json

import pytest

from cohsim.cli.app import main


def test_json_document(capsys):
    assert (
        main(
            [
                "pause-bench",
                "--instance",
                "m7i.metal-24xl",
                "--threads",
                "1,4",
                "--lock",
                "ticket",
                "--acquisitions",
                "100",
                "--json",
                "--seed",
                "3",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == 1 and doc["provenance"]["seed"] == 3
    assert doc["level"] == "level 2: lock hand-off (des)"
    p = doc["points"][1]
    for key in (
        "p50_ns",
        "p99_ns",
        "mean_ns",
        "acquisitions_per_s",
        "spin_fraction",
        "home_queue_mean",
        "home_queue_max",
        "home_requests",
    ):
        assert key in p
    assert [q["threads"] for q in doc["points"]] == [1, 4]


def test_same_seed_same_bytes(capsys):
    argv = [
        "pause-bench",
        "--instance",
        "r5.metal",
        "--threads",
        "2,6",
        "--acquisitions",
        "80",
        "--placement",
        "scatter",
        "--json",
    ]
    main(argv)
    a = capsys.readouterr().out
    main(argv)
    assert capsys.readouterr().out == a


def test_table_markov_and_plot(tmp_path, capsys):
    png = tmp_path / "curve.png"
    assert (
        main(
            [
                "pause-bench",
                "--instance",
                "m7a.24xlarge",
                "--threads",
                "1,8,48",
                "--model",
                "markov",
                "--smt",
                "off",
                "--plot",
                str(png),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "markov" in out and "p50_ns" in out
    assert png.stat().st_size > 1000


@pytest.mark.parametrize(
    "argv,msg",
    [
        (["--threads", "97"], "only 96 CPUs"),
        (["--threads", "2", "--placement", "0,999"], "CPU 999 is out of range"),
        (["--threads", "49", "--smt", "off"], "48 cores"),
    ],
)
def test_errors_one_line_exit_1(argv, msg, capsys):
    assert main(["pause-bench", "--instance", "m7i.metal-24xl", *argv]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0] and err[0].startswith("cohsim: error:")


def test_latency_percentiles_and_run_time(capsys):
    argv = ["pause-bench", "--instance", "m7a.24xlarge", "--threads", "1,8",
            "--acquisitions", "500"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "p90_ns" in out and "p999_ns" in out and "max_ns" in out
    assert "ms simulated" in out and "1000 acquisitions" in out and "s wall" in out
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    for pt in doc["points"]:
        assert pt["p50_ns"] <= pt["p90_ns"] <= pt["p99_ns"] <= pt["p999_ns"] <= pt["max_ns"]
        assert pt["span_ns"] == pytest.approx(pt["acquisitions"] / pt["acquisitions_per_s"] * 1e9,
                                              rel=1e-3)  # fmt: skip
    # simulated_s is written rounded to the nanosecond (cohsim.cli.lock), the spans are not
    spans_s = sum(p["span_ns"] for p in doc["points"]) / 1e9
    assert doc["simulated_s"] == pytest.approx(spans_s, rel=0, abs=0.5e-9)
    assert main([*argv, "--model", "markov", "--json"]) == 0
    chain = json.loads(capsys.readouterr().out)["points"][-1]
    assert chain["max_ns"] is None and chain["p50_ns"] <= chain["p90_ns"] <= chain["p999_ns"]
    assert chain["span_ns"] > 0
