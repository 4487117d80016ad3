"""The CPUs as a run queue (cohsim.kernel.simulation.cpus): grants, priorities, CPU time held."""

from __future__ import annotations

from cohsim.kernel.simulation.clock import Environment
from cohsim.kernel.simulation.cpus import CPUs


def test_cpus_grant_at_once_then_queue_by_priority():
    env = Environment()
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


def test_cpus_count_the_cpu_time_they_grant():
    env = Environment()
    cpus = CPUs(env, 2)

    def task(start: int, hold: int):
        yield env.timeout(start)
        ev = cpus.acquire()
        if ev is not None:
            yield ev
        yield env.timeout(hold)
        cpus.release()

    # two CPUs, three tasks of 10 ns from t=0: the third waits for the first CPU freed
    for _ in range(3):
        env.process(task(0, 10))
    env.process(task(50, 5))  # later, alone
    env.run()
    assert env.now == 55 and cpus.busy == 0
    assert cpus.busy_ns() == 10 + 10 + 10 + 5
