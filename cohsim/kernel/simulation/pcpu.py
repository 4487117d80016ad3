"""pcpu_alloc_mutex in the launch simulation (cohsim.kernel.simulation.launch): the sleeping
mutex every new mount's per-CPU area is allocated under.

Linux 6.18 alloc_vfsmnt() -> alloc_percpu() -> pcpu_alloc_noprof() takes pcpu_alloc_mutex
(mm/percpu.c:1782) for the chunk search under pcpu_lock and any population of the area's pages,
then drops it before zeroing the area on every CPU (docs/kernel-audit.md, Part 0). Every mount
allocation on the node takes it: overlayfs's private clone of each layer inside a namespace_sem
read hold, an open_tree clone inside a write hold, a new file system's or fsmount's mount
outside both. So a clone that finds the mutex held waits inside its read hold, and every writer
queued behind the readers waits for it too.

As the kernel's mutex (kernel/locking/mutex.c): taken at once when free; otherwise the waiter
spins while the owner runs (optimistic spinning: a wait of a few microseconds ends before the
scheduler's tick or a wake-up asks it to give its CPU up) and sleeps when the owner is a waiter
it was handed to that has not run yet; first come first served, a spinning waiter ahead of
sleepers. A sleeper is woken holding the mutex or to try again, and needs a CPU again (the
conductor's `resume`, which pays the wake-up or queues). The shape is the other resources':
`count` on the hot path without an event, `alloc` the generator that waits.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator
from typing import Any

from cohsim.kernel.simulation.clock import Environment, Event, Yield, iround
from cohsim.kernel.simulation.cpus import CPUs
from cohsim.kernel.simulation.records import LockStats


class _Waiter:
    """One task waiting for the mutex: its wake-up event, whether it spins on the owner or
    sleeps, and whether it was handed the mutex (else, woken, it tries again)."""

    __slots__ = ("event", "spin", "granted")

    def __init__(self, event: Event, spin: bool) -> None:
        self.event, self.spin, self.granted = event, spin, False


class PcpuMutex:
    """pcpu_alloc_mutex's state in one simulation: held or not, its waiters, its tallies."""

    def __init__(
        self,
        env: Environment,
        cpus: CPUs,
        hold_ns: float,
        resume: Callable[[bool], Generator[Yield, Any, float]],
        stats: LockStats,
    ) -> None:
        """`hold_ns`: one allocation's section under the mutex; `resume(slept)` puts a woken
        task back on a CPU; `stats` collects the allocations' waits and holds."""
        self.env, self.cpus, self.resume, self.stats = env, cpus, resume, stats
        self.hold = iround(hold_ns)
        self.held = False
        self.queue: deque[_Waiter] = deque()  #: waiters, first come first
        self.handoff = False  #: the first sleeper failed once: the next release is its
        #: the owner is on a CPU (not a sleeper it was handed to, still waking up)
        self.owner_running = True

    @property
    def free(self) -> bool:
        """Free for a newcomer: not held, and no hand-off pending (a woken sleeper may still
        be on its way: a newcomer takes the mutex before it, as the kernel's fast path does)."""
        return not self.held and not self.handoff

    def count(self) -> None:
        """An allocation that found the mutex free and whose section ran inside a hold the
        caller has already timed (nothing else happened meanwhile): only tallied."""
        st = self.stats
        st.acquisitions += 1
        st.hold_ns += self.hold

    def alloc(self, hold: bool = True) -> Generator[Yield, Any, float]:
        """One allocation: take the mutex (spinning or sleeping for it), hold it (`hold`: its
        section's time here; else it is in the caller's own timed work), release it. Returns
        the time waited (ns)."""
        env, st = self.env, self.stats
        t0 = env.now
        if self.free:
            self.held = True
        else:
            yield from self._wait()
        waited = env.now - t0
        st.wait_ns += waited
        if hold and not env.advance(self.hold):
            yield self.hold
        st.acquisitions += 1
        st.hold_ns += self.hold
        self._release()
        return float(waited)

    def _wait(self) -> Generator[Yield, Any, None]:
        """Until the mutex is ours: spinning while the owner runs, else asleep; a woken
        sleeper takes a free mutex, or asks for the hand-off and sleeps again (mutex.c's
        MUTEX_FLAG_HANDOFF)."""
        env, st = self.env, self.stats
        w = _Waiter(env.event(), self.owner_running)
        self.queue.append(w)
        st.max_waiters = max(st.max_waiters, len(self.queue))
        while True:
            if w.spin:
                self.cpus.spinning += 1
                yield w.event
                self.cpus.spinning -= 1
                return  # spinners are handed the mutex
            self.cpus.release()
            yield w.event
            yield from self.resume(True)
            if w.granted:
                self.owner_running = True
                return
            if not self.held:  # woken to a free mutex: ours
                self.held = True
                return
            self.handoff = True  # failed once: the next release is ours
            w.event = env.event()
            self.queue.appendleft(w)

    def _release(self) -> None:
        """The owner lets go: to the first sleeper if it asked for the hand-off; else to the
        first waiter spinning on the owner (it takes the mutex before a woken sleeper could
        run); else the mutex is free and the first sleeper is woken to try again."""
        q = self.queue
        if self.handoff:  # the first sleeper's: nobody steals it (mutex.c)
            self.handoff = False
            w = q.popleft()
            w.granted = True  # the mutex stays held: handed over, its owner still asleep
            self.owner_running = False
            w.event.succeed()
            return
        for i in range(len(q)):
            if q[i].spin:
                w = q[i]
                del q[i]
                w.granted = True
                w.event.succeed()
                return
        self.held = False
        if q:
            q.popleft().event.succeed()
