"""calibration/analysis/mount_trace on a committed trace: the figures the trace folders'
READMEs report (common-parent, 2 workers, 1 layer)."""

from __future__ import annotations

from pathlib import Path

from analysis_runner import CP2, REPO, number, run


def test_analyse_splits_the_unmounts_into_cpu_and_sleep() -> None:
    out = run("mount_trace.analyse", CP2)
    assert number(r"umount +n= *(\d+)", out) == 401
    assert number(r"umount +n=.*?wall +([\d.]+)", out) == 50.7
    assert number(r"umount +n=.*?on-CPU +([\d.]+)", out) == 12.9  # with the idle exits put back
    assert number(r"mount_overlay +n=.*?on-CPU +([\d.]+)", out) > 60  # mounts run, unmounts sleep
    assert "MUTEX" in out and "WRITE" in out


def test_gp_spans_counts_the_grace_periods() -> None:
    out = run("mount_trace.gp_spans", CP2)
    assert number(r"(\d+) grace periods", out) == 1070
    assert 5 < number(r"span median ([\d.]+)", out) < 30
    assert "waited through alone" in out


def test_overlap_compares_with_independent_phases() -> None:
    out = run("mount_trace.overlap", CP2)
    assert "overlapping another worker's overlay mount" in out
    assert number(r"period ([\d.]+) us", out) > 100


def test_locks_sums_each_locks_waits_per_sequence() -> None:
    trace = REPO / "calibration/data/devvm-16cpu-intel-xeon-f6m207/mount-trace"
    out = run("mount_trace.locks", trace / "trace-per-layer-16w-10L.txt.xz")
    assert "320 sequences, sequence wall 3215 us" in out  # from the run's CSV beside it
    # the overlay mounts' per-layer clone_private_mount() reads wait most (README there)
    assert number(r"namespace_sem +READ .*? ([\d.]+) us/seq", out) == 655.0
    assert number(r"namespace_sem +WRITE .*? ([\d.]+) us/seq", out) == 498.9
    assert number(r"all locks: (\d+) us/seq", out) == 1504


def test_wakeups_times_the_woken_workers_wait_for_a_busy_cpu() -> None:
    """A burst of 100 one-container workers on 16 vCPUs (README there, "Woken workers wait
    for a CPU"): 38 % of the wake-ups find their CPU running another task and wait a mean
    185 us for it; at 16 workers 6 %, 3 us."""
    trace = REPO / "calibration/data/devvm-16cpu-intel-xeon-f6m207/mount-trace"
    out = run("mount_trace.wakeups", trace / "burst-100/trace-common-parent-100w-50L.txt.xz")
    assert number(r"onto an idle CPU: (\d+)", out) == 7442
    assert number(r"onto a busy one: \d+ \((\d+)%\)", out) == 38
    assert number(r"on a busy CPU: .*?mean (\d+) us", out) == 185
    assert number(r"preempted (\d+)", out) == 386
    out = run("mount_trace.wakeups", trace / "trace-per-layer-16w-10L.txt.xz")
    assert number(r"onto a busy one: \d+ \((\d+)%\)", out) == 6
    assert number(r"on a busy CPU: .*?mean (\d+) us", out) == 3


def test_lockstacks_names_the_locks_by_their_callers() -> None:
    """The 16-worker common-parent burst: overlayfs's trap-inode look-ups wait most, on one
    spinlock (fs/inode.c's inode_hash_lock), from ovl_check_layer (README there)."""
    trace = REPO / "calibration/data/devvm-16cpu-intel-xeon-f6m207/mount-trace/lock-stacks"
    out = run("mount_trace.lockstacks", trace / "lockstacks-common-parent-16w-50L.txt.xz")
    assert number(r"(\d+) contended waits", out) == 46515
    assert number(r"08bb1f46 SPIN +(\d+)", out) == 30258
    assert number(r"(\d+)  ilookup5_nowait < ilookup5 < ovl_lookup_trap_inode", out) == 20594
    assert number(r"(\d+)  pcpu_alloc_noprof < alloc_vfsmnt < clone_mnt < clone_pri", out) == 3499


def test_lockstacks_pairs_each_stack_with_its_cpus_wait(tmp_path: Path) -> None:
    """A stack belongs to the last event of its own CPU; another task's wait, or a stack after
    an unrelated event, is not counted."""
    from calibration.analysis.mount_trace.lockstacks import locks

    head = " mount_bench-11 [001] ...1. 1.000001: "
    lines = [
        head + "contention_begin: 00000000aaaa0001 (flags=SPIN)",
        " mount_bench-12 [002] ...1. 1.000002: contention_begin: 00000000aaaa0002 (flags=SPIN)",
        head + "<stack trace>",
        " => trace_event_raw_event_contention_begin",
        " => __pv_queued_spin_lock_slowpath",
        " => _raw_spin_lock",
        " => inode_insert5",
        " => iget5_locked",
        "          kworker-9 [002] ...1. 1.000003: contention_begin: 00000000aaaa0003 (flags=SPIN)",
        " mount_bench-12 [002] ...1. 1.000004: <stack trace>",
        " => _raw_spin_lock",
        " => xa_erase",
    ]
    p = tmp_path / "t.txt"
    p.write_text("\n".join(lines) + "\n")
    got = locks(p, depth=2)
    assert [(lk.addr, lk.waits, dict(lk.sites)) for lk in got] == [
        ("00000000aaaa0001", 1, {"inode_insert5 < iget5_locked": 1})
    ]
