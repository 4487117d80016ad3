"""A thread's calls planned before the run (cohsim.kernel.calls): each call's op and costs, its
mount_lock work with the per-CPU sum, its mount-table change, and the per-call factors."""

from __future__ import annotations

import numpy as np
import pytest

from cohsim.kernel.calls import TABLE_DELTA, CallFactors, plan_calls
from cohsim.kernel.classify import ThreadState, classify
from cohsim.kernel.costs import load_kernel
from cohsim.kernel.simulation.threads import Factors
from cohsim.workload.synth import synthesize


@pytest.fixture(scope="module")
def kernel():
    return load_kernel()


def test_every_call_is_planned_with_its_op_and_costs(kernel):
    events = synthesize("common-parent", 1, 2, seed=0).threads[0].events
    steps = plan_calls(events, kernel, None, 500.0)
    state = ThreadState()
    assert [s[1] for s in steps] == [classify(e, state) for e in events]
    for s in steps:
        assert s.think >= 0 and s.op == kernel.op(s.name)
        assert s.ml_work == s.op.mount_lock_ns + (500.0 if s.op.percpu_sum else 0.0)
        assert s.delta == (0 if s.own_ns else TABLE_DELTA.get(s.name, 0))
        assert s.prop == s.delta  # host mount events propagate, the runtime's own do not
    assert any(s[2].percpu_sum for s in steps)  # the strategy has a summing op


def test_a_fixed_layer_count_scales_walks_work_and_clones(kernel):
    events = synthesize("per-layer", 1, 3, seed=0).threads[0].events
    for s in plan_calls(events, kernel, 7, 0.0):
        assert s.walk_ns == (s.op.walks + s.op.walks_per_layer * 7) * kernel.walk_ns
        assert s.cpu == s.op.cpu_ns + s.op.per_layer_cpu_ns * 7
        assert s.reads == s.op.layer_reads * 7


def test_the_runtimes_own_namespace_changes_only_its_copy(kernel):
    """After runc's unshare its mounts change its copy, not the host's table: no table change
    and no propagation; the copy's window opens at the unshare and closes at the old root's
    detach; the host's table goes back to where it was (containerd's rootfs overlays stay)."""
    events = synthesize("per-layer", 1, 3, seed=0).threads[0].events
    steps = plan_calls(events, kernel, None, 0.0)
    names = [s.name for s in steps]
    copy = names.index("ns_copy")
    assert not any(s.own_ns for s in steps[: copy + 1])
    assert all(s.own_ns and s.delta == 0 for s in steps[copy + 1 :])
    assert [s.window for s in steps if s.window] == [1, -1]
    assert [s.name for s in steps if s.window] == ["ns_copy", "umount_oldroot"]
    assert sum(s.delta for s in steps) == 2  # the two passes' overlays
    assert sum(s.ring for s in steps) == 0 and max(s.ring for s in steps) == 1
    walks = {s.name for s in steps if s.group_walk}
    assert walks == {"open_tree_clone", "move_mount", "umount_detach"}
    assert sum(s.binds for s in steps) == 0 and max(s.binds for s in steps) == 1


def test_think_time_is_the_gap_after_a_timed_call(kernel):
    events = synthesize("per-layer", 1, 2, seed=0).threads[0].events
    steps = plan_calls(events, kernel, None, 0.0)
    assert steps[0][0] == 0
    for prev, e, step in zip(events, events[1:], steps[1:], strict=False):
        gap = max(0, e.start_ns - prev.end_ns) if prev.duration_ns is not None else 0
        assert step[0] == gap


def test_call_factors_come_from_their_own_stream():
    """Blocks of the seed's own stream, taken one by one by the simulation
    (cohsim.kernel.simulation.threads.Factors)."""
    ones = Factors(CallFactors(0.0, 3))
    assert [ones.next() for _ in range(3)] == [1.0, 1.0, 1.0]
    f = Factors(CallFactors(0.2, 3))
    drawn = [f.next() for _ in range(5000)]  # past one block of 4096
    z = np.random.default_rng([3, 1]).standard_normal(2 * 4096)
    assert drawn == np.exp(0.2 * z[:5000]).tolist()


@pytest.mark.parametrize("strategy", ["per-layer", "common-parent", "lowerdir-plus"])
def test_each_overlay_line_carries_its_lower_layers_and_leaves_with_it(kernel, strategy):
    """An overlay's mountinfo line is its fixed part and one entry per lower layer (a
    `lowerdir=` path, or `,lowerdir+=/` for an fsmount'ed overlay's detached layers); the
    binds' lines go with them, the two overlays stay (the container runs on them)."""
    from cohsim.kernel.calls import LOWERDIR_PLUS_ENTRY_BYTES

    layers = 5
    events = synthesize(strategy, 1, layers, seed=0, runtime="none").threads[0].events
    steps = plan_calls(events, kernel, layers, 0.0)
    entry = (
        LOWERDIR_PLUS_ENTRY_BYTES if strategy == "lowerdir-plus" else kernel.lowerdir_entry_bytes
    )
    overlay = kernel.overlay_line_bytes + layers * entry
    added = [s.nbytes for s in steps if s.delta > 0]
    assert added.count(overlay) == 2  # the two passes' overlays
    assert all(b in (overlay, kernel.mount_line_bytes) for b in added)
    assert all(s.nbytes == 0 for s in steps if not s.delta)
    assert sum(s.nbytes for s in steps) == pytest.approx(2 * overlay)


def test_an_unmounted_overlay_takes_its_own_line_away(kernel):
    """mount_bench's sequences unmount their overlays: the text returns to where it began."""
    from cohsim.calibrate.mountreplay import mount_bench_trace

    for strategy in ("per-layer", "common-parent", "lowerdir-plus"):
        events = mount_bench_trace(strategy, 1, 4, 1).threads[0].events
        steps = plan_calls(events, kernel, 4, 0.0)
        assert any(s.name == "umount_overlay" for s in steps)
        assert sum(s.nbytes for s in steps) == pytest.approx(0.0)


def test_a_runtime_that_joins_a_shared_namespace_mounts_there(kernel):
    """setns(CLONE_NEWNS) (the shared-ns runtime): the calls after it change the namespace it
    joined, not the host's table, and nothing is copied."""
    events = synthesize("per-layer", 1, 2, seed=0, runtime="shared-ns").threads[0].events
    steps = plan_calls(events, kernel, 2, 0.0)
    join = next(i for i, e in enumerate(events) if e.name == "setns")
    assert not any(s.name == "ns_copy" for s in steps)
    assert all(s.own_ns and s.delta == 0 for s in steps[join + 1 :])
    assert any(s.delta for s in steps[:join])  # containerd's own mounts are the host's
