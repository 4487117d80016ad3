"""Level 3: the launch simulation's invariants and the kernel model's bookkeeping."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cohsim.contention import LineCosts
from cohsim.kernel import load_kernel
from cohsim.launch import LaunchSim
from cohsim.predict import burst_workload
from cohsim.synth import STRATEGIES, synthesize


@pytest.fixture(scope="module")
def kernel():
    return load_kernel()


@pytest.fixture(scope="module")
def costs(catalog):
    return {
        name: LineCosts(catalog.get(name), model="markov")
        for name in ("m7i.metal-24xl", "m7a.24xlarge", "c6gd.metal")
    }


def run(catalog, costs, kernel, name, trace, **kw):
    sim = LaunchSim(catalog.get(name), kernel, trace, costs=costs[name], **kw)
    return sim, sim.run()


def test_one_container_alone_costs_what_the_kernel_says(catalog, costs, kernel):
    """Uncontended, a container's mount phase is the sum of its ops' costs plus RCU waits."""
    trace = synthesize("per-layer", 1, 3, seed=0)
    sim, res = run(catalog, costs, kernel, "c6gd.metal", trace, layers=3, background=False)
    (r,) = res
    assert r.lock_wait_ns < 0.05 * (r.mounts_done_ns - r.start_ns)
    assert r.rcu_wait_ns > 0 and sim.gps == 6  # one grace period per unmount, none shared
    assert r.end_ns - r.mounts_done_ns == pytest.approx(kernel.runtime_cpu_ns, rel=0.01)


@settings(max_examples=12)
@given(
    strategy=st.sampled_from(STRATEGIES),
    containers=st.integers(1, 12),
    layers=st.integers(1, 6),
    seed=st.integers(0, 3),
    machine=st.sampled_from(["m7i.metal-24xl", "m7a.24xlarge"]),
)
def test_invariants(catalog, costs, kernel, strategy, containers, layers, seed, machine):
    """Every thread finishes; time moves forward; the mount table ends where the sequences
    leave it; no lock is ever held by two writers (the rwsem raises otherwise)."""
    trace = synthesize(strategy, containers, layers, seed=seed)
    sim, res = run(
        catalog,
        costs,
        kernel,
        machine,
        trace,
        layers=layers,
        seed=seed,
        node_mounts=50,
        record=True,
    )
    assert len(res) == containers
    for r in res:
        assert r.start_ns <= r.mounts_done_ns <= r.end_ns
    ends = [t for t, _ in sim.record.mount_table]
    assert ends == sorted(ends)
    # both passes leave their overlay mounted (teardown is outside launch)
    assert sim.mounts == 50 + 2 * containers
    assert not sim.ns.writer and sim.ns.readers == 0 and not sim.ml_held
    assert sim.cpus.busy == 0 and sim.cpus.waiting == 0
    for holds in (sim.record.ns_holds, sim.record.ml_holds):
        spans = sorted((a, b) for _, a, b in holds)
        assert all(b1 <= a2 for (_, b1), (a2, _) in zip(spans, spans[1:], strict=False))


def test_same_seed_same_result(catalog, costs, kernel):
    trace = burst_workload("per-layer", 20, 5, seed=3)
    outs = []
    for _ in range(2):
        _, res = run(catalog, costs, kernel, "m7i.metal-24xl", trace, layers=5, seed=3)
        outs.append([(r.tid, r.end_ns, r.lock_wait_ns) for r in res])
    assert outs[0] == outs[1]


def test_burst_workload_counts_match_the_synthesiser():
    a = burst_workload("per-layer", 100, 50)
    assert a.mount_ops == 20_200
    b = synthesize("per-layer", 7, 4, seed=0)
    c = burst_workload("per-layer", 7, 4)
    assert (c.mount_ops, c.syscalls, c.counts_by_name()) == (
        b.mount_ops,
        b.syscalls,
        b.counts_by_name(),
    )
