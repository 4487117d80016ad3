"""ns_bench: it builds, refuses bad input in one line, and (as root) measures the namespace
copy and runc's rslave of it against N mounts, with private copies and with copies that are
peers of the parent's, and leaves the mount table as it found it, interrupted or not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchtools import as_nobody, interrupt, mountinfo_lines, needs_root, run

from cohsim.cli.app import main
from cohsim.measure import programs
from cohsim.measure.nsbench import summarize_ns


@pytest.fixture(scope="module")
def exe(exes: dict[str, Path]) -> Path:
    return exes["ns"]


def test_builds_with_the_system_compiler(exe: Path, cache_env: dict[str, str]) -> None:
    assert exe.is_relative_to(Path(cache_env["XDG_CACHE_HOME"]) / "cohsim" / "bench")
    assert programs.build("ns", env=cache_env) == exe  # cached
    assert run([exe, "--version"]).stdout.strip() == "ns_bench 2"
    assert "usage: ns_bench" in run([exe, "--help"]).stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--mounts", "x"],
        ["--mounts", "-1"],
        ["--mounts", "95000"],
        ["--variant", "sideways"],
        ["--repeats", "0"],
        ["--bogus"],
        ["extra"],
    ],
)
def test_bad_arguments_one_line_exit_1(exe: Path, args: list[str]) -> None:
    res = run([exe, *args])
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("ns_bench: error: ")


def test_refuses_non_root(exe: Path) -> None:
    res = run(as_nobody([exe, "--mounts", "0"]))
    assert res.returncode == 1 and res.stderr.count("\n") == 1
    assert res.stderr.startswith("ns_bench: error: must run as root")


@needs_root
def test_copies_n_mounts_and_cleans_up(exe: Path, tmp_path: Path) -> None:
    before = mountinfo_lines()
    res = run([exe, "--mounts", "0,200", "--repeats", "1", "--tmpdir", tmp_path])
    assert res.returncode == 0, res.stderr
    assert mountinfo_lines() == before and list(tmp_path.iterdir()) == []
    rows = programs._parse_csv(res.stdout, "ns", "stdout")
    got = {(r["variant"], r["mounts"], r["op"], r["metric"], r["repeat"]): r["value"] for r in rows}
    for v in ("newns", "userns", "shared"):
        base = int(got[(v, "0", "mount_table", "after_unshare", "0")])
        # the child's copy holds the whole table: base + scratch + N
        assert int(got[(v, "200", "mount_table", "after_unshare", "0")]) == base + 200
        assert int(got[(v, "200", "mount_table", "parent", "all")]) == base + 200
        assert float(got[(v, "200", "unshare", "p50_ns", "all")]) > 0
        # runc's rslave of the copy, timed in every variant
        assert got[(v, "200", "rslave", "failed", "0")] == "0"
        assert float(got[(v, "200", "rslave", "p50_ns", "all")]) > 0
        # only the shared variant's copies are peers of the parent's mounts, so only they
        # come out of the rslave with a master: the scratch and its 200 binds
        slaves = 201 if v == "shared" else 0
        assert int(got[(v, "200", "mount_table", "master_after_rslave", "0")]) == slaves
        assert int(got[(v, "200", "mount_table", "parent_shared", "all")]) == slaves
    # the shared variant at N = 0 ran before newns at 200: the parent's scratch is private again
    assert int(got[("shared", "0", "mount_table", "parent_shared", "all")]) == 1
    # the scratch is locked in a copy made with a new user namespace; not otherwise
    assert got[("newns", "200", "umount_scratch", "failed", "0")] == "0"
    assert got[("userns", "200", "umount_scratch", "failed", "0")] == "1"
    assert "Invalid argument" in res.stderr
    [cfg] = [
        c for c in summarize_ns(rows)["configs"] if (c["variant"], c["mounts"]) == ("newns", 200)
    ]
    assert cfg["umount_scratch_p50_ns"] > 0 and cfg["exit_p50_ns"] > 0
    assert cfg["rslave_p50_ns"] > 0 and cfg["slave_mounts"] == 0
    [shared] = [
        c for c in summarize_ns(rows)["configs"] if (c["variant"], c["mounts"]) == ("shared", 200)
    ]
    assert shared["slave_mounts"] == 201 and shared["umount_scratch_failed"] == 0


@needs_root
@pytest.mark.parametrize("variant", ["newns,userns", "shared"])
def test_sigterm_cleans_up(exe: Path, tmp_path: Path, variant: str) -> None:
    # shared: interrupted while the parent's scratch is rshared
    before = mountinfo_lines()
    argv: list[str | Path] = [exe, "--mounts", "200", "--variant", variant]
    argv += ["--repeats", "100000", "--tmpdir", tmp_path]
    _, rc, err = interrupt(argv, lambda _: any(tmp_path.iterdir()), 0.3)
    assert rc == 130, err
    assert "interrupted; all mounts undone" in err
    assert list(tmp_path.iterdir()) == [] and mountinfo_lines() == before


@needs_root
def test_cli_ns_json_and_files(
    tmp_path: Path,
    cache_env: dict[str, str],
    exe: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", cache_env["XDG_CACHE_HOME"])
    out_dir = tmp_path / "out"
    argv = ["bench", "ns", "--mounts", "0,100", "--variant", "newns", "--repeats", "1"]
    rc = main([*argv, "--out", str(out_dir), "--no-progress", "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    doc = json.loads(out)
    assert [(c["variant"], c["mounts"]) for c in doc["summary"]["configs"]] == [
        ("newns", 0),
        ("newns", 100),
    ]
    assert sorted(p.name for p in out_dir.iterdir()) == ["ns_bench.csv", "ns_bench.json"]
    side = json.loads((out_dir / "ns_bench.json").read_text())
    assert side["bench"] == "ns" and side["csv"]["columns"] == list(programs.NS_COLUMNS)
    assert side["host"]["kernel_release"]


def test_cli_ns_usage_errors_exit_2(tmp_path: Path) -> None:
    bad = (["--mounts", "a"], ["--variant", "both"], ["--variant", "slave"], ["--repeats", "0"])
    for args in bad:
        with pytest.raises(SystemExit) as exc:
            main(["bench", "ns", *args, "--out", str(tmp_path)])
        assert exc.value.code == 2
