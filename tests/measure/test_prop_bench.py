"""prop_bench: it builds, refuses bad input in one line, and (as root) times a bind mount
propagated into K slave namespaces, mounts and unmounts under a shared mount with a peer ring of
R + 1 mounts (its binds made by the main thread or, --ring-cpus, in turn by threads pinned to
several CPUs) and mountinfo reads at N mounts, and leaves the mount table and the process table
as it found them, interrupted or not."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from benchtools import as_nobody, interrupt, mountinfo_lines, needs_root, run

from cohsim.cli.app import main
from cohsim.measure import programs
from cohsim.measure.propbench import PROP_RING_OPS, prop_expected_runs, summarize_prop

#: two CPUs this process may use (the --ring-cpus tests need two), and one it may not
ALLOWED = sorted(os.sched_getaffinity(0))
TWO_CPUS = ",".join(str(c) for c in ALLOWED[:2])
NOT_ALLOWED = str(ALLOWED[-1] + 1)
RING_HEAD = ["ring", "group", "children", "cpus"]  # `cohsim bench prop`'s ring table
needs_two_cpus = pytest.mark.skipif(len(ALLOWED) < 2, reason="needs two CPUs to run on")


@pytest.fixture(scope="module")
def exe(exes: dict[str, Path]) -> Path:
    return exes["prop"]


def children_of(pid: int) -> list[int]:
    """Live processes whose parent is `pid` (zombies included: they were not reaped)."""
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


def test_builds_with_the_system_compiler(exe: Path, cache_env: dict[str, str]) -> None:
    assert exe.is_relative_to(Path(cache_env["XDG_CACHE_HOME"]) / "cohsim" / "bench")
    assert programs.build("prop", env=cache_env) == exe  # cached
    assert run([exe, "--version"]).stdout.strip() == "prop_bench 2"
    assert "usage: prop_bench" in run([exe, "--help"]).stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--slaves", "x"],
        ["--slaves", "-1"],
        ["--slaves", "5000"],
        ["--mounts", "95000"],
        ["--mounts", "1,,2"],
        ["--peers", "65"],
        ["--ring", "x"],
        ["--ring", "95000"],
        ["--ring-apart"],
        ["--ring-cpus", "0"],
        ["--ring", "1", "--ring-cpus", "x"],
        ["--ring", "1", "--ring-cpus", "0,0"],
        ["--ring", "1", "--ring-cpus", NOT_ALLOWED],
        ["--ring", "1", "--ring-cpus", "1024"],
        ["--repeats", "0"],
        ["--bogus"],
        ["extra"],
    ],
)
def test_bad_arguments_one_line_exit_1(exe: Path, args: list[str]) -> None:
    res = run([exe, *args])
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("prop_bench: error: ")


def test_refuses_non_root(exe: Path) -> None:
    res = run(as_nobody([exe, "--slaves", "0", "--mounts", "0"]))
    assert res.returncode == 1 and res.stderr.count("\n") == 1
    assert res.stderr.startswith("prop_bench: error: must run as root")


def test_expected_runs_counts_every_timed_call() -> None:
    assert prop_expected_runs([], 5) == 2 * 5 * (5 + 3)
    assert prop_expected_runs(["--slaves", "0,3", "--mounts", "7"], 2) == 2 * 2 * 3
    ring = ["--slaves", "0", "--mounts", "0", "--ring", "0,10,20"]
    assert prop_expected_runs(ring, 2) == 2 * 2 * 2 + 8 * 2 * 3


@needs_root
def test_propagates_into_slaves_reads_and_cleans_up(exe: Path, tmp_path: Path) -> None:
    before = mountinfo_lines()
    args = ["--slaves", "0,5", "--mounts", "0,300", "--peers", "1", "--repeats", "2"]
    res = run([exe, *args, "--tmpdir", tmp_path])
    assert res.returncode == 0, res.stderr
    assert mountinfo_lines() == before and list(tmp_path.iterdir()) == []
    assert children_of(os.getpid()) == []
    rows = programs._parse_csv(res.stdout, "prop", "stdout")
    got = {
        (r["op"], r["ns"], r["slaves"], r["mounts"], r["metric"], r["repeat"]): r["value"]
        for r in rows
    }
    # the bind mount showed up in a slave namespace, and went again with its umount
    assert got[("propagation", "slave", "5", "0", "seen", "all")] == "1"
    with_bind = int(got[("propagation", "slave", "5", "0", "mounts_with_bind", "all")])
    assert with_bind == int(got[("propagation", "slave", "5", "0", "mounts_before", "all")]) + 1
    assert (
        with_bind == int(got[("propagation", "slave", "5", "0", "mounts_after_umount", "all")]) + 1
    )
    # the reader's copy of the scratch and its 300 binds are slaves; the host's are shared
    assert got[("mount_table", "slave", "0", "300", "master_lines", "all")] == "301"
    assert got[("mount_table", "host", "0", "300", "shared_lines", "all")] == "301"
    summary = summarize_prop(rows)
    assert [c["slaves"] for c in summary["slaves"]] == [0, 5]
    assert (
        summary["slaves"][1]["seen_in_slave"] == 1 and summary["slaves"][1]["bind_mount_p50_ns"] > 0
    )
    [host, slave] = [c for c in summary["reads"] if c["mounts"] == 300]
    assert (host["ns"], slave["ns"], host["peers"]) == ("host", "slave", 1)
    base = int(got[("mount_table", "host", "0", "0", "mounts", "all")])
    assert host["lines"] == slave["lines"] == base + 300
    assert host["reads"] >= 1 + host["bytes"] // 4096 and slave["read_p50_ns"] > 0


@needs_root
@pytest.mark.parametrize("apart", [False, True])
def test_ring_times_every_op_at_each_ring_size(exe: Path, tmp_path: Path, apart: bool) -> None:
    before = mountinfo_lines()
    args = ["--slaves", "0", "--mounts", "0", "--ring", "0,40", "--repeats", "2"]
    res = run([exe, *args, *(["--ring-apart"] if apart else []), "--tmpdir", tmp_path])
    assert res.returncode == 0, res.stderr
    assert mountinfo_lines() == before and list(tmp_path.iterdir()) == []
    assert children_of(os.getpid()) == []
    rows = programs._parse_csv(res.stdout, "prop", "stdout")
    timed = [(r["op"], r["mounts"], r["repeat"]) for r in rows if r["metric"] == "ns"]
    timed = [t for t in timed if t[0].startswith("ring")]
    # every op of the cycle, in order, for each R and repeat
    assert timed == [(op, n, rep) for n in ("0", "40") for rep in "01" for op in PROP_RING_OPS]
    [zero, forty] = summarize_prop(rows)["ring"]
    # the scratch's peer group: itself and its R binds; they are its children unless apart
    assert (zero["group_mounts"], forty["group_mounts"]) == (1, 41)
    assert forty["children"] == (1 if apart else 40) and zero["children"] == (1 if apart else 0)
    assert all(forty[f"{op}_p50_ns"] > 0 for op in PROP_RING_OPS)
    # the main thread made the binds, on one CPU or (migrated) more
    assert zero["bind_cpus"] == 0 and 1 <= forty["bind_cpus"] <= len(ALLOWED)


@needs_root
@needs_two_cpus
@pytest.mark.parametrize("apart", [False, True])
def test_ring_cpus_interleave_the_binds(exe: Path, tmp_path: Path, apart: bool) -> None:
    """--ring-cpus A,B: bind i by the thread on A (i even) or B (odd); the ring grows, shrinks
    and grows again through the same checks, and every neighbour on it came from the other
    CPU."""
    before = mountinfo_lines()
    args = ["--slaves", "0", "--mounts", "0", "--ring", "0,41,7,40", "--repeats", "1"]
    res = run([exe, *args, "--ring-cpus", TWO_CPUS, *(["--ring-apart"] if apart else [])])
    assert res.returncode == 0, res.stderr
    assert mountinfo_lines() == before and children_of(os.getpid()) == []
    assert f"threads pinned to CPUs {TWO_CPUS}; timed calls on the main thread" in res.stderr
    ring = summarize_prop(programs._parse_csv(res.stdout, "prop", "stdout"))["ring"]
    got = [(c["ring"], c["group_mounts"], c["bind_cpus"], c["bind_cpu_changes"]) for c in ring]
    assert got == [(0, 1, 0, 0), (7, 8, 2, 6), (40, 41, 2, 39), (41, 42, 2, 40)]
    assert [c["children"] for c in ring] == ([1] * 4 if apart else [0, 7, 40, 41])
    assert all(c[f"{op}_p50_ns"] > 0 for c in ring[1:] for op in PROP_RING_OPS)


@needs_root
def test_sigterm_during_the_ring_cleans_up(exe: Path, tmp_path: Path) -> None:
    before = mountinfo_lines()
    argv = [exe, "--slaves", "0", "--mounts", "0", "--ring", "3000", "--repeats", "100000"]

    def ready(proc: subprocess.Popen[str]) -> bool:
        try:
            return len(Path(f"/proc/{proc.pid}/mountinfo").read_text().splitlines()) > 3000
        except OSError:
            return False

    proc, rc, err = interrupt([*argv, "--tmpdir", tmp_path], ready, 0.2)
    assert rc == 130, err
    assert "interrupted; children reaped, all mounts undone" in err
    assert list(tmp_path.iterdir()) == [] and mountinfo_lines() == before


@needs_root
@needs_two_cpus
def test_sigterm_while_the_ring_cpus_threads_bind_cleans_up(exe: Path, tmp_path: Path) -> None:
    before = mountinfo_lines()
    argv = [exe, "--slaves", "0", "--mounts", "0", "--ring", "20000", "--ring-cpus", TWO_CPUS]
    tasks: list[int] = []

    def ready(proc: subprocess.Popen[str]) -> bool:  # mid-way through the binds
        try:
            lines = len(Path(f"/proc/{proc.pid}/mountinfo").read_text().splitlines())
            tasks.append(len(list(Path(f"/proc/{proc.pid}/task").iterdir())))
        except OSError:
            return False
        return lines > 1000

    proc, rc, err = interrupt([*argv, "--repeats", "1", "--tmpdir", tmp_path], ready, 0.1)
    assert rc == 130, err
    assert tasks[-1] == 3  # the main thread and one per CPU
    assert "interrupted; children reaped, all mounts undone" in err
    assert list(tmp_path.iterdir()) == [] and mountinfo_lines() == before


@needs_root
def test_sigterm_cleans_up(exe: Path, tmp_path: Path) -> None:
    before = mountinfo_lines()
    argv = [exe, "--slaves", "20", "--repeats", "100000", "--tmpdir", tmp_path]
    seen: list[int] = []

    def ready(proc: subprocess.Popen[str]) -> bool:
        seen.append(len(children_of(proc.pid)))
        return seen[-1] >= 20

    proc, rc, err = interrupt(argv, ready, 0.2)
    assert seen[-1] == 20
    assert rc == 130, err
    assert "interrupted; children reaped, all mounts undone" in err
    assert list(tmp_path.iterdir()) == [] and mountinfo_lines() == before
    assert children_of(proc.pid) == []


@needs_root
def test_cli_prop_json_and_files(
    tmp_path: Path,
    cache_env: dict[str, str],
    exe: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", cache_env["XDG_CACHE_HOME"])
    out_dir = tmp_path / "out"
    argv = ["bench", "prop", "--slaves", "0,3", "--mounts", "50", "--repeats", "1"]
    rc = main([*argv, "--ring", "0,20", "--out", str(out_dir), "--no-progress", "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    doc = json.loads(out)
    assert [c["slaves"] for c in doc["summary"]["slaves"]] == [0, 3]
    assert [(c["mounts"], c["ns"]) for c in doc["summary"]["reads"]] == [
        (50, "host"),
        (50, "slave"),
    ]
    assert [(c["ring"], c["group_mounts"]) for c in doc["summary"]["ring"]] == [(0, 1), (20, 21)]
    assert sorted(p.name for p in out_dir.iterdir()) == ["prop_bench.csv", "prop_bench.json"]
    side = json.loads((out_dir / "prop_bench.json").read_text())
    assert side["bench"] == "prop" and side["csv"]["columns"] == list(programs.PROP_COLUMNS)
    assert side["host"]["kernel_release"]
    assert "--ring-cpus" not in side["command"]


@needs_root
@needs_two_cpus
def test_cli_prop_ring_cpus_recorded(
    tmp_path: Path,
    cache_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", cache_env["XDG_CACHE_HOME"])
    argv = ["bench", "prop", "--slaves", "0", "--mounts", "0", "--ring", "10", "--repeats", "1"]
    rc = main([*argv, "--ring-cpus", TWO_CPUS, "--out", str(tmp_path), "--no-progress"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:4] == RING_HEAD)
    assert lines[header + 1].split()[:4] == ["10", "11", "10", "2"]
    side = json.loads((tmp_path / "prop_bench.json").read_text())
    assert side["command"][-2:] == ["--ring-cpus", TWO_CPUS]
    assert any(f"threads pinned to CPUs {TWO_CPUS}" in line for line in side["info"])
    [ring] = summarize_prop(programs.read_bench_csv(tmp_path / "prop_bench.csv", "prop"))["ring"]
    assert (ring["bind_cpus"], ring["bind_cpu_changes"]) == (2, 9)


def test_cli_prop_usage_errors_exit_2(tmp_path: Path) -> None:
    for args in (
        ["--slaves", "a"],
        ["--mounts", "-3"],
        ["--peers", "-1"],
        ["--repeats", "0"],
        ["--ring", "-1"],
        ["--ring-cpus", "0"],
        ["--ring", "1", "--ring-cpus", "0,0"],
        ["--ring", "1", "--ring-cpus", "x"],
        ["--ring", "1", "--ring-cpus", NOT_ALLOWED],
    ):
        with pytest.raises(SystemExit) as exc:
            main(["bench", "prop", *args, "--out", str(tmp_path)])
        assert exc.value.code == 2
