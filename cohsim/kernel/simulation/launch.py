"""Level 3: containers' mount syscalls running on a machine's CPUs against the kernel's locks.

Every traced (or synthesised) thread issues its syscalls in order on a CPU of the machine
(`cpus`: a run queue when more threads are runnable than CPUs). Each syscall is the sequence of
phases its op's costs give it (cohsim.kernel.costs; which op a traced call is:
cohsim.kernel.classify; both worked out per thread before the run, cohsim.kernel.calls; what
grows with the node's state: cohsim.kernel.callcost; which lock each part is under:
docs/kernel-audit.md):

1. path walks, which read mount_lock's sequence counter: while a writer holds mount_lock the
   walker spins on the line; a walk during which the counter moved falls back to taking the
   spinlock (`__legitimize_mnt`) (`mountlock`);
2. work outside the locks;
3. an overlay mount's namespace_sem read sections, one per layer (clone_private_mount());
   a namespace_sem write section (`rwsem`, `nssections`: how its waiters spin or sleep) with
   the mount_lock sections nested in it: a write section (or a locked reader's, which does
   not move the counter) whose work may grow with the node (an unmount's walks of the peers
   and its slaves' copies), and a table copy's write section per copied mount; each pays the
   spinlock's hand-off and the wait for the line while k CPUs spin on it (level 2, asked
   once per k), and per-CPU sums priced from the level-1 latency matrix
   (`LaunchSim.percpu_sum_ns`);
4. namespace_sem read sections for mountinfo (readers sleep while they wait);
5. synchronize_rcu_expedited() after unmounts (twice for an overlay): callers sleep and
   share grace periods (`rcu`); then the detached mounts' puts, each a mount_lock write
   section with a per-CPU sum.

Waking up: a task that slept (for namespace_sem, or for a grace period someone else started)
goes back to a CPU: if one is idle it pays the wake-up (`wake_ns`, or where the host's wake-up
latency was measured by idle duration, a draw from that table, cohsim.kernel.waketable); else
it waits its turn in the run queue ahead of ordinary work.

Background readers (systemd, probes) re-read /proc/self/mountinfo under namespace_sem (read):
`background`, their cost growing with the mount table (`mounttable`). Background path walks
(CPUs outside the trace spinning on mount_lock's counter while it is write-held) are
accounted in closed form in `mountlock`. CPU work runs slower with the machine's other CPUs
busy (SMT, co-running: cohsim.kernel.smt; a spinning sibling slows it less than a working one).

Call-to-call variation: each traced call's own work (walks, unlocked work, its namespace_sem
sections) is its cost times exp(`call_sigma` Z), one standard normal Z per call (median 1: the
op costs are p50s). Real calls vary (mount_bench's p90 / p50); without it, two workers running
the same sequence fall into lock step and which call absorbs the waiting flips with a few ns
of any cost.

Simulated time is integer nanoseconds; ties resolve in event order (the event clock, `clock`, is
deterministic as simpy is); the randomness (arrival jitter of probes, wake-ups drawn from a
table) comes from one seeded generator, and the per-call factors from a second stream of the
same seed, so that changing how often the first is drawn does not move them (common random
numbers in calibration).
"""

from __future__ import annotations

import gc
from collections.abc import Generator
from typing import Any

import numpy as np

from cohsim.kernel.callcost import CallCosts, grace_period_ns, percpu_sum_ns
from cohsim.kernel.calls import CallFactors, Step, plan_calls
from cohsim.kernel.costs import KernelParams
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.simulation.background import BackgroundReaders
from cohsim.kernel.simulation.clock import Environment, Proc, Yield, iround
from cohsim.kernel.simulation.cpus import CPUs
from cohsim.kernel.simulation.mountlock import MountLock
from cohsim.kernel.simulation.mounttable import MountTable
from cohsim.kernel.simulation.nssections import NamespaceSections
from cohsim.kernel.simulation.pcpu import PcpuMutex
from cohsim.kernel.simulation.rcu import GracePeriods
from cohsim.kernel.simulation.records import CpuTally, LaunchRecord, LockStats, ThreadResult
from cohsim.kernel.simulation.rwsem import RWSem
from cohsim.kernel.simulation.sections import Sections
from cohsim.kernel.simulation.threads import Factors, Waits
from cohsim.kernel.smt import slowdown_rows
from cohsim.kernel.walk import walks_for
from cohsim.machine.model import Machine
from cohsim.workload.trace import SyscallEvent, Trace


