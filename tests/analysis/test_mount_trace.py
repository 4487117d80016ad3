"""calibration/analysis/mount_trace on a committed trace: the figures the trace folders'
READMEs report (common-parent, 2 workers, 1 layer)."""

from __future__ import annotations

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
