"""calibration/analysis/sleep_stacks on committed traces: sleeps named by their stacks, the
vCPUs' use, woken waits, co-run and interrupts (common-parent, 2 workers, 1 layer)."""

from __future__ import annotations

from analysis_runner import CP2, TRACES, number, run

STACKS = TRACES / "sleep-stacks"


def test_sleep_stacks_names_every_wait() -> None:
    out = run("sleep_stacks.sleep_stacks", STACKS / "stacks-common-parent-2w-1L.txt.xz")
    assert number(r"(\d+) sequences", out) == 400
    assert number(r"grace periods ([\d.]+)", out) > 10
    assert number(r"other ([\d.]+)", out) < 1  # no unnamed sleep
    assert "exp_mutex, umount2" in out


def test_cpu_use_splits_the_vcpus_time() -> None:
    out = run("sleep_stacks.cpu_use", CP2)
    shares = [number(rf"{what} (\d+) %", out) for what in ("workers", "idle", "kthread", "tasks")]
    assert 95 <= sum(shares) <= 105
    assert number(r"worker CPU time (\d+) us a sequence", out) > 50


def test_woken_wait_groups_the_wake_ups() -> None:
    out = run("sleep_stacks.woken_wait", CP2)
    assert number(r"onto an idle vCPU, ran first: n=(\d+)", out) > 1000
    assert number(r"onto an idle vCPU, ran first: n=\d+ mean [\d.]+ median ([\d.]+)", out) <= 2


def test_corun_overlay_mounts_run_slower_beside_another_worker() -> None:
    out = run("sleep_stacks.corun", CP2)
    alone = number(r"mount_overlay +alone ([\d.]+)", out)
    assert number(r"all co-run ([\d.]+)", out) > 1.2 * alone


def test_irqs_counts_the_interrupts() -> None:
    out = run("sleep_stacks.irqs", STACKS / "irqs/irqs-common-parent-2w-1L.txt.xz")
    assert number(r"call_function_single ([\d.]+)", out) > 0
    assert "overlay mount, co-run > half" in out
