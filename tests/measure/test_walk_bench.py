"""walk_bench: it builds, refuses bad input in one line, summarises its CSV (the walk against the
same walk without mounters, each mount op against the same mounters without walkers), and (as
root) runs walkers beside mounters and leaves the mount table and its scratch directory as it
found them, interrupted or not; `cohsim bench walk` checks its flags before anything runs."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from benchtools import IS_ROOT, as_nobody, needs_root, run

from cohsim.cli.app import main
from cohsim.measure import programs
from cohsim.measure.walkbench import (
    WALK_COLUMNS,
    WALK_OPS,
    summarize_walk,
    walk_configs,
    walk_expected_runs,
)


def _has_open_tree() -> bool:
    """The kernel has open_tree(2) (x86-64 and every unified-table architecture: 428)."""
    libc = ctypes.CDLL(None, use_errno=True)
    ret = libc.syscall(428, -errno.EBADF, b"", 0)
    return not (ret < 0 and ctypes.get_errno() == errno.ENOSYS)


needs_open_tree = pytest.mark.skipif(
    not _has_open_tree(), reason="the kernel lacks open_tree(2) (Linux >= 5.2)"
)
needs_2_cpus = pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs (one walker, one mounter)"
)
#: a short real run: one walker and one mounter, 2 layers, each configuration 100 ms
SHORT = ["--walkers", "0,1", "--mounters", "0,1", "--layers", "2"]
SHORT += ["--duration-ms", "100", "--warmup-ms", "10", "--repeats", "1"]


def mounted_under(folder: Path) -> list[str]:
    """Lines of this namespace's mount table at or under `folder`: the benchmark mounts in a
    namespace of its own, so there are none (the table's size is no check here: another
    program's automount copied into this namespace can come and go at any time)."""
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    return [ln for ln in lines if ln.split()[4].startswith(str(folder))]


@pytest.fixture(scope="module")
def exe(exes: dict[str, Path]) -> Path:
    return exes["walk"]


# --------------------------------------------------------------------- the program


def test_builds_with_the_system_compiler(exe: Path, cache_env: dict[str, str]) -> None:
    assert exe.is_relative_to(Path(cache_env["XDG_CACHE_HOME"]) / "cohsim" / "bench")
    assert programs.build("walk", env=cache_env) == exe  # cached
    assert run([exe, "--version"]).stdout.strip() == "walk_bench 1"
    assert "usage: walk_bench" in run([exe, "--help"]).stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--walkers", "x"],
        ["--walkers", "-1"],
        ["--walkers", "1,1"],
        ["--mounters", "5000"],
        ["--layers", "0"],
        ["--layers", "501"],
        ["--walk", "sideways"],
        ["--walk", "stat,,openat"],
        ["--walk", "stat,stat"],
        ["--walkers", "0", "--mounters", "0"],
        ["--cpus", "0,0"],
        ["--cpus", "100000"],
        ["--walkers", "4097"],
        ["--duration-ms", "0"],
        ["--repeats", "0"],
        ["--bogus"],
        ["extra"],
    ],
)
def test_bad_arguments_one_line_exit_1(exe: Path, args: list[str]) -> None:
    res = run([exe, *args])
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("walk_bench: error: ")


def test_more_threads_than_cpus_is_an_error(exe: Path) -> None:
    cpus = len(os.sched_getaffinity(0))
    res = run([exe, "--walkers", str(cpus), "--mounters", "1"])
    assert res.returncode == 1 and res.stderr.count("\n") == 1
    assert f"need {cpus + 1} CPUs" in res.stderr and "--oversubscribe" in res.stderr


def test_refuses_non_root(exe: Path) -> None:
    res = run(as_nobody([exe, "--walkers", "1", "--mounters", "0"]))
    assert res.returncode == 1 and res.stderr.count("\n") == 1
    assert res.stderr.startswith("walk_bench: error: must run as root")


# --------------------------------------------------------------------- runs and summary


def test_configs_follow_the_program() -> None:
    args = ["--walkers", "0,2", "--mounters", "0,1,3", "--layers", "1,10", "--walk", "stat,fstat"]
    configs = walk_configs(args)
    # K = 0 once with walk "none" and never with M = 0; M = 0 once with layers 0
    assert configs[:4] == [
        ("none", 0, 1, 1),
        ("none", 0, 1, 10),
        ("none", 0, 3, 1),
        ("none", 0, 3, 10),
    ]
    assert configs[4:9] == [
        ("stat", 2, 0, 0),
        ("stat", 2, 1, 1),
        ("stat", 2, 1, 10),
        ("stat", 2, 3, 1),
        ("stat", 2, 3, 10),
    ]
    assert len(configs) == 4 + 2 * 5
    assert walk_expected_runs(args, 3) == 3 * 14
    assert walk_configs([]) == [("none", 0, 1, 1), ("none", 0, 1, 10), ("stat", 1, 0, 0),
                                ("stat", 1, 1, 1), ("stat", 1, 1, 10)]  # fmt: skip


