"""Expedited RCU grace periods in the launch simulation (cohsim.kernel.simulation.launch).

After an unmount the kernel calls synchronize_rcu_expedited() (twice for an overlay, whose
superblock's shutdown waits again for its layers' clones); the caller sleeps until a grace
period that started after its call has ended.

- Concurrent callers share grace periods: one starts when the previous ends, for everyone who
  asked meanwhile (the expedited sequence counter's funnel).
- A grace period costs a fixed part plus an IPI's share per CPU busy when it starts
  (`cohsim.kernel.callcost.grace_period_ns`: idle CPUs are skipped, the leaves of 16 CPUs IPIed
  in parallel).
- Its worker needs a CPU: when every CPU is inside a syscall it waits for the first to leave
  its kernel phase (the kernel is not preempted there); the launch simulation says how long
  (`cpu_wait`).
- It cannot end before every CPU that was spinning in the kernel when it started (seqcount
  readers, mount_lock waiters, the section's background spinners) is done: those are
  non-preemptible regions that delay the quiescent state.
"""

from __future__ import annotations

from collections.abc import Callable

from cohsim.kernel.simulation.clock import Environment, Event, Proc, iround
from cohsim.kernel.simulation.mountlock import MountLock


class GracePeriods:
    """The expedited grace periods of one simulation: the one running, who waits for the
    next, and how many there were."""

    def __init__(
        self,
        env: Environment,
        ml: MountLock,
        gp_ns: Callable[[], float],
        cpu_wait: Callable[[], float],
    ) -> None:
        """`gp_ns()`: the length of a grace period that starts now; `cpu_wait()`: how long its
        worker waits for a CPU now."""
        self.env, self.ml, self.gp_ns, self.cpu_wait = env, ml, gp_ns, cpu_wait
        self.running = False
        self.next: list[Event] = []  #: callers waiting for the next grace period
        self.count = 0  #: grace periods run
        self.requests = 0  #: synchronize_rcu_expedited() calls

    def request(self) -> Event:
        """A caller's synchronize_rcu_expedited(): an event that fires when a grace period
        that started after now has ended."""
        self.requests += 1
        ev = self.env.event()
        if self.running:
            self.next.append(ev)
        else:
            self.env.process(self._run([ev]))
        return ev

    def _run(self, waiters: list[Event]) -> Proc:
        self.running = True
        self.count += 1
        # CPUs spinning in the kernel now must finish before the grace period can end
        ml = self.ml
        done_at = ml.spinning_done_at()
        yield iround(self.cpu_wait() + self.gp_ns())
        while not ml.spinning_done(done_at):
            yield ml.released
        for ev in waiters:
            ev.succeed()
        if self.next:
            nxt, self.next = self.next, []
            self.env.process(self._run(nxt))
        else:
            self.running = False
