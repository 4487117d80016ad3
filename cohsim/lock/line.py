"""The lock's cache line in the discrete-event simulation (cohsim.lock.handoffsim): which cores
hold a valid copy, which one owns it Modified, which LLC domains hold it, and how the coherence
points (cohsim.lock.coherence) serve the threads' requests for it, with their timing.

Every request that cannot be answered inside a core goes to a *coherence point* that serves one
request for the address at a time (FIFO, ties by arrival order, which simpy keeps
deterministic):

- the LLC domain's point (Intel's CBo/CHA and its Table of Requests, a CCX's L3, the CMN home
  node) serves what its domain can answer: a read when the domain holds the line, an ownership
  request (RFO) when no copy exists outside the domain;
- anything else is forwarded to the socket home agent of the line (the IO die on a chiplet; on
  a one-LLC-per-socket mesh the home socket's CBo/CHA is both). Where the domain's point merges
  (an Intel socket's CBo, a CCX's L3) it stays busy until the answer returns — so a second
  request of the same domain waits for the first fill and is then answered inside the domain:
  one request per domain, not per core, crosses to the home. Where it does not (an Arm CMN
  socket that is not the line's home; a victim L3 that keeps no record of its cores' lines,
  `LockParams.domain_merges`), it passes every miss to the home at once
  (cohsim.lock.coherence says which mechanism merges where).

SMT siblings share the core's L1: a line valid in a core serves both threads without traffic,
and one miss per line leaves the core: a sibling's access while it is out waits for its answer
(the line fill buffers both hyperthreads share; a load that finds one "hit FB due to preceding
miss to the same cache line with data not ready", Intel SDM vol. 3B, event
MEM_LOAD_UOPS_RETIRED.HIT_LFB) and then retries in the core.

Costs (integer picoseconds): a point is busy `service` per request (LockParams); a request's
answer arrives `L(source, requester) - service` after its service starts, where L is the level-1
latency matrix (homed on LockParams.home_socket). Why subtract: the core-to-core benchmark that
L comes from measures a write followed by the other core's read through the same point, so L
already contains the point's occupancy for the write; a ping-pong of two threads therefore
hands off in exactly L, as level 1 says (tests/lock/test_handoffsim.py checks it per pair class).
An L3 hit answers in 2 x (core -> LLC); an upgrade of a held copy in a round trip to the point
where no other core holds the line, and otherwise once the point has invalidated the other
copies (its service: the point -> sharer -> point legs that `llc_service_ns` is derived from)
plus the leg back, `service + (core -> point)`. Until that answer is back the writer's core does
not own the line: its threads' loads wait for the answer as a sibling's access waits for any
outstanding miss (a store commits to the L1 only once the line is owned; x86 stores become
visible to all other processors at once, Intel SDM vol. 3A, 8.2.2), so neither the writer nor
its SMT sibling can re-take the line before the request the point serves next.
A request takes effect (its atomic is applied, a read takes the value) when the point orders
it — except where another core holds the line Modified: the point snoops the owner, and until
the snoop arrives (the point -> owner leg, `core -> point` of the owner) the owner still reads
and writes its own copy, as a releaser that re-takes the lock it just released does.

Spinning is not simulated PAUSE by PAUSE: a spinner with a valid copy waits for a write; a
write (a release, or any atomic, which invalidates every other copy) wakes every spinner at its
next PAUSE boundary, a uniform phase within `pause_ns` drawn from the seeded generator, where
it re-reads. Events therefore scale with transfers, not with PAUSE iterations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import simpy
from simpy.events import Timeout

from cohsim.lock.coherence import READ, RFO, Agent, LockWord, Req, coherence_points
from cohsim.lock.params import PS, LockParams
from cohsim.machine.model import Machine


class LineModel:
    """The line, its coherence points and the threads' CPUs; a lock algorithm
    (cohsim.lock.handoffsim) builds on it and says what a thread does with a value it read
    (`_on_value`)."""

    def __init__(
        self,
        machine: Machine,
        cpus: tuple[int, ...],
        params: LockParams,
        rng: np.random.Generator,
        record: bool,
    ) -> None:
        self.env = simpy.Environment()
        self.params, self.rng = params, rng
        n = self.n = len(cpus)
        home = params.home_socket
        arr = machine.cpu_arrays
        cpu = np.asarray(cpus)
        lat = machine.latency_matrix(home)[np.ix_(cpu, cpu)]
        self.lat = np.rint(lat * PS).astype(np.int64).tolist()
        core_ids = arr["core"][cpu].tolist()
        uniq = sorted(set(core_ids))
        self.core = [uniq.index(k) for k in core_ids]  # participant core index per thread
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
        self.pause_ps = max(1, round(machine.microarch.pause_ns * PS))
        # coherence points: one per LLC domain in use, and the home hub
        t = machine.topology
        one_llc = t.llc_domains_per_socket == 1
        merges = params.domain_merges and (not one_llc or t.interconnect == "mesh")
        self.agents, self.hub = coherence_points(self.dom, home, one_llc, record, merges)
        self.core_valid = [False] * len(uniq)
        #: per core, the accesses waiting for the core's outstanding miss to the line (None:
        #: no miss out); SMT siblings share the core's line fill buffers, one miss per line
        self.miss: list[list[Callable[[], None]] | None] = [None] * len(uniq)
        self.dom_valid: dict[int, bool] = {d: False for d in set(self.dom) | {self.hub.domain}}
        self.n_dom_valid = 0
        self.owner_core, self.owner_t, self.last_writer = -1, -1, 0
        self.write_seq = 0
        self.word = LockWord(n)
        self.spinners: dict[int, None] = {}  # insertion-ordered set
        self._phases: list[int] = []

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

    def _on_value(self, i: int, v: int, seq: int) -> None:
        """Thread i has read value v (the line's `seq`-th write): the lock algorithm's move."""
        raise NotImplementedError

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
            up = self.up_hub[i] if at_hub else self.up_llc[i]
            shared = self.n_dom_valid > 1 or sum(self.core_valid) > 1
            resp = busy + up if shared else 2 * up
        elif req.kind == READ and self.core_valid[c]:
            resp = 0
        elif self.owner_core >= 0:
            o = self.owner_t
            resp = max(0, self.lat[o][i] - busy)
            snoop = min(resp, self.up_hub[o] if at_hub else self.up_llc[o])
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
        """Thread i reads the lock word: from its core if valid there and no miss of the core is
        out (a read, or an upgrade whose answer makes the core's copy the written one), else via
        its LLC's point."""
        c = self.core[i]
        waiting = self.miss[c]
        if waiting is not None:  # the core's miss is out: its answer comes first
            waiting.append(lambda: self._load(i))
            return
        if self.core_valid[c]:
            w = self.last_writer
            delay = self.lat[w][i] if w != i and self.core[w] == c else 0
            if delay:
                self._after(delay, self._on_value_now, i)
            else:
                self._on_value(i, self.word.value, self.write_seq)
            return
        self._miss(Req(i, READ, 0, lambda v, s: self._on_value(i, v, s)))

    def _on_value_now(self, i: int) -> None:
        self._on_value(i, self.word.value, self.write_seq)

    def _rfo(self, i: int, op: int, done: Callable[[Any, int], None]) -> None:
        c = self.core[i]
        if self.owner_core == c:  # modified in this core: no one else to ask
            result = self.word.apply(i, op)
            self._write(i)
            done(result, self.write_seq)
            return
        waiting = self.miss[c]
        if waiting is not None:
            waiting.append(lambda: self._rfo(i, op, done))
            return
        self._miss(Req(i, RFO, op, done))

    def _miss(self, req: Req) -> None:
        """Send the core's one miss to the line; the sibling's accesses that come while it is
        out wait for its answer and then retry in the core (a hit there, or a miss of their
        own: a read's copy does not give a write ownership)."""
        c = self.core[req.th]
        self.miss[c] = []
        answer = req.done

        def answered(value: Any, seq: int) -> None:
            waiting, self.miss[c] = self.miss[c], None
            answer(value, seq)
            for retry in waiting or ():
                retry()

        req.done = answered
        self._submit(self.agents[self.dom[req.th]], req)
