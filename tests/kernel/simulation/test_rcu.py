"""Expedited RCU grace periods in the launch simulation (cohsim.kernel.simulation.rcu)."""

from __future__ import annotations

import pytest

from cohsim.kernel.costs import load_kernel
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.simulation.clock import Environment
from cohsim.kernel.simulation.mountlock import MountLock
from cohsim.kernel.simulation.rcu import GracePeriods
from cohsim.kernel.simulation.records import LaunchRecord, LockStats

GP_NS = 10_000


@pytest.fixture(scope="module")
def costs(catalog):
    c = LineCosts(catalog.get("c6gd.metal"), model="markov")
    c.prefill()
    return c


def make(costs, cpu_wait=lambda: 0.0):
    env = Environment()
    ml = MountLock(
        env, costs, load_kernel(), 64, lambda: 1.0, LockStats(), LockStats(), LaunchRecord()
    )
    return env, ml, GracePeriods(env, ml, lambda: GP_NS, cpu_wait)


def test_callers_during_a_grace_period_share_the_next_one(costs):
    env, _ml, gp = make(costs)
    done = {}

    def caller(name, at):
        yield env.timeout(at)
        yield gp.request()
        done[name] = env.now

    for name, at in (("first", 0), ("b", 100), ("c", 5000), ("late", 25_000)):
        env.process(caller(name, at))
    env.run()
    assert done["first"] == GP_NS  # started at once
    # b and c asked while the first was running: one more grace period, after it, for both
    assert done["b"] == done["c"] == 2 * GP_NS
    assert done["late"] == 25_000 + GP_NS  # nothing running when it asked
    assert gp.count == 3 and not gp.running


def test_a_grace_period_waits_for_its_worker_and_for_cpus_spinning_in_the_kernel(costs):
    env, ml, gp = make(costs, cpu_wait=lambda: 3000.0)
    done = {}

    def writer():  # holds mount_lock far longer than a grace period, a walker spinning on it
        yield from ml.section(50_000.0, 1)

    def walker():
        yield env.timeout(10)
        yield from ml.seq_spin()

    def caller():
        yield env.timeout(20)
        yield gp.request()
        done["gp"] = env.now

    for p in (writer(), walker(), caller()):
        env.process(p)
    env.run()
    released = ml.change_times[1]
    assert done["gp"] >= released > 20 + 3000 + GP_NS  # held up by the spinner until release


def test_a_grace_period_alone_takes_its_length_plus_the_wait_for_a_cpu(costs):
    env, _ml, gp = make(costs, cpu_wait=lambda: 2500.0)
    ev = gp.request()
    env.run()
    assert ev.triggered and env.now == GP_NS + 2500