class LaunchSim:
    """One level-3 simulation: a trace replayed on a machine with a kernel.

    The conductor: it owns the clock, the CPUs, namespace_sem (cohsim.kernel.simulation.rwsem and
    its sections, cohsim.kernel.simulation.nssections), mount_lock
    (cohsim.kernel.simulation.mountlock), the grace periods (cohsim.kernel.simulation.rcu), the
    mount table and the background readers (cohsim.kernel.simulation.background), and runs each
    thread's planned calls (cohsim.kernel.calls) through them.

    Recording every call: pass `calls=` a list and each syscall is appended to it as it
    returns, as (thread id, op name, start ns, end ns). The start is when the call was issued
    (after the think time before it), the end when it returned: every wait inside it (for a
    lock, a CPU, a grace period) is included. Calibration uses it to compare simulated
    per-call durations with measured ones (cohsim.calibrate); the list is the caller's, so
    several simulations may append to one.

    After `run`: `results` (one ThreadResult per thread, in trace order), `stats` (per lock),
    `mounts` and `peak_mounts` (the mount table), `mountinfo_reads`, `record` (when asked for)
    and the resources themselves (`cpus`, `ns`, `ml`, `rcu`) for inspection.
    """

    def __init__(
        self,
        machine: Machine,
        kernel: KernelParams,
        trace: Trace,
        *,
        costs: LineCosts,
        seed: int = 0,
        layers: int | None = None,
        background: bool = True,
        node_mounts: int | None = None,
        record: bool = False,
        calls: list[tuple[int, str, int, int]] | None = None,
    ) -> None:
        """`node_mounts` overrides the kernel file's mounts before the launch; `calls`, when
        given, collects every syscall as (thread id, op, start ns, end ns; waits included)."""
        self.m, self.k, self.trace = machine, kernel, trace
        self.calls = calls
        node_mounts = round(kernel.node_mounts) if node_mounts is None else node_mounts
        self.costs = costs
        self.env = Environment()
        self.rng = np.random.default_rng(seed)
        self.call_factor = Factors(CallFactors(kernel.call_sigma, seed))
        self.cpus = CPUs(self.env, machine.vcpus)
        #: the slowdown of CPU work by busy CPUs, then by how many of the others spin
        self._slow = slowdown_rows(machine, kernel.smt_slowdown, kernel.smt_spin_slowdown)
        self.ns = RWSem(self.env, wake_step_ns=iround(kernel.wake_step_ns))
        self.layers = layers
        self.background = background
        self.record = LaunchRecord() if record else None
        self.stats = {
            "namespace_sem": LockStats(),
            "mount_lock": LockStats(),
            "seqcount_spin": LockStats(),
            "rcu": LockStats(),
            "pcpu_alloc_mutex": LockStats(),
        }
        env, st, rec = self.env, self.stats, self.record
        self.ml = MountLock(
            env, costs, kernel, machine.vcpus, self._smt, st["mount_lock"], st["seqcount_spin"], rec
        )
        self.table = MountTable(env, node_mounts, rec, node_mounts * kernel.node_line_bytes)
        #: the mutex every mount's per-CPU area is allocated under
        self.pcpu = PcpuMutex(
            env, self.cpus, kernel.pcpu_alloc_ns, self._resume, st["pcpu_alloc_mutex"]
        )
        self.tally = CpuTally()  #: where the CPUs' time went, the parts the locks do not tally
        self.nss = NamespaceSections(
            env, self.ns, self.cpus, kernel, self.table, st["namespace_sem"], self._resume, rec,
            self.tally,
        )  # fmt: skip
        self.readers = BackgroundReaders(
            env, kernel, self.cpus, self.table, self.nss, self.rng, self._smt
        )
        #: the per-CPU counter sum inside a mount_lock section (mount_setattr(RDONLY), umount2
        #: without MNT_DETACH): one walk over every CPU's line, each at the mean level-1
        #: latency from a CPU, `percpu_mlp` lines in flight at a time
        self.percpu_sum_ns = percpu_sum_ns(machine, kernel)
        self.wake_table, self.wake_ns = kernel.wake_table, kernel.wake_ns  # (read natively)
        #: a call's costs now
        self.cc = CallCosts(kernel, self.percpu_sum_ns, self.ml.takes, walks_for(machine, kernel))
        #: a call's lock sections beside namespace_sem's own
        self.sec = Sections(self.nss, self.pcpu, self.ml, self.table, self.cc, self.tally)
        self.rcu = GracePeriods(self.env, self.ml, self._gp_ns, self._gp_cpu_wait)
        #: the threads in their mount phase, by tid (`kernel_until`: the end of each one's current
        #: kernel CPU phase, a native field set twice a call, where a dict was)
        self.in_kernel: dict[int, Waits] = {}
        self.user_running = 0  # threads running preemptible user-space work
        self.results: list[ThreadResult] = []
        #: namespace_sem held for writing, by the op that held it (ns): who the others waited for
        self.ns_write_by_op: dict[str, float] = {}

    # ----- what the run left -----------------------------------------------------------------

    @property
    def mounts(self) -> int:
        """Mounts in the table now."""
        return self.table.mounts

    @property
    def peak_mounts(self) -> int:
        """The most mounts the table had."""
        return self.table.peak

    @property
    def mountinfo_reads(self) -> int:
        """Whole-file /proc/self/mountinfo reads, traced and background."""
        return self.nss.mountinfo_reads

    def peak_read_ns(self) -> dict[str, float]:
        """One whole read of /proc/self/mountinfo at the run's peak, alone (no lock waits):
        in the host's namespace (what kubelet, systemd or a health check reading the host's
        table needs) and in a container runtime's own namespace before its old root is
        detached (the slave copy of the host's table: every line of the root's peer group
        walks the whole group). The table's and the group's peaks are taken together, an upper
        bound where they did not coincide."""
        return self.cc.full_read_ns(self.table.peak, self.table.ring_peak)

    # ----- CPUs ----------------------------------------------------------------------------

    def _smt(self) -> float:
        """Slowdown of CPU work now, for the number of busy CPUs and how many of them spin on a
        lock (cohsim.kernel.smt: a spinning sibling slows a thread less than a working one)."""
        busy = self.cpus.busy
        row = self._slow[busy]
        if len(row) == 1:  # no thread beside a busy sibling: who spins does not matter
            return row[0]
        ml = self.ml
        spin = self.cpus.spinning + ml.seq_spinners + len(ml.queue)
        return row[spin] if spin < busy else row[busy - 1]

    def _gp_ns(self) -> float:
        """A grace period that starts now: the CPUs the simulation's tasks hold and the node
        daemons' are busy (cohsim.kernel.callcost.grace_period_ns)."""
        k = self.k
        return grace_period_ns(k, self.cpus.capacity, self.cpus.busy + k.daemon_cpus)

    def _gp_cpu_wait(self) -> float:
        """How long the grace period's worker waits for a CPU: none while a CPU is free or runs
        preemptible user code; otherwise until the first CPU leaves its kernel phase (the
        kernel is not preempted inside a syscall: no preemption point)."""
        if self.cpus.busy < self.cpus.capacity or self.user_running:
            return 0.0
        now = self.env.now
        ends = [w.kernel_until for w in self.in_kernel.values() if w.kernel_until > now]
        return float(min(ends) - now) if ends else 0.0

    def _resume(self, slept: bool) -> Generator[Yield, Any, float]:
        """Back onto a CPU after blocking; returns the run-queue wait. With every CPU taken the
        thread waits its turn (ahead of ordinary runnable work) on a CPU someone hands over;
        with one idle, a thread that really slept pays the wake-up first: the IPI and the idle
        CPU's exit (a C-state on bare metal; on a VM the host must run the halted vCPU again):
        `wake_ns`, or a draw from the host's measured `wake_table` for as long as that CPU had
        been idle."""
        t0 = self.env.now
        ev = self.cpus.acquire(0)
        if ev is not None:
            yield ev
            return float(self.env.now - t0)
        if not slept:
            return 0.0
        table = self.wake_table
        wake = table.draw(self.cpus.last_idle_ns, self.rng.random()) if table else self.wake_ns
        if wake:
            took = iround(wake)
            if not self.env.advance(took):  # nothing else due before it ends: no event
                yield took
        return 0.0

    def _cpu(self, ns: float, w: Waits) -> int:
        """Kernel work of `ns` on an idle core, slowed when the core's sibling is busy. Until
        it ends the CPU cannot run the RCU grace-period worker (no preemption point)."""
        took = iround(ns * self._smt())
        w.kernel_until = self.env.now + took
        return took

    # ----- the threads ---------------------------------------------------------------------

    def plan(self, events: tuple[SyscallEvent, ...]) -> list[Step]:
        """The thread's calls worked out (cohsim.kernel.calls, which remembers its last plans: a
        burst workload gives every container the same events tuple, planned once)."""
        return plan_calls(events, self.k, self.layers, self.percpu_sum_ns)

    def _thread(self, tid: int, events: tuple[SyscallEvent, ...], arrival: int) -> Proc:
        """One thread: arrive, take a CPU, run its calls, then the container's runtime."""
        env = self.env
        if arrival:
            yield arrival
        start = env.now
        w = self.in_kernel[tid] = Waits()
        t0 = env.now
        ev = self.cpus.acquire(1)
        if ev is not None:
            yield ev
        w.runq += env.now - t0
        for step in self.plan(events):
            yield from self._call(tid, step, w)
        mounts_done = env.now
        yield from self._runtime(tid)
        self.cpus.release()
        self.stats["rcu"].wait_ns += w.rcu
        end = int(env.now)
        result = ThreadResult(
            tid, int(start), int(mounts_done), end, len(events), w.lock, w.rcu, w.runq
        )
        self.results.append(result)
        self.remaining -= 1
        if self.remaining == 0:
            self.finished.succeed()

    def _call(self, tid: int, step: Step, w: Waits) -> Proc:
        """One syscall, its phases in the kernel's order (the module docstring's 1-5)."""
        (think, name, op, walk_ns, cpu, reads, ml_work, delta, ring, binds, prop, group_walk,
         own_ns, window, allocs, step_puts, nbytes) = step  # fmt: skip
        env, table, cc, ml, tally = self.env, self.table, self.cc, self.ml, self.tally
        o = cc.row(name, op)  # the op's costs, read natively
        found, puts = table.mounts, 0.0  # the old root's detach puts the copy it found
        if think:
            yield think
        t_call, f = env.now, self.call_factor.next()  # a factor a call (common random numbers)
        if walk_ns or cpu:
            # path walks then unlocked work, in one event; the walks spin first while a writer
            # holds mount_lock, and legitimize if the counter moved under them (`_cpu` inline)
            walk, work = walk_ns * f, cpu * f
            if ml.writing:
                yield from ml.seq_spin()
            t_walk = env.now
            took = iround((walk + work) * self._smt())
            w.kernel_until = t_walk + took
            if not env.advance(took):
                yield took
            if ml.moved_under(t_walk, walk):
                yield from ml.legitimize_walk()
            w.lock += (env.now - t_call) - walk - work
        if reads:  # overlayfs's private clone of each layer, and its per-CPU area
            w.lock += yield from self.sec.layer_clones(reads, o.layer_read_ns * f)
        ml_work += self.sec.ml_extra(step, o) if o.ml_grows or o.percpu_sum else 0.0
        if o.takes_ns_write:
            if not self.ns.try_write():  # taken at once: no wait, no generator
                w.lock += yield from self.nss.write_lock()
            if allocs == 1 and not self.sec.try_allocate():  # its clone's per-CPU area
                w.lock += yield from self.pcpu.alloc(False)  # (pcpu_alloc_mutex taken)
            t1 = env.now
            hold = cc.write_hold_at(step, o, table.mounts, table.ring, table.binds, table.windows)
            if step_puts or prop < 0:  # and for a host unmount, the slaves' copies
                puts = cc.puts(step, found, table)
            took = iround(hold * (g := f * self._smt()))  # `_cpu` inline
            took += self.sec.in_hold(step, o)
            tally.hold(cc.part_percpu, cc.part_peers, cc.part_copy, cc.part_prop, g)
            w.kernel_until = t1 + took
            if not env.advance(took):
                yield took
            if ml_work:  # a write section or a locked reader's; at once, mostly
                spent = ml.try_section(ml_work, tid, not o.ml_reader)
                if spent < 0:
                    spent = yield from ml.section(ml_work, tid, True, not o.ml_reader)
                w.lock += spent - ml_work
            table.apply(delta, ring, binds, nbytes)
            self.nss.write_unlock(tid, t1)
            self.ns_write_by_op[name] = self.ns_write_by_op.get(name, 0.0) + (env.now - t1)
        else:
            if step_puts:
                puts = cc.puts(step, found, table)
            if allocs and not self.sec.try_allocate():  # a mount made outside namespace_sem
                w.lock += yield from self.pcpu.alloc(False)  # (fsmount): its per-CPU area
            if allocs:
                yield self._cpu(allocs * self.percpu_sum_ns, w)
            if ml_work:
                spent = ml.try_section(ml_work, tid, not o.ml_reader)
                if spent < 0:
                    spent = yield from ml.section(ml_work, tid, True, not o.ml_reader)
                w.lock += spent - ml_work
            if ring:  # a detached clone: made or dissolved without namespace_sem held here
                table.ring_change(ring)
        table.window_change(window)  # (0 for all but a runtime's copy and its detach)
        if o.reads_mountinfo:
            w.lock += yield from self.nss.read_mountinfo(
                op, cc.slave_line_ns(table) if own_ns else 0
            )
        for _ in range(o.rcu):
            yield from self._grace_period(w)
        if puts:  # mntput_no_expire() of each detached mount: mount_lock and a per-CPU sum
            work, n = puts * self.percpu_sum_ns, round(puts)  # n lock_mount_hash()es
            tally.percpu += work
            spent = ml.try_section(work, tid, True, n)
            if spent < 0:
                spent = yield from ml.section(work, tid, True, True, n)
            w.lock += spent - work
        if self.calls is not None:
            self.calls.append((tid, name, int(t_call), int(env.now)))

    def _grace_period(self, w: Waits) -> Proc:
        """synchronize_rcu_expedited(): the caller sleeps until the grace period it needs has
        ended and is woken. One that starts it wakes the worker (rcu_exp_gp_kthr) and is woken
        on the CPU it left moments ago (a few us; part of the op's measured 1-worker time);
        one that finds a grace period under way sleeps behind it and pays the wake-up onto a
        CPU idle for that long."""
        env = self.env
        self.cpus.release()
        t0 = env.now
        queued = self.rcu.running
        yield self.rcu.request()
        wait = yield from self._resume(queued)
        w.runq += wait
        w.rcu += env.now - t0 - wait  # the grace period and the wake-up

    def _runtime(self, tid: int) -> Proc:
        """The container's runtime after its mounts: user-space CPU work (preemptible at any
        moment) that also repays the spinning debt its CPU ran up meanwhile."""
        self.in_kernel.pop(tid, None)
        self.ml.busy_bg += 1
        self.user_running += 1
        debt0 = self.ml.debt_per_cpu
        work = iround(self.k.runtime_cpu_ns * self._smt())
        self.tally.runtime += work
        yield work
        for _ in range(10):  # repay the spinning this CPU did meanwhile (its share of it)
            owed = self.ml.debt_per_cpu - debt0
            if owed < 1000:
                break
            debt0 = self.ml.debt_per_cpu
            repay = iround(owed)
            self.tally.repaid += repay
            yield repay
        self.ml.busy_bg -= 1
        self.user_running -= 1

    def run(self) -> list[ThreadResult]:
        """Run every thread to completion; results in thread order."""
        # A plain event, not an AllOf condition: a condition nested in another condition loses
        # its callbacks when the outer one fires (the clock's Condition, as simpy's, removes its
        # checks recursively).
        self.finished = self.env.event()
        threads = [t for t in self.trace.threads if t.events]
        self.remaining = len(threads)
        if not threads:
            return []
        for t in threads:
            self.env.process(self._thread(t.tid, t.events, t.events[0].start_ns))
        if self.background:
            self.env.process(self.readers.probes(self.finished))
            self.env.process(self.readers.systemd(self.finished))
        # The run makes a million short-lived objects (events, generators, numbers) and no
        # garbage cycles that must go before it ends: the cyclic collector, which would walk
        # the young objects every 700 allocations (5 % of a replicate), waits until it is over.
        collecting = gc.isenabled()
        gc.disable()
        try:
            self.env.run(until=self.finished)
        finally:
            if collecting:
                gc.enable()
        self.readers.close()
        self.stats["rcu"].acquisitions = self.rcu.count
        order = {t.tid: i for i, t in enumerate(self.trace.threads)}
        self.results.sort(key=lambda r: order[r.tid])
        return self.results
