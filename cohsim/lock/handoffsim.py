"""The lock hand-off as a discrete-event simulation (simpy): pause_bench, one cache line at a time.

N hardware threads contend for one lock whose cache line has a home agent. The line, its
coherence points and the timing of every request are cohsim.lock.line's (`LineModel`); this
module is the threads on top of it: each lock algorithm's acquire and release (ttas, ticket,
qspinlock's MCS queue, a classic MCS lock (mcs: each waiter spins on its own node and the
holder hands over at its release, as pause_bench's), seqcount readers and their writer, a
two-thread ping-pong), the critical
section (longer by `smt_slowdown` while the holder's SMT sibling spins), the think time, and
what is measured.

What is measured: the latency of each acquisition completed after the warm-up (p50, p99, as
pause_bench does), and the mean time spent acquiring per acquisition, which also counts the
waits still open when the run stops. ttas with no think time is unfair here as on hardware:
the releaser re-takes the line still in its cache before the others' re-reads arrive, so one
thread can hold the lock for a whole short run; the others' waits are then open at the end,
and a mean over completed acquisitions alone would fall as threads are added.
"""

from __future__ import annotations

import numpy as np

from cohsim.lock.coherence import (
    ACQUIRED,
    FADD,
    HEAD,
    Q_ARRIVE,
    Q_TAKE,
    RELEASE_OP,
    SEQ_INC,
    XCHG,
)
from cohsim.lock.handoffoptions import HandoffOptions
from cohsim.lock.line import LineModel
from cohsim.lock.params import PS, PS_PER_S, HandoffRecord, HandoffResult, LockParams
from cohsim.machine.model import Machine


