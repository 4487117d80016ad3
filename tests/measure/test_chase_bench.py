"""chase_bench: it builds, refuses bad input in one line, chases a random cycle that one seed
always makes the same, finds a 64 MB set slower than a 16 KB one, summarises its CSV per mode
and size (median, min and max over the repeats); `cohsim bench chase` checks its flags before
anything runs, writes the CSV and its sidecar, and nothing when the program fails."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from benchtools import run

from cohsim.cli.app import main
from cohsim.errors import CohsimError
from cohsim.measure import programs
from cohsim.measure.chasebench import (
    CHASE_COLUMNS,
    CHASE_DONE_METRIC,
    chase_expected_runs,
    parse_size,
    parse_sizes,
    summarize_chase,
)

ALLOWED = sorted(os.sched_getaffinity(0))
#: the reader's and the writer's CPU: the first two this process may use
CPUS = ",".join(str(c) for c in ALLOWED[:2])
needs_2_cpus = pytest.mark.skipif(len(ALLOWED) < 2, reason="needs 2 CPUs (reader and writer)")
#: a short real run: each measurement 2 ms
FAST = ["--repeats", "1", "--min-ms", "2", "--cpus", CPUS]


@pytest.fixture(scope="module")
def exe(exes: dict[str, Path]) -> Path:
    return exes["chase"]


def values(rows: list[dict[str, str]]) -> dict[tuple[str, ...], float]:
    keys = ("mode", "size_bytes", "metric", "repeat")
    return {tuple(r[k] for k in keys): float(r["value"]) for r in rows}


# --------------------------------------------------------------------- the program


def test_builds_with_the_system_compiler(exe: Path, cache_env: dict[str, str]) -> None:
    assert exe.is_relative_to(Path(cache_env["XDG_CACHE_HOME"]) / "cohsim" / "bench")
    assert programs.build("chase", env=cache_env) == exe  # cached
    assert run([exe, "--version"]).stdout.strip() == "chase_bench 1"
    assert "usage: chase_bench" in run([exe, "--help"]).stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--sizes", "-16K"],
        ["--sizes", "16K,-1M"],
        ["--sizes", "0"],
        ["--sizes", "100"],  # not a whole number of 64-byte nodes
        ["--sizes", "64"],  # one node: no cycle to chase
        ["--sizes", "1.3M"],
        ["--sizes", "1e6"],
        ["--sizes", "16KB"],
        ["--sizes", "16K,,32K"],
        ["--sizes", "16K,16K"],
        ["--sizes", "65G"],
        ["--mode", "sideways"],
        ["--mode", "local,local"],
        ["--mode", ""],
        ["--cpus", "0"],
        ["--cpus", "0,0"],
        ["--cpus", "0,100000"],
        ["--seed", "-1"],
        ["--min-ms", "0"],
        ["--repeats", "0"],
        ["--pages", "tiny"],
        ["--bogus"],
        ["extra"],
    ],
)
def test_bad_arguments_one_line_exit_1(exe: Path, args: list[str]) -> None:
    res = run([exe, *args])
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("chase_bench: error: ")


#: a writer's CPU this process may not use (the reader's is allowed)
OFF_CPUS = f"{ALLOWED[0]},{ALLOWED[-1] + 1}"


def test_the_writers_cpu_matters_only_for_remote(exe: Path) -> None:
    res = run([exe, "--sizes", "16K", "--mode", "local", *FAST[:-2], "--cpus", OFF_CPUS])
    assert res.returncode == 0, res.stderr
    res = run([exe, "--sizes", "16K", "--mode", "remote", "--cpus", OFF_CPUS])
    assert res.returncode == 1 and res.stderr.count("\n") == 1
    assert f"CPU {ALLOWED[-1] + 1} is not online or not allowed" in res.stderr


@needs_2_cpus
def test_a_short_run_local_and_remote(exe: Path) -> None:
    res = run([exe, "--sizes", "16K,64M", "--mode", "local,remote", *FAST])
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0] == ",".join(CHASE_COLUMNS)
    rows = programs._parse_csv(res.stdout, "chase", "stdout")
    v = values(rows)
    assert (
        v[("clock", "0", "tick_hz", "all")] > 0
        and v[("clock", "0", "timer_overhead_ns", "all")] > 0
    )
    done = [r for r in rows if r["metric"] == CHASE_DONE_METRIC]
    assert [(r["mode"], r["size_bytes"]) for r in done] == [
        ("local", "16384"), ("remote", "16384"), ("local", "67108864"), ("remote", "67108864")
    ]  # fmt: skip
    assert len(done) == chase_expected_runs(["--sizes", "16K,64M"], 1)
    for size in (16384, 67108864):
        nodes = size // 64
        assert v[("set", str(size), "nodes", "0")] == nodes
        assert v[("set", str(size), "anon_huge_kb", "0")] >= 0
        for mode in ("local", "remote"):
            key = (mode, str(size))
            assert v[(*key, "ns_per_load", "0")] > 0
            loads, passes = v[(*key, "loads", "0")], v[(*key, "passes", "0")]
            assert loads == passes * nodes and passes >= 1  # whole passes over the cycle
            assert v[(*key, "timed_ms", "0")] >= 2  # --min-ms: passes until they add up to it
    # the physics: a set far beyond every cache level is slower per load than one in L1
    assert (
        v[("local", "67108864", "ns_per_load", "0")] > 4 * v[("local", "16384", "ns_per_load", "0")]
    )
    assert "thp enabled " in res.stderr and "pages small" in res.stderr


def test_one_seed_one_cycle(exe: Path) -> None:
    def digests(seed: str) -> list[float]:
        args = ["--sizes", "16K,1M", "--mode", "local", *FAST[:-2], "--seed", seed]
        res = run([exe, *args, "--cpus", OFF_CPUS])
        assert res.returncode == 0, res.stderr
        return [float(r["value"]) for r in programs._parse_csv(res.stdout, "chase", "stdout")
                if r["metric"] == "cycle_digest"]  # fmt: skip

    assert digests("7") == digests("7") != digests("8")
    assert len(set(digests("7"))) == 2  # each size its own cycle


def test_pages_are_asked_for_and_reported(exe: Path) -> None:
    """Small pages are MADV_NOHUGEPAGE: none, whatever the host's THP setting; huge pages are
    advice (the kernel may have none to give), so only the row is checked."""
    for pages in ("small", "huge"):
        res = run([exe, "--sizes", "4M", "--mode", "local", *FAST[:-2], "--pages", pages])
        assert res.returncode == 0, res.stderr
        kb = values(programs._parse_csv(res.stdout, "chase", "stdout"))[
            ("set", "4194304", "anon_huge_kb", "0")
        ]
        assert kb == 0 if pages == "small" else 0 <= kb <= 4096
        assert f"pages {pages}" in res.stderr


# --------------------------------------------------------------------- sizes, runs and summary


def test_sizes_parse_as_the_program_does() -> None:
    assert parse_sizes("16K,1.5M,2G,4096") == [16384, 1572864, 2 << 30, 4096]
    assert parse_size("1.5m") == 1572864
    for bad in ("-16K", "16KB", "1e6", "100", "64", "1.3M", "65G", "", "0x40"):
        with pytest.raises(CohsimError):
            parse_size(bad)
    with pytest.raises(CohsimError, match="given twice"):
        parse_sizes("16K,16384")


def test_expected_runs() -> None:
    assert chase_expected_runs([], 7) == 7 * 18 * 2
    assert chase_expected_runs(["--sizes", "16K,1M,64M", "--mode", "remote"], 3) == 9


FIXTURE = [
    ",".join(CHASE_COLUMNS),
    "chase,clock,0,tick_hz,2300000000,Hz,all",
    "chase,clock,0,timer_overhead_ns,20,ns,all",
]
for _rep, _scale in ((0, 1.0), (1, 1.2), (2, 0.9)):
    for _size, _local, _remote in ((16384, 1.7, 75.0), (67108864, 150.0, 155.0)):
        FIXTURE += [
            f"chase,set,{_size},nodes,{_size // 64},count,{_rep}",
            f"chase,set,{_size},anon_huge_kb,{2048 * _rep},kB,{_rep}",
        ]
        for _mode, _ns in (("local", _local), ("remote", _remote)):
            FIXTURE += [
                f"chase,{_mode},{_size},loads,{1000 * (_rep + 1)},count,{_rep}",
                f"chase,{_mode},{_size},ns_per_load,{_ns * _scale},ns,{_rep}",
            ]


def test_summary_of_a_fixture() -> None:
    rows = programs._parse_csv("\n".join(FIXTURE) + "\n", "chase", "fixture")
    s = summarize_chase(rows)
    assert (s["tick_hz"], s["timer_overhead_ns"]) == (2.3e9, 20.0)
    got = [(c["mode"], c["size_bytes"]) for c in s["configs"]]
    assert got == [("local", 16384), ("remote", 16384), ("local", 67108864), ("remote", 67108864)]
    big = s["configs"][2]
    assert big["repeats"] == 3 and big["loads"] == 2000
    assert big["ns_per_load"] == pytest.approx(150.0)  # median of 135, 150, 180
    assert (big["ns_per_load_min"], big["ns_per_load_max"]) == pytest.approx((135.0, 180.0))
    assert big["ticks_per_load"] == pytest.approx(150.0 * 2.3)
    assert big["anon_huge_kb"] == 4096
    assert programs.summarize("chase", rows) == s


# --------------------------------------------------------------------- the cli


def test_cli_usage_errors_exit_2(tmp_path: Path) -> None:
    for args in (
        ["--sizes=-16K"],
        ["--sizes", "100"],
        ["--sizes", "16K,16K"],
        ["--mode", "sideways"],
        ["--mode", "local,local"],
        ["--cpus", "0,0"],
        ["--cpus", "0"],
        ["--seed", "-1"],
        ["--min-ms", "0"],
        ["--repeats", "0"],
        ["--pages", "tiny"],
    ):
        with pytest.raises(SystemExit) as exc:
            main(["bench", "chase", *args, "--out", str(tmp_path / "out"), "--no-progress"])
        assert exc.value.code == 2
    assert not (tmp_path / "out").exists()


def test_cli_no_compiler_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CC", "/nonexistent")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rc = main(["bench", "chase", "--out", str(tmp_path / "out"), "--no-progress"])
    out, err = capsys.readouterr()
    assert rc == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("cohsim: error: no C compiler")
    assert not (tmp_path / "out").exists()


def test_cli_unwritable_out_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("")
    rc = main(["bench", "chase", "--out", str(tmp_path / "file" / "out"), "--no-progress"])
    out, err = capsys.readouterr()
    assert rc == 1 and out == ""
    assert err.count("\n") == 1 and "not a directory" in err


def test_cli_program_error_one_line_writes_nothing(
    tmp_path: Path,
    cache_env: dict[str, str],
    exe: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A CPU the flags' check cannot know is offline: the program's one line, no files."""
    monkeypatch.setenv("XDG_CACHE_HOME", cache_env["XDG_CACHE_HOME"])
    out_dir = tmp_path / "out"
    rc = main(["bench", "chase", "--sizes", "16K", "--cpus", OFF_CPUS, "--out", str(out_dir),
               "--no-progress"])  # fmt: skip
    out, err = capsys.readouterr()
    assert rc == 1 and out == ""
    assert err.count("\n") == 1 and "not online or not allowed" in err
    assert not out_dir.exists() or list(out_dir.iterdir()) == []


