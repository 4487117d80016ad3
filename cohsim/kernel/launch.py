"""Level 3: containers' mount syscalls running on a machine's CPUs against the kernel's locks.

Every traced (or synthesised) thread issues its syscalls in order on a CPU of the machine
(a run queue when more threads are runnable than CPUs). Each syscall is the sequence of phases
`cohsim.kernel.costs` gives it:

1. path walks, which read mount_lock's sequence counter: while a writer holds mount_lock the
   walker spins on the line (it stays on its CPU); when the writer releases, every spinner
   re-reads the line, which costs what level 2 says for that many spinners; a walk during
   which the counter moved falls back to taking the spinlock (`__legitimize_mnt`);
2. work outside the locks;
3. an overlay mount's namespace_sem read sections, one per layer (overlayfs clones each
   layer's mount with clone_private_mount());
   a namespace_sem write section (Linux's rwsem, cohsim.kernel.runqueue.RWSem: the lock goes to
   whoever comes while it is free; a waiter spins behind a running writer and is handed it,
   behind readers it spins for the kernel's reader-spin threshold and then sleeps; a woken
   writer must get its CPU back before it retries, while readers can steal the lock from it
   until the 4 ms hand-off), with a mount_lock write section nested in it
   (cohsim.kernel.mountlock): the spinlock (FIFO, as the qspinlock) whose hold is the section's own
   length, plus the per-CPU counter sum where the kernel does one (a walk over every CPU's
   line, priced from the level-1 latency matrix), plus the writer's wait for the line while k
   CPUs spin on it (level 2, asked once per k);
4. namespace_sem read sections (mountinfo readers sleep while they wait; woken, they hold
   the lock);
5. synchronize_rcu_expedited() after unmounts (twice for an overlay): callers sleep and
   share grace periods (cohsim.kernel.rcu).

Waking up: a task that slept (for namespace_sem, or for a grace period someone else started;
the one that starts it is woken on the CPU it just left, a cost inside the op's measured time)
goes back to a CPU: if one is idle it pays the wake-up (the IPI and the idle exit; on a VM,
the host running the halted vCPU again): `wake_ns`, or where the host's wake-up latency was
measured by idle duration, a draw from that table (cohsim.kernel.waketable) for as long as the CPU
it takes had been idle; else it waits its turn in the run queue ahead of ordinary work.

Background readers re-read /proc/self/mountinfo under namespace_sem (read), one 4 KiB read()
per lock hold as seq_file does: systemd after mount-table changes, rate-limited as systemd does,
and periodic probes. Their cost grows with the mount table.

Background path walks (CPUs outside the trace spinning on mount_lock's counter while it is
write-held) are accounted in closed form, not simulated one by one: cohsim.kernel.mountlock, which
holds mount_lock's writers, walkers and sequence counter.

SMT: a thread whose sibling is busy runs `smt_slowdown` times slower; with the scheduler
filling idle cores first, a fraction 2 (busy - cores) / busy of busy threads share their core.
A machine without SMT in its topology may still have a measured co-run slowdown (a VM whose
vCPUs share host cores: `microarch.corun_slowdown`): CPU work runs slower in proportion to
how many of the other CPUs are busy.

Call-to-call variation: each traced call's own work (walks, unlocked work, its namespace_sem
sections) is its cost times exp(`call_sigma` Z), one standard normal Z per call (median 1: the
op costs are p50s). Real calls vary (mount_bench's p90 / p50); without it, two workers running
the same sequence fall into lock step and which call absorbs the waiting flips with a few ns
of any cost.

Simulated time is integer nanoseconds; ties resolve in event order (simpy is deterministic);
the randomness (arrival jitter of probes, wake-ups drawn from a table) comes from one seeded
generator, and the per-call factors from a second stream of the same seed, so that changing
how often the first is drawn does not move them (common random numbers in calibration).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import simpy

from cohsim.kernel.costs import KernelParams, OpCost, ThreadState, classify, layers_of
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.mountlock import MountLock
from cohsim.kernel.rcu import GracePeriods
from cohsim.kernel.runqueue import CPUs, RWSem
from cohsim.machine.model import Machine
from cohsim.workload.trace import Trace

Proc = Generator[simpy.Event, Any, None]

#: a writer spins on a reader-owned rwsem for (readers + 1) x this before it sleeps: Linux
#: kernel/locking/rwsem.c rwsem_rspin_threshold() ((readers + 1) << 3 us, readers capped at 30)
RSPIN_NS = 8000


@dataclass
class LockStats:
    """Accumulated wait and hold time of one lock (ns) and its acquisitions."""

    acquisitions: int = 0
    wait_ns: float = 0.0
    hold_ns: float = 0.0
    max_waiters: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "acquisitions": self.acquisitions,
            "wait_s": round(self.wait_ns / 1e9, 6),
            "hold_s": round(self.hold_ns / 1e9, 6),
            "max_waiters": self.max_waiters,
        }


@dataclass
class LaunchRecord:
    """Time series for plots: mount-table size and who held the locks when."""

    mount_table: list[tuple[int, int]] = field(default_factory=list)  #: (ns, mounts)
    ns_holds: list[tuple[int, int, int]] = field(default_factory=list)  #: (tid, from, to)
    ml_holds: list[tuple[int, int, int]] = field(default_factory=list)  #: (tid, from, to)
    spinners: list[tuple[int, int]] = field(default_factory=list)  #: (ns, seq spinners)


@dataclass
class ThreadResult:
    """One traced thread (one container for synthesised workloads)."""

    tid: int
    start_ns: int
    mounts_done_ns: int  #: its last mount syscall returned
    end_ns: int  #: its runtime work finished too
    syscalls: int
    lock_wait_ns: float  #: waiting for namespace_sem, mount_lock, or spinning in a walk
    rcu_wait_ns: float
    run_queue_ns: float  #: runnable but no free CPU


#: a planned call: think time, op name, op, walk ns, unlocked work ns, per-layer read
#: sections, mount_lock section work ns (0: none), mount-table change (LaunchSim._plan)
_Step = tuple[int, str, OpCost, float, float, int, float, int]

#: what a successful call does to the mount table
_TABLE_DELTA = {
    "move_mount": +1,
    "mount_overlay": +1,
    "umount_detach": -1,
    "umount": -1,
    "umount_overlay": -1,
}


class _CallFactors:
    """Per-call work factors exp(sigma Z), drawn in blocks from their own stream of `seed`."""

    def __init__(self, sigma: float, seed: int) -> None:
        self.sigma = sigma
        self.rng = np.random.default_rng([seed, 1])
        self.buf: list[float] = []
        self.i = 0

    def __call__(self) -> float:
        if not self.sigma:
            return 1.0
        if self.i == len(self.buf):
            self.buf = np.exp(self.sigma * self.rng.standard_normal(4096)).tolist()
            self.i = 0
        self.i += 1
        return self.buf[self.i - 1]


class LaunchSim:
    """One level-3 simulation: a trace replayed on a machine with a kernel."""

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
        self.env = simpy.Environment()
        self.rng = np.random.default_rng(seed)
        self.call_factor = _CallFactors(kernel.call_sigma, seed)
        self.cpus = CPUs(self.env, machine.vcpus)
        self._smt_table = [self._smt_at(b) for b in range(machine.vcpus + 1)]
        self.ns = RWSem(self.env)
        self.layers = layers
        self.background = background
        self.record = LaunchRecord() if record else None
        self.stats = {
            "namespace_sem": LockStats(),
            "mount_lock": LockStats(),
            "seqcount_spin": LockStats(),
            "rcu": LockStats(),
        }
        self.ml = MountLock(
            self.env,
            costs,
            kernel,
            machine.vcpus,
            self._smt,
            self.stats["mount_lock"],
            self.stats["seqcount_spin"],
            self.record,
        )
        # mount table
        self.mounts = node_mounts
        self.peak_mounts = node_mounts
        self.systemd_dirty = self.env.event()  # a change since systemd's last re-read
        self.systemd_next_ok = 0
        self.mountinfo_reads = 0
        lat = machine.latency_matrix(0)
        self.percpu_sum_ns = float(lat.sum(axis=1).mean()) / kernel.percpu_mlp
        self.rcu = GracePeriods(
            self.env,
            self.ml,
            kernel.rcu_exp_base_ns + kernel.rcu_exp_per_cpu_ns * machine.vcpus,
            self._gp_cpu_wait,
        )
        self.kernel_until: dict[int, int] = {}  # tid -> end of its current kernel CPU phase
        self.user_running = 0  # threads running preemptible user-space work
        self.results: list[ThreadResult] = []
        self._plans: dict[int, tuple[tuple, list[_Step]]] = {}

    # ----- mount table and background readers ---------------------------------------------

    def _table(self, delta: int) -> None:
        self.mounts += delta
        if self.mounts > self.peak_mounts:
            self.peak_mounts = self.mounts
        if self.record is not None:
            self.record.mount_table.append((int(self.env.now), self.mounts))
        if not self.systemd_dirty.triggered:
            self.systemd_dirty.succeed()

    def _smt(self) -> float:
        """Slowdown of CPU work now, for the number of busy CPUs (`_smt_at`, tabulated)."""
        return self._smt_table[self.cpus.busy]

    def _smt_at(self, busy: int) -> float:
        """Slowdown of CPU work with `busy` CPUs busy: the share of busy threads whose sibling
        is busy too; on a machine without SMT but with a measured co-run slowdown (a VM), that
        slowdown in proportion to how many of the other CPUs are busy (measured with all busy;
        linear in between is an assumption, exact for 2 vCPUs)."""
        t = self.m.topology
        if t.threads_per_core < 2:
            c = self.m.microarch.corun_slowdown
            if c == 1.0 or self.cpus.capacity < 2:
                return 1.0
            return 1.0 + (c - 1.0) * max(0, busy - 1) / (self.cpus.capacity - 1)
        if busy <= t.cores:
            return 1.0
        return 1.0 + (self.k.smt_slowdown - 1.0) * 2.0 * (busy - t.cores) / busy

    def _systemd(self, until: simpy.Event) -> Proc:
        """systemd: re-read mountinfo after changes, at most once per ratelimit x its cost."""
        op = self.k.op("mountinfo_read")
        while True:
            yield self.systemd_dirty | until
            if until.triggered:
                return
            wait = self.systemd_next_ok - self.env.now
            if wait > 0:
                yield self.env.timeout(wait)
            self.systemd_dirty = self.env.event()  # a change since systemd's last re-read
            ev = self.cpus.acquire(1)
            if ev is not None:
                yield ev
            t0 = self.env.now
            yield from self._ns_read(op)
            parse = self.k.systemd_parse_per_mount_ns * self.mounts * self._smt()
            yield self.env.timeout(round(parse))
            self.cpus.release()
            cost = self.env.now - t0
            self.systemd_next_ok = int(self.env.now + self.k.systemd_ratelimit * cost)

    def _probes(self, until: simpy.Event) -> Proc:
        rate = self.k.probe_reads_per_s
        op = self.k.op("mountinfo_read")
        while rate > 0 and not until.triggered:
            gap = self.rng.exponential(1e9 / rate)
            yield self.env.timeout(round(gap))
            if until.triggered:
                return
            ev = self.cpus.acquire(1)
            if ev is not None:
                yield ev
            yield from self._ns_read(op)
            self.cpus.release()

    # ----- namespace_sem -------------------------------------------------------------------

    def _ns_read(self, op: OpCost) -> Generator[simpy.Event, Any, float]:
        """Read the whole mountinfo on the caller's CPU: one namespace_sem read hold per read()
        of a page. Returns the time spent waiting for the lock or a CPU."""
        self.mountinfo_reads += 1
        lines = self.k.mountinfo_lines_per_read
        done, waited = 0.0, 0.0
        first = True
        while done < self.mounts or first:
            chunk = min(lines, max(0.0, self.mounts - done))
            hold = (op.ns_read_ns if first else 0.0) + op.per_mount_read_ns * chunk
            waited += yield from self._ns_read_section(hold)
            done += lines
            first = False
        return waited

    def _ns_read_section(self, hold_ns: float) -> Generator[simpy.Event, Any, float]:
        """Hold namespace_sem for reading for `hold_ns` on the caller's CPU. A reader that must
        wait sleeps (readers do not spin) and is woken holding the lock. Returns the wait."""
        st = self.stats["namespace_sem"]
        t0 = self.env.now
        w = self.ns.acquire(False)
        if w is not None:
            self.cpus.release()
            yield w.event
            yield from self._resume(True)
            st.wait_ns += self.env.now - t0
        waited = self.env.now - t0
        hold = round(hold_ns)
        yield self.env.timeout(hold)
        st.hold_ns += hold
        st.acquisitions += 1
        self.ns.release(False)
        return waited

    def _ns_write(self) -> Generator[simpy.Event, Any, float]:
        """Take namespace_sem for writing; returns the wait. With no task wanting this CPU the
        waiter spins (rwsem optimistic spinning): behind a writer (writers hold it on a CPU
        here) until it is handed the lock; behind readers for at most the kernel's reader
        spin threshold, (readers + 1) x 8 us (rwsem_rspin_threshold), after which it sleeps.
        Otherwise (need_resched ends the spin) it sleeps, and each time it is woken it needs
        its CPU back before it retries."""
        t0 = self.env.now
        behind_readers = self.ns.readers > 0 and not self.ns.writer
        readers = self.ns.readers
        spin = (self.ns.writer or behind_readers) and not self.cpus.waiting
        w = self.ns.acquire(True, spin)
        if w is None:
            return 0.0
        nss = self.stats["namespace_sem"]
        nss.max_waiters = max(nss.max_waiters, len(self.ns.queue))
        if spin and not behind_readers:
            yield w.event
        else:
            if spin:
                limit = self.env.timeout(RSPIN_NS * (min(readers, 30) + 1))
                yield w.event | limit
                w.spin = w.granted  # spun too long: it goes to sleep in the queue
            while not w.granted:
                self.cpus.release()
                yield w.event
                yield from self._resume(True)
                if self.ns.retry(w):
                    break
        waited = self.env.now - t0
        nss.wait_ns += waited
        return waited

    # ----- RCU -----------------------------------------------------------------------------

    def _gp_cpu_wait(self) -> float:
        """How long the grace period's worker waits for a CPU: none while a CPU is free or runs
        preemptible user code; otherwise until the first CPU leaves its kernel phase (the
        kernel is not preempted inside a syscall: no preemption point)."""
        if self.cpus.busy < self.cpus.capacity or self.user_running:
            return 0.0
        now = self.env.now
        ends = [e for e in self.kernel_until.values() if e > now]
        return float(min(ends) - now) if ends else 0.0

    # ----- the threads ---------------------------------------------------------------------

    def _resume(self, slept: bool) -> Generator[simpy.Event, Any, float]:
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
        table = self.k.wake_table
        wake = table.draw(self.cpus.last_idle_ns, self.rng.random()) if table else self.k.wake_ns
        if wake:
            yield self.env.timeout(round(wake))
        return 0.0

    def _cpu(self, ns: float, tid: int) -> simpy.Event:
        """Kernel work of `ns` on an idle core, slowed when the core's sibling is busy. Until
        it ends the CPU cannot run the RCU grace-period worker (no preemption point)."""
        took = round(ns * self._smt_table[self.cpus.busy])
        self.kernel_until[tid] = self.env.now + took
        return self.env.timeout(took)

    def _runtime(self, tid: int) -> Proc:
        """The container's runtime after its mounts: user-space CPU work (preemptible at any
        moment) that also repays the spinning debt its CPU ran up meanwhile."""
        self.kernel_until.pop(tid, None)
        self.ml.busy_bg += 1
        self.user_running += 1
        debt0 = self.ml.debt_per_cpu
        yield self.env.timeout(round(self.k.runtime_cpu_ns * self._smt()))
        for _ in range(10):  # repay the spinning this CPU did meanwhile (its share of it)
            owed = self.ml.debt_per_cpu - debt0
            if owed < 1000:
                break
            debt0 = self.ml.debt_per_cpu
            yield self.env.timeout(round(owed))
        self.ml.busy_bg -= 1
        self.user_running -= 1

    def _plan(self, events: tuple) -> list[_Step]:
        """Per event: think time before it, op name, op cost, walk and unlocked work (ns), its
        per-layer namespace_sem read sections, its mount_lock section's work (ns; 0: none)
        and what it does to the mount table. Everything a call needs that does not change
        during the run, so the hot loop does not work it out again.
        A burst workload gives every container the same events tuple: plan it once."""
        key = id(events)
        plan = self._plans.get(key)
        if plan is not None and plan[0] is events:
            return plan[1]
        k, state = self.k, ThreadState()
        layer_counts = layers_of(events) if self.layers is None else None
        steps = []
        for i, e in enumerate(events):
            think = 0
            if i and events[i - 1].duration_ns is not None:
                think = max(0, e.start_ns - events[i - 1].end_ns)
            name = classify(e, state)
            op = k.op(name)
            layers = self.layers if self.layers is not None else layer_counts[i]
            walk_ns = (op.walks + op.walks_per_layer * layers) * k.walk_ns
            cpu = op.cpu_ns + op.per_layer_cpu_ns * layers
            ml_work = op.mount_lock_ns + (self.percpu_sum_ns if op.percpu_sum else 0.0)
            steps.append(
                (
                    think,
                    name,
                    op,
                    walk_ns,
                    cpu,
                    op.layer_reads * layers,
                    ml_work,
                    _TABLE_DELTA.get(name, 0),
                )
            )
        self._plans[key] = (events, steps)
        return steps

    def _thread(self, tid: int, events: tuple, arrival: int) -> Proc:
        env = self.env
        if arrival:
            yield env.timeout(arrival)
        start = env.now
        lock_wait = rcu_wait = runq = 0.0
        t0 = env.now
        ev = self.cpus.acquire(1)
        if ev is not None:
            yield ev
        runq += env.now - t0
        nss, ml = self.stats["namespace_sem"], self.ml
        for think, name, op, walk_ns, cpu, reads, ml_work, delta in self._plan(events):
            if think:
                yield env.timeout(think)
            t_call = env.now
            f = self.call_factor()  # one per call, drawn for every call (common random numbers)
            if walk_ns or cpu:
                # path walks then unlocked work, in one event; the walks spin first while a
                # writer holds mount_lock, and legitimize if the counter moved under them
                t0 = env.now
                walk, work = walk_ns * f, cpu * f
                if ml.held:
                    yield from ml.seq_spin()
                t_walk = env.now
                yield self._cpu(walk + work, tid)
                if ml.moved_under(t_walk, walk):
                    yield from ml.legitimize_walk()
                lock_wait += (env.now - t0) - walk - work
            for _ in range(reads):  # overlayfs's private clone of each layer
                lock_wait += yield from self._ns_read_section(op.layer_read_ns * f)
            if op.ns_write_ns:
                lock_wait += yield from self._ns_write()
                t1 = env.now
                yield self._cpu(op.ns_write_ns * f, tid)
                if ml_work:
                    t2 = env.now
                    yield from ml.section(ml_work, tid)
                    lock_wait += (env.now - t2) - op.mount_lock_ns
                if delta:
                    self._table(delta)
                nss.acquisitions += 1
                nss.hold_ns += env.now - t1
                if self.record is not None:
                    self.record.ns_holds.append((tid, int(t1), int(env.now)))
                self.ns.release(True)
            elif ml_work:
                t2 = env.now
                yield from ml.section(ml_work, tid)
                lock_wait += (env.now - t2) - op.mount_lock_ns
            if op.ns_read_ns or op.per_mount_read_ns:
                lock_wait += yield from self._ns_read(op)
            for _ in range(op.rcu):
                self.cpus.release()
                t0 = env.now
                # the caller sleeps until the grace period it needs has ended and is woken.
                # One that starts it wakes the worker (rcu_exp_gp_kthr) and is woken on the
                # CPU it left moments ago (a few us; part of the op's measured 1-worker time);
                # one that finds a grace period under way sleeps behind it and pays the
                # wake-up onto a CPU idle for that long
                queued = self.rcu.running
                yield self.rcu.request()
                wait = yield from self._resume(queued)
                runq += wait
                rcu_wait += env.now - t0 - wait  # the grace period and the wake-up
            if self.calls is not None:
                self.calls.append((tid, name, int(t_call), int(env.now)))
        mounts_done = env.now
        yield from self._runtime(tid)
        self.cpus.release()
        self.stats["rcu"].wait_ns += rcu_wait
        self.results.append(
            ThreadResult(
                tid,
                int(start),
                int(mounts_done),
                int(env.now),
                len(events),
                lock_wait,
                rcu_wait,
                runq,
            )
        )
        self.remaining -= 1
        if self.remaining == 0:
            self.finished.succeed()

    def run(self) -> list[ThreadResult]:
        """Run every thread to completion; results in thread order."""
        # A plain event, not simpy's AllOf: a condition nested in another condition loses its
        # callbacks when the outer one fires (simpy's _remove_check_callbacks recurses).
        self.finished = self.env.event()
        threads = [t for t in self.trace.threads if t.events]
        self.remaining = len(threads)
        if not threads:
            return []
        for t in threads:
            self.env.process(self._thread(t.tid, t.events, t.events[0].start_ns))
        if self.background:
            self.env.process(self._probes(self.finished))
            self.env.process(self._systemd(self.finished))
        self.env.run(until=self.finished)
        self.stats["rcu"].acquisitions = self.rcu.count
        order = {t.tid: i for i, t in enumerate(self.trace.threads)}
        self.results.sort(key=lambda r: order[r.tid])
        return self.results
