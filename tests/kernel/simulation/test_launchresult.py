"""A simulated launch as an EngineResult (cohsim.kernel.simulation.launchresult): its profile adds
up to the CPUs' time, its counts agree with the simulation's own."""

from __future__ import annotations

import pytest

from cohsim.kernel.costs import load_kernel
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.result import CPU_SITES
from cohsim.kernel.simulation.launch import LaunchSim
from cohsim.kernel.simulation.launchresult import engine_result
from cohsim.predict import burst_workload


@pytest.fixture(scope="module")
def done(catalog):
    m = catalog.get("m7i.metal-24xl")
    trace = burst_workload("per-layer", 30, 8, seed=1)
    sim = LaunchSim(m, load_kernel(), trace, costs=LineCosts(m, model="markov"), layers=8)
    threads = sim.run()
    return sim, threads, engine_result(sim, threads)


def test_the_profile_accounts_for_the_cpus_time(done):
    sim, threads, res = done
    p = res.profile
    assert list(p.cpu_ns) == list(CPU_SITES) and min(p.cpu_ns.values()) >= 0.0
    outside = sim.ml.bg_spin_ns - sim.tally.repaid  # the daemons' CPUs' spinning
    assert p.cpu_total_ns == pytest.approx(sim.cpus.busy_ns() + outside, rel=1e-9)
    assert p.cpu_ns["runtime"] == pytest.approx(30 * sim.k.runtime_cpu_ns, rel=0.7)
    assert p.cpu_ns["peer_walks"] > 0 and p.cpu_ns["percpu_loops"] > 0
    assert p.span_ns == max(t.end_ns for t in threads) - min(t.start_ns for t in threads)
    # 30 writers queue on namespace_sem: they spin (a running writer owns it) or sleep
    assert p.cpu_ns["namespace_sem_spin"] + p.off_cpu_ns["namespace_sem_sleep"] > 0


def test_the_result_counts_what_the_simulation_counted(done):
    sim, threads, res = done
    assert res.engine == "des" and len(res.launch_ns) == len(threads) == 30
    assert all(m <= t for m, t in zip(res.mount_ns, res.launch_ns, strict=True))
    assert res.rcu.acquisitions == sim.rcu.requests >= res.grace_periods == sim.rcu.count > 0
    locks = res.locks()
    assert locks["namespace_sem"]["acquisitions"] == sim.stats["namespace_sem"].acquisitions
    assert locks["rcu"]["grace_periods"] == sim.rcu.count
    assert locks["mount_lock"]["legitimize_fallbacks"] == sim.ml.legitimize
    assert 0 < sum(res.ns_write_by_op.values()) < sim.stats["namespace_sem"].hold_ns  # + reads