class HandoffSim(LineModel):
    """One pause_bench run: state lives here, never in the module."""

    def __init__(
        self,
        machine: Machine,
        cpus: tuple[int, ...],
        options: HandoffOptions,
        params: LockParams,
        rng: np.random.Generator,
    ) -> None:
        super().__init__(machine, cpus, params, rng, options.record)
        self.lock = options.lock
        n = self.n
        self.sib = [
            next((j for j in range(n) if j != i and self.core[j] == self.core[i]), -1)
            for i in range(n)
        ]
        self.cs_ps, self.think_ps = round(options.cs_ns * PS), round(options.think_ns * PS)
        self.smt_slowdown = params.smt_slowdown
        # threads
        self.my_ticket = [0] * n
        self.acquiring = [False] * n
        self.t_start = [0] * n
        self.releasing = [False] * n
        self.ready = [False] * n
        self.holder = -1
        # measurement
        self.warmup = min(n, options.acquisitions // 4)
        self.target = options.acquisitions + self.warmup
        self.count = 0
        self.lat_ps: list[int] = []
        self.wait_window = 0  # time spent acquiring inside the measured window, every thread
        self.in_cs = [False] * n
        self.t_warm = 0
        self.record = options.record
        self.holds: list[tuple[int, int, int]] = []
        self.waits: list[tuple[int, int, int]] = []
        self.done = self.env.event()

    # ----- the threads ------------------------------------------------------------------------

    def _begin(self, i: int) -> None:
        self.acquiring[i] = True
        lock = self.lock
        if lock in ("ttas", "pingpong") or (lock == "seqcount" and i > 0):
            self._load(i)
        elif lock == "ticket":
            self._rfo(i, FADD, lambda t, s: self._on_ticket(i, t, s))
        elif lock in ("qspinlock", "mcs"):  # the tail's xchg (mcs: a waiter never spins on it)
            self._rfo(i, Q_ARRIVE, lambda r, s: self._on_arrive(i, r, s))
        else:
            self._rfo(i, SEQ_INC, lambda _r, _s: self._acquired(i))

    def _wait(self, i: int, seq: int) -> None:
        """Spin on the copy just read: until a write, or at once if one already happened."""
        if seq == self.write_seq:
            self.spinners[i] = None
        else:
            self._after(self._phase(), self._load, i)

    def _on_value(self, i: int, v: int, seq: int) -> None:
        lock = self.lock
        if lock == "ttas":
            if v == 0:
                self._after(
                    self.loop_ps, self._rfo, i, XCHG, lambda old, s: self._on_xchg(i, old, s)
                )
            else:
                self._wait(i, seq)
        elif lock == "ticket" or lock == "pingpong":
            if v == (self.my_ticket[i] if lock == "ticket" else i):
                self._acquired(i)
            else:
                self._wait(i, seq)
        elif lock == "qspinlock":
            if v == 0:
                self._after(self.loop_ps, self._rfo, i, Q_TAKE, lambda nxt, _s: self._took(i, nxt))
            else:
                self._wait(i, seq)
        else:  # seqcount reader: proceed once the counter is even
            if v % 2 == 0:
                self._acquired(i)
            else:
                self._wait(i, seq)

    def _on_xchg(self, i: int, old: int, seq: int) -> None:
        if old == 0:
            self._acquired(i)
        else:
            self._wait(i, seq)

    def _on_ticket(self, i: int, answer: tuple[int, int], seq: int) -> None:
        self.my_ticket[i], serving = answer
        self._on_value(i, serving, seq)

    def _on_arrive(self, i: int, r: str, seq: int) -> None:
        if r == ACQUIRED:
            self._acquired(i)
        elif r == HEAD and self.lock == "qspinlock":
            self._wait(i, seq)  # spins on the lock word it now holds a copy of
        # QUEUED (and every mcs waiter): spins on its own node until it is handed over

    def _node_write(self, i: int, nxt: int) -> int:
        """i writes the MCS node line nxt spins on: nxt's copy is invalidated, and its next
        read, at a PAUSE boundary, brings the line back (two transfers and a phase)."""
        return 2 * self.lat[i][nxt] + self._phase()

    def _took(self, i: int, nxt: int) -> None:
        """qspinlock: head i took the lock; it tells the next MCS waiter it is now the head."""
        if nxt >= 0:  # the waiter re-reads the lock word once it knows
            self._after(self._node_write(i, nxt), self._load, nxt)
        self._acquired(i)

    def _handed(self, i: int, nxt: int) -> None:
        """A classic MCS release (mcs): holder i writes its successor's `locked`."""
        self._after(self._node_write(i, nxt), self._acquired, nxt)

    def _acquired(self, i: int) -> None:
        now = self._now()
        self.acquiring[i] = False
        exclusive = not (self.lock == "seqcount" and i > 0)
        if exclusive:
            if self.holder != -1:
                raise AssertionError(f"mutual exclusion violated: {i} while {self.holder} holds")
            self.holder = i
        wait = now - self.t_start[i]
        self.count += 1
        if self.count == self.warmup:
            self.t_warm = now
        elif self.count > self.warmup:
            self.lat_ps.append(wait)
            self.wait_window += now - max(self.t_start[i], self.t_warm)
        self.in_cs[i] = True
        if self.record:
            self.waits.append((i, self.t_start[i], now))
        if self.count >= self.target:
            if not self.done.triggered:
                self.done.succeed()
            return
        cs = self.cs_ps
        s = self.sib[i]
        if s >= 0 and self.acquiring[s]:
            cs = round(cs * self.smt_slowdown)
        self._after(cs, self._release, i, now)

    def _release(self, i: int, t_acq: int) -> None:
        now = self._now()
        self.in_cs[i] = False
        exclusive = not (self.lock == "seqcount" and i > 0)
        if exclusive:
            self.holder = -1
            if self.record:
                self.holds.append((i, t_acq, now))
            mcs = self.lock == "mcs"
            if mcs and self.word.queue:
                # its own node's `next`, set when the successor queued, names whom to hand to:
                # the tail is not touched
                self._handed(i, self.word.queue.popleft())
            else:  # (mcs with no successor yet: free the tail, or hand over after all)
                self.releasing[i] = True
                self.ready[i] = False  # (before the atomic, whose answer may come at once)
                done = self._freed if mcs else self._released_with
                self._rfo(i, RELEASE_OP[self.lock], lambda r, _s: done(i, r))
        self.ready[i] = False
        self.t_start[i] = now + self.think_ps
        if self.think_ps:
            self._after(self.think_ps, self._thought, i)
        else:
            self._thought(i)

    def _released_with(self, i: int, _result: object) -> None:
        """The release's atomic was ordered (its result unused)."""
        self._released(i)

    def _freed(self, i: int, nxt: int) -> None:
        """mcs: the release's cmpxchg of the tail was ordered; one who arrived meanwhile is
        handed the lock (the releaser waits for its `next`, then writes its `locked`)."""
        if nxt >= 0:
            self._handed(i, nxt)
        self._released(i)

    def _released(self, i: int) -> None:
        self.releasing[i] = False
        if self.ready[i]:
            self._begin(i)

    def _thought(self, i: int) -> None:
        self.ready[i] = True
        if not self.releasing[i]:  # the next atomic waits for the release store to drain
            self._begin(i)

    # ----- run --------------------------------------------------------------------------------

    def run(self) -> None:
        for i in range(self.n):
            self.t_start[i] = start = self._phase()
            self._after(start, self._thought, i)
            self.ready[i] = False
        self.env.run(until=self.done)

    def open_waits(self) -> int:
        """Acquiring time inside the window of the waits still open at the end (ps)."""
        end = self._now()
        return sum(
            end - max(t, self.t_warm)
            for t, held in zip(self.t_start, self.in_cs, strict=True)
            if not held and t < end
        )


def run_simulation(
    machine: Machine,
    cpus: tuple[int, ...],
    options: HandoffOptions,
    params: LockParams,
) -> HandoffResult:
    """Run the simulation and summarise it as a HandoffResult (see cohsim.lock.handoff.simulate):
    `machine` placed, `cpus` its threads' CPUs, `params` resolved."""
    rng = np.random.default_rng(options.seed_sequence())
    sim = HandoffSim(machine, cpus, options, params, rng)
    sim.run()
    end = int(sim.env.now)
    lat = np.asarray(sim.lat_ps, dtype=np.float64) / PS
    window = max(1, end - sim.t_warm)
    acquiring = sim.wait_window + sim.open_waits()  # every thread's, inside the window
    agents = [*sim.agents.values()] + ([] if sim.hub in sim.agents.values() else [sim.hub])
    for a in agents:
        a.account(end, a.n)
    hub = sim.hub
    rec = None
    if options.record:
        rec = HandoffRecord(
            holds=tuple(sim.holds),
            waits=tuple(sim.waits),
            home_queue=tuple(hub.trace or ()),
            agents={a.name: (a.inserted, a.served, a.n) for a in agents},
            end_ps=end,
        )
    return HandoffResult(
        machine=machine.name,
        lock=options.lock,
        model="des",
        threads=len(cpus),
        placement=options.placement_label,
        smt=options.smt,
        cpus=cpus,
        cs_ns=float(options.cs_ns),
        think_ns=float(options.think_ns),
        seed=options.recorded_seed,
        acquisitions=len(lat),
        p50_ns=float(np.percentile(lat, 50)) if len(lat) else 0.0,
        p99_ns=float(np.percentile(lat, 99)) if len(lat) else 0.0,
        mean_ns=acquiring / PS / len(lat) if len(lat) else 0.0,
        acquisitions_per_s=len(lat) / (window / PS_PER_S),
        spin_fraction=min(1.0, acquiring / (sim.n * window)),
        home_queue_mean=hub.area / max(1, end),
        home_queue_max=hub.max_n,
        home_requests=hub.served,
        requests=sum(a.served for a in agents),
        record=rec,
        p90_ns=float(np.percentile(lat, 90)) if len(lat) else 0.0,
        p999_ns=float(np.percentile(lat, 99.9)) if len(lat) else 0.0,
        max_ns=float(lat.max()) if len(lat) else 0.0,
        span_ns=window / PS,
        params=params,
    )
