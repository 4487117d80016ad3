"""The coherence points of the lock-hand-off simulation (cohsim.lock.handoffsim) and the
requests they serve.

A coherence point (an LLC domain's point: a mesh CHA, a CCX's L3, a CMN home node; or the
socket home agent) serves one request for the lock line at a time, FIFO behind it; an `Agent`
keeps that queue and integrates its occupancy over time for the result's queue statistics. A
`Req` is one thread's read or ownership request (RFO), carrying the atomic operation applied
when the point orders it. Times are integer picoseconds.

Which points *merge* requests (answer a second request of their domain from the copy the first
one fetched, so one request per domain reaches the home) follows the interconnect, and only
where a mechanism does it:

- chiplet (AMD CCX/CCD): merges. The CCX's L3 keeps shadow tags of its cores' L2s and answers
  a read from a copy inside the complex (the same-LLC class latency, ~25 ns, against ~100 ns
  through the IO die); a second miss of the complex waits behind the first one's fill and then
  hits there. About one request per complex reaches the IO die.
- mesh (Intel CBo/CHA + TOR): a socket's LLC point *is* the line's home (address-hashed CHA),
  so on the home socket every spinner's request queues there. A socket that is not the line's
  home merges too: its CBo "manages local conflicts by ensuring that only one request is
  issued to the system for a specific cacheline" (Intel Xeon E5-2600 and E5-2600 v2 Uncore
  Performance Monitoring Reference Manuals, 327043-001 and 329468-002, section 2.3.1), and its
  inclusive LLC keeps the line with core-valid bits for the local cores holding it (Intel Xeon
  E7 v2 datasheet vol. 2, section 2.2.2). A second core's miss waits in the CBo behind the
  first one's and is then answered from the socket's LLC: one request per socket crosses the
  socket link per fill, and once the socket holds the line alone (Exclusive or Modified there)
  its CBo moves it between its cores without the home.
- cmn (Arm home node): a socket that is not the line's home does not merge (no source says
  its CHI gateway answers for the home): a read of a shared copy and any write go over the
  socket link to the home, each one. It answers by itself only what the home has delegated to
  its socket: a line that no other socket holds (Exclusive or Modified there, the
  core-to-core benchmark's ping-pong between two remote cores, which level 1 prices at the
  local class latency).
- nowhere where the LLC neither holds nor tracks its cores' lines (`LockParams.domain_merges`
  False: AMD Family 10h, whose L3 is a victim cache filled only by L2 evictions, so a line
  fetched into one core's L1 is not in the L3 for its neighbours, and whose probe filter sits
  at the line's home node): every miss goes to the home.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

READ, RFO = 0, 1
# atomic operations, applied at the moment the coherence point orders them
XCHG, STORE0, FADD, INC, Q_ARRIVE, Q_TAKE, Q_RELEASE, SEQ_INC, PASS_TURN, M_RELEASE = range(10)
#: the atomic each lock kind releases with
RELEASE_OP = {
    "ttas": STORE0,
    "ticket": INC,
    "qspinlock": Q_RELEASE,
    "mcs": M_RELEASE,
    "seqcount": SEQ_INC,
    "pingpong": PASS_TURN,
}
#: what a qspinlock arrival finds: the lock free, the queue empty (it is the head) or not
ACQUIRED, HEAD, QUEUED = "acquired", "head", "queued"


class LockWord:
    """The lock's word (and, for qspinlock and mcs, its MCS queue), changed only by ordered
    atomics."""

    __slots__ = ("n", "value", "next_ticket", "queue")

    def __init__(self, n: int) -> None:
        self.n = n  #: threads (pingpong passes the turn round them)
        self.value = 0
        self.next_ticket = 0
        self.queue: deque[int] = deque()  # qspinlock MCS queue, head first

    def apply(self, i: int, op: int) -> Any:
        """The atomic's effect on the lock word, at the moment it is ordered."""
        if op == XCHG:
            old, self.value = self.value, 1
            return old
        if op == STORE0 or op == Q_RELEASE:
            self.value = 0
            return None
        if op == FADD:  # the answer carries the whole line: (my ticket, now_serving)
            t, self.next_ticket = self.next_ticket, self.next_ticket + 1
            return t, self.value
        if op == INC or op == SEQ_INC:
            self.value += 1
            return None
        if op == PASS_TURN:
            self.value = (i + 1) % self.n
            return None
        if op == Q_ARRIVE:
            if self.value == 0 and not self.queue:
                self.value = 1
                return ACQUIRED
            self.queue.append(i)
            return HEAD if len(self.queue) == 1 else QUEUED
        if op == M_RELEASE:  # a classic MCS release that found no successor: free the tail,
            # unless one arrived meanwhile (its xchg ordered first): the lock passes to it
            if self.queue:
                return self.queue.popleft()
            self.value = 0
            return -1
        if op == Q_TAKE:
            assert self.value == 0 and self.queue and self.queue[0] == i
            self.value = 1
            self.queue.popleft()
            return self.queue[0] if self.queue else -1  # the waiter to hand the MCS head to
        raise AssertionError(op)


