"""`cohsim trace parse|synth`: output contracts, atomic writes, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cohsim.cli.app import main
from cohsim.workload.parse import parse_trace
from cohsim.workload.runtime import runtime_mount_ops

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "calibration" / "data" / "reference" / "trace-format-examples"
DATA = Path(__file__).resolve().parents[1] / "data" / "traces"
PER_LAYER = EXAMPLES / "strace_f_tt_T_containerd_like_per_layer_3layers.txt"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_parse_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, "trace", "parse", str(PER_LAYER), "--json")
    assert (rc, err) == (0, "")
    doc = json.loads(out)
    assert doc["schema"] == 1
    t = doc["trace"]
    assert (t["threads"], t["syscalls"], t["mount_ops"]) == (1, 14, 8)
    assert t["syscalls_by_name"]["umount2"] == 4
    assert t["duration_stats"]["mount"]["p50_ns"] == 71_000
    assert (t["unknown_skipped"], t["malformed_skipped"], t["span_ns"]) == (0, 0, 1_135_000)
    assert doc["provenance"]["input_digests"][PER_LAYER.name].startswith("sha256:")


def test_parse_human_table(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "trace", "parse", str(EXAMPLES / "perf_trace_idmap_bind_2layers.txt"))
    assert rc == 0
    assert "(perf)" in out and "mount_ops 4" in out
    assert any(line.split()[:2] == ["umount2", "2"] for line in out.splitlines())


def test_parse_forced_format(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "trace", "parse", str(DATA / "perf_continued.txt"),
                     "--format", "perf", "--json")  # fmt: skip
    assert rc == 0 and json.loads(out)["trace"]["format"] == "perf"


def test_malformed_line_is_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "truncated_line.strace"
    rc, out, err = run(capsys, "trace", "parse", str(path))
    assert (rc, out) == (1, "")
    assert err.startswith(f"cohsim: error: {path}:3: malformed strace line")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_lenient_counts_malformed(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "trace", "parse", str(DATA / "foreign_text.strace"), "--lenient",
                     "--json")  # fmt: skip
    assert rc == 0
    t = json.loads(out)["trace"]
    assert (t["malformed_skipped"], t["syscalls"]) == (1, 2)


def test_missing_file_is_one_line_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, out, err = run(capsys, "trace", "parse", str(tmp_path / "absent.strace"))
    assert (rc, out) == (1, "")
    where = tmp_path / "absent.strace"
    assert err == f"cohsim: error: {where}: cannot read trace: No such file or directory\n"


def test_synth_writes_parseable_strace(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_file = tmp_path / "sub" / "per-layer.strace"
    out_file.parent.mkdir()  # no folder is made for an output
    rc, out, err = run(
        capsys,
        "trace",
        "synth",
        "--strategy",
        "per-layer",
        "--containers",
        "10",
        "--layers",
        "5",
        "--seed",
        "3",
        "--out",
        str(out_file),
        "--json",
    )
    assert (rc, err) == (0, "")
    doc = json.loads(out)
    assert doc["trace"]["mount_ops"] == 10 * (2 * (1 + 5 + 5) + runtime_mount_ops("runc"))
    assert doc["provenance"]["seed"] == 3
    parsed = parse_trace(out_file)
    assert parsed.format == "strace-tt" and parsed.mount_ops == doc["trace"]["mount_ops"]
    assert [p.name for p in out_file.parent.iterdir()] == ["per-layer.strace"]  # no temp files


def test_synth_same_seed_same_bytes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = [
        "trace",
        "synth",
        "--strategy",
        "lowerdir-plus",
        "--containers",
        "3",
        "--layers",
        "4",
        "--seed",
        "9",
        "--style",
        "ttt",
        "--think-ns",
        "5000",
        "--duration-ns",
        "20000",
    ]
    assert run(capsys, *args, "--out", str(tmp_path / "a"))[0] == 0
    assert run(capsys, *args, "--out", str(tmp_path / "b"))[0] == 0
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()
    assert parse_trace(tmp_path / "a").format == "strace-ttt"


def test_synth_human_output(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, out, _ = run(capsys, "trace", "synth", "--strategy", "common-parent", "--containers",
                     "2", "--layers", "50", "--out", str(tmp_path / "cp"))  # fmt: skip
    assert (
        rc == 0
        and out.startswith(f"wrote {tmp_path / 'cp'}")
        and f"mount_ops {2 * (6 + runtime_mount_ops('runc'))}" in out
    )


def test_synth_bad_value_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A count below 1, as in every command: argparse's usage error, exit 2, nothing written."""
    with pytest.raises(SystemExit) as exc:
        run(capsys, "trace", "synth", "--strategy", "per-layer", "--containers", "0",
            "--out", str(tmp_path / "x"))  # fmt: skip
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert err.splitlines()[-1].endswith("argument --containers: '0' is not a positive integer")
    assert not (tmp_path / "x").exists()


