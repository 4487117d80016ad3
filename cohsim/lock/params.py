"""Level 2, the lock hand-off's shared vocabulary: its parameters and its result types.

Both engines (the discrete-event simulation, cohsim.lock.handoffsim, and the Markov chain,
cohsim.lock.markov) take the same `LockParams` (the level-2 numbers a Machine does not hold)
and return the same `HandoffResult`, which says which model answered; the entry point
(cohsim.lock.handoff) picks the engine. This module sits below all three, so the engines never
import the entry point.

`LockParams` defaults come from `params_from_machine`: each is either derived from the
Machine's class latencies or marked "assumption" below; calibration (fitting to real
pause_bench data) replaces them later.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from cohsim.errors import CohsimError
from cohsim.machine.model import Machine

#: picoseconds per nanosecond: the simulation's clock and HandoffRecord's times are integer ps
PS = 1000
#: picoseconds per second
PS_PER_S = 1e12

LOCKS = ("ttas", "ticket", "qspinlock", "mcs", "seqcount", "pingpong")
MODELS = ("des", "markov")
SCHEMA = 1


@dataclass(frozen=True)
class LockParams:
    """Level-2 parameters not in the Machine, to be calibrated against real pause_bench data.

    The two service times are how long a coherence point is busy with one request for the lock
    line (Intel's CHA keeps one Table-of-Requests entry per address at a time; the AMD IO die and
    Arm home nodes order one request per address likewise), i.e. the per-request cost that makes
    hand-off time grow with the number of waiters.
    """

    #: occupancy per request of an LLC domain's coherence point (mesh CHA, CCX L3, CMN HN), ns
    llc_service_ns: float
    #: occupancy per request of the socket home agent (IO die; home CHA for a remote socket), ns
    hub_service_ns: float
    smt_slowdown: float = 1.2  #: factor on the critical section while an SMT sibling spins
    #: from a load's data arriving to the dependent atomic issuing (compare, branch, issue), ns
    spin_loop_ns: float = 3.0
    home_socket: int = 0  #: socket whose home agent owns the lock line
    #: an LLC domain's point answers its cores' requests from the copy one of them fetched and
    #: sends one request per line to the home (Intel CBo/CHA, AMD Zen CCX L3); False where the
    #: LLC neither holds nor tracks its cores' lines (AMD Family 10h's victim L3): every miss
    #: goes to the line's home (cohsim.lock.coherence)
    domain_merges: bool = True

    def __post_init__(self) -> None:
        for name in ("llc_service_ns", "hub_service_ns", "spin_loop_ns"):
            if not getattr(self, name) >= 0:
                raise CohsimError(
                    f"LockParams.{name} must not be negative, not {getattr(self, name)}"
                )
        if not self.smt_slowdown >= 1:
            raise CohsimError(
                f"LockParams.smt_slowdown must be at least 1, not {self.smt_slowdown}"
            )

    def to_dict(self) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def params_from_machine(machine: Machine) -> LockParams:
    """Default level-2 parameters for `machine`.

    - llc_service_ns = same_llc_ns / 2. Derived: the graph splits a same-LLC transfer into four
      equal legs (requester -> coherence point -> owner -> requester); the point holds the
      request from its arrival until the owner answers, two of the four legs.
    - hub_service_ns = (the cross-domain class latency served at the home) / 2, by the same
      rule: cross_llc_ns on a chiplet socket, cross_socket_ns on a multi-socket mesh/CMN, and
      llc_service_ns where the socket has one LLC and one socket (never used there).
    - smt_slowdown = 1.2. Assumption: PAUSE frees the core's issue slots for the sibling
      (Intel SDM), but the spinning sibling still shares the L1, fill buffers and snoops.
    - spin_loop_ns = 10 cycles at freq_ghz. Assumption: compare, branch and issue of the atomic.
    """
    c, t = machine.coherence, machine.topology
    llc = c.same_llc_ns / 2
    if t.llc_domains_per_socket > 1 and c.cross_llc_ns is not None:
        hub = c.cross_llc_ns / 2
    elif t.sockets > 1 and c.cross_socket_ns is not None:
        hub = c.cross_socket_ns / 2
    else:
        hub = llc
    return LockParams(
        llc_service_ns=llc, hub_service_ns=hub, spin_loop_ns=10.0 / machine.microarch.freq_ghz
    )


@dataclass(frozen=True)
class HandoffRecord:
    """What happened, for plots and tests: who held the lock when, and the home queue over time."""

    #: (thread, acquired_ps, released_ps), in acquisition order
    holds: tuple[tuple[int, int, int], ...]
    waits: tuple[tuple[int, int, int], ...]  #: (thread, start_ps, acquired_ps) per acquisition
    home_queue: tuple[tuple[int, int], ...]  #: (time_ps, requests at the home) at every change
    #: coherence point name -> (inserted, served, still queued or in service)
    agents: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    end_ps: int = 0  #: simulated time at the end


@dataclass(frozen=True)
class HandoffResult:
    """One point of a pause_bench curve: a lock, a thread count, a placement, on one machine."""

    machine: str
    lock: str
    model: str  #: "des" or "markov": which model answered
    threads: int
    placement: str
    smt: bool
    cpus: tuple[int, ...]
    cs_ns: float
    think_ns: float
    acquisitions: int  #: acquisitions measured (after warm-up)
    seed: int | None
    p50_ns: float  #: acquisition latency (start acquiring -> acquired), median
    p99_ns: float
    #: time spent acquiring per acquisition: every thread's acquiring time in the measured
    #: window, the waits still open at its end included, over the acquisitions (Little's law;
    #: pause_bench's mean over a run long enough for every wait to end). With an unfair lock it
    #: is far above p50: a starved thread's wait is part of what the lock costs
    mean_ns: float
    acquisitions_per_s: float
    spin_fraction: float  #: fraction of thread time spent acquiring (spinning or queued)
    home_queue_mean: float  #: time-averaged requests at the home agent (queued + in service)
    home_queue_max: int
    home_requests: int  #: requests the home agent served
    requests: int  #: requests all coherence points served
    params: LockParams
    record: HandoffRecord | None = field(default=None, compare=False)
    p90_ns: float = 0.0  #: acquisition latency, 90th percentile
    p999_ns: float = 0.0  #: ... 99.9th percentile
    #: ... the longest measured (the simulation's; None for the chain, whose waits are a few
    #: point masses, not samples)
    max_ns: float | None = None
    #: simulated time of the measured window (after the warm-up): the acquisitions over the
    #: throughput, ns
    span_ns: float = 0.0

    @property
    def level(self) -> str:
        return f"level 2: lock hand-off ({self.model})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, rounded so the same seed gives the same bytes."""
        return {
            "machine": self.machine,
            "lock": self.lock,
            "model": self.model,
            "level": self.level,
            "threads": self.threads,
            "placement": self.placement,
            "smt": self.smt,
            "cpus": list(self.cpus),
            "cs_ns": self.cs_ns,
            "think_ns": self.think_ns,
            "acquisitions": self.acquisitions,
            "seed": self.seed,
            "p50_ns": round(self.p50_ns, 3),
            "p99_ns": round(self.p99_ns, 3),
            "p90_ns": round(self.p90_ns, 3),
            "p999_ns": round(self.p999_ns, 3),
            "max_ns": None if self.max_ns is None else round(self.max_ns, 3),
            "span_ns": round(self.span_ns, 3),
            "mean_ns": round(self.mean_ns, 3),
            "acquisitions_per_s": round(self.acquisitions_per_s, 1),
            "spin_fraction": round(self.spin_fraction, 5),
            "home_queue_mean": round(self.home_queue_mean, 4),
            "home_queue_max": self.home_queue_max,
            "home_requests": self.home_requests,
            "requests": self.requests,
            "params": self.params.to_dict(),
        }