@needs_2_cpus
def test_cli_chase_json_and_files(
    tmp_path: Path,
    cache_env: dict[str, str],
    exe: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", cache_env["XDG_CACHE_HOME"])
    out_dir = tmp_path / "out"
    args = ["bench", "chase", "--sizes", "16K,32K", *FAST, "--out", str(out_dir), "--no-progress"]
    rc = main([*args, "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    doc = json.loads(out)
    got = [(c["mode"], c["size_bytes"]) for c in doc["summary"]["configs"]]
    assert got == [("local", 16384), ("remote", 16384), ("local", 32768), ("remote", 32768)]
    assert all(c["ns_per_load"] > 0 and c["repeats"] == 1 for c in doc["summary"]["configs"])
    assert sorted(p.name for p in out_dir.iterdir()) == ["chase_bench.csv", "chase_bench.json"]
    side = json.loads((out_dir / "chase_bench.json").read_text())
    assert side["bench"] == "chase" and side["csv"]["columns"] == list(CHASE_COLUMNS)
    assert side["command"][:3] == ["chase_bench", "--sizes", "16K,32K"]
    assert "--seed" in side["command"] and "--pages" in side["command"]
    assert any("thp enabled" in line for line in side["info"])  # the host's THP setting
    # the human summary: one line per mode and size
    rc = main(args)
    out, _ = capsys.readouterr()
    assert rc == 0 and "ns/load" in out and "remote" in out and "32K" in out
    assert out.splitlines()[-1].startswith(f"wrote {out_dir / 'chase_bench.csv'}")


# --------------------------------------------------------------------- the committed data

DATA = Path(__file__).resolve().parents[2] / "calibration/data/devvm-2cpu-intel-xeon-f6m207/chase"


def test_committed_data_is_whole_and_documented() -> None:
    """Three runs of every size and mode, 7 repeats each; the same seed made the same cycle in
    all three (the digests agree); the README gives the command and the index names it."""
    digests = []
    for sub in ("", "repeat", "huge"):
        rows = programs.read_bench_csv(DATA / sub / "chase_bench.csv", "chase")
        s = summarize_chase(rows)
        assert len(s["configs"]) == 18 * 2 and {c["repeats"] for c in s["configs"]} == {7}
        assert all(c["ns_per_load"] > 0 for c in s["configs"])
        side = json.loads((DATA / sub / "chase_bench.json").read_text())
        assert side["bench"] == "chase" and side["csv"]["rows"] == len(rows)
        pages = side["command"][side["command"].index("--pages") + 1]
        assert pages == ("huge" if sub == "huge" else "small")
        digests.append(sorted((r["size_bytes"], r["value"]) for r in rows
                              if r["metric"] == "cycle_digest"))  # fmt: skip
    assert digests[0] == digests[1] == digests[2]
    readme = (DATA / "README.md").read_text()
    assert "cohsim bench chase --sizes $SIZES --mode local,remote --repeats 7 --cpus 0,1" in readme
    assert "## Against the peer walk" in readme
    assert "| `chase/` |" in (DATA.parent / "README.md").read_text()
