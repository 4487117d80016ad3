"""The two waiting rooms of the launch simulation (cohsim.kernel.launch), as simpy primitives.

`CPUs` is the machine's hardware threads as a run queue; `RWSem` is namespace_sem. Both grant
at once without creating a simpy event when nothing is in the way — the common case, and the
simulation's hot path — and otherwise hand the caller an event that fires on the grant.
"""

from __future__ import annotations

from collections import deque

import simpy


class Waiter:
    """One task waiting for namespace_sem: its wake-up event (a fresh one per sleep) and
    whether it sleeps (woken, it needs its CPU back) or spins on the owner (it polls)."""

    __slots__ = ("write", "spin", "since", "event", "granted")

    def __init__(self, env: simpy.Environment, write: bool, spin: bool) -> None:
        self.write, self.spin, self.since = write, spin, env.now
        self.event = env.event()
        self.granted = False  #: woken holding the lock (readers; a writer after hand-off)


class RWSem:
    """namespace_sem as Linux's rwsem (kernel/locking/rwsem.c, 5.11 and later).

    - Whoever comes while the lock is free takes it, waiters or not (writers by optimistic
      spinning or trylock; readers by "reader optimistic lock stealing": not writer-owned, no
      hand-off pending, and not already held by readers while others wait).
    - A release that frees the lock hands it straight to a spinning waiter (it polls the lock)
      if there is one; otherwise it wakes the first sleeper: a writer is only woken and must
      retry once it runs (others may have stolen the lock meanwhile), while readers at the
      front of the queue are granted the lock as they are woken.
    - A first waiting writer that has waited `handoff_ns` (RWSEM_WAIT_TIMEOUT: 4 ms at HZ 250
      or 1000) and still fails sets the hand-off bit: no more stealing; the lock is granted to
      it at the next release.
    """

    def __init__(self, env: simpy.Environment, handoff_ns: int = 4_000_000) -> None:
        self.env = env
        self.readers = 0
        self.writer = False
        self.handoff: Waiter | None = None
        self.handoff_ns = handoff_ns
        self.queue: deque[Waiter] = deque()

    def _free_for(self, write: bool) -> bool:
        if self.writer or self.handoff is not None:
            return False
        if write:
            return self.readers == 0
        return self.readers == 0 or not self.queue

    def acquire(self, write: bool, spin: bool = False) -> Waiter | None:
        """None when taken at once (no event: the hot path); else the queued Waiter, whose
        `event` fires when it is granted (`granted`) or woken to `retry`."""
        if self._free_for(write):
            self._take(write)
            return None
        w = Waiter(self.env, write, spin)
        self.queue.append(w)
        return w

    def retry(self, w: Waiter) -> bool:
        """A woken writer, now running, tries again: True if it took the lock; else it sleeps
        again (a new `event`) at the front, setting the hand-off bit once it waited too long."""
        if w.granted:
            return True
        if self._free_for(w.write) or self.handoff is w:
            if self.handoff is w:
                self.handoff = None
            self.queue.remove(w)
            self._take(w.write)
            return True
        w.event = self.env.event()
        if self.queue[0] is w and self.env.now - w.since >= self.handoff_ns:
            self.handoff = w
        return False

    def _take(self, write: bool) -> None:
        if self.writer or (write and self.readers):  # the invariant tests rely on this check
            raise AssertionError("namespace_sem: exclusion violated")
        if write:
            self.writer = True
        else:
            self.readers += 1

    def _grant(self, w: Waiter) -> None:
        self.queue.remove(w)
        self._take(w.write)
        w.granted = True
        if not w.event.triggered:
            w.event.succeed()

    def release(self, write: bool) -> None:
        if write:
            self.writer = False
        else:
            self.readers -= 1
        if self.readers or not self.queue:
            return
        if self.handoff is not None:
            h, self.handoff = self.handoff, None
            self._grant(h)
            return
        spinner = next((w for w in self.queue if w.spin), None)
        if spinner is not None:
            self._grant(spinner)
            return
        head = self.queue[0]
        if head.write:
            if not head.event.triggered:
                head.event.succeed()  # woken; it retries when it runs
            return
        for w in [w for w in self.queue if not w.write]:
            self._grant(w)  # woken readers are granted the lock together


class CPUs:
    """The machine's hardware threads as a run queue: a grant is immediate when one is free
    (no simpy event at all: this is the hot path), else FIFO within two priorities (0: a task
    woken holding or about to take a lock, 1: ordinary runnable work).

    Idle CPUs are kept with the time they went idle; a grant takes the one that idled last
    (a woken task goes back to the CPU it left, if that is still idle) and `last_idle_ns` says
    how long it had been idle (a wake-up's cost depends on it: cohsim.kernel.waketable)."""

    def __init__(self, env: simpy.Environment, capacity: int) -> None:
        self.env = env
        self.capacity = capacity
        self.busy = 0
        self.queues: tuple[deque[simpy.Event], deque[simpy.Event]] = (deque(), deque())
        self.idle_since: list[float] = [env.now] * capacity  #: a stack: the last idled on top
        self.last_idle_ns = 0.0  #: how long the CPU the last immediate grant took was idle
        self._start = env.now
        self._idle_ns = 0.0  #: idle time of the CPUs granted since (the sum of last_idle_ns)

    def acquire(self, priority: int = 1) -> simpy.Event | None:
        """None if a CPU was free and is now ours; else an event that fires when one is."""
        if self.busy < self.capacity:
            self.busy += 1
            self.last_idle_ns = self.env.now - self.idle_since.pop()
            self._idle_ns += self.last_idle_ns
            return None
        ev = self.env.event()
        self.queues[priority].append(ev)
        return ev

    def release(self) -> None:
        for q in self.queues:
            if q:
                q.popleft().succeed()  # the CPU passes straight to the waiter
                return
        self.busy -= 1
        self.idle_since.append(self.env.now)

    def busy_ns(self) -> float:
        """CPU time held so far, all CPUs together (ns): a CPU counts from its grant to its
        release, passed from task to task without a gap when someone waits. Derived from the
        idle time the grants already measure, so the hot path keeps no extra tally."""
        now = self.env.now
        idle_now = sum(now - t for t in self.idle_since)  # the CPUs idle at this moment
        return self.capacity * (now - self._start) - self._idle_ns - idle_now

    @property
    def waiting(self) -> int:
        return len(self.queues[0]) + len(self.queues[1])
