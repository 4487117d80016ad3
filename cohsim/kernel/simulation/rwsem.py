"""namespace_sem, Linux's rwsem, for the launch simulation (cohsim.kernel.simulation.launch).

A reader or a writer calls `acquire(write, spin)`; the holder calls `release(write)`. As for
every simulated resource here (cohsim.kernel.simulation.cpus, cohsim.kernel.simulation.mountlock),
`acquire` returns None when the lock is taken on the spot, with no event (the hot path), and
otherwise the thing the caller waits on. Here that thing is a `Waiter` rather than a bare event,
because an rwsem's wake-up is not always a grant: a woken writer must run again and `retry` (the
lock may have been stolen meanwhile), and each sleep needs a fresh event; readers, and writers that
spin or are handed the lock, find `granted` set when the event fires. The sections that use the lock
(the waiting policy: spin or sleep, and for how long) are cohsim.kernel.simulation.nssections.
"""

from __future__ import annotations

from cohsim.kernel.simulation.clock import Environment, Event, Proc


def _wake(event: Event) -> None:
    """Trigger `event` unless it already was (a waiter woken twice is woken once)."""
    if not event.triggered:
        event.succeed()


class Waiter:
    """One task waiting for namespace_sem: its wake-up event (a fresh one per sleep) and
    whether it sleeps in the wait list (woken, it needs its CPU back) or spins on the owner
    (an optimistic spinner: it polls the lock on its CPU, outside the wait list)."""

    __slots__ = ("write", "spin", "since", "event", "granted", "queued")

    def __init__(self, env: Environment, write: bool, spin: bool) -> None:
        self.write, self.spin, self.since = write, spin, env.now
        self.event = env.event()
        self.granted = False  #: woken holding the lock (readers; a writer after hand-off)
        self.queued = False  #: in the wait list (RWSem.queue drops the others lazily)


