"""namespace_sem's read and write sections in the launch simulation
(cohsim.kernel.simulation.launch): how a task waits for the lock (cohsim.kernel.simulation.rwsem)
and what it does with its CPU meanwhile.

- A reader that must wait sleeps (readers do not spin): it gives its CPU up and, woken holding
  the lock, needs a CPU again (the conductor's `resume`, which pays the wake-up or queues).
- Reading /proc/self/mountinfo holds the lock once per read(), which returns at most one
  page of text (fs/seq_file.c seq_read_iter(): one m_start()/m_stop() a call): one read
  section per 4 KiB of the table's text (its lines' bytes: an overlay's line carries its
  lower layers, cohsim.kernel.calls.Line), each over the lines that fit.
- A writer with no task wanting its CPU spins (rwsem optimistic spinning) unless the lock is
  marked non-spinnable: behind a writer (writers hold the lock on a CPU here) until it is
  handed the lock; behind readers for at most the kernel's reader-spin threshold,
  (20 + readers) / 2 us with readers capped at 30 (rwsem_rspin_threshold: 10.5 to 25 us),
  after which it sleeps and stops the others spinning (cohsim.kernel.simulation.rwsem). Otherwise
  (need_resched ends the spin) it sleeps, and each time it is woken it needs its CPU back
  before it retries (readers can steal the lock from it until the 4 ms hand-off).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from cohsim.kernel.calls import PAGE_BYTES
from cohsim.kernel.costs import KernelParams, OpCost
from cohsim.kernel.simulation.clock import Environment, Yield, iround
from cohsim.kernel.simulation.cpus import CPUs
from cohsim.kernel.simulation.mounttable import MountTable
from cohsim.kernel.simulation.pcpu import PcpuMutex
from cohsim.kernel.simulation.records import CpuTally, LaunchRecord, LockStats
from cohsim.kernel.simulation.rwsem import RWSem

#: a writer spins on a reader-owned rwsem for (RSPIN_BASE + readers) x RSPIN_NS before it
#: sleeps, readers capped at RSPIN_READERS: Linux kernel/locking/rwsem.c rwsem_rspin_threshold()
#: ((20 + readers) * NSEC_PER_USEC / 2, "(10 + nr_readers/2)us", capped at 25 us)
RSPIN_NS = 500
RSPIN_BASE = 20
RSPIN_READERS = 30

#: a simulated step that returns how long it waited (ns)
Waited = Generator[Yield, Any, float]


class NamespaceSections:
    """The read and write sections of namespace_sem in one simulation, and their tallies."""

    def __init__(
        self,
        env: Environment,
        sem: RWSem,
        cpus: CPUs,
        kernel: KernelParams,
        table: MountTable,
        stats: LockStats,
        resume: Callable[[bool], Waited],
        record: LaunchRecord | None,
        tally: CpuTally | None = None,
    ) -> None:
        """`resume(slept)` puts a woken task back on a CPU and returns its run-queue wait;
        `stats` collects the lock's waits and holds, `tally` (a new one by default) the time
        writers spin and tasks sleep for the lock, and mountinfo reads' holds."""
        self.env, self.sem, self.cpus, self.k = env, sem, cpus, kernel
        self.table, self.stats, self.resume, self.record = table, stats, resume, record
        self.tally = CpuTally() if tally is None else tally
        self.mountinfo_reads = 0  #: whole-file mountinfo reads

    def read_mountinfo(
        self, op: OpCost, extra_line_ns: float = 0.0, read_bytes: float = PAGE_BYTES
    ) -> Waited:
        """Read the whole mountinfo on the caller's CPU: one namespace_sem read hold per read()
        of `read_bytes` of text (a page, or less where the reader asks less), over the lines
        that fit (the table's mean line), each line `extra_line_ns` more than the op says (a
        slave namespace's peer ring walks). Returns the time spent waiting for the lock or a
        CPU."""
        self.mountinfo_reads += 1
        env, sem, st, table = self.env, self.sem, self.stats, self.table
        fixed_ns, line_ns = op.ns_read_ns, op.per_mount_read_ns + extra_line_ns
        done, waited = 0.0, 0.0
        first = True
        while done < table.nbytes or first:
            chunk = min(read_bytes, max(0.0, table.nbytes - done))
            lines = chunk * table.mounts / table.nbytes if table.nbytes > 0 else 0.0
            hold_ns = (fixed_ns if first else 0.0) + line_ns * lines
            # `read(hold_ns)`, written out (a read of a large table is hundreds of holds)
            t0 = env.now
            w = sem.acquire(False)
            if w is not None:
                self.cpus.release()
                yield w.event
                self.tally.ns_sleep += env.now - t0
                yield from self.resume(True)
                st.wait_ns += env.now - t0
            waited += env.now - t0
            hold = iround(hold_ns)
            if not env.advance(hold):
                yield hold
            st.hold_ns += hold
            self.tally.mountinfo += hold
            st.acquisitions += 1
            sem.release(False)
            done += read_bytes
            first = False
        return waited

    def try_read(self, hold_ns: float) -> bool:
        """`read(hold_ns)` where it waits for nothing (the lock free for a reader, nothing else
        due before the hold ends): done at once, without a generator (the hot path), and
        True; else nothing changed, and the caller runs `read`."""
        sem = self.sem
        if not sem.free_for(False):
            return False
        hold = iround(hold_ns)
        if not self.env.advance(hold):
            return False
        sem.take_read()
        st = self.stats
        st.hold_ns += hold
        st.acquisitions += 1
        sem.release(False)
        return True

    def read(self, hold_ns: float, pcpu: PcpuMutex | None = None) -> Waited:
        """Hold namespace_sem for reading for `hold_ns` on the caller's CPU. A reader that must
        wait sleeps (readers do not spin) and is woken holding the lock. With `pcpu`, a mount's
        per-CPU area is allocated in the hold (overlayfs's private clone of a layer): the
        allocation takes pcpu_alloc_mutex first, waiting for it inside the hold. Returns the
        waits, for the lock and for the mutex."""
        st, env = self.stats, self.env
        t0 = env.now
        w = self.sem.acquire(False)
        if w is not None:
            self.cpus.release()
            yield w.event
            self.tally.ns_sleep += env.now - t0
            yield from self.resume(True)
            st.wait_ns += env.now - t0
        waited = float(env.now - t0)
        t1, hold = env.now, iround(hold_ns)
        if pcpu is not None:
            waited += yield from pcpu.alloc()
            hold -= pcpu.hold
        if hold > 0 and not env.advance(hold):
            yield hold
        st.hold_ns += env.now - t1
        st.acquisitions += 1
        self.sem.release(False)
        return waited

    def try_read_alloc(self, hold_ns: float, pcpu: PcpuMutex) -> bool:
        """`read(hold_ns, pcpu)` where it waits for nothing (the lock free for a reader, the
        mutex free, nothing else due before the hold ends): done at once, and True; else
        nothing changed, and the caller runs `read`."""
        if not pcpu.free or not self.try_read(hold_ns):
            return False
        pcpu.count()
        return True

    def write_lock(self) -> Waited:
        """Take namespace_sem for writing, spinning or sleeping as the module says; returns the
        wait. The caller holds it on its CPU until `write_unlock`."""
        sem = self.sem
        t0 = self.env.now
        behind_readers = sem.readers > 0 and not sem.writer
        readers = sem.readers
        spin = (sem.writer or (behind_readers and not sem.nonspinnable)) and not self.cpus.waiting
        w = sem.acquire(True, spin)
        if w is None:
            return 0.0
        nss = self.stats
        nss.max_waiters = max(nss.max_waiters, sem.waiting)
        if spin:
            self.cpus.spinning += 1
            if behind_readers:
                limit = self.env.timeout(RSPIN_NS * (RSPIN_BASE + min(readers, RSPIN_READERS)))
                yield w.event | limit
            else:
                yield w.event
            self.cpus.spinning -= 1
            sem.stop_spinning(w)  # not granted: spun too long, or stopped by one that did
            self.tally.ns_spin += self.env.now - t0
        while not w.granted:
            self.cpus.release()
            slept = self.env.now
            yield w.event
            self.tally.ns_sleep += self.env.now - slept
            yield from self.resume(True)
            if sem.retry(w):
                break
        waited = self.env.now - t0
        nss.wait_ns += waited
        return waited

    def write_unlock(self, tid: int, since: float) -> None:
        """Thread `tid` releases the write hold it took at `since` (ns)."""
        nss = self.stats
        nss.acquisitions += 1
        nss.hold_ns += self.env.now - since
        if self.record is not None:
            self.record.ns_holds.append((tid, int(since), int(self.env.now)))
        self.sem.release(True)
