"""Which hardware threads a benchmark's N threads run on: compact, scatter, one socket, or a list.

The orders are those of the real benchmark (calibration/bench/pause_bench.c, `placement_order`),
so a simulated curve lines up with a measured one thread for thread. CPU numbering is Linux's
(cohsim.machine.model): cores socket-major, the SMT sibling of CPU k is k + total cores.

- ``compact``: Linux order, 0, 1, 2, ...: every physical core of socket 0, then of socket 1, ...,
  and only then the SMT siblings (first threads of all cores before any second thread). On a
  two-socket machine, compact therefore crosses to socket 1 before it doubles up on a core.
- ``scatter``: round-robin over LLC domains so that consecutive threads alternate sockets first,
  then LLC domains inside a socket (domains visited by (rank inside their socket, socket)); inside
  a domain, first threads of cores before SMT siblings.
- ``one-socket``: the CPUs of socket 0 in Linux order (first threads, then siblings).
- an explicit CPU list (``"0,48,1,49"`` or a sequence of ints): exactly those CPUs, in that order.

``smt=False`` places on `Machine.with_smt(False)`: one hardware thread per core, CPUs 0..cores-1.
Asking for more threads than the placement has CPUs is an error (no oversubscription, as in the
real benchmark).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cohsim.errors import CohsimError
from cohsim.machine.model import Machine

PLACEMENTS = ("compact", "scatter", "one-socket")


def placement_machine(machine: Machine, smt: bool = True) -> Machine:
    """The machine a placement runs on: `machine` itself, or its one-thread-per-core variant."""
    return machine.with_smt(smt)


def cpu_order(machine: Machine, placement: str) -> list[int]:
    """Every CPU a named placement can use, in the order it fills them."""
    arr = machine.cpu_arrays
    cpus = np.arange(machine.vcpus)
    if placement == "compact":
        return cpus.tolist()
    if placement == "one-socket":
        return cpus[arr["socket"] == 0].tolist()
    if placement == "scatter":
        t = machine.topology
        # Domain d of socket s has rank d - s * domains_per_socket inside its socket.
        rank = arr["llc"] - arr["socket"] * t.llc_domains_per_socket
        # Sort key: (SMT thread, round inside the domain, rank of domain in socket, socket).
        # The round of a CPU is its position among the CPUs of its domain with the same thread.
        core_in_dom = arr["core"] % t.llc_domain_cores
        key = np.lexsort((arr["socket"], rank, core_in_dom, arr["thread"]))
        return cpus[key].tolist()
    raise CohsimError(
        f"unknown placement {placement!r} (expected {', '.join(PLACEMENTS)} "
        f"or a list of CPUs such as 0,1,2)"
    )


def parse_cpu_list(text: str) -> list[int]:
    """``"0,2,4-7"`` -> [0, 2, 4, 5, 6, 7]; one clear error for anything else."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise CohsimError(
                f"placement {text!r}: {part!r} is not a CPU number or range "
                f"(expected {', '.join(PLACEMENTS)} or a list such as 0,1,4-7)"
            ) from None
        if a < 0 or b < a:
            raise CohsimError(f"placement {text!r}: bad CPU range {part!r}")
        out.extend(range(a, b + 1))
    return out


def place(
    machine: Machine, threads: int, placement: str | Sequence[int] = "compact", smt: bool = True
) -> tuple[Machine, tuple[int, ...]]:
    """The machine to simulate and the CPUs of `threads` threads under `placement`.

    `placement` is a name from PLACEMENTS, a CPU list as text ("0,1,4-7"), or a sequence of CPU
    ids. Returns (machine, cpus) where machine is `machine` or its SMT-off variant.
    """
    m = placement_machine(machine, smt)
    if threads < 1:
        raise CohsimError(f"threads must be at least 1, not {threads}")
    if isinstance(placement, str) and placement not in PLACEMENTS:
        if not placement[:1].isdigit():
            cpu_order(m, placement)  # raises the unknown-placement error
        placement = parse_cpu_list(placement)
    if isinstance(placement, str):
        order = cpu_order(m, placement)
        label = placement
    else:
        order = [int(c) for c in placement]
        label = "cpus=" + ",".join(str(c) for c in order)
        bad = [c for c in order if not 0 <= c < m.vcpus]
        if bad:
            raise CohsimError(
                f"placement {label}: CPU {bad[0]} is out of range 0..{m.vcpus - 1} on {m.name}"
            )
        if len(set(order)) != len(order):
            raise CohsimError(f"placement {label}: a CPU is listed twice")
    if threads > len(order):
        what = "CPUs" if smt else "cores (SMT off)"
        raise CohsimError(
            f"{threads} threads but placement {label} on {m.name} has only "
            f"{len(order)} {what} (no oversubscription)"
        )
    return m, tuple(order[:threads])
