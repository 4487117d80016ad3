"""Background mountinfo readers (cohsim.kernel.simulation.background): systemd after changes, rate
limited; probes at their rate."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cohsim.kernel.costs import load_kernel
from cohsim.kernel.simulation.background import BackgroundReaders
from cohsim.kernel.simulation.clock import Environment
from cohsim.kernel.simulation.cpus import CPUs
from cohsim.kernel.simulation.mounttable import MountTable
from cohsim.kernel.simulation.nssections import NamespaceSections
from cohsim.kernel.simulation.records import LockStats
from cohsim.kernel.simulation.rwsem import RWSem


def make(**kernel_values: float):
    env = Environment()
    kernel = dataclasses.replace(load_kernel(), **kernel_values)
    cpus = CPUs(env, 4)

    def resume(slept: bool):
        ev = cpus.acquire(0)
        if ev is not None:
            yield ev
        return 0.0

    table = MountTable(env, 100, None, 100 * kernel.node_line_bytes)
    nss = NamespaceSections(env, RWSem(env), cpus, kernel, table, LockStats(), resume, None)
    readers = BackgroundReaders(
        env, kernel, cpus, table, nss, np.random.default_rng(0), lambda: 1.0
    )
    return env, table, nss, readers


def run_systemd(env, readers, script):
    """systemd while the table changes as `script` says, a list of (ns to wait first, changes
    then), until its last wait is over."""
    until = env.event()

    def changes():
        for wait, n in script:
            if wait:
                yield env.timeout(wait)
            for _ in range(n):
                readers.table.change(+1)
        until.succeed()

    env.process(changes())
    env.process(readers.systemd(until))
    env.run(until=until)


@pytest.mark.pure_python
def test_systemd_rereads_once_per_burst_of_changes_at_its_rate_limit(monkeypatch):
    env, table, nss, readers = make(probe_reads_per_s=0.0)
    k = readers.k
    starts: list[float] = []
    read = nss.read_mountinfo

    def spy(op, read_bytes=4096):
        starts.append(env.now)
        return (yield from read(op, read_bytes=read_bytes))

    monkeypatch.setattr(nss, "read_mountinfo", spy)
    # the first re-read starts at once; the next two changes wait for the rate limit, and
    # make one re-read
    run_systemd(env, readers, [(0, 1), (1, 2), (10**10, 0)])
    assert len(starts) == nss.mountinfo_reads == 2
    parse = k.systemd_parse_per_mount_ns * table.mounts  # the first re-read cost at least this
    assert starts[1] - starts[0] > k.systemd_ratelimit * parse
    # its backlog: the second and third changes waited for the rate limit and the re-read
    assert readers.rereads == 2 and readers.longest_ns >= parse
    assert readers.max_lag_ns >= starts[1] - 1 + parse


def test_systemd_reads_a_quarter_page_per_lock_hold():
    """libmount asks 1 KiB per read(): systemd takes namespace_sem four times as often for
    the same table as a reader of whole pages (mountinfo-readers: 73 vs 20 read() calls)."""
    env, table, nss, readers = make(probe_reads_per_s=0.0)
    run_systemd(env, readers, [(0, 1), (10**9, 0)])
    pages = -(-table.nbytes // 4096)
    assert nss.stats.acquisitions == -(-table.nbytes // readers.k.systemd_read_bytes) > 3 * pages


def test_a_change_left_unparsed_at_the_end_counts_in_the_backlog():
    env, _, _, readers = make(probe_reads_per_s=0.0, systemd_ratelimit=1e6)
    # by the second change the first re-read is long over; the rate limit holds the next
    run_systemd(env, readers, [(0, 1), (10**6, 1), (5 * 10**8, 0)])
    readers.close()
    assert readers.rereads == 1 and readers.max_lag_ns == 5 * 10**8


def test_probes_read_at_their_rate():
    env, _, nss, readers = make(probe_reads_per_s=100.0)  # one every 10 ms on average
    until = env.event()

    def stop():
        yield env.timeout(10**9)  # a second
        until.succeed()

    env.process(stop())
    env.process(readers.probes(until))
    env.run(until=until)
    assert 80 < nss.mountinfo_reads < 120
