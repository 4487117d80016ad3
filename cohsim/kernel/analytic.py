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

from cohsim.errors import CohsimError
from cohsim.kernel.callcost import CallCosts, percpu_sum_ns
from cohsim.kernel.costs import KernelParams
from cohsim.kernel.plan import Step, plan_calls
from cohsim.machine.model import Machine
from cohsim.workload.trace import Trace


@dataclass
class AnalyticResult:
    """What the lockstep model gives for one burst (ns unless said)."""

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

    def peaks(self, st: _State) -> None:
        self.peak_mounts = max(self.peak_mounts, round(st.mounts))
        self.ring_peak = max(self.ring_peak, round(st.ring))
        self.windows_peak = max(self.windows_peak, round(st.windows))


class BurstModel:
    """The burst model of one burst on one machine (see the module): `run(spread)`."""

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
        self.steps = plan_calls(first, kernel, layers, self.sum_ns)
        self.node_mounts = float(round(kernel.node_mounts) if node_mounts is None else node_mounts)
        self.gp_ns = kernel.rcu_exp_base_ns + kernel.rcu_exp_per_cpu_ns * machine.vcpus
        self.mean_factor = math.exp(kernel.call_sigma**2 / 2)
        self.share = max(1.0, self.n / max(1.0, machine.vcpus - kernel.daemon_cpus))
        self.smt = self._smt(min(self.n, machine.vcpus))

    def _smt(self, busy: int) -> float:
        t = self.m.topology
        if t.threads_per_core < 2 or busy <= t.cores:
            return 1.0
        return 1.0 + (self.k.smt_slowdown - 1.0) * 2.0 * (busy - t.cores) / busy

    def _write_hold(self, s: Step, st: _State) -> float:
        """One container's namespace_sem write hold for step `s` in state `st`, the nested
        mount_lock section included (0 for an op that takes none)."""
        hold = self.cc.write_hold_ns(s, st)
        if not hold:
            return 0.0
        return hold * self.mean_factor + s.ml_work + s.op.per_mount_lock_ns * st.mounts

    def _read_hold(self, s: Step, st: _State) -> float:
        op = s.op
        hold = s.reads * (op.layer_read_ns * self.mean_factor + self.sum_ns)
        if op.ns_read_ns or op.per_mount_read_ns:
            extra = self.cc.slave_line_ns(st) if s.own_ns else 0.0
            hold += op.ns_read_ns + (op.per_mount_read_ns + extra) * st.mounts
        return hold

    def _own(self, s: Step, h: float, r: float, st: _State) -> tuple[float, float, float]:
        """One container's own path through step `s` (ns), its mount_lock-only section and
        its puts."""
        u = (s.walk_ns + s.cpu) * self.mean_factor * self.smt
        ml_alone = 0.0 if h else s.ml_work
        puts = self.cc.puts(s, st.mounts, st)
        own = (u + h + r + ml_alone) * self.share + s.think + s.op.rcu * self.gp_ns
        return own, ml_alone, puts

    def estimate(self) -> AnalyticResult:
        """The model's best estimate of the burst (what `predict(engine="analytic")` answers).

        For now the uniform spread, the nearer of the two on most of docs/analytic.md's grid
        (within 20 %, but +36 to +49 % on common-parent at 100 containers)."""
        return self._uniform()

    def run(self, spread: str = "lockstep") -> AnalyticResult:
        """The burst under one assumption about the containers' spread (the module's)."""
        if spread == "lockstep":
            return self._lockstep()
        if spread == "uniform":
            return self._uniform()
        raise CohsimError(f"unknown spread {spread!r} (lockstep or uniform)")

    def _lockstep(self) -> AnalyticResult:
        n, out = self.n, AnalyticResult(self.n, 0.0, 0.0, 0.0)
        st, total, tail = _State(self.node_mounts, 1.0, 0.0, 0.0), 0.0, 0.0
        for s in self.steps:
            mid = st.moved(s, (n - 1) / 2.0)  # the holds are linear in the state
            h, r = self._write_hold(s, mid), self._read_hold(s, mid)
            tail = h or tail
            own, ml_alone, puts = self._own(s, h, r, mid)
            total += max(n * h + r, own) + n * (puts * self.sum_ns + ml_alone)
            _tally(out, s, n, h, puts * self.sum_ns + (s.ml_work if h else ml_alone))
            st = st.moved(s, float(n))
            out.peaks(st)
        return self._finish(out, total, tail)

    def _uniform(self, rounds: int = 40) -> AnalyticResult:
        n, steps = self.n, self.steps
        mine, own_so_far = [], _State(0.0, 0.0, 0.0, 0.0)
        for s in steps:  # one container's own contribution after each of its calls
            own_so_far = own_so_far.moved(s, 1.0)
            mine.append(own_so_far)
        times = [1.0] * len(steps)
        for _ in range(rounds):
            avg = _State.average(mine, times)
            out, holds, new = AnalyticResult(n, 0.0, 0.0, 0.0), [], []
            for j, s in enumerate(steps):
                st = avg.scaled(n - 1).plus(mine[j - 1] if j else None, self.node_mounts)
                h, r = self._write_hold(s, st), self._read_hold(s, st)
                own, ml_alone, puts = self._own(s, h, r, st)
                holds.append(h)
                new.append(own + n * (puts * self.sum_ns + ml_alone))
                _tally(out, s, n, h, puts * self.sum_ns + (s.ml_work if h else ml_alone))
                out.peaks(st)
            writes = sum(1 for h in holds if h)
            round_ns = out.ns_write_ns / max(1, writes) * (n - 1) / n
            times = [t + (round_ns if h else 0.0) for t, h in zip(new, holds, strict=True)]
        tail = next((h for h in reversed(holds) if h), 0.0)
        return self._finish(out, max(out.ns_write_ns, sum(times)), tail)

    def _finish(self, out: AnalyticResult, mount_ns: float, tail: float) -> AnalyticResult:
        """The mount phase `mount_ns` is the last container's; the others finish one write
        hold `tail` (the last write call's) apart, served one after another."""
        n = self.n
        out.mount_ns = mount_ns
        runtime = self.k.runtime_cpu_ns * self.smt * self.share
        out.launch_ns = mount_ns + runtime + self.k.base_launch_ns
        out.mount_each_ns = tuple(max(0.0, mount_ns - (n - 1 - i) * tail) for i in range(n))
        out.launch_each_ns = tuple(m + runtime for m in out.mount_each_ns)
        out.peak_read_ns = self.cc.full_read_ns(out.peak_mounts, out.ring_peak)
        return out