def _rows(walk: str, k: int, m: int, layers: int, rep: int, **values: float) -> list[str]:
    """CSV lines: each `values` key is ROLE__OP__METRIC."""
    out = []
    for name, v in values.items():
        role, op, metric = name.split("__")
        out.append(f"walk,{walk},{role},{k},{m},{layers},{op},{metric},{v},ns,{rep}")
    return out


FIXTURE = [
    ",".join(WALK_COLUMNS),
    "walk,none,clock,0,0,0,clock,tick_hz,2300000000,Hz,all",
    "walk,none,clock,0,0,0,clock,timer_overhead_ns,20,ns,all",
]
for _rep, _scale in ((0, 1.0), (1, 1.2), (2, 0.9)):
    FIXTURE += _rows("none", 0, 1, 2, _rep, mounter__open_tree__p50_ns=2000 * _scale,
                     mounter__open_tree__mean_ns=2500 * _scale,
                     mounter__open_tree__count=400, mounter__umount2__p50_ns=50000 * _scale,
                     mounter__umount2__mean_ns=60000 * _scale, mounter__umount2__count=400,
                     mounter__run__sequences_per_s=1000)  # fmt: skip
    FIXTURE += _rows("stat", 1, 0, 0, _rep, walker__stat__p50_ns=500 * _scale,
                     walker__stat__p99_ns=900 * _scale, walker__stat__mean_ns=550 * _scale,
                     walker__stat__calls_per_s=1.6e6 / _scale)  # fmt: skip
    FIXTURE += _rows("stat", 1, 1, 2, _rep, walker__stat__p50_ns=600 * _scale,
                     walker__stat__p99_ns=20000 * _scale, walker__stat__mean_ns=1100 * _scale,
                     walker__stat__calls_per_s=0.9e6 / _scale,
                     mounter__open_tree__p50_ns=2400 * _scale,
                     mounter__open_tree__mean_ns=3000 * _scale, mounter__open_tree__count=380,
                     mounter__umount2__p50_ns=55000 * _scale,
                     mounter__umount2__mean_ns=66000 * _scale, mounter__umount2__count=380,
                     mounter__run__sequences_per_s=950)  # fmt: skip
    FIXTURE.append(f"walk,stat,run,1,1,2,mount_table,final,23,mounts,{_rep}")


def test_summary_of_a_fixture() -> None:
    rows = programs._parse_csv("\n".join(FIXTURE) + "\n", "walk", "fixture")
    s = summarize_walk(rows)
    assert (s["tick_hz"], s["timer_overhead_ns"]) == (2.3e9, 20.0)
    base, alone, both = s["configs"]
    assert (base["walk"], base["walkers"], base["mounters"], base["layers"]) == ("none", 0, 1, 2)
    assert base["walk_p50_ns"] is None and base["ops"]["open_tree"]["p50_vs_k0"] == 1.0
    assert alone["ops"] == {} and alone["walk_p50_vs_alone"] is None
    # medians over the three repeats (scales 0.9, 1.0, 1.2 -> 1.0)
    assert alone["walk_p50_ns"] == 500 and alone["walk_calls_per_s"] == 1.6e6
    assert both["repeats"] == 3 and both["walk_p99_ns"] == 20000
    assert both["walk_p50_vs_alone"] == pytest.approx(600 / 500)
    assert both["walk_mean_vs_alone"] == pytest.approx(1100 / 550)
    ot, um = both["ops"]["open_tree"], both["ops"]["umount2"]
    assert (ot["p50_ns"], ot["count"]) == (2400, 380)
    assert ot["p50_vs_k0"] == pytest.approx(1.2) and ot["mean_vs_k0"] == pytest.approx(1.2)
    assert um["p50_vs_k0"] == pytest.approx(1.1)
    # ops the fixture does not have: no figure, no ratio
    assert both["ops"]["mount"]["p50_ns"] is None and both["ops"]["mount"]["p50_vs_k0"] is None
    assert list(both["ops"]) == [*WALK_OPS, "sequence"]
    assert both["sequences_per_s"] == 950


def test_the_summary_prints_a_walker_run_that_timed_no_walk(capsys) -> None:
    """A short run on a busy host can time no walk at all (its figures None): the table says
    so with a dash, not a traceback (CI once met it)."""
    from cohsim.cli.benches.walk import show

    rows = programs._parse_csv("\n".join(FIXTURE) + "\n", "walk", "fixture")
    s = summarize_walk(rows)
    walker = next(c for c in s["configs"] if c["walkers"])
    for key in ("walk_p50_ns", "walk_p99_ns", "walk_calls_per_s", "walk_p50_vs_alone"):
        walker[key] = None
    show(s)
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("stat"))
    assert line.split()[4:7] == ["-", "-", "-"]


