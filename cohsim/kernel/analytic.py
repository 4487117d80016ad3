"""Level 3 in closed form: a burst of identical containers as one bottleneck, step by step.

Status: a first version for issue 20, not yet an engine of `cohsim predict`. It brackets the
simulation from two sides on most of a small grid and misses it on others;
`benchmarks/bench_analytic.py` prints the agreement and docs/analytic.md records it.

The discrete-event simulation (cohsim.kernel.launch) runs every call of every container. For
the question a capacity planner asks most (N containers of one image, all launched at once) a
much cheaper model answers from the same kernel costs. The N containers run the same planned
calls (cohsim.kernel.plan); the model moves them through those calls together ("lockstep", a
fluid approximation), and at each call j prices:

- the namespace_sem write hold of one container's call, h_j, from the state the call finds
  (the same terms as the simulation: the op's own hold, per mount in the table, each new
  mount's per-CPU area, the walk over the root's peer group and children, the propagation
  into every live slave namespace, the nested mount_lock section). The state -- mounts in the
  table, the peer group, its binds under the root, the live namespace copies -- changes by
  the call's effect times N over the step; the holds are linear in it, so the step's mean
  hold is the hold at the state halfway through the step;
- its namespace_sem read holds r_j (an overlay's per-layer clones, a mountinfo read: one
  container's, since readers share the lock);
- its work outside the locks u_j (path walks and unlocked work, slowed by SMT when the busy
  threads outnumber the cores, and shared out when they outnumber the CPUs);
- its grace periods (callers in one step share them: one grace period each) and the puts of
  detached mounts after them (one mount_lock section with a per-CPU sum per mount, serial).

namespace_sem is one lock for the whole node, so the N write holds of a step are served one
after another while each container's own path (u_j + h_j + r_j) runs beside them. A step
takes

    D_j = max(N h_j + r_j, (u_j + h_j + r_j) c) + g_j G + N p_j s,

where c = max(1, N / CPUs) is the CPU sharing, G the grace period, g_j its grace periods,
p_j the puts per container and s one per-CPU sum. The mount phase is the sum of the D_j; the
runtime's CPU work follows (shared the same way); the launch adds the kernel's fixed base.
Every container finishes together in this model: p50 = p99 = max. Call-to-call variation is
taken at its mean (exp(sigma^2 / 2)).

Two assumptions about how far the containers drift apart bracket what the simulation does:

- ``lockstep`` (above): the containers stay in step, so no container's namespace copy is open
  while the others make their binds, and the peer group grows and shrinks with each pass.
- ``uniform``: the containers are spread evenly over their sequences (a mean field): every
  call sees the node's own mounts plus N - 1 times the time-average of one container's own
  contribution (its binds alive, its copy open), and its own so far. The time each call
  takes is its own path plus, for a write, one round of everyone's holds; the averages and
  the times are iterated to a fixed point. The mount phase is then max(N x the write holds of
  one container, its own path with the rounds).

What it leaves out, and where it disagrees with the simulation (docs/analytic.md has the
measured agreement): the containers' drift out of step (readers then wait behind writers of
other phases, and the simulation's spread between p50 and max), the run queue's order, the
background readers (systemd, probes) and walkers on mount_lock, the wake-up latencies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cohsim.errors import CohsimError
from cohsim.kernel.analytic_arrays import Array, StepArrays
from cohsim.kernel.callcost import CallCosts, percpu_sum_ns
from cohsim.kernel.costs import KernelParams
from cohsim.kernel.plan import Step, plan_calls
from cohsim.machine.model import Machine
from cohsim.workload.trace import SyscallEvent, Trace

#: the spreads `BurstModel.run` knows (the module docstring)
SPREADS = ("gated", "lockstep", "uniform")

#: the last few plans, by (events, kernel, layers, per-CPU sum): a replicate asks for the burst
#: and for one container alone (the same calls), and planning is most of a model's cost
_PLANS: dict[tuple[int, int, int | None, float], tuple[Any, ...]] = {}
_PLANS_KEPT = 8


def _planned(
    events: tuple[SyscallEvent, ...],
    kernel: KernelParams,
    layers: int | None,
    sum_ns: float,
    cc: CallCosts,
) -> tuple[list[Step], StepArrays]:
    """The planned calls (cohsim.kernel.plan) and their arrays, reused while the same events
    and kernel objects come again (the entry keeps them, so an id is not reused meanwhile)."""
    key = (id(events), id(kernel), layers, sum_ns)
    hit = _PLANS.get(key)
    if hit is not None and hit[0] is events and hit[1] is kernel:
        return hit[2], hit[3]
    steps = plan_calls(events, kernel, layers, sum_ns)
    arrays = StepArrays(steps, cc, math.exp(kernel.call_sigma**2 / 2))
    if len(_PLANS) >= _PLANS_KEPT:
        del _PLANS[next(iter(_PLANS))]
    _PLANS[key] = (events, kernel, steps, arrays)
    return steps, arrays


@dataclass
class AnalyticResult:
    """What the burst model gives for one burst (ns unless said)."""

    containers: int
    mount_ns: float  #: the last container's mount phase
    launch_ns: float  #: the last container's launch, the fixed base included
    ns_write_ns: float  #: namespace_sem held for writing, all containers
    ns_write_by_op: dict[str, float] = field(default_factory=dict)
    ns_acquisitions: int = 0
    ml_hold_ns: float = 0.0  #: mount_lock held (nested sections and puts)
    grace_periods: int = 0
    peak_mounts: int = 0
    ring_peak: int = 1
    windows_peak: int = 0
    peak_read_ns: dict[str, float] = field(default_factory=dict)
    #: each container's mount phase (its first mount call to its last), in finishing order
    mount_each_ns: tuple[float, ...] = ()
    #: each container's launch (first call to the runtime's end), without the fixed base
    launch_each_ns: tuple[float, ...] = ()

    def peaks(self, states: Array) -> None:
        """Raise the peaks to the largest of `states` (rows of M, R, B, W)."""
        if len(states):
            top = states.max(axis=0)
            self.peak_mounts = max(self.peak_mounts, round(float(top[0])))
            self.ring_peak = max(self.ring_peak, round(float(top[1])))
            self.windows_peak = max(self.windows_peak, round(float(top[3])))


class BurstModel:
    """The burst model of one burst on one machine (see the module): `estimate()`, or
    `run(spread)` for one assumption about the containers' spread."""

    def __init__(
        self,
        machine: Machine,
        kernel: KernelParams,
        trace: Trace,
        *,
        layers: int | None = None,
        node_mounts: int | None = None,
    ) -> None:
        threads = [t for t in trace.threads if t.events]
        if not threads:
            raise CohsimError("the workload has no mount-relevant calls")
        first = threads[0].events
        if any(t.events is not first and t.events != first for t in threads):
            raise CohsimError(
                "the analytic model answers bursts of identical containers only "
                "(a synthesised workload), not a replayed trace"
            )
        if first[0].start_ns:
            raise CohsimError("the analytic model answers bursts launched at once only")
        self.m, self.k, self.n = machine, kernel, len(threads)
        self.sum_ns = percpu_sum_ns(machine, kernel)
        self.cc = CallCosts(kernel, self.sum_ns)
        self.steps, self.a = _planned(first, kernel, layers, self.sum_ns, self.cc)
        nodes = float(round(kernel.node_mounts) if node_mounts is None else node_mounts)
        self.start = np.array([nodes, 1.0, 0.0, 0.0])  #: the node before the burst
        self.gp_ns = kernel.rcu_exp_base_ns + kernel.rcu_exp_per_cpu_ns * machine.vcpus
        self.share = max(1.0, self.n / max(1.0, machine.vcpus - kernel.daemon_cpus))
        self.smt = self._smt(min(self.n, machine.vcpus))
        names = sorted(set(self.a.names))
        self._op_ids = np.array([names.index(x) for x in self.a.names])
        self._op_names = names

    def _smt(self, busy: int) -> float:
        t = self.m.topology
        if t.threads_per_core < 2 or busy <= t.cores:
            return 1.0
        return 1.0 + (self.k.smt_slowdown - 1.0) * 2.0 * (busy - t.cores) / busy

    def estimate(self) -> AnalyticResult:
        """The model's best estimate of the burst (what `predict(engine="analytic")` answers):
        the gated spread (the module docstring; docs/analytic.md has its agreement)."""
        return self.run("gated")

    def run(self, spread: str = "gated") -> AnalyticResult:
        """The burst under one assumption about the containers' spread (the module's)."""
        if spread == "gated":
            return self._gated()
        if spread == "lockstep":
            return self._lockstep()
        if spread == "uniform":
            return self._uniform()
        raise CohsimError(f"unknown spread {spread!r} ({', '.join(SPREADS)})")

    # ----- pricing ---------------------------------------------------------------------------

    def _price(self, st: Array, idx: slice | Array, share: float) -> tuple[Array, ...]:
        """For calls `idx` at states `st`: one container's write hold h, read holds r, own
        path o = (u + h + r + mount_lock alone) c + think + grace periods, and the mount_lock
        work each container leaves to be served one after another (puts, a lone section)."""
        a = self.a
        h, r = a.holds(st, idx), a.reads(st, idx)
        alone = a.ml_alone[idx]
        u = a.unlocked[idx] * self.smt
        own = (u + h + r + alone) * share + a.think[idx] + a.rcu[idx] * self.gp_ns
        serial = a.put_count(st, idx) * self.sum_ns + alone
        return h, r, own, serial

    def _cohort_grace(self, h: Array, rcu: Array) -> Array:
        """How long the last of a cohort waits for the grace periods of a call it makes in
        step (h: each one's write hold, served one after another). A caller needs a grace
        period that starts after its call; the first caller starts one, and everyone who asks
        while it runs waits for the next, which starts when it ends: the last, (n - 1) h
        after the first, waits for the end of the one after the one running then, at
        (floor((n - 1) h / G) + 2) G; woken together, they do the same for a second one."""
        g, n = self.gp_ns, self.n
        if n == 1:
            return rcu * g
        first = (np.floor((n - 1) * h / g) + 2.0) * g
        return np.where(rcu > 0, first + (rcu - 1) * 2.0 * g, 0.0)

    def _tally(self, out: AnalyticResult, idx: slice | Array, h: Array, serial: Array,
               times: float) -> None:  # fmt: skip
        """Add `times` containers' holds of calls `idx` to the lock tallies."""
        a, ops = self.a, self._op_ids[idx]
        by_op = np.bincount(ops, weights=h * times, minlength=len(self._op_names))
        for i in np.flatnonzero(by_op):
            name = self._op_names[i]
            out.ns_write_by_op[name] = out.ns_write_by_op.get(name, 0.0) + float(by_op[i])
        out.ns_write_ns += float(h.sum()) * times
        out.ns_acquisitions += int(np.count_nonzero(h)) * round(times)
        nested = np.where(h > 0, a.ml_nested[idx], 0.0)
        out.ml_hold_ns += float((serial + nested).sum()) * times

    def _in_step(self, out: AnalyticResult, lo: int, hi: int, st0: Array) -> tuple[float, float]:
        """Calls lo..hi-1 with every container in step from state `st0`: the span's time and
        the last write hold in it (0: none)."""
        if hi <= lo:
            return 0.0, 0.0
        n, a = self.n, self.a
        eff = a.effect[lo:hi]
        before = st0 + n * (np.cumsum(eff, axis=0) - eff)
        mid = before + (n - 1) / 2.0 * eff  # the holds are linear in the state
        idx = slice(lo, hi)
        h, r, own, serial = self._price(mid, idx, self.share)
        own += self._cohort_grace(h, a.rcu[idx]) - a.rcu[idx] * self.gp_ns
        self._tally(out, idx, h, serial, n)
        out.grace_periods += int(a.rcu[idx].sum())
        out.peaks(before + n * eff)
        wrote = np.flatnonzero(h)
        return float((np.maximum(n * h + r, own) + n * serial).sum()), (
            float(h[wrote[-1]]) if len(wrote) else 0.0
        )

    # ----- the spreads -----------------------------------------------------------------------

    def _lockstep(self) -> AnalyticResult:
        out = AnalyticResult(self.n, 0.0, 0.0, 0.0)
        total, tail = self._in_step(out, 0, len(self.steps), self.start)
        return self._finish(out, total, tail)

    def _gated(self) -> AnalyticResult:
        """In step up to the first gate and from the last; one at a time between them."""
        n, a = self.n, self.a
        if n == 1 or len(a.gates) < 2:
            return self._lockstep()
        g1, g2 = int(a.gates[0]), int(a.gates[-1])
        out = AnalyticResult(n, 0.0, 0.0, 0.0)
        first, _ = self._in_step(out, 0, g1 + 1, self.start)
        # between the gates: the others wait at one gate or the other, half and half on average
        idx = slice(g1 + 1, g2)
        mine = a.own[idx]
        parked, done = a.own[g1 + 1], a.own[g2]
        st = self.start + (n - 1) / 2.0 * (parked + done) + mine
        h, r, own, serial = self._price(st, idx, 1.0)
        self._tally(out, idx, h, serial, n)
        out.grace_periods += int(a.rcu[idx].sum()) * n
        out.peaks(self.start + (n - 1) * parked + mine)
        out.peaks(self.start + (n - 1) * done + mine)
        middle = max(n * float(h.sum()), float(own.sum())) + n * float(serial.sum())
        last, tail = self._in_step(out, g2, len(self.steps), self.start + n * done)
        return self._finish(out, first + middle + last, tail)

    def _uniform(self, rounds: int = 40, tol: float = 1e-6) -> AnalyticResult:
        n, a = self.n, self.a
        mine, before = a.own[1:], a.own[:-1]
        times = np.ones(len(self.steps))
        for _ in range(rounds):
            avg = times @ mine / times.sum()
            st = self.start + (n - 1) * avg + before
            h, r, own, serial = self._price(st, slice(None), self.share)
            writes = int(np.count_nonzero(h))
            round_ns = n * float(h.sum()) / max(1, writes) * (n - 1) / n
            new = own + n * serial + np.where(h > 0, round_ns, 0.0)
            done = np.abs(new - times).max() <= tol * new.max()
            times = new
            if done:
                break
        out = AnalyticResult(n, 0.0, 0.0, 0.0)
        self._tally(out, slice(None), h, serial, n)
        out.grace_periods = int(a.rcu.sum())
        out.peaks(st)
        tail = float(h[np.flatnonzero(h)[-1]]) if writes else 0.0
        return self._finish(out, max(out.ns_write_ns, float(times.sum())), tail)

    def _finish(self, out: AnalyticResult, mount_ns: float, tail: float) -> AnalyticResult:
        """The mount phase `mount_ns` is the last container's; the others finish one write
        hold `tail` (the last write call's) apart, served one after another."""
        n = self.n
        out.mount_ns = mount_ns
        runtime = self.k.runtime_cpu_ns * self.smt * self.share
        out.launch_ns = mount_ns + runtime + self.k.base_launch_ns
        each = np.maximum(0.0, mount_ns - (n - 1 - np.arange(n)) * tail)
        out.mount_each_ns = tuple(each.tolist())
        out.launch_each_ns = tuple((each + runtime).tolist())
        out.peak_read_ns = self.cc.full_read_ns(out.peak_mounts, out.ring_peak)
        return out
