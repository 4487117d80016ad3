"""Background mountinfo readers (cohsim.kernel.background): systemd after changes, rate
limited; probes at their rate."""

from __future__ import annotations

import dataclasses

import numpy as np
import simpy

from cohsim.kernel.background import BackgroundReaders
from cohsim.kernel.costs import load_kernel
from cohsim.kernel.cpus import CPUs
from cohsim.kernel.mounttable import MountTable
from cohsim.kernel.nssections import NamespaceSections
from cohsim.kernel.records import LockStats
from cohsim.kernel.rwsem import RWSem


def make(**kernel_values: float):
    env = simpy.Environment()
    kernel = dataclasses.replace(load_kernel(), **kernel_values)
    cpus = CPUs(env, 4)

    def resume(slept: bool):
        ev = cpus.acquire(0)
        if ev is not None:
            yield ev
        return 0.0

    table = MountTable(env, 100, None)
    nss = NamespaceSections(env, RWSem(env), cpus, kernel, table, LockStats(), resume, None)
    readers = BackgroundReaders(
        env, kernel, cpus, table, nss, np.random.default_rng(0), lambda: 1.0
    )
    return env, table, nss, readers


def test_systemd_rereads_once_per_burst_of_changes_at_its_rate_limit(monkeypatch):
    env, table, nss, readers = make(probe_reads_per_s=0.0)
    k = readers.k
    until = env.event()
    starts: list[float] = []
    read = nss.read_mountinfo

    def spy(op):
        starts.append(env.now)
        return (yield from read(op))

    monkeypatch.setattr(nss, "read_mountinfo", spy)

    def changes():
        table.change(+1)  # the first re-read starts now
        yield env.timeout(1)
        table.change(+1)  # both of these wait for the rate limit, and make one re-read
        table.change(+1)
        yield env.timeout(10**10)
        until.succeed()

    env.process(changes())
    env.process(readers.systemd(until))
    env.run(until=until)
    assert len(starts) == nss.mountinfo_reads == 2
    parse = k.systemd_parse_per_mount_ns * table.mounts  # the first re-read cost at least this
    assert starts[1] - starts[0] > k.systemd_ratelimit * parse


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
