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


BURST = TRACES.parents[1] / "devvm-16cpu-intel-xeon-f6m207/mount-trace/burst-100/sleep-stacks"


def test_sites_names_where_a_bursts_workers_sleep() -> None:
    """100 one-container workers, common-parent x 50 layers: the overlays' per-layer clones
    sleep for namespace_sem's read side most, and the per-CPU allocator's mutex is taken
    inside those clones (alloc_vfsmnt under clone_private_mount: within the read hold)."""
    out = run("sleep_stacks.sites", BURST / "stacks-common-parent-100w-50L.txt.xz", "--top", "3")
    assert number(r"(\d+) sleeps of mount_bench tasks", out) == 13836
    top = number(r"\n +(\d+)  rwsem_down_read_slowpath < down_read < clone_private_mount", out)
    assert top == 7428
    inside = r"(\d+)  pcpu_alloc_noprof < alloc_vfsmnt < clone_mnt < clone_private_mount"
    assert number(inside, out) == 498
