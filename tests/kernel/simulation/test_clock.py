"""The launch simulation's clock (cohsim.kernel.simulation.clock): bare-generator processes and
integer timeouts must step the very same events in the very same order as simpy's own Environment
with Process and Timeout events."""

from __future__ import annotations

import dataclasses

import pytest
import simpy
from hypothesis import given
from hypothesis import strategies as st

import cohsim.kernel.simulation.launch as launch
from cohsim.kernel.costs import load_kernel
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.simulation.clock import Environment, iround
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


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e18, max_value=1e18))
def test_iround_is_round(x):
    """The compiled simulation's round: the builtin's result (halves to even) for any float."""
    assert iround(x) == round(x) and type(iround(x)) is int
    for half in (x + 0.5, float(round(x)) + 0.5, float(round(x)) - 0.5):
        assert iround(half) == round(half)


class SimpyReference(simpy.Environment):
    """simpy's own Environment running the clock's processes: each yielded int becomes a
    Timeout, made where the process yields it (where simpy draws its id)."""

    def process(self, generator):
        def adapted():
            value = None
            while True:
                try:
                    target = generator.send(value)
                except StopIteration:
                    return
                value = yield (self.timeout(target) if isinstance(target, int) else target)

        return super().process(adapted())

    def advance(self, delay):
        return False  # the process always yields: the reference for Environment.advance


def test_advance_moves_the_clock_only_when_nothing_else_is_due_first():
    env = Environment()
    log = []
    gate = env.event()

    def runner():
        yield 1  # the other process has started: its entry at 20 is in the heap
        assert env.advance(4) and env.now == 5
        assert not env.advance(15)  # the entry at 20 would come first (it has the lower id)
        assert env.advance(14) and env.now == 19
        yield gate
        log.append(("runner", env.now))

    def other():
        yield 20
        gate.succeed()
        assert not env.advance(1)  # the gate is due now
        log.append(("other", env.now))

    env.process(runner())
    env.process(other())
    env.run()
    assert log == [("other", 20), ("runner", 20)]


def test_no_advance_while_an_events_other_callbacks_wait_to_run():
    """They run at the event's time: only the last callback may move the clock."""
    env = Environment()
    gate = env.event()
    seen = []

    def first():
        yield gate
        seen.append(env.advance(3))

    def last():
        yield gate
        seen.append(env.advance(3))
        seen.append(env.now)

    def opener():
        yield 1
        gate.succeed()

    env.process(first())
    env.process(last())
    env.process(opener())
    env.run()
    assert seen == [False, True, 4]


def test_integer_timeouts_processes_and_events_keep_simpys_order():
    """Processes yielding ints, events, conditions and already-processed events, started at
    different times and waking each other: the same trace on simpy through the adapter."""
    logs = []
    for env in (SimpyReference(), Environment()):
        log: list[tuple[int, str]] = []
        gate = env.event()

        def opener(env=env, gate=gate, log=log):
            yield 5
            gate.succeed()
            log.append((env.now, "open"))
            yield 0
            log.append((env.now, "after zero"))

        def waiter(name, env=env, gate=gate, log=log):
            yield gate
            log.append((env.now, name))
            yield gate  # processed already: goes on at once
            log.append((env.now, name + " again"))
            yield gate | env.timeout(3)
            log.append((env.now, name + " cond"))

        def spawner(env=env, log=log):
            yield 2
            env.process(waiter("late"))
            yield 6
            log.append((env.now, "spawner"))

        env.process(waiter("a"))
        env.process(opener())
        env.process(waiter("b"))
        env.process(spawner())
        env.run()
        logs.append((log, env.now))
    assert logs[0] == logs[1]
    assert logs[1][0][0] == (5, "open")
    with pytest.raises(ValueError, match="Negative delay"):
        env = Environment()

        def bad():
            yield -1

        env.process(bad())
        env.run()


def test_run_until_a_time_or_an_event_as_simpy():
    for env in (SimpyReference(), Environment()):
        seen = []

        def ticker(env=env, seen=seen):
            while True:
                yield 10
                seen.append(env.now)

        env.process(ticker())
        env.run(until=35)
        assert env.now == 35 and seen == [10, 20, 30]
        done = env.event()

        def finisher(env=env, done=done):
            yield 7
            done.succeed("v")

        env.process(finisher())
        assert env.run(until=done) == "v" and env.now == 42
        assert env.run(until=done) == "v"  # processed already


@pytest.mark.pure_python
def test_a_launch_is_the_same_on_simpys_own_environment(catalog, monkeypatch):
    """The whole simulation, once on the fast clock and once on simpy's (through the
    adapter, every wait a Timeout: no `advance`): the same results, to the nanosecond, and
    the same lock tallies (a newer simpy whose internals moved would show here)."""
    m, k = catalog.get("m7i.metal-24xl"), load_kernel()
    trace = burst_workload("per-layer", 12, 4, seed=2)
    costs = LineCosts(m, seed=2)
    costs.prefill()
    skipped = []

    class Counting(Environment):
        def advance(self, delay):
            moved = super().advance(delay)
            skipped.append(moved)
            return moved

    def run():
        sim = launch.LaunchSim(m, k, trace, costs=costs, seed=2, layers=4, calls=[])
        res = sim.run()
        rows = [(r.tid, r.mounts_done_ns, r.end_ns, r.lock_wait_ns, r.rcu_wait_ns) for r in res]
        stats = {name: dataclasses.asdict(st) for name, st in sim.stats.items()}
        return rows, sim.env.now, stats, sim.calls, sim.ml.legitimize, type(sim.env)

    monkeypatch.setattr(launch, "Environment", Counting)
    fast = run()
    monkeypatch.setattr(launch, "Environment", SimpyReference)
    plain = run()
    assert fast[-1] is Counting and plain[-1] is SimpyReference
    assert plain[:-1] == fast[:-1]
    assert sum(skipped) > 100 and not all(skipped)  # waits skipped and waits not skipped
