"""Background readers of the mount table in the launch simulation (cohsim.kernel.simulation.launch).

Processes outside the traced threads re-read /proc/self/mountinfo under namespace_sem (read),
one read() per lock hold as seq_file does, a page of text at most
(cohsim.kernel.simulation.nssections):

- systemd, after mount-table changes, rate-limited as systemd does: after a re-read that took
  t, the next may start `systemd_ratelimit` x t later at the earliest; it reads through
  libmount, `systemd_read_bytes` per read() (1 KiB: a quarter of a page per lock hold),
  then parses every line (`systemd_parse_per_mount_ns` each, slowed by SMT or co-running
  like any CPU work). Its backlog: how long a change waited until a re-read that
  saw it was parsed (`max_lag_ns`; a change still unparsed when the launch ends counts until
  then), and its re-reads (`rereads`, the longest `longest_ns`);
- periodic probes (monitoring agents and the like), arriving as a Poisson process of
  `probe_reads_per_s`, whose gaps come from the simulation's seeded generator.

Each needs a CPU like any task (ordinary priority). Their cost grows with the mount table.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cohsim.kernel.calls import PAGE_BYTES
from cohsim.kernel.costs import KernelParams
from cohsim.kernel.simulation.clock import Environment, Event, Proc, iround
from cohsim.kernel.simulation.cpus import CPUs
from cohsim.kernel.simulation.mounttable import MountTable
from cohsim.kernel.simulation.nssections import NamespaceSections
from cohsim.units import per_s_to_gap_ns


class BackgroundReaders:
    """systemd and the probes of one simulation; each runs until the event `until` fires."""

    def __init__(
        self,
        env: Environment,
        kernel: KernelParams,
        cpus: CPUs,
        table: MountTable,
        sections: NamespaceSections,
        rng: np.random.Generator,
        slowdown: Callable[[], float],
    ) -> None:
        """`slowdown()` is how much slower CPU work runs now (SMT or co-run); `rng` is the
        simulation's seeded generator (probe arrivals)."""
        self.env, self.k, self.cpus, self.table = env, kernel, cpus, table
        self.sections, self.rng, self.slowdown = sections, rng, slowdown
        self.systemd_next_ok = 0  #: systemd's rate limit: no re-read before this (ns)
        self.rereads = 0  #: systemd's re-reads
        self.longest_ns = 0  #: its longest re-read (read and parse)
        self.max_lag_ns = 0  #: the longest a change waited for a re-read that saw it

    def systemd(self, until: Event) -> Proc:
        """systemd: re-read mountinfo after changes, at most once per ratelimit x its cost."""
        op = self.k.op("mountinfo_read")
        read_bytes = min(self.k.systemd_read_bytes, PAGE_BYTES)
        while True:
            yield self.table.dirty | until
            if until.triggered:
                return
            since = self.table.dirty_since
            wait = self.systemd_next_ok - self.env.now
            if wait > 0:
                yield wait
            self.table.dirty = self.env.event()  # a change since systemd's last re-read
            ev = self.cpus.acquire(1)
            if ev is not None:
                yield ev
            t0 = self.env.now
            yield from self.sections.read_mountinfo(op, read_bytes=read_bytes)
            parse = iround(self.k.systemd_parse_per_mount_ns * self.table.mounts * self.slowdown())
            self.sections.tally.mountinfo += parse
            yield parse
            self.cpus.release()
            cost = self.env.now - t0
            self.rereads += 1
            self.longest_ns = max(self.longest_ns, int(cost))
            self.max_lag_ns = max(self.max_lag_ns, int(self.env.now - since))
            self.systemd_next_ok = int(self.env.now + self.k.systemd_ratelimit * cost)

    def close(self) -> None:
        """At the end of the run: a change systemd has not re-read yet has waited until now."""
        if self.table.dirty.triggered:
            lag = int(self.env.now) - self.table.dirty_since
            self.max_lag_ns = max(self.max_lag_ns, lag)

    def probes(self, until: Event) -> Proc:
        """Periodic mountinfo readers: exponential gaps at `probe_reads_per_s`."""
        rate = self.k.probe_reads_per_s
        op = self.k.op("mountinfo_read")
        while rate > 0 and not until.triggered:
            gap = self.rng.exponential(per_s_to_gap_ns(rate))
            yield iround(gap)
            if until.triggered:
                return
            ev = self.cpus.acquire(1)
            if ev is not None:
                yield ev
            yield from self.sections.read_mountinfo(op)
            self.cpus.release()