def test_ratios_pair_the_runs_of_one_repeat() -> None:
    """A drift of the host between rounds cancels: the baseline's round 1 was disturbed, the
    contended run's was not; round 2 disturbed both. Median of per-round ratios 1.1, where the
    ratio of the medians would say 110 / 300."""
    lines = [",".join(WALK_COLUMNS)]
    for rep, (base, both) in enumerate(((100, 110), (300, 110), (300, 330))):
        lines += _rows("none", 0, 1, 3, rep, mounter__umount2__p50_ns=base)
        lines += _rows("stat", 1, 1, 3, rep, mounter__umount2__p50_ns=both)
    rows = programs._parse_csv("\n".join(lines) + "\n", "walk", "fixture")
    [_, both] = summarize_walk(rows)["configs"]
    assert both["ops"]["umount2"]["p50_ns"] == 110
    assert both["ops"]["umount2"]["p50_vs_k0"] == pytest.approx(1.1)
    # only the rounds asked for: the disturbed round 1 left out
    [_, both] = summarize_walk(rows, repeats={"0", "2"})["configs"]
    assert both["repeats"] == 2 and both["ops"]["umount2"]["p50_vs_k0"] == pytest.approx(1.1)
    assert both["ops"]["umount2"]["p50_ns"] == 220


# --------------------------------------------------------------------- real runs (root)


@needs_root
@needs_open_tree
@needs_2_cpus
def test_walkers_beside_mounters_and_cleanup(exe: Path, tmp_path: Path) -> None:
    res = run([exe, *SHORT, "--walk", "stat,openat,fstat", "--tmpdir", tmp_path])
    assert res.returncode == 0, res.stderr
    assert list(tmp_path.iterdir()) == [] and not mounted_under(tmp_path)
    rows = programs._parse_csv(res.stdout, "walk", "stdout")
    assert {r["repeat"] for r in rows} == {"all", "0"}
    finals = [r for r in rows if r["metric"] == "final"]
    assert len(finals) == walk_expected_runs(SHORT + ["--walk", "stat,openat,fstat"], 1) == 7
    assert {r["value"] for r in rows if r["metric"] in ("baseline", "final")} == {
        finals[0]["value"]
    }
    keys = ("walk", "role", "walkers", "mounters", "op", "metric")
    v = {tuple(r[k] for k in keys): float(r["value"]) for r in rows}
    for walk in ("stat", "openat", "fstat"):
        for m in ("0", "1"):
            key = (walk, "walker", "1", m, walk)
            assert v[(*key, "count")] > 100 and v[(*key, "calls_per_s")] > 1000
            assert 0 < v[(*key, "min_ns")] <= v[(*key, "p50_ns")] <= v[(*key, "p999_ns")]
            assert v[(*key, "p999_ns")] <= v[(*key, "max_ns")]
    for walk, k in (("none", "0"), ("stat", "1")):
        seqs = v[(walk, "mounter", k, "1", "sequence", "count")]
        assert seqs > 0 and v[(walk, "mounter", k, "1", "run", "sequences_per_s")] > 0
        for op in WALK_OPS:  # every op of the sequence, 2 layers: 2 of each per-layer call
            per_seq = 1 if op in ("mount", "umount2_overlay") else 2
            assert v[(walk, "mounter", k, "1", op, "count")] >= per_seq * seqs
            assert v[(walk, "mounter", k, "1", op, "p50_ns")] > 0
    # each role's time off its CPU, per run: waiting runnable (schedstat) and involuntary switches
    for walk, k, m in (("stat", "1", "0"), ("none", "0", "1"), ("stat", "1", "1")):
        for role in ("walker",) * (k == "1") + ("mounter",) * (m == "1"):
            assert v[(walk, role, k, m, "sched", "involuntary_switches")] >= 0
            assert v.get((walk, role, k, m, "sched", "runnable_wait_ms"), 0) >= 0
    summary = summarize_walk(rows)
    [both] = [c for c in summary["configs"] if (c["walk"], c["mounters"]) == ("stat", 1)]
    assert both["walker_involuntary_switches"] is not None
    assert both["ops"]["move_mount"]["p50_vs_k0"] > 0 and both["walk_p50_vs_alone"] > 0
    assert "walk path " in res.stderr and "/walk/a/b/c/f" in res.stderr


