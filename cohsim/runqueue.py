"""The two waiting rooms of the launch simulation (cohsim.launch), as simpy primitives.

`CPUs` is the machine's hardware threads as a run queue; `RWSem` is namespace_sem. Both grant
at once without creating a simpy event when nothing is in the way — the common case, and the
simulation's hot path — and otherwise hand the caller an event that fires on the grant.
"""

from __future__ import annotations

from collections import deque

import simpy


class RWSem:
    """namespace_sem: FIFO; writers exclusive, consecutive readers together."""

    def __init__(self, env: simpy.Environment) -> None:
        self.env = env
        self.readers = 0
        self.writer = False
        self.queue: deque[tuple[bool, simpy.Event]] = deque()

    def acquire(self, write: bool) -> simpy.Event | None:
        """None when granted at once (no event: the hot path); else an event for the grant."""
        if not self.queue and (not self.writer) and (self.readers == 0 or not write):
            self._take(write)
            return None
        ev = self.env.event()
        self.queue.append((write, ev))
        return ev

    def _take(self, write: bool) -> None:
        if self.writer or (write and self.readers):  # the invariant tests rely on this check
            raise AssertionError("namespace_sem: exclusion violated")
        if write:
            self.writer = True
        else:
            self.readers += 1

    def _grant(self, write: bool, ev: simpy.Event) -> None:
        self._take(write)
        ev.succeed()

    def release(self, write: bool) -> None:
        if write:
            self.writer = False
        else:
            self.readers -= 1
        q = self.queue
        while q and not self.writer:
            w, ev = q[0]
            if w and self.readers:
                break
            q.popleft()
            self._grant(w, ev)
            if w:
                break


class CPUs:
    """The machine's hardware threads as a run queue: a grant is immediate when one is free
    (no simpy event at all: this is the hot path), else FIFO within two priorities (0: a task
    woken holding or about to take a lock, 1: ordinary runnable work)."""

    def __init__(self, env: simpy.Environment, capacity: int) -> None:
        self.env = env
        self.capacity = capacity
        self.busy = 0
        self.queues: tuple[deque[simpy.Event], deque[simpy.Event]] = (deque(), deque())

    def acquire(self, priority: int = 1) -> simpy.Event | None:
        """None if a CPU was free and is now ours; else an event that fires when one is."""
        if self.busy < self.capacity:
            self.busy += 1
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

    @property
    def waiting(self) -> int:
        return len(self.queues[0]) + len(self.queues[1])
