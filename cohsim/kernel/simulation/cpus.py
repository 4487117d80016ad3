"""The machine's hardware threads as a run queue, for the launch simulation
(cohsim.kernel.simulation.launch).

A task that wants a CPU calls `acquire(priority)`; a task done with it calls `release()`. The
shape is the one every simulated resource here shares (cohsim.kernel.simulation.rwsem's
namespace_sem, cohsim.kernel.simulation.mountlock's mount_lock): `acquire` returns None when the
resource is granted on the spot, with no event at all (the common case, and the simulation's hot
path: an event would be scheduled and stepped even when nobody waits), and otherwise the thing the
caller waits on; `release` frees what `acquire` granted. For the CPUs that thing is a plain event
(cohsim.kernel.simulation.clock) that fires when a CPU is handed over: the grant is complete
when it fires, nothing more to do.
"""

from __future__ import annotations

from collections import deque

from cohsim.kernel.simulation.clock import Environment, Event


class CPUs:
    """The machine's hardware threads as a run queue: a grant is immediate when one is free
    (no event at all: this is the hot path), else FIFO within two priorities (0: a task
    woken holding or about to take a lock, 1: ordinary runnable work).

    Idle CPUs are kept with the time they went idle; a grant takes the one that idled last
    (a woken task goes back to the CPU it left, if that is still idle) and `last_idle_ns` says
    how long it had been idle (a wake-up's cost depends on it: cohsim.kernel.waketable)."""

    def __init__(self, env: Environment, capacity: int) -> None:
        self.env = env
        self.capacity = capacity
        self.busy = 0
        self.spinning = 0  #: of the busy ones, tasks spinning on a sleeping lock's owner
        self.queues: tuple[deque[Event], deque[Event]] = (deque(), deque())
        #: when each idle CPU went idle (ns), a stack: the last idled on top
        self.idle_since: list[int] = [env.now] * capacity
        self.last_idle_ns = 0.0  #: how long the CPU the last immediate grant took was idle
        self._start = env.now
        self._idle_ns = 0.0  #: idle time of the CPUs granted since (the sum of last_idle_ns)

    def acquire(self, priority: int = 1) -> Event | None:
        """None if a CPU was free and is now ours; else an event that fires when one is."""
        if self.busy < self.capacity:
            self.busy += 1
            self.last_idle_ns = float(self.env.now - self.idle_since.pop())
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
        idle time the grants already measure, so the hot path keeps no extra tally.

        For analysis after (or during) a run, e.g. comparing the simulated CPU use of a
        workload with a measured one; the simulation itself never reads it."""
        now = self.env.now
        idle_now = sum(now - t for t in self.idle_since)  # the CPUs idle at this moment
        return self.capacity * (now - self._start) - self._idle_ns - idle_now

    @property
    def waiting(self) -> int:
        return len(self.queues[0]) + len(self.queues[1])