def test_synth_unknown_strategy_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["trace", "synth", "--strategy", "magic", "--out", "x"])
    assert exc.value.code == 2
    capsys.readouterr()


@pytest.mark.parametrize("bad", ['umount2("/var/lib/x\\unts/0", 0)', 'umount2("/p", 08)'])
def test_parse_bad_argument_is_one_line_or_counted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, bad: str
) -> None:
    """issue 30: each was a ValueError traceback, with --lenient too."""
    path = tmp_path / "bad.strace"
    path.write_text(f'1 12:00:00.000001 umount2("/a", 0) = 0\n1 12:00:00.000002 {bad} = 0\n')
    rc, out, err = run(capsys, "trace", "parse", str(path))
    assert (rc, out) == (1, "") and err.count("\n") == 1
    assert err.startswith(f"cohsim: error: {path}:2: malformed strace line")
    rc, out, err = run(capsys, "trace", "parse", str(path), "--lenient", "--json")
    assert rc == 0 and json.loads(out)["trace"]["malformed_skipped"] == 1


def test_synth_unshare_storm(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """--pattern unshare: bare `unshare -m` processes, one thread each, parseable; its own
    flags in the provenance."""
    out_file = tmp_path / "u.strace"
    rc, out, err = run(capsys, "trace", "synth", "--pattern", "unshare", "--processes", "12",
                       "--mountinfo", "--seed", "2", "--out", str(out_file), "--json")  # fmt: skip
    assert (rc, err) == (0, "")
    doc = json.loads(out)
    assert (doc["trace"]["threads"], doc["trace"]["mount_ops"]) == (12, 12)
    assert doc["trace"]["syscalls_by_name"]["unshare"] == 12
    p = doc["provenance"]
    assert (p["pattern"], p["processes"], p["propagation"], p["mountinfo"]) == (
        "unshare", 12, "private", True,
    )  # fmt: skip
    assert parse_trace(out_file).mount_ops == 12


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--pattern", "unshare", "--strategy", "per-layer"], "--strategy: not a flag of"),
        (["--pattern", "unshare", "--runtime", "runc", "--layers", "3"],
         "--runtime, --layers: not a flag of --pattern unshare"),
        (["--strategy", "per-layer", "--processes", "4"], "--processes: not a flag of"),
        (["--strategy", "per-layer", "--mountinfo"], "--mountinfo: not a flag of"),
        ([], "--pattern containerd needs --strategy"),
    ],
)  # fmt: skip
def test_synth_flags_of_the_other_pattern_are_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    """One line, exit 2, nothing written: as a usage error in every command."""
    rc, out, err = run(capsys, "trace", "synth", *argv, "--out", str(tmp_path / "x"))
    assert (rc, out) == (2, "") and err.count("\n") == 1 and message in err
    assert not (tmp_path / "x").exists()


def test_synth_unshare_bad_values(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A count beyond a real node: exit 1, one line; a bad name or count: argparse's 2."""
    rc, _, err = run(capsys, "trace", "synth", "--pattern", "unshare", "--processes",
                     "100001", "--out", str(tmp_path / "x"))  # fmt: skip
    assert rc == 1 and err.count("\n") == 1 and "beyond what a real node can run" in err
    for bad in (["--processes", "0"], ["--propagation", "rprivate"]):
        with pytest.raises(SystemExit) as exc:
            main(["trace", "synth", "--pattern", "unshare", *bad, "--out", str(tmp_path / "x")])
        assert exc.value.code == 2
    capsys.readouterr()
    assert not (tmp_path / "x").exists()
