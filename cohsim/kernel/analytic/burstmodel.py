"""Level 3 in closed form: a burst of identical containers, call by call, as one bottleneck.

`predict(..., engine="analytic")` answers with `BurstModel.estimate()`; the discrete-event
simulation (cohsim.kernel.simulation.launch) stays the reference. docs/analytic.md has the equations
at length and the measured agreement (`benchmarks/bench_analytic.py` prints it).

The N containers run the same planned calls j = 1..J (cohsim.kernel.calls). At each call the
model prices, from the node's state S it finds (mounts M, the root's peer group R, its binds
under the root B, the live namespace copies W; what each costs there is CallCosts', the one
definition the simulation uses too, read into arrays by cohsim.kernel.analytic.arrays):

- one container's namespace_sem write hold h_j(S), its nested mount_lock section included,
  slowed by SMT (or a VM's co-run) for the CPUs busy while the cohort's holds are served:
  the holder and the writers spinning on it (cohsim.kernel.analytic.plans.busy_at_holds);
- its read holds r_j(S) (an overlay's per-layer clones, a mountinfo read), and where it has
  any, the (N - 1) w the releaser takes to wake the cohort's readers it granted the lock
  together, one after another (w = `wake_step_ns`; cohsim.kernel.simulation.rwsem);
- its own path o_j = (u_j + h_j + r_j) c + think, u_j its path walks and unlocked work (SMT's
  slowdown past the core count), c = max(1, N / (CPUs - daemon CPUs));
- the mount_lock work it leaves to be served one after another: p_j(S) puts of detached
  mounts (a per-CPU sum each) and a section outside namespace_sem.

In step (``lockstep``, the estimate), every container makes call j together; the state moves
by N times its effect over the call, and the holds (linear in it) are taken halfway through:

    D_j = max(N h_j + r_j, o_j + Γ_j) + N p_j,

Γ_j the grace periods' wait of the cohort's last: a caller needs a grace period that starts
after its call; the first starts one and those who ask while it runs wait for the next, so
the last, (N - 1) h_j after the first, waits until (floor((N - 1) h_j / G) + 2) G, and a second
grace period (an overlay's) costs 2 G more (G = one expedited grace period; alone: G each).
From a span's second call with grace periods on, the cohort was woken by the previous one's,
and grace periods run back to back: a container that works W after its wake-up asks during
the (floor(W / G) + 1)-th since and is woken at the end of the next, so the calls since the
previous one take (floor(W / G) + 2) G together (`_back_to_back`; W a half cohort's work, the
cohort splitting in two halves woken G apart, while that is shorter than G, else the whole's).

Why in step, also through the overlays: Linux 6.x's rwsem (cohsim.kernel.simulation.rwsem) lets no
writer starve a reader past RWSEM_WAIT_TIMEOUT (4 ms): the waiting reader sets the hand-off
bit and the next release grants every queued reader at once, so the cohort passes an overlay's
per-layer read sections together. (Under the arbitration the simulation had before, a
spinning writer was served before every sleeping reader, and the containers passed the
overlays one at a time: ``gated``, kept for comparison.) docs/analytic.md has the measured
evidence.

Gated (``gated``): in step up to the first gate g1 (a call with per-layer read sections) and
from the last g2 on; between them the containers pass one at a time, the others waiting at one
gate or the other, (N - 1) / 2 at each on average (their binds alive: the peer group stays
full), their own paths overlapping the lock's work:

    D_mid = max(N Σ h_j(S_j), Σ o_j) + N Σ p_j,
    S_j = S_0 + (N - 1)/2 (C_{g1+1} + C_{g2}) + C_j,   C_j one container's own contribution
                                                         before call j, c = 1 (the others sleep).

The mount phase is T = Σ_j D_j, the last container's; the others finish before it in turn,
one gap apart, the gap the largest lock work of one container in a call the cohort queues at
from its last read on (cohsim.kernel.analytic.spread derives it); each launch adds the
runtime's CPU work × SMT × c (the kernel's fixed base is the caller's to add).

A third spread, ``uniform`` (a mean field: each call sees N - 1 times the time-average of one
container's contribution, iterated to a fixed point), is kept for comparison.

What it leaves out: the background readers of mountinfo (systemd's re-read steals
namespace_sem from woken writers until their 4 ms hand-off: at 100 containers x 50 layers
per-layer it adds 3-11 % in the simulation), the run queue's order, mount_lock's walkers, the
wake-up latencies, and the containers that run ahead of the cohort before its bottleneck
(cohsim.kernel.analytic.spread).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence

import numpy as np

from cohsim.errors import CohsimError
from cohsim.kernel.analytic.arrays import Array, StepArrays, per_replicate
from cohsim.kernel.analytic.grace import back_to_back, cohort_grace
from cohsim.kernel.analytic.plans import busy_at_holds, hold_slowdowns, planned, spinning, stacked
from cohsim.kernel.analytic.result import AnalyticResult
from cohsim.kernel.analytic.spread import finishing, gap, gaps
from cohsim.kernel.analytic.tally import BurstTally
from cohsim.kernel.callcost import CallCosts, grace_period_ns, percpu_sum_ns
from cohsim.kernel.costs import KernelParams
from cohsim.kernel.linetake import LineTakes
from cohsim.kernel.smt import slowdown
from cohsim.kernel.walk import walks_for
from cohsim.machine.model import Machine
from cohsim.workload.trace import Trace

#: the spreads `BurstModel.run` knows (the module docstring)
SPREADS = ("lockstep", "gated", "uniform")

#: what a model works out per call when asked (`BurstModel._load` forgets it)
_PER_CALL = ("busy_holds", "hold_slow", "tally")


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
        self.m, self.k = machine, kernel
        sum_ns = percpu_sum_ns(machine, kernel)
        self.sum_ns: float | Array = sum_ns
        takes = LineTakes(machine, kernel.walk_interval_ns)
        self.cc = CallCosts(kernel, sum_ns, takes, walks_for(machine, kernel))
        #: the node daemons' CPUs walking paths, counted at a runtime's walk rate (as the
        #: simulation's mountlock does): where the closed form prices mount_lock's line
        walking = kernel.daemon_cpus * kernel.walk_interval_ns / kernel.daemon_walk_interval_ns
        self.cc.busy = min(float(machine.vcpus), walking)
        self.a = planned(first, kernel, layers, sum_ns, self.cc)
        self.calls = len(self.a.names)  #: calls a container makes
        nodes = float(round(kernel.node_mounts) if node_mounts is None else node_mounts)
        self.start = np.array([nodes, 1.0, 0.0, 0.0])  #: the node before the burst
        self._load(len(threads))

    def _load(self, n: int) -> None:
        """What depends on the number of containers `n`: the grace period, the CPU share, the
        SMT slowdowns, the tallies."""
        machine, kernel = self.m, self.k
        self.n = n
        self.models = [self]  #: the replicates' models this one answers for (`joined`)
        # (each a float; a joined model's, a column of its replicates')
        self.alloc_ns: float | Array = kernel.pcpu_alloc_ns
        self.wake_step_ns: float | Array = kernel.wake_step_ns
        #: a grace period while the burst's containers and the daemons keep CPUs busy
        self.gp_ns: float | Array = grace_period_ns(kernel, machine.vcpus, n + kernel.daemon_cpus)
        self.share: float | Array = max(1.0, n / max(1.0, machine.vcpus - kernel.daemon_cpus))
        self.smt: float | Array = slowdown(machine, kernel.smt_slowdown, min(n, machine.vcpus))
        for name in _PER_CALL:  # worked out again when asked (`joined` sets its own)
            self.__dict__.pop(name, None)

    @functools.cached_property
    def busy_holds(self) -> Array:
        """The CPUs busy at each call's holds (cohsim.kernel.analytic.plans.busy_at_holds)."""
        return busy_at_holds(self.n, spinning(self.a), self.m.vcpus)

    @functools.cached_property
    def hold_slow(self) -> Array:
        """Each call's holds' slowdown: the others busy at a hold spin beside it."""
        k = self.k
        return hold_slowdowns(self.m, self.busy_holds, k.smt_slowdown, k.smt_spin_slowdown)

    @functools.cached_property
    def tally(self) -> BurstTally:
        """The burst's lock tallies and profile (cohsim.kernel.analytic.tally)."""
        return BurstTally(
            self.a,
            self.hold_slow,
            self.busy_holds,
            self.smt,
            self.sum_ns,
            self.cc.busy,
            self.k.walk_interval_ns,
        )

    def estimate(self) -> AnalyticResult:
        """The model's best estimate of the burst (what `predict(engine="analytic")` answers):
        in step (the module docstring; docs/analytic.md has its agreement)."""
        return self.run("lockstep")

    def alone_launch_ns(self) -> float:
        """One of the burst's containers alone on the machine: its launch without the fixed
        base, as `estimate()` of a one-container burst gives it (its tallies not made)."""
        return self.alone_launches_ns()[0]

    def estimates(self) -> list[AnalyticResult]:
        """`estimate()` of each replicate's model (`joined`; one: this model's)."""
        outs = [AnalyticResult(self.n, 0.0, 0.0, 0.0) for _ in self.models]
        totals, tails = self._in_step(outs, 0, self.calls, self.start)
        for m, out, total, tail in zip(self.models, outs, totals, tails, strict=True):
            m._finish(out, float(total), float(tail))
        return outs

    def alone_launches_ns(self) -> list[float]:
        """`alone_launch_ns()` of each replicate's model (`joined`; one: this model's)."""
        ones = [copy.copy(m) for m in self.models]
        for one in ones:
            one._load(1)
        joined = BurstModel.joined(ones, self.a)
        totals, tails = joined._in_step(None, 0, joined.calls, joined.start)
        return [
            float((finishing(float(total), 1, float(tail)) + one._runtime_ns())[0])
            for one, total, tail in zip(ones, totals, tails, strict=True)
        ]

    @classmethod
    def joined(cls, models: Sequence[BurstModel], arrays: StepArrays | None = None) -> BurstModel:
        """The models of a burst's replicates (the same burst, calls and machine; each its own
        kernel's numbers) as one, which prices every replicate's calls at once: its arrays
        carry a leading replicate axis and its per-replicate numbers are columns, so that
        each replicate's numbers are what its own model gives, to the bit (element-wise
        arithmetic; sums along each replicate's row). For `estimates` and
        `alone_launches_ns`; ValueError for models of different bursts. `arrays`: the
        models' arrays already stacked (`StepArrays.stacked`), where they were."""
        first = models[0]
        if len(models) == 1:
            return first
        if any(m.n != first.n for m in models):
            raise ValueError("the models are not of one burst")
        out = copy.copy(first)
        out.models = list(models)
        out.start = np.stack([m.start for m in models])[:, None, :]  # (the node's mounts drawn)
        out.a = arrays if arrays is not None else stacked([m.a for m in models])

        def column(values: list[float | Array]) -> Array:
            return np.array(values, dtype=float)[:, None]

        out.gp_ns, out.share = column([m.gp_ns for m in models]), column([m.share for m in models])
        out.smt, out.sum_ns = column([m.smt for m in models]), column([m.sum_ns for m in models])
        out.alloc_ns = column([m.alloc_ns for m in models])
        out.wake_step_ns = column([m.wake_step_ns for m in models])
        # each replicate's row as its own model works it out (element-wise)
        spins = np.stack([spinning(m.a) for m in models])
        out.busy_holds = busy_at_holds(first.n, spins, first.m.vcpus)
        smt, spin = (
            column([m.k.smt_slowdown for m in models]),
            column([m.k.smt_spin_slowdown for m in models]),
        )
        out.hold_slow = hold_slowdowns(first.m, out.busy_holds, smt, spin)
        out.tally = BurstTally(
            out.a,
            out.hold_slow,
            out.busy_holds,
            out.smt,
            out.sum_ns,
            column([m.cc.busy for m in models]),
            column([m.k.walk_interval_ns for m in models]),
        )
        return out

    def run(self, spread: str = "lockstep") -> AnalyticResult:
        """The burst under one assumption about the containers' spread (the module's)."""
        if spread == "gated":
            return self._gated()
        if spread == "lockstep":
            return self._lockstep()
        if spread == "uniform":
            return self._uniform()
        raise CohsimError(f"unknown spread {spread!r} ({', '.join(SPREADS)})")

    # ----- pricing ---------------------------------------------------------------------------

    def _price(self, st: Array, idx: slice | Array, share: float | Array) -> tuple[Array, ...]:
        """For calls `idx` at states `st`: one container's write hold h, read holds r, own
        path o = (u + h + r + mount_lock alone) c + think + grace periods, and the mount_lock
        work each container leaves to be served one after another (puts, a lone section)."""
        a = self.a
        h, r = a.holds(st, idx) * self.hold_slow[..., idx], a.reads(st, idx)
        alone = a.ml_alone[..., idx]
        u = a.unlocked[..., idx] * self.smt
        own = (u + h + r + alone) * share + a.think[..., idx] + a.rcu[..., idx] * self.gp_ns
        serial = a.put_count(st, idx) * self.sum_ns + alone
        return h, r, own, serial

    def _cohort_grace(self, h: Array, rcu: Array) -> tuple[Array, Array]:
        """The grace periods' wait of the cohort's last at calls in step, and how many
        (cohsim.kernel.analytic.grace.cohort_grace)."""
        return cohort_grace(h, rcu, self.gp_ns, self.n)

    def _in_step(
        self, outs: list[AnalyticResult] | None, lo: int, hi: int, st0: Array
    ) -> tuple[Array, Array]:
        """Calls lo..hi-1 with every container in step from state `st0`: each replicate's
        (`joined`) span time and the gap its lock-bound calls leave between the containers
        (cohsim.kernel.analytic.spread; 0: none), their tallies added to `outs`, one a
        replicate (None: not made)."""
        if hi <= lo:
            return np.zeros(len(self.models)), np.zeros(len(self.models))
        n, a = self.n, self.a
        eff = a.effect[lo:hi]
        before = st0 + n * (np.cumsum(eff, axis=0) - eff)
        mid = before + (n - 1) / 2.0 * eff  # the holds are linear in the state
        idx = slice(lo, hi)
        h, r, own, serial = self._price(mid, idx, self.share)
        rcu = a.rcu[..., idx]
        free = own - rcu * self.gp_ns  # without its grace periods' wait
        wait, periods = self._cohort_grace(h, rcu)
        own = free + wait
        if outs is not None:
            self.tally.add(outs, idx, h, serial, n, mid, r)
            # in step the cohort shares its grace periods: they run back to back while it
            # waits, one at most per caller (a caller that finds none running starts its own)
            sums = (own - free, rcu, periods)
            waited, asked, ran = (per_replicate(x.sum(axis=-1)) for x in sums)
            after = np.reshape(before + n * eff, (-1, *eff.shape))
            for out, w, q, g, states in zip(outs, waited, asked, ran, after, strict=True):
                out.rcu_wait_ns += n * float(w)
                out.rcu_requests += n * int(q)
                out.grace_periods += int(g)
                out.peaks(states)
        # the cohort's clones read in parallel, but allocate under pcpu_alloc_mutex one by one
        r = np.maximum(r, n * a.read_allocs[..., idx] * self.alloc_ns)
        # queued behind the writers, the cohort's readers are granted the lock together and
        # woken one after another by the releaser (wake_up_q): the last n - 1 steps later
        r = r + np.where(r > 0, (n - 1) * self.wake_step_ns, 0.0)
        d = np.maximum(n * h + r, own) + n * serial
        if n > 1:
            d = self._back_to_back(d, h, r, free, serial, rcu)
        return per_replicate(d.sum(axis=-1)), gaps(n, h + serial, free, r)

    def _back_to_back(
        self, d: Array, h: Array, r: Array, free: Array, serial: Array, rcu: Array
    ) -> Array:
        """The calls' in-step times `d` with the grace periods back to back
        (cohsim.kernel.analytic.grace.back_to_back)."""
        return back_to_back(d, h, r, free, serial, rcu, self.gp_ns, self.n)

    # ----- the spreads -----------------------------------------------------------------------

    def _lockstep(self) -> AnalyticResult:
        return self.estimates()[0]

    def _gated(self) -> AnalyticResult:
        """In step up to the first gate and from the last; one at a time between them."""
        n, a = self.n, self.a
        if n == 1 or len(a.gates) < 2:
            return self._lockstep()
        g1, g2 = int(a.gates[0]), int(a.gates[-1])
        out = AnalyticResult(n, 0.0, 0.0, 0.0)
        first = float(self._in_step([out], 0, g1 + 1, self.start)[0][0])
        # between the gates: the others wait at one gate or the other, half and half on average
        idx = slice(g1 + 1, g2)
        mine = a.own[idx]
        parked, done = a.own[g1 + 1], a.own[g2]
        st = self.start + (n - 1) / 2.0 * (parked + done) + mine
        h, r, own, serial = self._price(st, idx, 1.0)
        self.tally.add([out], idx, h, serial, n, st, r)
        out.rcu_wait_ns += n * float((a.rcu[idx] * self.gp_ns).sum())
        out.rcu_requests += n * int(a.rcu[idx].sum())
        out.grace_periods += int(a.rcu[idx].sum()) * n
        out.peaks(self.start + (n - 1) * parked + mine)
        out.peaks(self.start + (n - 1) * done + mine)
        middle = max(n * float(h.sum()), float(own.sum())) + n * float(serial.sum())
        lasts, tails = self._in_step([out], g2, self.calls, self.start + n * done)
        # the last gate's read sections gather the cohort: the gap is the last span's
        return self._finish(out, first + middle + float(lasts[0]), float(tails[0]))

    def _uniform(self, rounds: int = 40, tol: float = 1e-6) -> AnalyticResult:
        n, a = self.n, self.a
        mine, before = a.own[1:], a.own[:-1]
        times = np.ones(self.calls)
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
        self.tally.add([out], slice(None), h, serial, n, st, r)
        out.rcu_wait_ns += n * float((a.rcu * self.gp_ns).sum())
        out.rcu_requests = n * int(a.rcu.sum())
        out.grace_periods = n * int(a.rcu.sum())
        out.peaks(st)
        spread = gap(n, h + serial, own, r)
        return self._finish(out, max(out.ns_write_ns, float(times.sum())), spread)

    def _runtime_ns(self) -> float:
        """The runtime's CPU work after a container's mounts, slowed by SMT and its share."""
        return float(self.k.runtime_cpu_ns * self.smt * self.share)

    def _finish(self, out: AnalyticResult, mount_ns: float, gap_ns: float) -> AnalyticResult:
        """The mount phase `mount_ns` is the last container's; the others finish `gap_ns`
        apart before it, in turn (cohsim.kernel.analytic.spread)."""
        n = self.n
        out.mount_ns = mount_ns
        runtime = self._runtime_ns()
        out.launch_ns = mount_ns + runtime + self.k.base_launch_ns
        each = finishing(mount_ns, n, gap_ns)
        out.mount_each_ns = tuple(each.tolist())
        out.launch_each_ns = tuple((each + runtime).tolist())
        out.cpu_ns["runtime"] += float(n * self.k.runtime_cpu_ns * self.smt)
        out.peak_read_ns = self.cc.full_read_ns(out.peak_mounts, out.ring_peak)
        return out