class Agent:
    """A coherence point: one request for the lock line in service at a time, FIFO behind it."""

    __slots__ = (
        "name",
        "is_hub",
        "domain",
        "merges",
        "queue",
        "busy",
        "inserted",
        "served",
        "area",
        "last_t",
        "max_n",
        "trace",
    )

    def __init__(
        self, name: str, is_hub: bool, domain: int, trace: bool, merges: bool = True
    ) -> None:
        self.name, self.is_hub, self.domain = name, is_hub, domain
        #: answers reads from its domain's copies and holds a forwarded request until its answer
        #: (one request per domain to the home); False: passes every miss on at once
        self.merges = merges
        self.queue: deque[Req] = deque()
        self.busy = False
        self.inserted = self.served = self.area = self.last_t = self.max_n = 0
        self.trace: list[tuple[int, int]] | None = [] if trace else None

    @property
    def n(self) -> int:
        return len(self.queue) + self.busy

    def account(self, now: int, before: int) -> None:
        """Integrate the occupancy `before` up to `now`, then note the new one."""
        self.area += before * (now - self.last_t)
        self.last_t = now
        n = self.n
        self.max_n = max(self.max_n, n)
        if self.trace is not None and n != before:
            self.trace.append((now, n))


class Req:
    """A request for the lock line by thread `th`: a read or an RFO carrying an atomic `op`;
    `done(value, at)` is called with the answer; `via` is the domain point it came through."""

    __slots__ = ("th", "kind", "op", "done", "via")

    def __init__(self, th: int, kind: int, op: int, done: Callable[[Any, int], None]) -> None:
        self.th, self.kind, self.op, self.done = th, kind, op, done
        self.via: Agent | None = None


def coherence_points(
    domains: list[int], home: int, one_llc_per_socket: bool, record: bool, merges: bool = True
) -> tuple[dict[int, Agent], Agent]:
    """The points a run needs: one per LLC domain in `domains` (the threads' domains), and the
    home agent of socket `home`. Where a socket has one LLC (mesh, cmn), the home socket's CHA /
    HN is its LLC's point, so the hub is that domain's agent. `merges`: whether the domain
    points merge their domain's requests (see the module docstring: False for a cmn socket that
    is not the home, and for an LLC that keeps no record of its cores' lines); the hub always
    orders the line's requests. `record`: the hub keeps its queue's trace."""
    agents: dict[int, Agent] = {
        d: Agent(f"llc{d}", False, d, False, merges) for d in sorted(set(domains))
    }
    if one_llc_per_socket:  # the home socket's CHA / HN is its LLC's point
        home_dom = home
        if home_dom not in agents:
            agents[home_dom] = Agent(f"llc{home_dom}", False, home_dom, False)
        hub = agents[home_dom]
        hub.is_hub = hub.merges = True
        hub.name = f"home{home}"
    else:
        hub = Agent(f"home{home}", True, -1, False)
    hub.trace = [] if record else None
    return agents, hub
