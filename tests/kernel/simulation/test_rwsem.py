"""namespace_sem as Linux's rwsem (cohsim.kernel.simulation.rwsem): grants, order, exclusion."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cohsim.kernel.simulation.clock import Environment
from cohsim.kernel.simulation.rwsem import RWSem


def test_rwsem_readers_share_writers_exclude():
    env = Environment()
    sem = RWSem(env)
    assert sem.acquire(False) is None and sem.acquire(False) is None and sem.readers == 2
    w = sem.acquire(True)
    r = sem.acquire(False)  # reader-owned with a waiter: queue, no stealing
    assert w is not None and r is not None
    sem.release(False)
    sem.release(False)
    env.run()
    # the writer is only woken: it takes the lock when it runs and retries
    assert w.event.triggered and not w.granted and not sem.writer and not r.event.triggered
    assert sem.retry(w) and sem.writer
    sem.release(True)
    env.run()
    assert r.event.triggered and r.granted and sem.readers == 1  # readers are granted on wake


def test_rwsem_reader_steals_from_a_woken_writer_until_handoff():
    env = Environment()
    sem = RWSem(env, handoff_ns=1000)
    assert sem.acquire(False) is None
    w = sem.acquire(True)
    sem.release(False)  # wakes the writer...
    assert sem.acquire(False) is None  # ...but a reader takes the free lock first
    assert not sem.retry(w) and sem.handoff is None  # back to sleep, not waited long
    env.run(until=2000)
    sem.release(False)
    assert sem.acquire(False) is None  # stolen again
    assert not sem.retry(w) and sem.handoff is w  # waited 2 us > 1 us: hand-off bit
    assert sem.acquire(False) is not None and sem.acquire(True) is not None  # no stealing
    sem.release(False)
    assert w.granted and sem.writer and sem.handoff is None  # granted at the release


def test_rwsem_spinning_writer_takes_the_lock_and_the_sleeper_is_woken_anyway():
    """rwsem_wake runs on every release with sleepers: the spinner wins the free lock, the
    first sleeping writer is woken all the same, retries and sleeps again."""
    env = Environment()
    sem = RWSem(env)
    assert sem.acquire(True) is None
    sleeper = sem.acquire(True, spin=False)
    spinner = sem.acquire(True, spin=True)
    assert sem.waiting == 2 and sem.sleeping == 1
    sem.release(True)
    assert spinner.granted and sem.writer and not spinner.spin
    assert sleeper.event.triggered and not sleeper.granted and not sem.retry(sleeper)
    sem.release(True)
    assert not sleeper.granted and sem.retry(sleeper) and sem.writer and not sem.waiting


def test_readers_pass_a_spinning_writer_but_not_a_sleeping_one():
    """A spinning writer is not in the wait list (no waiters bit): readers still join the
    reader-owned lock. Once it sleeps there, they queue behind it."""
    env = Environment()
    sem = RWSem(env)
    assert sem.acquire(False) is None
    spinner = sem.acquire(True, spin=True)
    assert spinner is not None and sem.acquire(False) is None and sem.readers == 2
    sem.stop_spinning(spinner)  # past the reader-spin threshold: it sleeps in the list
    assert sem.sleeping == 1 and sem.nonspinnable
    r = sem.acquire(False)
    assert r is not None and not r.granted and sem.readers == 2


def test_a_spinner_timing_out_on_readers_stops_every_spinner():
    """RWSEM_NONSPINNABLE: the first spinner to give up on a reader-owned lock stops the
    others (woken, not granted; each then sleeps on a fresh event) and no writer spins again
    until the readers are gone."""
    env = Environment()
    sem = RWSem(env)
    assert sem.acquire(False) is None
    a, b = sem.acquire(True, spin=True), sem.acquire(True, spin=True)
    spun_on = b.event
    sem.stop_spinning(a)
    assert spun_on.triggered and not b.granted and not b.spin and sem.sleeping == 2
    assert b.event is not spun_on and not b.event.triggered  # it sleeps on a fresh one
    sem.stop_spinning(b)  # b's generator, woken, calls this: nothing changes
    assert b.event is not spun_on and not b.event.triggered and sem.sleeping == 2
    sem.release(False)  # the last reader leaves: spinning allowed again, a is woken
    assert not sem.nonspinnable and a.event.triggered and sem.retry(a)
    sem.release(True)
    assert b.event.triggered and sem.retry(b)


def test_a_reader_waiting_too_long_hands_off_past_a_spinner():
    """A first reader whose grant fails (a spinner took the lock) after the hand-off time
    sets the hand-off bit: the next release grants the readers, not the next spinner."""
    env = Environment()
    sem = RWSem(env, handoff_ns=1000)
    assert sem.acquire(True) is None
    r1, r2 = sem.acquire(False), sem.acquire(False)
    s1, s2 = sem.acquire(True, spin=True), sem.acquire(True, spin=True)
    sem.release(True)
    assert s1.granted and sem.handoff is None  # not waited long: the spinner wins
    env.run(until=2000)
    sem.release(True)
    assert s2.granted and sem.handoff is r1  # the readers' grant failed after 2 us
    assert sem.acquire(False) is not None  # nobody steals past the hand-off bit
    s3 = sem.acquire(True, spin=True)
    sem.release(True)
    assert r1.granted and r2.granted and sem.readers == 3 and not s3.granted


def test_try_write_takes_exactly_when_acquire_would():
    """The conductor's fast path: try_write takes a free lock as acquire(True) does, and
    leaves everything as it was when acquire would queue."""
    env = Environment()
    sem = RWSem(env, handoff_ns=0)
    assert sem.try_write() and sem.writer and not sem.queue
    assert not sem.try_write() and sem.writer and not sem.queue  # write-held
    sem.release(True)
    assert sem.acquire(False) is None
    assert not sem.try_write() and not sem.writer and sem.readers == 1  # read-held
    w = sem.acquire(True)
    assert w is not None
    sem.release(False)  # free, the writer woken (it retries when it runs)
    sem.handoff = w  # as if it had waited too long: nobody else may take the free lock
    assert not sem.try_write() and not sem.writer
    assert sem.acquire(True) is not None  # acquire agrees


def test_rwsem_refuses_double_writer():
    sem = RWSem(Environment())
    sem.acquire(True)
    with pytest.raises(AssertionError, match="exclusion"):
        sem._take(True)


@given(
    st.lists(
        st.tuples(st.booleans(), st.booleans(), st.integers(0, 3), st.integers(1, 3)),
        min_size=1,
        max_size=30,
    )
)
def test_rwsem_serves_everyone_never_two_writers(ops):
    """Any arrivals (write or read, spinning a while or sleeping, arrival time, hold):
    everyone is served, woken writers retry until they get it, the invariant check in RWSem never
    fires, and the lock ends free with nobody queued."""
    env = Environment()
    sem = RWSem(env, handoff_ns=5)
    served: list[int] = []

    def user(i: int, write: bool, spin: bool, at: int, hold: int):
        yield env.timeout(at)
        w = sem.acquire(write, spin and write)
        if w is not None and w.spin:  # spins for at most 2 ns, as nssections' writers do
            yield w.event | env.timeout(2)
            sem.stop_spinning(w)
        while w is not None and not w.granted:
            yield w.event
            yield env.timeout(1)  # the wake-up
            if sem.retry(w):
                break
        served.append(i)
        yield env.timeout(hold)
        sem.release(write)

    for i, op in enumerate(ops):
        env.process(user(i, *op))
    env.run()
    assert sorted(served) == list(range(len(ops)))
    assert not sem.writer and sem.readers == 0 and not sem.queue and sem.handoff is None


def test_a_released_writer_wakes_its_granted_readers_one_after_another():
    """rwsem_mark_wake() grants every queued reader at once, wake_up_q() wakes them in turn:
    the lock is the readers' from the release on, the k-th wakes k steps later."""
    env = Environment()
    sem = RWSem(env, wake_step_ns=100)
    assert sem.acquire(True) is None
    waiters = [sem.acquire(False) for _ in range(3)]
    woken: list[int] = []

    def reader(w):
        yield w.event
        woken.append(env.now)

    def writer():
        yield 50
        sem.release(True)
        assert sem.readers == 3 and all(w.granted for w in waiters)

    for w in waiters:
        env.process(reader(w))
    env.process(writer())
    env.run()
    assert woken == [150, 250, 350]
