"""namespace_sem, Linux's rwsem, for the launch simulation (cohsim.kernel.launch).

A reader or a writer calls `acquire(write, spin)`; the holder calls `release(write)`. As for
every simulated resource here (cohsim.kernel.cpus, cohsim.kernel.mountlock), `acquire` returns
None when the lock is taken on the spot, with no event (the hot path), and otherwise the
thing the caller waits on. Here that thing is a `Waiter` rather than a bare event, because an
rwsem's wake-up is not always a grant: a woken writer must run again and `retry` (the lock may
have been stolen meanwhile), and each sleep needs a fresh event; readers, and writers that spin
or are handed the lock, find `granted` set when the event fires. The sections that use the lock
(the waiting policy: spin or sleep, and for how long) are cohsim.kernel.nssections.
"""

from __future__ import annotations

from cohsim.kernel.engine import Environment


class Waiter:
    """One task waiting for namespace_sem: its wake-up event (a fresh one per sleep) and
    whether it sleeps (woken, it needs its CPU back) or spins on the owner (it polls)."""

    __slots__ = ("write", "spin", "since", "event", "granted", "queued")

    def __init__(self, env: Environment, write: bool, spin: bool) -> None:
        self.write, self.spin, self.since = write, spin, env.now
        self.event = env.event()
        self.granted = False  #: woken holding the lock (readers; a writer after hand-off)
        self.queued = True  #: still in the queue (RWSem.queue drops the others lazily)


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

    def __init__(self, env: Environment, handoff_ns: int = 4_000_000) -> None:
        self.env = env
        self.readers = 0
        self.writer = False
        self.handoff: Waiter | None = None
        self.handoff_ns = handoff_ns
        #: the waiters, first come first, from `head` on; one that leaves from the middle is
        #: only marked (not `queued`) and passed over when it reaches the front, so the front is
        #: always a waiter (a deque's remove is O(n): with 1,000 containers it was a fifth of
        #: the run), and the list is emptied when none is left. A list and an index, not a
        #: deque: compiled, they are native operations, a deque's methods calls through Python
        self.queue: list[Waiter] = []
        self.head = 0
        self.waiting = 0  #: waiters in the queue
        #: the queued waiters that spin, in queue order: a release hands the lock to the first
        self.spinners: list[Waiter] = []

    def free_for(self, write: bool) -> bool:
        """Would `acquire(write)` take the lock at once?"""
        if self.writer or self.handoff is not None:
            return False
        if write:
            return self.readers == 0
        return self.readers == 0 or not self.queue

    def acquire(self, write: bool, spin: bool = False) -> Waiter | None:
        """None when taken at once (no event: the hot path); else the queued Waiter, whose
        `event` fires when it is granted (`granted`) or woken to `retry`."""
        if self.free_for(write):
            self._take(write)
            return None
        w = Waiter(self.env, write, spin)
        self.queue.append(w)
        self.waiting += 1
        if spin:
            self.spinners.append(w)
        return w

    def try_write(self) -> bool:
        """`acquire(True)` when it would take the lock at once: take it and say so; else
        change nothing (the caller then waits through `acquire`)."""
        if self.writer or self.handoff is not None or self.readers:
            return False
        self.writer = True
        return True

    def stop_spinning(self, w: Waiter) -> None:
        """A spinning writer that spun too long goes to sleep in the queue (unless it was
        granted the lock meanwhile)."""
        if not w.granted and w.spin:
            self.spinners.remove(w)
        w.spin = w.granted

    def retry(self, w: Waiter) -> bool:
        """A woken writer, now running, tries again: True if it took the lock; else it sleeps
        again (a new `event`) at the front, setting the hand-off bit once it waited too long."""
        if w.granted:
            return True
        if self.free_for(w.write) or self.handoff is w:
            if self.handoff is w:
                self.handoff = None
            self._dequeue(w)
            self._take(w.write)
            return True
        w.event = self.env.event()
        if self.queue[self.head] is w and self.env.now - w.since >= self.handoff_ns:
            self.handoff = w
        return False

    def take_read(self) -> None:
        """`acquire(False)` where `free_for(False)` said it takes the lock at once."""
        self._take(False)

    def _take(self, write: bool) -> None:
        if self.writer or (write and self.readers):  # the invariant tests rely on this check
            raise AssertionError("namespace_sem: exclusion violated")
        if write:
            self.writer = True
        else:
            self.readers += 1

    def _dequeue(self, w: Waiter) -> None:
        w.queued = False
        self.waiting -= 1
        q, head = self.queue, self.head
        while head < len(q) and not q[head].queued:
            head += 1
        if head == len(q):
            q.clear()
            head = 0
        elif head > 64 and 2 * head > len(q):  # the passed-over half goes
            del q[:head]
            head = 0
        self.head = head
        if w.spin:
            self.spinners.remove(w)

    def _grant(self, w: Waiter) -> None:
        self._dequeue(w)
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
        if self.spinners:  # hand it to the first spinning waiter
            self._grant(self.spinners[0])
            return
        q = self.queue
        first = q[self.head]
        if first.write:
            if not first.event.triggered:
                first.event.succeed()  # woken; it retries when it runs
            return
        for w in [q[i] for i in range(self.head, len(q)) if q[i].queued and not q[i].write]:
            self._grant(w)  # woken readers are granted the lock together
