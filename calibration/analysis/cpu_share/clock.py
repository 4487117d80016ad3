"""A thread CPU clock for the level-3 simulation: each call's time on a CPU, as the kernel's
CLOCK_THREAD_CPUTIME_ID counts a real call's (mount_bench --cpu-time).

The simulation keeps no per-thread CPU account (its hot path hands CPUs over without naming
the thread), so `recording()` follows the grants from outside, on the sources (as
calibration.analysis.burst_locks.model does): the process the clock is resuming is the one that
takes or gives up a CPU (`CPUs.acquire`, `CPUs.release`); one that waited for a CPU has it
from the moment it runs again; one woken from a sleep (`LaunchSim._resume`) counts from after
its wake-up, since a task's CPU clock starts when it runs, not when the IPI is sent. Spinning
(namespace_sem's optimistic spinners, mount_lock, the allocator's mutex, the walks through a
write hold) holds the CPU, so it is CPU time, as in the kernel.
"""

from __future__ import annotations

import collections
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import Any

from cohsim.kernel.simulation import clock
from cohsim.kernel.simulation.cpus import CPUs
from cohsim.kernel.simulation.launch import LaunchSim


class CpuClock:
    """Every process's spans on a CPU ([on, off] ns, off -1 while it runs) and the process
    the simulation is stepping now."""

    def __init__(self) -> None:
        self.spans: dict[object, list[list[int]]] = collections.defaultdict(list)
        self.stack: list[object] = []  #: the processes being resumed, innermost last
        self.pending: set[object] = set()  #: waiting for a CPU: on again when next resumed

    @property
    def current(self) -> object:
        return self.stack[-1] if self.stack else None

    def on(self, proc: object, now: int) -> None:
        spans = self.spans[proc]
        if not spans or spans[-1][1] >= 0:
            spans.append([now, -1])

    def off(self, proc: object, now: int) -> None:
        spans = self.spans.get(proc)
        if spans and spans[-1][1] < 0:
            spans[-1][1] = now

    def restart(self, proc: object, now: int) -> None:
        """The running span of `proc` begins `now` (after a wake-up it was charged for)."""
        spans = self.spans.get(proc)
        if spans and spans[-1][1] < 0:
            spans[-1][0] = now

    def cpu_ns(self, proc: object, start: int, end: int) -> int:
        """Time `proc` held a CPU between `start` and `end` (ns)."""
        total = 0
        for on, off in reversed(self.spans.get(proc, ())):
            off = end if off < 0 else off
            if off <= start:
                break
            total += max(0, min(off, end) - max(on, start))
        return total


class Calls(list[tuple[int, str, int, int]]):
    """LaunchSim's `calls` record, each call also with its CPU time (`cpu`, in call order)."""

    def __init__(self, cpu_clock: CpuClock) -> None:
        super().__init__()
        self.clock = cpu_clock
        self.cpu: list[int] = []

    def append(self, call: tuple[int, str, int, int]) -> None:
        super().append(call)
        _tid, _name, start, end = call
        self.cpu.append(self.clock.cpu_ns(self.clock.current, start, end))


@contextmanager
def recording() -> Iterator[CpuClock]:
    """Within it, every simulation built keeps its threads' CPU spans in the clock yielded
    (the simulation's classes patched; restored on the way out)."""
    if not (clock.__file__ or "").endswith(".py"):
        raise SystemExit(
            "cpu_share: cohsim's simulation is compiled here; run it on the sources with "
            "COHSIM_PURE_PYTHON=1"
        )
    rec = CpuClock()
    env_cls = clock.Environment
    saved = (env_cls.resume, CPUs.acquire, CPUs.release, LaunchSim._resume)
    resume, acquire, release, wake = saved

    def resume_(env: clock.Environment, proc: clock.Event, value: object) -> None:
        if proc in rec.pending:
            rec.pending.discard(proc)
            rec.on(proc, env.now)
        rec.stack.append(proc)
        try:
            resume(env, proc, value)
        finally:
            rec.stack.pop()

    def acquire_(cpus: CPUs, priority: int = 1) -> clock.Event | None:
        ev = acquire(cpus, priority)
        if ev is None:
            rec.on(rec.current, cpus.env.now)
        else:
            rec.pending.add(rec.current)
        return ev

    def release_(cpus: CPUs) -> None:
        rec.off(rec.current, cpus.env.now)
        release(cpus)

    def wake_(sim: LaunchSim, slept: bool) -> Generator[Any, Any, float]:
        waited = yield from wake(sim, slept)
        rec.restart(rec.current, sim.env.now)
        return waited

    env_cls.resume, CPUs.acquire, CPUs.release = resume_, acquire_, release_  # type: ignore[method-assign]
    LaunchSim._resume = wake_  # type: ignore[method-assign]
    try:
        yield rec
    finally:
        env_cls.resume, CPUs.acquire, CPUs.release, LaunchSim._resume = saved  # type: ignore[method-assign]
