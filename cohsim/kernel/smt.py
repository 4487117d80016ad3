"""How much slower CPU work runs when other CPUs of the machine are busy: the one definition
both engines of level 3 use (the simulation reads it off a table by busy and spinning CPUs,
`slowdown_rows`; the closed form evaluates it on arrays of mean busy counts).

- With SMT: a thread whose sibling is busy runs `smt_slowdown` times slower, or
  `smt_spin_slowdown` times where the sibling is spinning on a lock with PAUSE (a de-pipelined
  loop that leaves the core nearly to its sibling: Intel's reason for PAUSE's latency of ~140
  cycles from Skylake on); with the scheduler filling idle cores first, a fraction
  2 (busy - cores) / busy of the busy threads share their core, and a sibling spins as often as
  the other busy threads do.
- Without SMT in the topology, a measured co-run slowdown (a VM whose vCPUs share host cores:
  `microarch.corun_slowdown`, measured with every CPU busy) in proportion to how many of the
  other CPUs are busy (linear in between is an assumption, exact for 2 vCPUs).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from cohsim.machine.model import Machine


def _slowdown(
    machine: Machine, smt_slowdown: Any, busy: Any, spinning: Any = 0.0, spin_slow: Any = 1.0
) -> Any:
    t = machine.topology
    if t.threads_per_core >= 2:
        over = np.maximum(0.0, busy - t.cores)
        if not np.any(spinning):
            return 1.0 + (smt_slowdown - 1.0) * 2.0 * over / np.maximum(busy, 1.0)
        shared = 2.0 * over / np.maximum(busy, 1.0)
        f = np.minimum(1.0, spinning / np.maximum(busy - 1.0, 1.0))  # a sibling that spins
        return 1.0 + shared * ((smt_slowdown - 1.0) * (1.0 - f) + (spin_slow - 1.0) * f)
    c, cpus = machine.microarch.corun_slowdown, machine.vcpus
    if c == 1.0 or cpus < 2:
        return np.ones_like(busy) if isinstance(busy, np.ndarray) else 1.0
    return 1.0 + (c - 1.0) * np.maximum(0.0, busy - 1.0) / (cpus - 1)


def slowdown(
    machine: Machine,
    smt_slowdown: float,
    busy: float,
    spinning: float = 0.0,
    spin_slow: float = 1.0,
) -> float:
    """The slowdown of CPU work with `busy` CPUs busy, `spinning` of the others spinning on a
    lock (each a sibling that slows it `spin_slow` times only)."""
    return float(_slowdown(machine, smt_slowdown, float(busy), float(spinning), spin_slow))


def slowdown_array(
    machine: Machine,
    smt_slowdown: float | NDArray[np.float64],
    busy: NDArray[np.float64],
    spinning: NDArray[np.float64] | None = None,
    spin_slow: float | NDArray[np.float64] = 1.0,
) -> NDArray[np.float64]:
    """`slowdown` of each mean busy count in `busy`, `spinning` of the others spinning (the
    slowdowns an array too, broadcast against them: element-wise, each as a float gives it;
    whether anyone spins is asked of the whole of `spinning`)."""
    b = np.asarray(busy, dtype=float)
    s = np.zeros_like(b) if spinning is None else np.asarray(spinning, dtype=float)
    return np.asarray(_slowdown(machine, smt_slowdown, b, s, spin_slow))


def slowdown_table(machine: Machine, smt_slowdown: float) -> list[float]:
    """`slowdown` at every busy count 0..vcpus, nobody spinning."""
    return [slowdown(machine, smt_slowdown, b) for b in range(machine.vcpus + 1)]


def slowdown_rows(machine: Machine, smt_slowdown: float, spin_slow: float) -> list[list[float]]:
    """`slowdown` for the simulation, which reads it at every event: at every busy count
    0..vcpus a row by how many of the other busy CPUs spin, 0..busy-1 (more count as all of
    them); a row of one where that does not matter (no thread beside a busy sibling: at most
    one busy thread a core, or no SMT and the co-run slowdown)."""
    t, cpus = machine.topology, machine.vcpus
    rows = [[v] for v in slowdown_table(machine, smt_slowdown)]
    if t.threads_per_core < 2:
        return rows
    shape = (cpus - t.cores, cpus - 1)  # busy cores+1..vcpus, by 1..vcpus-1 others spinning
    busy = np.broadcast_to(np.arange(t.cores + 1.0, cpus + 1.0)[:, None], shape)
    others = np.broadcast_to(np.arange(1.0, float(cpus))[None, :], shape)
    spun = slowdown_array(machine, smt_slowdown, busy, others, spin_slow).tolist()
    for b, line in enumerate(spun, t.cores + 1):
        rows[b] += line[: b - 1]
    return rows