class RWSem:
    """namespace_sem as Linux's rwsem (kernel/locking/rwsem.c, 6.x).

    Two kinds of waiter, as in the kernel: sleepers in the wait list (`queue`, first come
    first), and writers spinning optimistically (`spinners`, the osq's order) that are not in
    the wait list at all.

    - Taking: a writer takes the lock when nobody holds it; a reader when no writer holds it
      and either nobody does ("reader optimistic lock stealing", wait list or not) or nobody
      sleeps in the wait list (the fast path: spinning writers do not set the waiters bit, so
      readers join a reader-owned lock a writer is spinning on). Nobody takes it while the
      hand-off bit is set, except the waiter it is for.
    - A reader that must wait joins the wait list; if the lock is reader-owned and the list's
      first waiter is a reader, the queued readers are granted it at once
      (rwsem_cond_wake_waiter with RWSEM_WAKE_READERS).
    - A release that frees the lock (a writer's, or the last reader's): a spinning writer
      polls the lock and takes it first (it needs one cache-line transfer; the waker first
      takes the wait_lock). With sleepers waiting, the releaser also runs rwsem_mark_wake on
      the list's first waiter: a writer is woken and must `retry` once it runs (others may have
      taken the lock meanwhile); readers at the front are granted the lock together (every
      reader in the list, MAX_READERS_WAKEUP being 256) unless a spinner took it, in which
      case a first reader that has waited `handoff_ns` sets the hand-off bit.
    - Readers granted together are woken one after another: rwsem_mark_wake() grants the
      read lock to every queued reader at once (kernel/locking/rwsem.c:562-595, up to
      MAX_READERS_WAKEUP, :405) and the releaser then wakes each in turn (`wake_up_q()`,
      :1399; kernel/sched/core.c:1173), a try_to_wake_up() and mostly an IPI each: the k-th
      reader's wake-up comes k x `wake_step_ns` after the grant (0: all at once). The lock is
      theirs meanwhile, so a writer waits for the last of them to run and leave.
    - Hand-off (RWSEM_WAIT_TIMEOUT, 4 ms at HZ 250 or 1000): a first waiting writer that has
      waited that long and still fails its retry, or a first reader whose grant failed after
      that long, sets the bit; the lock goes to it (a reader: every queued reader) at the next
      release.
    - A spinner behind readers gives up after the reader-spin threshold
      (cohsim.kernel.simulation.nssections) and joins the wait list's tail; it marks the
      reader-owned lock non-spinnable, which stops every writer spinning on it and keeps new ones
      from starting, until a writer takes the lock or the last reader leaves (`nonspinnable`).

    Not modelled: a spinner behind a writer that is handed to readers keeps spinning (the kernel
    would start its reader-spin clock then); a spinner never stops for need_resched.
    """

    def __init__(
        self, env: Environment, handoff_ns: int = 4_000_000, wake_step_ns: int = 0
    ) -> None:
        self.env = env
        self.wake_step_ns = wake_step_ns  #: the releaser's wake_up_q() time per woken reader
        self.readers = 0
        self.writer = False
        self.handoff: Waiter | None = None
        self.handoff_ns = handoff_ns
        #: writers may not spin on the reader-owned lock (RWSEM_NONSPINNABLE)
        self.nonspinnable = False
        #: the wait list, first come first, from `head` on; one that leaves from the middle is
        #: only marked (not `queued`) and passed over when it reaches the front, so the front
        #: is always a sleeper (a deque's remove is O(n): with 1,000 containers it was a fifth
        #: of the run), and the list is emptied when none is left. A list and an index, not a
        #: deque: compiled, they are native operations, a deque's methods calls through Python
        self.queue: list[Waiter] = []
        self.head = 0
        self.sleeping = 0  #: waiters in the wait list
        #: the writers spinning optimistically, in osq order: a release hands the lock to the first
        self.spinners: list[Waiter] = []

    @property
    def waiting(self) -> int:
        """Everyone waiting: the wait list's sleepers and the spinners."""
        return self.sleeping + len(self.spinners)

    def free_for(self, write: bool) -> bool:
        """Would `acquire(write)` take the lock at once?"""
        if self.writer or self.handoff is not None:
            return False
        if write:
            return self.readers == 0
        return self.readers == 0 or not self.sleeping

    def acquire(self, write: bool, spin: bool = False) -> Waiter | None:
        """None when taken at once (no event: the hot path); else the Waiter (a spinner if
        `spin`, which only writers do), whose `event` fires when it is granted (`granted`) or
        woken to `retry`, or, for a spinner, told to stop spinning (`stop_spinning`)."""
        if self.free_for(write):
            self._take(write)
            return None
        w = Waiter(self.env, write, spin and write)
        if w.spin:
            self.spinners.append(w)
        else:
            self._enqueue(w)
            if w.granted:  # granted as it joined (readers at the front): it never sleeps
                return None
        return w

    def try_write(self) -> bool:
        """`acquire(True)` when it would take the lock at once: take it and say so; else
        change nothing (the caller then waits through `acquire`)."""
        if not self.free_for(True):
            return False
        self._take(True)
        return True

    def _enqueue(self, w: Waiter) -> None:
        """`w` joins the wait list's tail, and readers at its front are granted a lock readers
        hold (rwsem_cond_wake_waiter)."""
        w.queued, w.spin = True, False
        w.since = self.env.now
        self.queue.append(w)
        self.sleeping += 1
        if (
            self.readers
            and not self.writer
            and self.handoff is None
            and not self.queue[self.head].write
        ):
            self._grant_readers()

    def stop_spinning(self, w: Waiter) -> None:
        """A spinning writer that was not granted the lock goes to sleep in the wait list. One
        still spinning spun past the reader-spin threshold: it joins the list and marks the
        lock non-spinnable, which stops the other spinners too: each joins the list with a
        fresh event to sleep on, and the event it spun on fires (its call of this changes
        nothing then)."""
        if w.granted or not w.spin:
            return
        self.spinners.remove(w)
        self._enqueue(w)
        if self.readers and not self.writer:
            self.nonspinnable = True
            stopped, self.spinners = self.spinners, []
            for s in stopped:
                spun_on, s.event = s.event, self.env.event()
                self._enqueue(s)
                spun_on.succeed()

    def retry(self, w: Waiter) -> bool:
        """A woken writer, now running, tries again: True if it took the lock; else it sleeps
        again (a new `event`), setting the hand-off bit if it is first and waited too long."""
        if w.granted:
            return True
        if self.free_for(w.write) or self.handoff is w:
            if self.handoff is w:
                self.handoff = None
            self._dequeue(w)
            self._take(w.write)
            return True
        w.event = self.env.event()
        if (
            self.handoff is None
            and self.queue[self.head] is w
            and self.env.now - w.since >= self.handoff_ns
        ):
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
            self.nonspinnable = False  # a writer's owner field has no flags
        else:
            self.readers += 1

    def _dequeue(self, w: Waiter) -> None:
        if w.spin:
            self.spinners.remove(w)
            w.spin = False
            return
        w.queued = False
        self.sleeping -= 1
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

    def _grant(self, w: Waiter) -> None:
        self._dequeue(w)
        self._take(w.write)
        w.granted = True
        _wake(w.event)

    def _grant_readers(self) -> None:
        """Every reader in the wait list is granted the lock (rwsem_mark_wake), and woken one
        after another, `wake_step_ns` apart (wake_up_q)."""
        q = self.queue
        step = self.wake_step_ns
        readers = [q[i] for i in range(self.head, len(q)) if q[i].queued and not q[i].write]
        if not step:
            for w in readers:
                self._grant(w)
            return
        for w in readers:
            self._dequeue(w)
            self._take(False)
            w.granted = True
        self.env.process(self._wake_up_q([w.event for w in readers], step))

    @staticmethod
    def _wake_up_q(events: list[Event], step: int) -> Proc:
        """The releaser's wake_up_q(): each granted reader woken `step` after the one before."""
        for ev in events:
            yield step
            _wake(ev)

    def release(self, write: bool) -> None:
        if write:
            self.writer = False
        else:
            self.readers -= 1
            if self.readers:
                return
            self.nonspinnable = False
        if self.handoff is not None:
            h, self.handoff = self.handoff, None
            if h.write:
                self._grant(h)
            else:
                self._grant_readers()
            return
        spinner = bool(self.spinners)
        if spinner:  # the first spinning writer polls the lock and takes it
            self._grant(self.spinners[0])
        if not self.sleeping:
            return
        # rwsem_mark_wake() on the wait list's first
        first = self.queue[self.head]
        if first.write:
            _wake(first.event)  # woken; it retries when it runs (and fails, if a spinner won)
        elif not spinner:
            self._grant_readers()  # woken readers are granted the lock together
        elif self.env.now - first.since >= self.handoff_ns:
            self.handoff = first  # its grant failed (a spinner won) after waiting too long
