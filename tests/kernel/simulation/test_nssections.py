"""namespace_sem's sections (cohsim.kernel.simulation.nssections): mountinfo reads page by page,
readers sleep and give their CPU up, writers spin on a running writer."""

from __future__ import annotations

import math

from cohsim.kernel.costs import OpCost, load_kernel
from cohsim.kernel.simulation.clock import Environment
from cohsim.kernel.simulation.cpus import CPUs
from cohsim.kernel.simulation.mounttable import MountTable
from cohsim.kernel.simulation.nssections import NamespaceSections
from cohsim.kernel.simulation.records import LaunchRecord, LockStats
from cohsim.kernel.simulation.rwsem import RWSem


def make(cpus_n: int = 2, mounts: int = 10, line_bytes: float = 100.0):
    env = Environment()
    cpus = CPUs(env, cpus_n)

    def resume(slept: bool):
        ev = cpus.acquire(0)
        if ev is not None:
            yield ev
        return 0.0

    rec = LaunchRecord()
    table = MountTable(env, mounts, rec, mounts * line_bytes)
    nss = NamespaceSections(env, RWSem(env), cpus, load_kernel(), table, LockStats(), resume, rec)
    return env, cpus, nss


def test_mountinfo_is_read_one_page_per_lock_hold():
    """seq_read_iter() returns at most a page a read(): a table of 2.5 pages of text is read
    in 3 holds, each over the lines that fit (the table's mean line)."""
    mounts, line_bytes = 100, 102.4  # 40 lines a page
    env, cpus, nss = make(mounts=mounts, line_bytes=line_bytes)
    op = OpCost(ns_read_ns=100.0, per_mount_read_ns=2.0)

    def reader():
        assert cpus.acquire() is None
        waited = yield from nss.read_mountinfo(op)
        assert waited == 0

    env.process(reader())
    env.run()
    assert nss.mountinfo_reads == 1
    assert nss.stats.acquisitions == math.ceil(mounts * line_bytes / 4096) == 3
    assert env.now == nss.stats.hold_ns == pytest_approx_sum(op, mounts, 40.0)


def test_long_lines_make_more_holds_for_the_same_lines():
    """The same 100 mounts with lines 4x as long (overlays with their lower layers) take 4x
    the read() calls, and so namespace_sem read sections, for the same work."""
    holds = []
    for line_bytes in (102.4, 409.6):
        env, cpus, nss = make(mounts=100, line_bytes=line_bytes)

        def reader(nss=nss, cpus=cpus):
            assert cpus.acquire() is None
            yield from nss.read_mountinfo(OpCost(ns_read_ns=100.0, per_mount_read_ns=2.0))

        env.process(reader())
        env.run()
        holds.append((nss.stats.acquisitions, nss.stats.hold_ns))
    assert holds[0][0] == 3 and holds[1][0] == 10
    assert abs(holds[0][1] - holds[1][1]) <= 10  # rounding of the holds only


def pytest_approx_sum(op: OpCost, mounts: int, lines: float) -> int:
    """The holds as the sections round them: the fixed part with the first page."""
    holds, done, first = [], 0.0, True
    while done < mounts or first:
        chunk = min(lines, max(0.0, mounts - done))
        holds.append(round((op.ns_read_ns if first else 0.0) + op.per_mount_read_ns * chunk))
        done += lines
        first = False
    return sum(holds)


def test_a_reader_behind_a_writer_sleeps_off_its_cpu_and_wakes_holding_the_lock():
    env, cpus, nss = make()
    seen: dict[str, float] = {}

    def writer():
        assert cpus.acquire() is None
        assert (yield from nss.write_lock()) == 0.0
        t1 = env.now
        yield env.timeout(100)
        seen["busy_while_reader_sleeps"] = cpus.busy
        nss.write_unlock(1, t1)
        cpus.release()

    def reader():
        yield env.timeout(10)
        assert cpus.acquire() is None
        seen["waited"] = yield from nss.read(50)
        seen["done"] = env.now
        cpus.release()

    env.process(writer())
    env.process(reader())
    env.run()
    assert seen == {"busy_while_reader_sleeps": 1, "waited": 90, "done": 150}
    assert nss.stats.wait_ns == 90 and nss.stats.acquisitions == 2
    assert nss.record is not None and nss.record.ns_holds == [(1, 0, 100)]


def test_a_writer_spins_on_a_running_writer_and_keeps_its_cpu():
    env, cpus, nss = make()
    seen: dict[str, float] = {}

    def first():
        assert cpus.acquire() is None
        yield from nss.write_lock()
        yield env.timeout(100)
        seen["busy"] = cpus.busy
        nss.write_unlock(1, 0)
        cpus.release()

    def second():
        yield env.timeout(10)
        assert cpus.acquire() is None
        seen["waited"] = yield from nss.write_lock()
        seen["at"] = env.now
        nss.write_unlock(2, env.now)
        cpus.release()

    env.process(first())
    env.process(second())
    env.run()
    assert seen == {"busy": 2, "waited": 90, "at": 100}
    assert nss.stats.max_waiters == 1