@dataclass(frozen=True)
class _State:
    """What the holds depend on: mounts in the table, the root's peer group, its binds under
    the root, the live namespace copies."""

    mounts: float
    ring: float
    binds: float
    windows: float

    def moved(self, s: Step, times: float) -> _State:
        """After `times` containers made call `s`."""
        return _State(self.mounts + times * s.delta, self.ring + times * s.ring,
                      self.binds + times * s.binds, self.windows + times * s.window)  # fmt: skip

    def scaled(self, f: float) -> _State:
        return _State(self.mounts * f, self.ring * f, self.binds * f, self.windows * f)

    def plus(self, other: _State | None, node_mounts: float) -> _State:
        """This (the others' share) plus one container's own so far and the node's base."""
        o = other or _State(0.0, 0.0, 0.0, 0.0)
        return _State(node_mounts + self.mounts + o.mounts, 1.0 + self.ring + o.ring,
                      self.binds + o.binds, self.windows + o.windows)  # fmt: skip

    @staticmethod
    def average(states: list[_State], weights: list[float]) -> _State:
        w = sum(weights)
        return _State(
            sum(x.mounts * t for x, t in zip(states, weights, strict=True)) / w,
            sum(x.ring * t for x, t in zip(states, weights, strict=True)) / w,
            sum(x.binds * t for x, t in zip(states, weights, strict=True)) / w,
            sum(x.windows * t for x, t in zip(states, weights, strict=True)) / w,
        )


def _tally(out: AnalyticResult, s: Step, n: int, h: float, ml: float) -> None:
    if h:
        out.ns_write_ns += n * h
        out.ns_write_by_op[s.name] = out.ns_write_by_op.get(s.name, 0.0) + n * h
        out.ns_acquisitions += n
    out.ml_hold_ns += n * ml
    out.grace_periods += s.op.rcu
