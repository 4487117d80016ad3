"""How much slower CPU work runs when other CPUs of the machine are busy: the one definition
both engines of level 3 use (the simulation tabulates it per busy count, the closed form
evaluates it on arrays of mean busy counts).

- With SMT: a thread whose sibling is busy runs `smt_slowdown` times slower; with the
  scheduler filling idle cores first, a fraction 2 (busy - cores) / busy of the busy threads
  share their core.
- Without SMT in the topology, a measured co-run slowdown (a VM whose vCPUs share host cores:
  `microarch.corun_slowdown`, measured with every CPU busy) in proportion to how many of the
  other CPUs are busy (linear in between is an assumption, exact for 2 vCPUs).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from cohsim.machine.model import Machine


def _slowdown(machine: Machine, smt_slowdown: float, busy: Any) -> Any:
    t = machine.topology
    if t.threads_per_core >= 2:
        over = np.maximum(0.0, busy - t.cores)
        return 1.0 + (smt_slowdown - 1.0) * 2.0 * over / np.maximum(busy, 1.0)
    c, cpus = machine.microarch.corun_slowdown, machine.vcpus
    if c == 1.0 or cpus < 2:
        return np.ones_like(busy) if isinstance(busy, np.ndarray) else 1.0
    return 1.0 + (c - 1.0) * np.maximum(0.0, busy - 1.0) / (cpus - 1)


def slowdown(machine: Machine, smt_slowdown: float, busy: float) -> float:
    """The slowdown of CPU work with `busy` CPUs busy."""
    return float(_slowdown(machine, smt_slowdown, float(busy)))


def slowdown_array(
    machine: Machine, smt_slowdown: float, busy: NDArray[np.float64]
) -> NDArray[np.float64]:
    """`slowdown` of each mean busy count in `busy`."""
    return np.asarray(_slowdown(machine, smt_slowdown, np.asarray(busy, dtype=float)))


def slowdown_table(machine: Machine, smt_slowdown: float) -> list[float]:
    """`slowdown` at every busy count 0..vcpus (the simulation reads it per event)."""
    return [slowdown(machine, smt_slowdown, b) for b in range(machine.vcpus + 1)]