@needs_root
@needs_open_tree
@needs_2_cpus
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_cleans_up(exe: Path, tmp_path: Path, sig: int) -> None:
    argv = [exe, "--walkers", "1", "--mounters", "1", "--layers", "20", "--duration-ms", "60000"]
    proc = subprocess.Popen(
        [str(a) for a in [*argv, "--tmpdir", tmp_path]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 10
    while not any(tmp_path.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.5)  # set up, probed, in the middle of a run
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted; all mounts undone and scratch removed" in err
    assert list(tmp_path.iterdir()) == [] and not mounted_under(tmp_path)


# --------------------------------------------------------------------- the cli


def test_cli_usage_errors_exit_2(tmp_path: Path) -> None:
    for args in (
        ["--walkers", "a"],
        ["--walkers", "-1"],
        ["--walkers", "1,01"],
        ["--mounters", "1,x"],
        ["--layers", "0"],
        ["--walk", "sideways"],
        ["--walk", "stat,stat"],
        ["--cpus", "0,0"],
        ["--duration-ms", "0"],
        ["--warmup-ms", "-1"],
        ["--repeats", "0"],
        ["--walkers", "0", "--mounters", "0,0"],
        ["--walkers", "0", "--mounters", "0"],
    ):
        with pytest.raises(SystemExit) as exc:
            main(["bench", "walk", *args, "--out", str(tmp_path / "out"), "--no-progress"])
        assert exc.value.code == 2
    assert not (tmp_path / "out").exists()


def test_cli_no_compiler_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CC", "/nonexistent")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rc = main(["bench", "walk", "--out", str(tmp_path / "out"), "--no-progress"])
    out, err = capsys.readouterr()
    assert rc == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("cohsim: error: no C compiler")
    assert not (tmp_path / "out").exists()


def test_cli_unwritable_out_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("")
    rc = main(["bench", "walk", "--out", str(tmp_path / "file" / "out"), "--no-progress"])
    out, err = capsys.readouterr()
    assert rc == 1 and out == ""
    assert err.count("\n") == 1 and "not a directory" in err


@pytest.fixture
def shared_cache(exe: Path) -> Iterator[Path]:
    """A build cache an ordinary user can read and an output folder it can write, with
    walk_bench already built there (as the tests' own user)."""
    top = Path(tempfile.mkdtemp(prefix="walk-cli-"))
    try:
        top.chmod(0o755)
        env = {**os.environ, "XDG_CACHE_HOME": str(top / "cache")}
        programs.build("walk", env=env)
        for p in (top / "cache", *(top / "cache").rglob("*")):
            p.chmod(0o755)
        (top / "out").mkdir(mode=0o777)
        (top / "out").chmod(0o777)
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_cli_not_root_one_line(
    shared_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["bench", "walk", "--walkers", "1", "--mounters", "0", "--no-progress"]
    args += ["--out", str(shared_cache / "out")]
    if not IS_ROOT:
        monkeypatch.setenv("XDG_CACHE_HOME", str(shared_cache / "cache"))
        rc = main(args)
        out, err = capsys.readouterr()
    else:
        env = {**os.environ, "XDG_CACHE_HOME": str(shared_cache / "cache"), "HOME": "/"}
        res = run(as_nobody([sys.executable, "-m", "cohsim.cli", *args]), env=env, cwd="/")
        if "No module named" in res.stderr or "Permission denied" in res.stderr:
            pytest.skip(f"an ordinary user cannot run this cohsim: {res.stderr.strip()[-200:]}")
        rc, out, err = res.returncode, res.stdout, res.stderr
    assert rc == 1 and out == "", err
    assert err.count("\n") == 1 and err.startswith("cohsim: error: walk_bench: must run as root")
    assert list((shared_cache / "out").iterdir()) == []


@needs_root
@needs_open_tree
@needs_2_cpus
def test_cli_walk_json_and_files(
    tmp_path: Path,
    cache_env: dict[str, str],
    exe: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", cache_env["XDG_CACHE_HOME"])
    out_dir = tmp_path / "out"
    rc = main(["bench", "walk", *SHORT, "--out", str(out_dir), "--no-progress", "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    doc = json.loads(out)
    got = [(c["walk"], c["walkers"], c["mounters"], c["layers"]) for c in doc["summary"]["configs"]]
    assert got == [("none", 0, 1, 2), ("stat", 1, 0, 0), ("stat", 1, 1, 2)]
    assert sorted(p.name for p in out_dir.iterdir()) == ["walk_bench.csv", "walk_bench.json"]
    side = json.loads((out_dir / "walk_bench.json").read_text())
    assert side["bench"] == "walk" and side["csv"]["columns"] == list(WALK_COLUMNS)
    assert side["command"][:3] == ["walk_bench", "--walkers", "0,1"]
    # the human summary: the walk's table and the ops' table with their ratios
    rc = main(["bench", "walk", *SHORT, "--out", str(out_dir), "--no-progress"])
    out, _ = capsys.readouterr()
    assert rc == 0 and "p50/alone" in out and "p50/K=0" in out and "move_mount" in out
    assert out.splitlines()[-1].startswith(f"wrote {out_dir / 'walk_bench.csv'}")
