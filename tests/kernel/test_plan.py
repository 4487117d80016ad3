"""A thread's calls planned before the run (cohsim.kernel.plan): each call's op and costs, its
mount_lock work with the per-CPU sum, its mount-table change, and the per-call factors."""

from __future__ import annotations

import numpy as np
import pytest

from cohsim.kernel.classify import ThreadState, classify
from cohsim.kernel.costs import load_kernel
from cohsim.kernel.plan import TABLE_DELTA, CallFactors, plan_calls
from cohsim.workload.synth import synthesize


@pytest.fixture(scope="module")
def kernel():
    return load_kernel()


def test_every_call_is_planned_with_its_op_and_costs(kernel):
    events = synthesize("common-parent", 1, 2, seed=0).threads[0].events
    steps = plan_calls(events, kernel, None, 500.0)
    state = ThreadState()
    assert [s[1] for s in steps] == [classify(e, state) for e in events]
    for think, name, op, _walk, _cpu, _reads, ml_work, delta in steps:
        assert think >= 0 and op == kernel.op(name)
        assert ml_work == op.mount_lock_ns + (500.0 if op.percpu_sum else 0.0)
        assert delta == TABLE_DELTA.get(name, 0)
    assert any(s[2].percpu_sum for s in steps)  # the strategy has a summing op


def test_a_fixed_layer_count_scales_walks_work_and_clones(kernel):
    events = synthesize("per-layer", 1, 3, seed=0).threads[0].events
    for _, _, op, walk, cpu, reads, _, _ in plan_calls(events, kernel, 7, 0.0):
        assert walk == (op.walks + op.walks_per_layer * 7) * kernel.walk_ns
        assert cpu == op.cpu_ns + op.per_layer_cpu_ns * 7
        assert reads == op.layer_reads * 7


def test_think_time_is_the_gap_after_a_timed_call(kernel):
    events = synthesize("per-layer", 1, 2, seed=0).threads[0].events
    steps = plan_calls(events, kernel, None, 0.0)
    assert steps[0][0] == 0
    for prev, e, step in zip(events, events[1:], steps[1:], strict=False):
        gap = max(0, e.start_ns - prev.end_ns) if prev.duration_ns is not None else 0
        assert step[0] == gap


def test_call_factors_come_from_their_own_stream():
    assert [CallFactors(0.0, 3)() for _ in range(3)] == [1.0, 1.0, 1.0]
    f = CallFactors(0.2, 3)
    drawn = [f() for _ in range(5000)]  # past one block of 4096
    z = np.random.default_rng([3, 1]).standard_normal(2 * 4096)
    assert drawn == np.exp(0.2 * z[:5000]).tolist()
