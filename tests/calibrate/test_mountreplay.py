"""mountreplay: mount_bench's calls as a simulated trace, and a simulated mount_bench run."""

from __future__ import annotations

import pytest

from cohsim.calibrate.mountreplay import bench_kernel, mount_bench_trace, simulate_run
from cohsim.kernel.classify import ThreadState, classify
from cohsim.kernel.costs import load_kernel
from cohsim.machine.catalog import Catalog


@pytest.mark.parametrize("strategy", ["per-layer", "common-parent", "lowerdir-plus"])
def test_trace_replays_mount_bench_calls(strategy):
    layers = 3
    trace = mount_bench_trace(strategy, 2, layers, 1)
    assert len(trace.threads) == 2
    st = ThreadState()
    ops = [classify(e, st) for e in trace.threads[0].events]
    half = len(ops) // 2  # two sequences per container, identical
    assert ops[:half] == ops[half:]
    expected = {
        "per-layer": {
            "open_tree_clone": 3,
            "mount_setattr": 3,
            "move_mount": 3,
            "close_attached": 3,
            "mount_overlay": 1,
            "umount_detach": 3,
            "umount_overlay": 1,
            "mountinfo_open": 1,
            "mountinfo_read": 1,
        },
        "common-parent": {
            "open_tree_clone": 1,
            "mount_setattr_ro": 1,
            "move_mount": 1,
            "close_attached": 1,
            "mount_overlay": 1,
            "umount": 1,
            "umount_einval": 1,
            "umount_overlay": 1,
            "mountinfo_open": 2,
            "mountinfo_read": 2,
        },
        # the overlay attached by move_mount(fsmount fd) unmounts as an overlay
        "lowerdir-plus": {
            "fsopen": 1,
            "open_tree_clone": 3,
            "mount_setattr": 3,
            "fsconfig": 5,
            "fsconfig_create": 1,
            "close_detached": 3,
            "fsmount": 1,
            "move_mount": 1,
            "mountinfo_open": 1,
            "mountinfo_read": 1,
            "umount_overlay": 1,
        },
    }[strategy]
    counts: dict[str, int] = {}
    for op in ops[:half]:
        counts[op] = counts.get(op, 0) + 1
    assert counts == expected


def test_simulated_run_scales_with_work():
    m = Catalog().get("devvm-2cpu-intel-xeon-f6m167")
    k = bench_kernel(load_kernel())
    small = simulate_run(m, k, "per-layer", 1, 1, containers=1)
    big = simulate_run(m, k, "per-layer", 1, 10, containers=1)
    assert big.stride_ns > 2 * small.stride_ns
    slow = simulate_run(m, k, "per-layer", 1, 1, containers=1, think_ns=5000)
    assert slow.stride_ns > small.stride_ns
    # same seed, same answer
    assert simulate_run(m, k, "per-layer", 2, 1, containers=1) == simulate_run(
        m, k, "per-layer", 2, 1, containers=1
    )


def test_simulated_run_lists_its_calls_with_or_without_the_mountinfo_sample():
    m = Catalog().get("devvm-2cpu-intel-xeon-f6m167")
    k = bench_kernel(load_kernel())
    runs = {}
    for sample in (True, False):
        calls: list[tuple[int, str, int, int]] = []
        run = simulate_run(
            m, k, "common-parent", 2, 1, containers=1, mountinfo_sample=sample, calls=calls
        )
        runs[sample] = run
        assert {c[0] for c in calls} == {1, 2}  # both workers
        for tid in (1, 2):  # each worker's calls one after the other
            mine = [(start, end) for t, _, start, end in calls if t == tid]
            assert all(a <= b <= c for (a, b), (c, _) in zip(mine, mine[1:], strict=False))
        # UnmountRecursive's own read of the table, and mount_bench's sample unless left out
        assert run.op_calls["mountinfo_read"] == (2 if sample else 1)
    assert runs[False].stride_ns < runs[True].stride_ns


def test_mount_bench_has_no_propagation():
    # mount_bench's namespace is private (mount_bench.c: unshare(CLONE_NEWNS), / MS_REC|
    # MS_PRIVATE): no peer of its mounts, no slave namespace. The node model's 8 service
    # namespaces and peer walks made a 1-worker move_mount 19 us instead of the file's 1.6
    k = bench_kernel(load_kernel())
    assert k.service_namespaces == 0
    assert all(op.per_peer_ns == 0 for op in k.ops.values())
    assert k.op("open_tree_clone").per_child_ns > 0  # the binds under the scratch tmpfs stay
    m = Catalog().get("devvm-16cpu-intel-xeon-f6m207")
    run = simulate_run(m, k, "per-layer", 2, 10, containers=2)
    assert run.op_means["move_mount"] < 3000
