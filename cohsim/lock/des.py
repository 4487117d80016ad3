"""The lock hand-off as a discrete-event simulation (simpy): pause_bench, one cache line at a time.

N hardware threads contend for one lock whose cache line has a home agent. The model tracks the
line as the coherence protocol does — which cores hold a valid copy, which one owns it modified,
which LLC domains hold it — and every request that cannot be answered inside a core goes to a
*coherence point* that serves one request for the address at a time (FIFO, ties by arrival
order, which simpy keeps deterministic):

- the LLC domain's point (Intel's home CHA and its Table of Requests on a mesh socket, a CCX's
  L3 on a chiplet, the CMN home node) serves what its domain can answer: a read when the domain
  holds the line, an ownership request (RFO) when no copy exists outside the domain;
- anything else is forwarded to the socket home agent of the line (the IO die on a chiplet; on
  a one-LLC-per-socket mesh the home socket's CHA is both). Where the domain's point merges (a
  CCX's L3) it stays busy until the answer returns — so a second reader of the same complex
  waits for the first fill and then hits in its L3: one request per complex, not per core,
  crosses to the home. A mesh or CMN socket that is not the line's home does not merge: it
  passes every read of a shared line and every write to the home over the socket link
  (cohsim.lock.coherence says which mechanism merges where).

SMT siblings share the core's L1: a line valid in a core serves both threads without traffic.

Costs (integer picoseconds): a point is busy `service` per request (LockParams); a request's
answer arrives `L(source, requester) - service` after its service starts, where L is the level-1
latency matrix (homed on LockParams.home_socket). Why subtract: the core-to-core benchmark that
L comes from measures a write followed by the other core's read through the same point, so L
already contains the point's occupancy for the write; a ping-pong of two threads therefore
hands off in exactly L, as level 1 says (tests/lock/test_des.py checks it per pair class).
An L3 hit answers in 2 x (core -> LLC) and an upgrade of a held copy in a round trip to the point.
A request takes effect (its atomic is applied, a read takes the value) when the point orders
it — except where another core holds the line Modified: the point snoops the owner, and until
the snoop arrives (half the answer's delay) the owner still reads and writes its own copy, as
a releaser that re-takes the lock it just released does.

Spinning is not simulated PAUSE by PAUSE: a spinner with a valid copy waits for a write; a
write (a release, or any atomic, which invalidates every other copy) wakes every spinner at its
next PAUSE boundary, a uniform phase within `pause_ns` drawn from the seeded generator, where
it re-reads. Events therefore scale with transfers, not with PAUSE iterations.

What is measured: the latency of each acquisition completed after the warm-up (p50, p99, as
pause_bench does), and the mean time spent acquiring per acquisition, which also counts the
waits still open when the run stops. ttas with no think time is unfair here as on hardware:
the releaser re-takes the line still in its cache before the others' re-reads arrive, so one
thread can hold the lock for a whole short run; the others' waits are then open at the end,
and a mean over completed acquisitions alone would fall as threads are added.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import simpy
from simpy.events import Timeout

from cohsim.lock.coherence import (
    ACQUIRED,
    FADD,
    HEAD,
    Q_ARRIVE,
    Q_TAKE,
    READ,
    RELEASE_OP,
    RFO,
    SEQ_INC,
    XCHG,
    Agent,
    LockWord,
    Req,
    coherence_points,
)
from cohsim.lock.params import PS, PS_PER_S, HandoffRecord, HandoffResult, LockParams
from cohsim.machine.model import Machine


class LockDES:
    """One pause_bench run: state lives here, never in the module."""

    def __init__(
        self,
        machine: Machine,
        cpus: tuple[int, ...],
        lock: str,
        params: LockParams,
        cs_ns: float,
        think_ns: float,
        acquisitions: int,
        rng: np.random.Generator,
        record: bool,
    ) -> None:
        self.env = simpy.Environment()
        self.lock, self.params, self.rng = lock, params, rng
        n = self.n = len(cpus)
        home = params.home_socket
        arr = machine.cpu_arrays
        cpu = np.asarray(cpus)
        lat = machine.latency_matrix(home)[np.ix_(cpu, cpu)]
        self.lat = np.rint(lat * PS).astype(np.int64).tolist()
        core_ids = arr["core"][cpu].tolist()
        uniq = sorted(set(core_ids))
        self.core = [uniq.index(k) for k in core_ids]  # participant core index per thread
        self.sib = [
            next((j for j in range(n) if j != i and self.core[j] == self.core[i]), -1)
            for i in range(n)
        ]
        self.dom = arr["llc"][cpu].tolist()
        w = machine.edge_weights_ns
        sock = arr["socket"][cpu]
        up_llc = np.full(n, w["cpu-core"] + w["core-llc"])
        up_hub = up_llc + w["llc-hub"] + np.where(sock != home, w["hub-hub"], 0.0)
        self.up_llc = np.rint(up_llc * PS).astype(np.int64).tolist()
        self.up_hub = np.rint(up_hub * PS).astype(np.int64).tolist()
        self.llc_ps = round(params.llc_service_ns * PS)
        self.hub_ps = round(params.hub_service_ns * PS)
        self.loop_ps = round(params.spin_loop_ns * PS)
        self.cs_ps, self.think_ps = round(cs_ns * PS), round(think_ns * PS)
        self.pause_ps = max(1, round(machine.microarch.pause_ns * PS))
        self.smt_slowdown = params.smt_slowdown
        # coherence points: one per LLC domain in use, and the home hub
        one_llc = machine.topology.llc_domains_per_socket == 1
        self.agents, self.hub = coherence_points(self.dom, home, one_llc, record)
        # the line
        ncores = len(uniq)
        self.core_valid = [False] * ncores
        self.dom_valid: dict[int, bool] = {d: False for d in set(self.dom) | {self.hub.domain}}
        self.n_dom_valid = 0
        self.owner_core, self.owner_t, self.last_writer = -1, -1, 0
        self.write_seq = 0
        self.word = LockWord(n)
        # threads
        self.my_ticket = [0] * n
        self.spinners: dict[int, None] = {}  # insertion-ordered set
        self.acquiring = [False] * n
        self.t_start = [0] * n
        self.releasing = [False] * n
        self.ready = [False] * n
        self.holder = -1
        # measurement
        self.warmup = min(n, acquisitions // 4)
        self.target = acquisitions + self.warmup
        self.count = 0
        self.lat_ps: list[int] = []
        self.wait_window = 0  # time spent acquiring inside the measured window, every thread
        self.in_cs = [False] * n
        self.t_warm = 0
        self.record = record
        self.holds: list[tuple[int, int, int]] = []
        self.waits: list[tuple[int, int, int]] = []
        self._phases: list[int] = []
        self.done = self.env.event()

    # ----- scheduling helpers ---------------------------------------------------------------

    def _now(self) -> int:
        return int(self.env.now)  # integer picoseconds throughout

    def _after(self, delay: int, fn: Callable[..., None], *args: Any) -> None:
        ev = Timeout(self.env, delay)
        ev.callbacks.append(lambda _e: fn(*args))

    def _phase(self) -> int:
        if not self._phases:
            self._phases = self.rng.integers(0, self.pause_ps, 4096).tolist()[::-1]
        return self._phases.pop()

    # ----- the line ---------------------------------------------------------------------------

    def _set_core_valid(self, c: int, d: int) -> None:
        self.core_valid[c] = True
        if not self.dom_valid[d]:
            self.dom_valid[d] = True
            self.n_dom_valid += 1

    def _write(self, i: int) -> None:
        """Thread i's write is ordered now: every other copy is invalid, every spinner wakes."""
        c, d = self.core[i], self.dom[i]
        for k in range(len(self.core_valid)):
            self.core_valid[k] = False
        for k in self.dom_valid:
            self.dom_valid[k] = False
        self.core_valid[c] = self.dom_valid[d] = True
        self.n_dom_valid = 1
        self.owner_core, self.owner_t, self.last_writer = c, i, i
        self.write_seq += 1
        if self.spinners:
            for j in self.spinners:
                self._after(self._phase(), self._load, j)
            self.spinners.clear()

    # ----- requests and coherence points -------------------------------------------------------

    def _submit(self, agent: Agent, req: Req) -> None:
        before = agent.n
        agent.queue.append(req)
        agent.inserted += 1
        agent.account(self._now(), before)
        if not agent.busy:
            self._start(agent)

    def _start(self, agent: Agent) -> None:
        before = agent.n
        req = agent.queue.popleft()
        agent.busy = True
        agent.account(self._now(), before)
        i = req.th
        d = self.dom[i]
        alone = self.n_dom_valid - self.dom_valid[d] == 0  # no copy outside the domain
        if req.kind == READ and self.core_valid[self.core[i]]:
            local = True
        elif req.kind == READ and self.agents[d].merges:
            local = self.dom_valid[d]
        else:  # an RFO, or a read where the point answers only lines delegated to its socket
            local = alone and (req.kind != READ or self.dom_valid[d])
        if not agent.is_hub and not local:
            if agent.merges:
                req.via = agent  # this point stays busy until the answer is back
            self._submit(self.hub, req)
            if not agent.merges:  # passed on at once: the domain's next request goes home too
                self._free(agent)
            return
        at_hub = not (local and d == agent.domain)
        busy = self.hub_ps if at_hub else self.llc_ps
        resp, snoop = self._timing(req, busy, at_hub)
        self._after(busy, self._free, agent)
        via = req.via
        if via is not None:
            self._after(resp, self._free, via)
        if snoop:  # the owner keeps its Modified copy until the snoop reaches it
            self._after(snoop, self._perform, req, resp - snoop)
        else:
            self._perform(req, resp)

    def _free(self, agent: Agent) -> None:
        before = agent.n
        agent.busy = False
        agent.served += 1
        agent.account(self._now(), before)
        if agent.queue:
            self._start(agent)

    def _timing(self, req: Req, busy: int, at_hub: bool) -> tuple[int, int]:
        """`req`, served now at a point busy `busy` ps: its answer's delay, and when it takes
        effect: at once, or where another core holds the line Modified, when the snoop reaches
        it (half the answer's delay: the point -> owner leg of the graph's equal legs)."""
        i = req.th
        c, d = self.core[i], self.dom[i]
        snoop = 0
        if req.kind == RFO and self.core_valid[c]:
            resp = 2 * (self.up_hub[i] if at_hub else self.up_llc[i])
        elif req.kind == READ and self.core_valid[c]:
            resp = 0
        elif self.owner_core >= 0:
            resp = max(0, self.lat[self.owner_t][i] - busy)
            snoop = resp // 2
        elif self.dom_valid[d] and not at_hub:  # an L3 hit at the domain's point
            resp = 2 * self.up_llc[i]
        else:
            resp = max(0, self.lat[self.last_writer][i] - busy)
        return resp, snoop

    def _perform(self, req: Req, delay: int) -> None:
        """`req` takes effect now; its answer reaches the requester `delay` ps later."""
        result = self._effect(req)
        self._after(delay, req.done, result, self.write_seq)

    def _effect(self, req: Req) -> Any:
        """What `req` does to the line and the lock word now; the answer it carries."""
        i = req.th
        c, d = self.core[i], self.dom[i]
        if req.kind == READ:
            alone = self.n_dom_valid == 0  # no copy anywhere: the line arrives Exclusive
            if self.owner_core != c:
                self.owner_core = -1
            self._set_core_valid(c, d)
            if alone:
                self.owner_core, self.owner_t = c, i
            return self.word.value
        result = self.word.apply(i, req.op)
        self._write(i)
        return result

    def _load(self, i: int) -> None:
        """Thread i reads the lock word: from its core if valid there, else via its LLC's point."""
        c = self.core[i]
        if self.core_valid[c]:
            w = self.last_writer
            delay = self.lat[w][i] if w != i and self.core[w] == c else 0
            if delay:
                self._after(delay, self._on_value_now, i)
            else:
                self._on_value(i, self.word.value, self.write_seq)
            return
        req = Req(i, READ, 0, lambda v, s: self._on_value(i, v, s))
        self._submit(self.agents[self.dom[i]], req)

    def _on_value_now(self, i: int) -> None:
        self._on_value(i, self.word.value, self.write_seq)

    def _rfo(self, i: int, op: int, done: Callable[[Any, int], None]) -> None:
        if self.owner_core == self.core[i]:  # modified in this core: no one else to ask
            result = self.word.apply(i, op)
            self._write(i)
            done(result, self.write_seq)
            return
        self._submit(self.agents[self.dom[i]], Req(i, RFO, op, done))

    # ----- the threads ------------------------------------------------------------------------

    def _begin(self, i: int) -> None:
        self.acquiring[i] = True
        lock = self.lock
        if lock in ("ttas", "pingpong") or (lock == "seqcount" and i > 0):
            self._load(i)
        elif lock == "ticket":
            self._rfo(i, FADD, lambda t, s: self._on_ticket(i, t, s))
        elif lock == "qspinlock":
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
        elif r == HEAD:
            self._wait(i, seq)  # spins on the lock word it now holds a copy of
        # QUEUED: spins on its own MCS node until its predecessor hands over (_took)

    def _took(self, i: int, nxt: int) -> None:
        """qspinlock: head i took the lock; it tells the next MCS waiter it is now the head."""
        if nxt >= 0:  # write its node's line; it notices at its next PAUSE and re-reads it
            self._after(2 * self.lat[i][nxt] + self._phase(), self._load, nxt)
        self._acquired(i)

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
            op = RELEASE_OP[self.lock]
            self.releasing[i] = True
            self.ready[i] = False
            self._rfo(i, op, lambda _r, _s: self._released(i))
        self.ready[i] = False
        self.t_start[i] = now + self.think_ps
        if self.think_ps:
            self._after(self.think_ps, self._thought, i)
        else:
            self._thought(i)

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


def run_des(
    machine: Machine,
    cpus: tuple[int, ...],
    lock: str,
    params: LockParams,
    cs_ns: float,
    think_ns: float,
    acquisitions: int,
    rng: np.random.Generator,
    record: bool,
    common: dict[str, Any],
) -> HandoffResult:
    """Run the DES and summarise it as a HandoffResult (see cohsim.lock.handoff.simulate)."""
    sim = LockDES(machine, cpus, lock, params, cs_ns, think_ns, acquisitions, rng, record)
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
    if record:
        rec = HandoffRecord(
            holds=tuple(sim.holds),
            waits=tuple(sim.waits),
            home_queue=tuple(hub.trace or ()),
            agents={a.name: (a.inserted, a.served, a.n) for a in agents},
            end_ps=end,
        )
    return HandoffResult(
        model="des",
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
        **common,
    )
