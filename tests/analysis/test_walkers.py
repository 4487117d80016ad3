"""calibration/analysis/walkers on the committed recordings: its output is the committed
summary.txt, the README quotes its headline numbers, the counts hold together across the ways
they were recorded, and the walk-counting rules say what Linux 6.18 does."""

from __future__ import annotations

import re

import pytest
from analysis_runner import REPO, number, run

DATA = REPO / "calibration/data/devvm-2cpu-intel-xeon-f6m207/walkers"


@pytest.fixture(scope="module")
def out() -> str:
    return run("walkers.summary")


def _overview(out: str) -> dict[str, list[float]]:
    """workload -> the per-workload row's numbers (walks .. CPU ms)."""
    block = out.split("== per workload")[1].split("\n\n")[0]
    rows = {}
    for line in block.splitlines()[3:]:
        f = line.split()
        rows[f[0]] = [float(x) for x in f[2:]]
    return rows


def test_summary_is_committed(out: str) -> None:
    assert out == (DATA / "summary.txt").read_text()


def test_readme_quotes_the_headline(out: str) -> None:
    readme = (DATA / "README.md").read_text()
    rows = _overview(out)
    true = rows["true"]
    # walks per start and runc's share, CPU ms, as the README's headline table has them
    assert f"| `true` | {true[0]:.0f} | {true[1]:.0f} |" in readme
    probe = number(r"runc exec .*\n   walks: .*, all (\d+)", out)
    assert f"| `runc exec probe /bin/true` | {probe:.0f} |" in readme


def test_counts_agree_across_recordings(out: str) -> None:
    rows = _overview(out)
    for w, (
        _walks,
        _runc,
        _entry,
        _tear,
        before,
        after,
        path,
        c_calls,
        perf_calls,
        cpu,
    ) in rows.items():
        # strace -tt, strace -c and perf's tracepoints count the same path calls (within 1 %)
        assert abs(path - c_calls) <= 0.01 * path, w
        assert abs(path - perf_calls) <= 0.01 * path, w
        assert cpu > 10
        assert before > after or w == "deb-python"
    # runc's own share does not depend on the entrypoint, nor on the rootfs (within 1 %)
    base = rows["true"][1]
    for w in ("bb-script", "deb-true", "deb-script", "deb-python"):
        assert abs(rows[w][1] - base) <= 0.01 * base, w
    assert rows["true-userns"][1] > base  # the device binds and the second unshare
    entry = {w: r[2] for w, r in rows.items()}
    assert entry["true"] <= 3 < entry["deb-true"] < entry["bb-script"] < entry["deb-script"]
    assert entry["deb-script"] < entry["deb-python"]


def test_phases_are_in_order(out: str) -> None:
    m = re.search(r"in time order: (\d+)/(\d+) strace logs, (\d+)/(\d+) perf", out)
    ok_s, all_s, ok_p, all_p = map(int, m.groups())
    assert (ok_s, ok_p) == (all_s, all_p) == (30, 42)


def test_init2_walks_around_its_mounts(out: str) -> None:
    """runc's container init walks ~10 paths per mount it makes (securejoin of each target),
    and does most of runc's walking while it mounts."""
    block = out.split("== true:")[1].split("\n\n")[0]
    init2 = [int(x) for x in re.search(r"^init2 +(.*)$", block, re.M).group(1).split()]
    ns, pivot, total = init2[2], init2[3], init2[-1]
    assert (ns + pivot) / total > 0.9
    assert 400 < ns + pivot < 600


def test_containerd(out: str) -> None:
    block = out.split("== containerd bb1")[1]
    start = number(r"(?m)^all +(?:\d+ +){6}(\d+)", block.split("== containerd bb5")[0])
    assert 800 < start < 1200
    # containerd 1.6 itself mounts nothing for ctr run: the shim mounts the overlay, whose
    # lowerdirs it walks (one more per layer)
    assert "shim rootfs mount 4: 5" in block and "shim rootfs mount 8: 5" in block
    assert number(r"per extra image layer.*\n.*all ([+-][\d.]+)", out) == pytest.approx(
        1.0, abs=0.5
    )
    # every call of containerd's logs is attributed to a process kind
    assert not re.search(r"(?m)^other ", block)


@pytest.mark.parametrize(
    "name, args, expected",
    [
        ("newfstatat", '6, "", {st_mode=S_IFDIR}, AT_EMPTY_PATH', []),
        ("newfstatat", 'AT_FDCWD, "", 0xc00019a2a8, 0', []),
        ("newfstatat", 'AT_FDCWD, "/sys", {st_mode=S_IFDIR}, AT_SYMLINK_NOFOLLOW', ["newfstatat"]),
        (
            "execveat",
            '6, "", ["runc", "init"], 0x1 /* 8 vars */, AT_EMPTY_PATH',
            ["execveat:empty"],
        ),
        ("openat", 'AT_FDCWD, "rel/a, b", O_RDONLY', ["openat"]),
        ("utimensat", "3, NULL, NULL, 0", []),
        ("renameat", 'AT_FDCWD, "/a", AT_FDCWD, "/b"', ["renameat", "renameat"]),
        ("pivot_root", '".", "."', ["pivot_root", "pivot_root"]),
        (
            "mount",
            '"/proc/bus", "/proc/bus", 0xc0, MS_BIND|MS_REC, NULL',
            ["mount", "mount:source"],
        ),
        ("mount", '"", "/", 0xc0, MS_REC|MS_SLAVE, NULL', ["mount"]),
        (
            "mount",
            '"overlay", "/r", "overlay", 0, "index=off,workdir=/w,upperdir=/u,lowerdir=/1:/2:/3"',
            ["mount"] + ["mount:overlay-dir"] * 5,
        ),
        (
            "move_mount",
            '3, "", AT_FDCWD, "/t", MOVE_MOUNT_F_EMPTY_PATH',
            ["move_mount"],
        ),
        ("open_tree", 'AT_FDCWD, "/l", OPEN_TREE_CLONE|OPEN_TREE_CLOEXEC', ["open_tree"]),
        (
            "mount_setattr",
            '3, "", AT_EMPTY_PATH, {attr_set=MOUNT_ATTR_IDMAP}, 32',
            ["mount_setattr:empty"],
        ),
        ("connect", '3, {sa_family=AF_UNIX, sun_path="/run/x.sock"}, 110', ["connect"]),
        ("connect", '3, {sa_family=AF_UNIX, sun_path=@"abstract"}, 12', []),
        ("read", '3, "x", 4096', []),
    ],
)
def test_walk_rules(name: str, args: str, expected: list[str]) -> None:
    assert run("walkers.walks", name, args).split() == expected
