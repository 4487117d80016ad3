"""A thread's own state in the launch simulation (cohsim.kernel.simulation.launch): its waits
so far and the factors by which each of its calls' own work varies.

Compiled with the simulation (setup.py): the conductor reads and adds to these on every call.
"""

from __future__ import annotations

from cohsim.kernel.calls import CallFactors


class Waits:
    """One thread's waits so far (ns), added to call by call, and the end of its current
    kernel CPU phase."""

    __slots__ = ("lock", "rcu", "runq", "kernel_until")

    def __init__(self) -> None:
        self.lock = 0.0  #: namespace_sem, mount_lock, spinning in a walk
        self.rcu = 0.0  #: grace periods and the wake-ups after them
        self.runq = 0.0  #: runnable but no free CPU
        self.kernel_until = 0  #: the end of its current kernel CPU phase (ns; 0: none yet)


class Factors:
    """The per-call factors of cohsim.kernel.calls.CallFactors, one by one: its blocks, taken
    here (compiled; a call into Python per syscall was 7 % of a replicate)."""

    __slots__ = ("source", "block", "i")

    def __init__(self, source: CallFactors) -> None:
        self.source = source
        self.block: list[float] = []
        self.i = 0

    def next(self) -> float:
        i = self.i
        if i == len(self.block):
            self.block = self.source.block()
            i = 0
        self.i = i + 1
        return self.block[i]
