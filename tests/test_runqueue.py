"""The run queue and namespace_sem primitives: grants, order, exclusion."""

from __future__ import annotations

import pytest
import simpy
from hypothesis import given
from hypothesis import strategies as st

from cohsim.runqueue import CPUs, RWSem


def test_cpus_grant_at_once_then_queue_by_priority():
    env = simpy.Environment()
    cpus = CPUs(env, 1)
    assert cpus.acquire() is None and cpus.busy == 1
    low, high = cpus.acquire(1), cpus.acquire(0)
    assert cpus.waiting == 2
    cpus.release()  # the CPU passes to the priority-0 waiter first
    env.run()
    assert high.triggered and not low.triggered and cpus.busy == 1
    cpus.release()
    env.run()
    assert low.triggered
    cpus.release()
    assert cpus.busy == 0


def test_rwsem_readers_share_writers_exclude():
    env = simpy.Environment()
    sem = RWSem(env)
    assert sem.acquire(False) is None and sem.acquire(False) is None and sem.readers == 2
    w = sem.acquire(True)
    r = sem.acquire(False)  # queued behind the writer: no barging
    sem.release(False)
    sem.release(False)
    env.run()
    assert w.triggered and sem.writer and not r.triggered
    sem.release(True)
    env.run()
    assert r.triggered and sem.readers == 1


def test_rwsem_refuses_double_writer():
    sem = RWSem(simpy.Environment())
    sem.acquire(True)
    with pytest.raises(AssertionError, match="exclusion"):
        sem._take(True)


@given(st.lists(st.booleans(), min_size=1, max_size=30))
def test_rwsem_fifo_never_two_writers(ops):
    """Any sequence of acquires, each released when granted: everyone is served, in order
    of arrival for writers, and the invariant check in RWSem never fires."""
    env = simpy.Environment()
    sem = RWSem(env)
    order: list[int] = []

    def user(i: int, write: bool):
        ev = sem.acquire(write)
        if ev is not None:
            yield ev
        order.append(i)
        yield env.timeout(1)
        sem.release(write)

    for i, write in enumerate(ops):
        env.process(user(i, write))
    env.run()
    assert sorted(order) == list(range(len(ops)))
    writers = [i for i in order if ops[i]]
    assert writers == sorted(writers)
    assert not sem.writer and sem.readers == 0 and not sem.queue
