"""The launch simulation's clock (cohsim.kernel.engine): simpy's Environment with its hot paths
written out must step the very same events in the very same order as simpy's own."""

from __future__ import annotations

import pytest
import simpy

import cohsim.kernel.launch as launch
from cohsim.kernel.costs import load_kernel
from cohsim.kernel.engine import Environment
from cohsim.kernel.linecosts import LineCosts
from cohsim.predict import burst_workload


def test_timeouts_and_events_fire_in_simpys_order():
    order: list[tuple[int, str]] = []
    for env in (simpy.Environment(), Environment()):
        seen: list[tuple[int, str]] = []

        def proc(env, name, delays, seen=seen):
            for d in delays:
                yield env.timeout(d)
                seen.append((env.now, name))

        done = env.event()
        env.process(proc(env, "a", [3, 0, 5]))
        env.process(proc(env, "b", [3, 2, 0]))
        env.process(proc(env, "c", [0, 8]))

        def stop(env, done=done):
            yield env.timeout(20)
            done.succeed()

        env.process(stop(env))
        env.run(until=done)
        order.append(tuple(seen))
        assert env.now == 20
    assert order[0] == order[1]
    with pytest.raises(ValueError, match="Negative delay"):
        Environment().timeout(-1)


def test_a_launch_is_the_same_on_simpys_own_environment(catalog, monkeypatch):
    """The whole simulation, once on the fast clock and once on simpy's: the same results,
    to the nanosecond (a newer simpy whose internals moved would show here)."""
    m, k = catalog.get("m7i.metal-24xl"), load_kernel()
    trace = burst_workload("per-layer", 12, 4, seed=2)
    costs = LineCosts(m, seed=2)
    costs.prefill()

    def run():
        sim = launch.LaunchSim(m, k, trace, costs=costs, seed=2, layers=4)
        res = sim.run()
        rows = [(r.tid, r.mounts_done_ns, r.end_ns, r.lock_wait_ns) for r in res]
        return rows, sim.env.now, type(sim.env)

    fast = run()
    monkeypatch.setattr(launch, "Environment", simpy.Environment)
    plain = run()
    assert fast[2] is Environment and plain[2] is simpy.Environment
    assert plain[:2] == fast[:2]
