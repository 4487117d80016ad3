"""mount_lock in the launch simulation (cohsim.kernel.simulation.launch): a seqlock, its writers and
its readers.

Linux's mount_lock is a seqlock: writers take its spinlock (a queued spinlock: FIFO, spinning
on the CPU) and bump the sequence counter on taking and on releasing it; path walks read the
counter locklessly and spin while a writer holds it.

- A writer's section costs the line transfers level 2 prices
  (`cohsim.kernel.linecosts.LineCosts`): the spinlock's hand-off when it was queued, and the
  wait for the line exclusive while k CPUs spin reading the counter; then its own work. A
  section that takes a free lock with no walk spinning fetches the line from the copies left
  on it since the last section (cohsim.kernel.linetake: the last holder, on another CPU unless
  it was the same task, and the background walks that read the counter since its release).
- A walk that finds the lock write-held spins until the release; then every spinner re-reads
  the line, which costs level 2's reader latency for that many spinners. A walk during which
  the counter moved falls back to taking the spinlock (`__legitimize_mnt`).
- Background path walks: every CPU running syscall-heavy code (containers' runtimes after
  their mounts; node daemons, counted at their lower walk rate) starts a walk every
  `walk_interval_ns`, and each one spins in
  path_init while mount_lock is write-held. They are not simulated one by one (millions per
  second): for a write section of length H, the number of such CPUs spinning on the line by
  its end is k = B (1 - exp(-H / interval)) for B busy CPUs, and the writer's release waits
  for the line behind them (level 2's `writer_ns(k)`: readers that hold copies and keep
  arriving at the line's coherence point, the mesh home agent's queue among them), which
  lengthens H: k is the fixed point of that loop. Their spinning time is taken from those
  CPUs' progress (a debt each busy CPU repays: `debt_per_cpu`). After the release each of
  them holds a copy of the line again, which the next section's take must fetch.

The writer's side has the shape of the other simulated resources (cohsim.kernel.simulation.cpus,
cohsim.kernel.simulation.rwsem): `acquire` then `release`, with a free lock taken on the spot
without any event (`take`, the hot path). It differs in what `acquire` is: a generator the caller
runs (`yield from`), not a call that returns an event to wait on, because a queued writer's
grant is not complete when the releaser hands it over: the new holder then pays the
spinlock's hand-off, priced for the waiters still queued at that moment, and the wait for the
line behind the walks spinning on it, and `acquire` returns that line cost so the section can
add it to its hold. Making it return an event would move that work to every caller (`section`
and `legitimize_walk`) without changing a single event. A whole section that waits for
nothing runs without a generator: `try_section` (the conductor's hot path).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Generator
from typing import Any

from cohsim.kernel.costs import KernelParams
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.linetake import LineTakes
from cohsim.kernel.simulation.clock import Environment, Event, Proc, Yield, iround
from cohsim.kernel.simulation.records import LaunchRecord, LockStats


class MountLock:
    """mount_lock's state in one simulation: holder, FIFO of waiting writers, when the
    sequence counter moved, the walks spinning on it and the background CPUs' spinning."""

    def __init__(
        self,
        env: Environment,
        costs: LineCosts,
        kernel: KernelParams,
        vcpus: int,
        slowdown: Callable[[], float],
        stats: LockStats,
        spin_stats: LockStats,
        record: LaunchRecord | None,
    ) -> None:
        """`slowdown()` is how much slower CPU work runs now (SMT or co-run); `stats` and
        `spin_stats` collect the writers' and the spinning walks' waits and holds."""
        self.env, self.costs, self.k = env, costs, kernel
        self.vcpus = float(vcpus)
        self.slowdown = slowdown
        self.stats, self.spin_stats, self.record = stats, spin_stats, record
        self.held = False  #: the spinlock is taken (by a writer or a locked reader)
        #: the sequence counter is odd: a writer holds the lock (a locked reader takes the
        #: spinlock without moving the counter: walks do not spin on it)
        self.writing = False
        self.queue: deque[Event] = deque()  #: waiting for the spinlock, first in first served
        self.change_times: list[int] = []  #: when the sequence counter moved (ns)
        self.releases = 0
        self._released: Event | None = None  # made when someone waits for a release
        self.seq_spinners = 0  #: walks spinning on the counter now
        self.bg_spinners = 0.0  #: background CPUs spinning on the section in progress
        self._t_in, self._t0, self._h = 0, 0, 0.0  # the section in progress: in, held, hold
        self._count = 1  # ... and how many sections back to back it is
        #: `_bg_fixed_point` by (busy, seq_spinners), then by the hold (ns); the part for the
        #: last (busy, seq_spinners) at hand (they change seldom: an int key is a cheap look-up)
        self._bg_memo: dict[tuple[float, int], dict[int, tuple[float, float]]] = {}
        self._bg_busy, self._bg_seq = -1.0, -1
        self._bg_hold: dict[int, tuple[float, float]] = {}
        #: level 2's answers as asked here (pure functions of their argument, asked over and
        #: over with the same few counts): writer_ns by spinners, reader_ns by spinners
        self._writer_at: dict[int, float] = {}  # (by the spinners: ints, found on the first probe)
        self._reader_at: dict[float, float] = {}
        self._line_at: dict[float, float] = {}
        self._handoff_at: dict[int, float] = {}  # spinlock_ns by waiters
        #: CPUs doing path-walk-heavy work outside the trace, in runtime-equivalents (walking
        #: every `walk_interval_ns`): the node daemons walk less often than a runtime
        self.busy_bg = kernel.daemon_cpus * kernel.walk_interval_ns / kernel.daemon_walk_interval_ns
        self.debt_per_cpu = 0.0  #: ns of spinning each such CPU owes so far
        self.bg_spin_ns = 0.0
        self.legitimize = 0  #: walks that fell back to the spinlock
        self.legitimize_hold_ns = 0.0  #: their holds (their waits count in `stats`)
        #: the line's fetch from the copies left on it (level 1, cohsim.kernel.linetake)
        self.takes = LineTakes(costs.machine, kernel.walk_interval_ns)
        #: the task that released the lock last (-1: a walk's legitimize; -2: none yet, the
        #: line found where the first taker is)
        self._last_tid = -2
        self._last_release = 0  #: ... and when (ns)
        #: the walks that spun on the counter through the last write section: each re-read the
        #: line at its release and holds a copy the next taker must fetch
        self._left = 0.0

    @property
    def walking(self) -> float:
        """The CPUs walking paths beside the lock now: the busy background CPUs, at most all."""
        return self.busy_bg if self.busy_bg < self.vcpus else self.vcpus

    @property
    def busy(self) -> bool:
        """Held or wanted: a writer coming now must queue."""
        return self.held or bool(self.queue)

    # ----- writers -------------------------------------------------------------------------

    def acquire(self, write: bool = True, tid: int = -1) -> Generator[Yield, Any, float]:
        """Take the spinlock (FIFO, spinning on the CPU), as a writer (`write`: the counter
        moves) or a locked reader; return the line cost still to pay before the section's
        work: the hand-off to us plus the wait for the line exclusive behind the CPUs spinning
        on it."""
        if not self.busy:
            return self.take(write, tid)
        st = self.stats
        t0 = self.env.now
        ev = self.env.event()
        self.queue.append(ev)
        st.max_waiters = max(st.max_waiters, len(self.queue))
        yield ev  # granted by the releaser, who pays the hand-off below
        st.wait_ns += self.env.now - t0
        n = len(self.queue) + 1
        handoff = self._handoff_at.get(n)
        if handoff is None:
            handoff = self._handoff_at[n] = self.costs.spinlock_ns(n)
        self.writing = write
        if write:
            self._changed()
        return self._writer_ns(self.seq_spinners) + handoff

    def take(self, write: bool = True, tid: int = -1) -> float:
        """`acquire` when the lock is free: no waiting (no generator on the hot path)."""
        self.held = True
        self.writing = write
        if write:
            self._changed()
        return self._free_line(tid)

    def _free_line(self, tid: int) -> float:
        """The line's cost for task `tid` taking the free lock: behind the walks spinning on
        the counter (level 2) or, with none, fetched from the copies left since the last
        release (level 1): the last holder's unless it was this task, the background walks'."""
        seq = self.seq_spinners
        if seq:
            return self._writer_ns(seq)
        last = self._last_tid
        other = 0 if last == -2 or (tid == last and tid >= 0) else 1
        return self.takes.ns(other + self._left, self.walking, self.env.now - self._last_release)

    def _writer_ns(self, k: int) -> float:
        """level 2's `writer_ns(k)`, each count asked once."""
        v = self._writer_at.get(k)
        if v is None:
            v = self._writer_at[k] = self.costs.writer_ns(k)
        return v

    def _line_ns(self, k: float) -> float:
        """level 2's `writer_ns(k)` at a fractional count of spinners, each asked once."""
        v = self._line_at.get(k)
        if v is None:
            v = self._line_at[k] = self.costs.writer_ns(k)
        return v

    def _reader_ns(self, k: float) -> float:
        """level 2's `reader_ns(k)`, each count asked once."""
        v = self._reader_at.get(k)
        if v is None:
            v = self._reader_at[k] = self.costs.reader_ns(k)
        return v

    def _changed(self) -> None:
        """The sequence counter moved (a writer took or released the lock)."""
        self.change_times.append(self.env.now)

    @property
    def released(self) -> Event:
        """An event that fires at the next release. Made only when someone waits for it:
        most releases have no one waiting, and an unwatched event would still be scheduled
        and stepped (a fifth of all events)."""
        if self._released is None:
            self._released = self.env.event()
        return self._released

    def spinning_done_at(self) -> int:
        """The release count by which every CPU spinning on the lock now has left it (what an
        RCU grace period waits for: spinning here is not preemptible): each waiter queued now
        takes and releases it; the walks and background CPUs on a writer's counter leave at
        its release."""
        spinning = self.seq_spinners > 0 or self.bg_spinners > 0 or bool(self.queue)
        return self.releases + len(self.queue) + (1 if self.writing and spinning else 0)

    def spinning_done(self, at: int) -> bool:
        """Released `at` times in all (`spinning_done_at`), or free and wanted by no one."""
        return self.releases >= at or not self.busy

    def release(self) -> None:
        if self.writing:
            self._changed()
            self.writing = False
        self.releases += 1
        ev, self._released = self._released, None
        if self.queue:
            self.queue.popleft().succeed()  # held stays True: handed over
        else:
            self.held = False
        if ev is not None:
            ev.succeed()

    def section(
        self, work_ns: float, tid: int, counted: bool = True, write: bool = True, count: int = 1
    ) -> Generator[Yield, Any, float]:
        """A writer's whole section: take, hold for `work_ns` (and the line costs, lengthened
        by the background CPUs it attracts into spinning: one wait for all of it), release.
        Returns how long it took, waits included (ns). `counted`: its hold counts in the
        lock's hold time and record (a walk's legitimize check counts as an acquisition only).
        Not `write`: a locked reader's section (read_seqlock_excl): the spinlock and its line,
        but the counter does not move and no walk spins on it. `count`: so many sections back
        to back by this task (an unmount's puts, each its own lock_mount_hash()), as one hold
        that pays the line once more for each after the first.
        `try_section` does the same without a generator where it waits for nothing."""
        t_in = self.env.now
        if self.held or self.queue:
            line = yield from self.acquire(write, tid)
        else:
            line = self.take(write, tid)
        k, h = self._spinners(work_ns) if write else (0.0, work_ns * self.slowdown())
        if count > 1:
            h += (count - 1) * self._line_ns(k + self.seq_spinners)
        self._held_at(t_in, self.env.now, line, k, h, count)
        took = iround(line + h)
        if not self.env.advance(took):  # (almost always nothing else happens meanwhile)
            yield took
        return self.leave(tid, counted)

    def try_section(self, work_ns: float, tid: int, write: bool = True, count: int = 1) -> float:
        """`section(work_ns, tid, write=write, count=count)` where it waits for nothing (the
        lock free and nothing else due before the hold ends; the conductor's hot path, three
        sections a call): done at once, without a generator, and its time returned; else -1,
        nothing changed, and the caller runs `section` (which works out the same numbers
        again)."""
        if self.held or self.queue:
            return -1.0
        t_in = self.env.now
        line = self._free_line(tid)
        k, h = self._spinners(work_ns) if write else (0.0, work_ns * self.slowdown())
        if count > 1:
            h += (count - 1) * self._line_ns(k + self.seq_spinners)
        if not self.env.advance(iround(line + h)):
            return -1.0
        self.held = True  # `take` at t_in, written out
        self.writing = write
        if write:
            self.change_times.append(t_in)
        self._held_at(t_in, t_in, line, k, h, count)
        return self.leave(tid)

    def spaced(self, work_ns: float, count: int, gap_ns: float) -> float:
        """`count` short write sections of `work_ns` each by a task that holds namespace_sem and
        works between them (copy_tree()'s attach of each copied mount): each takes the line,
        and is lengthened by the background walkers it catches in its own short hold. Returns
        their time, to add to the caller's hold. Not queued behind other writers (each is
        ~0.1 us among ~2 us of other work: an assumption), and the counter is recorded moving
        once for all of them (the walks' legitimize check sees the span). Each takes the line
        `gap_ns` after the task's previous one (the copy's work between them): fetched from
        the walks that read it since, or behind those spinning on it."""
        if count <= 0:
            return 0.0
        seq = self.seq_spinners
        if seq:
            line = self._writer_ns(seq)
        else:
            line = self.takes.ns(0, self.walking, gap_ns)
        k, h = self._spinners(work_ns)
        st = self.stats
        st.acquisitions += count
        st.hold_ns += count * h
        st.wait_ns += count * line
        if k > 0:
            spin = count * k * (h / 2 + self._reader_ns(k + self.seq_spinners))
            self.bg_spin_ns += spin
            busy_bg = self.busy_bg
            self.debt_per_cpu += spin / (busy_bg if busy_bg >= 1.0 else 1.0)
        self._changed()
        return count * (line + h)

    def _spinners(self, work_ns: float) -> tuple[float, float]:
        """The background CPUs spinning on the line by the end of a hold of `work_ns` from
        now, and the hold they lengthen (`_bg_fixed_point`, memoised)."""
        hold = work_ns * self.slowdown()
        busy = self.walking
        if busy <= 0:
            return 0.0, hold
        seq = self.seq_spinners
        if busy != self._bg_busy or seq != self._bg_seq:
            self._bg_busy, self._bg_seq = busy, seq
            self._bg_hold = self._bg_memo.setdefault((busy, seq), {})
        key = iround(hold)
        hit = self._bg_hold.get(key)
        if hit is None:
            hit = self._bg_hold[key] = self._bg_fixed_point(hold, busy)
        return hit

    def _held_at(
        self, t_in: int, taken: int, line: float, k: float, h: float, count: int = 1
    ) -> None:
        """A section that began at `t_in` took the lock at `taken`, `line` still to pay, with
        `k` spinners and hold `h` (`count` sections back to back): kept for `leave` (one holder
        at a time)."""
        self._t_in, self._t0 = t_in, taken + iround(line)
        self.bg_spinners, self._h, self._count = k, h, count
        self.stats.wait_ns += line

    def leave(self, tid: int, counted: bool = True) -> float:
        """`section`'s end, its hold waited: the background spinners' time, owed by their CPUs,
        the tallies, the release. Returns how long the section took, waits included (ns)."""
        k, h = self.bg_spinners, self._h
        if k > 0:
            x = k + self.seq_spinners
            r = self._reader_at.get(x)
            if r is None:
                r = self._reader_ns(x)
            spin = k * (h / 2 + r)
            self.bg_spin_ns += spin
            busy_bg = self.busy_bg  # as it is now
            self.debt_per_cpu += spin / (busy_bg if busy_bg >= 1.0 else 1.0)  # max(busy_bg, 1)
        self.bg_spinners = 0.0
        now, st = self.env.now, self.stats
        st.acquisitions += self._count
        if counted:
            t0 = self._t0
            st.hold_ns += now - t0
            if self.record is not None:
                self.record.ml_holds.append((tid, int(t0), int(now)))
        else:
            self.legitimize_hold_ns += now - self._t0
        self._last_tid, self._last_release = tid, now
        self._left = k + self.seq_spinners if self.writing else 0.0
        self.release()
        return now - self._t_in

    def _bg_fixed_point(self, hold_ns: float, busy: float) -> tuple[float, float]:
        """Background CPUs spinning on the line by the end of a hold of `hold_ns` with `busy`
        of them busy, and the hold lengthened by the writer's wait for the line behind them."""
        interval = self.k.walk_interval_ns
        k, h = 0.0, hold_ns
        for _ in range(20):
            k_new = busy * (1.0 - math.exp(-h / interval))
            h = hold_ns + self._line_ns(k_new + self.seq_spinners)
            if abs(k_new - k) < 0.01:
                k = k_new
                break
            k = k_new
        return k, h

    # ----- readers: path walks -------------------------------------------------------------

    def seq_spin(self) -> Proc:
        """A walk finding the lock write-held spins on the counter until the writer releases
        it; then every spinner re-reads the line (level 2's reader cost for that many)."""
        st = self.spin_stats
        t0 = self.env.now
        self.seq_spinners += 1
        if self.record is not None:
            self.record.spinners.append((int(t0), self.seq_spinners))
        while self.writing:
            yield self.released
        k = self.seq_spinners
        self.seq_spinners -= 1
        yield iround(self._reader_ns(k))
        st.wait_ns += self.env.now - t0
        st.acquisitions += 1

    def moved_under(self, start: int, walk_ns: float) -> bool:
        """Did the sequence counter move while a walk from `start` (ns) ran?"""
        times = self.change_times
        if not walk_ns or not times or times[-1] <= start:
            return False
        lo, hi = 0, len(times)  # bisect_right(times, start), natively
        while lo < hi:
            mid = (lo + hi) >> 1
            if start < times[mid]:
                hi = mid
            else:
                lo = mid + 1
        return lo < len(times) and times[lo] <= start + walk_ns

    def legitimize_walk(self) -> Proc:
        """The walk's counter moved: __legitimize_mnt takes the spinlock to check the mount."""
        self.legitimize += 1
        yield from self.section(self.k.legitimize_ns, -1, counted=False)
