"""The burst model's estimate as an EngineResult (cohsim.kernel.analytic.estimate)."""

from __future__ import annotations

import dataclasses

import pytest

from cohsim.kernel.analytic.burstmodel import BurstModel
from cohsim.kernel.analytic.estimate import engine_result
from cohsim.kernel.costs import load_kernel
from cohsim.kernel.result import CPU_SITES
from cohsim.predict import burst_workload


def test_the_estimate_fills_the_result_and_leaves_out_what_it_does_not_model(catalog):
    m, k = catalog.get("m7i.metal-24xl"), load_kernel()
    trace = burst_workload("per-layer", 40, 10, seed=0)
    burst = BurstModel(m, k, trace, layers=10).estimate()
    alone = BurstModel(m, k, dataclasses.replace(trace, threads=trace.threads[:1]), layers=10)
    res = engine_result(burst, alone.estimate().launch_each_ns[0], m.vcpus)
    assert res.engine == "analytic" and len(res.launch_ns) == 40
    assert res.seqcount_spin is None and res.systemd is None
    assert "seqcount_spin" not in res.locks() and "acquisitions" not in res.locks()["mount_lock"]
    assert res.rcu.acquisitions == 40 * int(alone.estimate().rcu_requests)
    assert 0 < res.grace_periods <= res.rcu.acquisitions
    p = res.profile
    assert list(p.cpu_ns) == list(CPU_SITES) and min(p.cpu_ns.values()) >= 0.0
    assert p.cpu_ns["path_init_spin"] > 0.0  # the node daemons' walks through mount_lock holds
    assert p.cpu_ns["runtime"] == pytest.approx(40 * k.runtime_cpu_ns * burst_smt(m, 40))
    assert p.cpu_ns["peer_walks"] > 0 and p.cpu_ns["namespace_sem_spin"] > 0
    assert p.span_ns == max(res.launch_ns)


def burst_smt(machine, n):
    from cohsim.kernel.smt import slowdown

    return slowdown(machine, load_kernel().smt_slowdown, min(n, machine.vcpus))


@pytest.mark.parametrize("strategy", ["per-layer", "common-parent", "lowerdir-plus"])
def test_a_container_alone_is_the_estimate_of_a_one_container_burst(catalog, strategy):
    """`alone_launch_ns` (what the lock-wait fraction compares with) is, to the bit, the
    launch of the burst's model for one of its containers."""
    m, k = catalog.get("m7a.24xlarge"), load_kernel()
    trace = burst_workload(strategy, 30, 12, seed=0)
    alone = BurstModel(m, k, dataclasses.replace(trace, threads=trace.threads[:1]), layers=12)
    model = BurstModel(m, k, trace, layers=12)
    assert model.alone_launch_ns() == alone.estimate().launch_each_ns[0]
    assert model.n == 30 and model.estimate().containers == 30  # the burst's own left as it was
