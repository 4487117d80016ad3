"""The lock hand-off as a Markov chain of waiting cores (after Boyd-Wickizer et al., "Non-scalable
locks are dangerous", Linux Symposium 2012): the fast path of level 2 and the simulation's
cross-check.

State k = 0..N is the number of threads that hold or wait for the lock. A thinking thread asks
for the lock at rate 1/think (exponential think time; `think_ns = 0` means every thread is always
in the chain, k = N); the lock is passed on at rate 1/S(k), where S(k) is the time from one
release being ordered to the next, with k threads in the chain. S(k) carries the topology:

- a = the mean one-way transfer latency L over the placement's CPU pairs (level 1's latency
  matrix, line homed on LockParams.home_socket) plus half a PAUSE (a waiter notices a release at
  its next PAUSE boundary) plus the spin loop;
- work(m) = how long the busiest coherence point is occupied by the requests of m waiters
  (`PointLoad`): where LLC domains merge (a chiplet's CCX L3, an Intel mesh socket's CBo)
  one request per other domain at the home and the rest inside each domain, whichever is
  longer (the home CHA of a mesh also serves its own socket's waiters); where they do not (a
  CMN socket that is not the home, a victim L3 with `LockParams.domain_merges` False) every
  one of them at the home, a remote one at the cross-domain cost;
- ticket: every waiter re-reads after each release; the next ticket's read lands at a uniform
  position among them, and the next release queues behind all of them:
  S(k) = max(a + work(k-1)/2 + cs, work(k-1 waiters + 2) + r) (the release and the arrival's
  fetch-and-add are the other two requests). With no think time the arrival is the
  releaser's, right behind its release, and its re-reads are the release's (r = 0); an arrival
  after think time is a write of its own, and the waiters already answered re-read once more,
  those still queued do not: r = min(work(k-1), think);
- ttas: every waiter re-reads and then issues its atomic (two requests each); the re-reads
  load the busiest point, the atomics move the line's one owner one after the other over the
  whole machine (`PointLoad.owner_work`: a merging domain takes it once and passes it between
  its own cores): S(k) = max(a + cs, work(k-1) + owner_work(k-1) + s);
- mcs (the classic queue pause_bench runs): the holder hands over at its release, writing its
  successor's node line (L) which the successor re-reads (L) at its next PAUSE:
  S = cs + 2L + PAUSE/2 + loop at the placement's mean L; only arrivals touch the
  tail, one a hand-off, so S does not grow with k. (Its re-arrival's write of its
  predecessor's `next`, the line the next release reads, is not counted: two threads pay it.)
- qspinlock: only the queue head touches the lock word, so S does not grow with k. The head
  learns it is the head 2L + PAUSE/2 after the previous take (the MCS hand-over) and reads the
  word; the read takes effect when its snoop reaches the holder, (L - s)/2 after the point
  serves it. If the holder has released by then, S = 3L + PAUSE/2 + loop + u (u: the trip
  to the coherence point; the take upgrades the head's copy, invalidating the releaser's: s + u,
  as cohsim.lock.line answers an upgrade); else the head spins and
  S = cs + h, h = max(s, PAUSE/2) + L + loop + u (the release's upgrade, the re-read, the
  take). The releaser's re-arrival (no think time) is a write to the line it holds Modified,
  unseen unless it comes after the head's read took effect (2u > max(s, PAUSE/2) + (L - s)/2),
  when it steals the head's copy: s + (L - s - 2u) more. S is averaged over the placement's
  pairs (the queue's order pairs holders at random), not taken at the mean L: the regime
  changes with L.

The chain is a birth-death process, solved in closed form (products of rates, in logs).
Throughput X = sum_k pi_k / S(k); the mean acquisition latency by Little's law is K/X - cs. The
latency distribution assumes FIFO hand-off: an arrival that finds k threads waits (k+1) S(k+1) - cs
(arrival theorem for a finite source), which gives p50 and p99. Where the simulation and the
chain differ on real topologies: the chain averages L over all pairs while the simulation hands
off along the actual pairs (compact placements favour near neighbours); it ignores ttas
unfairness (the releaser re-taking the lock it still holds in its cache); it applies the SMT
slowdown to the critical section of every holder with a placed sibling, as if the sibling always
spun; multi-domain work spreads the waiters as the placement's cores are spread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cohsim.lock.handoffoptions import HandoffOptions
from cohsim.lock.params import HandoffResult, LockParams
from cohsim.machine.model import Machine
from cohsim.units import NS_PER_S


@dataclass(frozen=True)
class PointLoad:
    """How the requests of one round (the waiters' re-reads, their atomics) load the busiest
    coherence point, for one placement: the simulation's merging rules (cohsim.lock.coherence) in
    closed form, with the waiters spread over the placement as its CPUs are.

    - One request per waiting core: SMT siblings that miss together share the core's one
      miss to the line (its fill buffer; the simulation's rule), so m waiting threads send
      m x cores / threads of the placement.
    - Merging domains (a chiplet's CCX L3, a mesh socket's CBo): each domain's point serves its
      own waiters (`llc_s` each; the busiest has the largest share of the cores) and sends one
      request per fill to the home (`hub_s`): the IO die sees one request per other complex; a
      mesh's home CHA serves its own socket's waiters and one request per other socket.
    - Not merging (a cmn socket that is not the home, an LLC that keeps no record of its cores'
      lines): on one LLC per socket the home's point serves every request, a home-socket one
      for `llc_s`, another socket's for `hub_s`; with several domains per socket every request
      goes to the hub (`hub_s`).
    """

    llc_s: float  #: a domain point's occupancy per request, ns
    hub_s: float  #: the home's occupancy per request that crosses to it, ns
    merges: bool  #: the LLC domains merge their requests
    hub_is_llc: bool  #: one LLC per socket: the home socket's LLC point is the hub (mesh, cmn)
    remote: float  #: share of the placement's cores not on the home socket
    domains: int  #: LLC domains the placement uses
    others: int  #: domains that send their merged request to the hub
    top_share: float  #: the largest share of the placement's cores in one merging domain
    home_share: float  #: share of the placement's cores in the hub's own domain (hub_is_llc)
    per_thread: float = 1.0  #: the placement's cores per thread: requests per waiting thread

    def work(self, m: float, plus: int = 0) -> float:
        """Occupancy of the busiest point (ns) for the requests of m waiting threads and
        `plus` more of one thread (a release, an arrival's atomic)."""
        if m <= 0 and plus <= 0:
            return 0.0
        r = m * self.per_thread + plus
        if self.merges and self.others:
            home = self.hub_s * min(self.others, r)
            if self.hub_is_llc:
                home += self.llc_s * r * self.home_share
            return max(home, self.llc_s * math.ceil(r * self.top_share))
        if self.hub_is_llc:
            return r * ((1 - self.remote) * self.llc_s + self.remote * self.hub_s)
        return r * (self.hub_s if self.domains > 1 else self.llc_s)

    def owner_work(self, m: float) -> float:
        """Time (ns) the ownership requests of m waiting threads hold the line, one after the
        other: unlike reads, which merging domains answer side by side, the line has one owner
        at a time, so its moves add up over the whole machine. A merging domain takes it once
        (`hub_s`, from the home) and passes it between its own cores (`llc_s` each); without
        merging every one goes through the home, as `work` counts them."""
        if not (self.merges and self.others):
            return self.work(m)
        r = m * self.per_thread
        moves = min(self.others, r)
        return self.hub_s * moves + self.llc_s * (r - moves)


def point_load(machine: Machine, cpus: tuple[int, ...], params: LockParams) -> PointLoad:
    """The placement's `PointLoad` (see there)."""
    arr = machine.cpu_arrays
    cores = np.unique(arr["core"][np.asarray(cpus)])
    per_core_dom = arr["llc"][cores]  # core k's CPU k has the core's domain
    doms, counts = np.unique(per_core_dom, return_counts=True)
    t = machine.topology
    hub_is_llc = t.llc_domains_per_socket == 1
    merges = params.domain_merges and (not hub_is_llc or t.interconnect == "mesh")
    share = counts / len(cores)
    home = doms == params.home_socket if hub_is_llc else np.zeros(len(doms), dtype=bool)
    if hub_is_llc:  # the home socket's own waiters are the hub's, the others' merge
        others = int((~home).sum())
        top = float(share[~home].max()) if others else 0.0
    else:  # a chiplet: every complex but the one that wrote the line sends one
        others, top = len(doms) - 1, float(share.max())
    return PointLoad(
        llc_s=params.llc_service_ns,
        hub_s=params.hub_service_ns,
        merges=merges,
        hub_is_llc=hub_is_llc,
        remote=float((arr["socket"][cores] != params.home_socket).mean()),
        domains=len(doms),
        others=others,
        top_share=top,
        home_share=float(share[home].sum()),
        per_thread=len(cores) / len(cpus),
    )


def _qspinlock_s(
    cs: float, think: float, lat: float, s: float, pause: float, loop: float, u: float
) -> float:
    """S of a saturated qspinlock (see the module docstring): the head reads the lock word
    2L + PAUSE/2 after the previous take; its read takes effect at the owner (L - s)/2 later."""
    snoop = 2 * lat + pause / 2 + (lat - s) / 2
    if cs <= snoop:  # released before the read reaches the holder: the read sees it free
        return 3 * lat + pause / 2 + loop + u
    h = max(s, pause / 2) + lat + loop + u
    if think <= 0 and 2 * u > max(s, pause / 2) + (lat - s) / 2:
        h += s + (lat - s - 2 * u)  # the releaser's re-arrival is ordered after the head's read
    return cs + h


def service_times(
    machine: Machine,
    cpus: tuple[int, ...],
    lock: str,
    params: LockParams,
    cs_ns: float,
    think_ns: float = 0.0,
) -> np.ndarray:
    """S(k) for k = 0..N (ns): the time between successive hand-offs with k threads in the chain."""
    n = len(cpus)
    cpu = np.asarray(cpus)
    lat = machine.latency_matrix(params.home_socket)[np.ix_(cpu, cpu)]
    pair_l, pairs = np.unique(lat[~np.eye(n, dtype=bool)], return_counts=True)
    mean_l = float((pair_l * pairs).sum() / pairs.sum()) if n > 1 else 0.0
    pause = machine.microarch.pause_ns
    loop = params.spin_loop_ns
    s = params.llc_service_ns
    load = point_load(machine, cpus, params)
    work = load.work
    # a holder whose SMT sibling spins runs its critical section smt_slowdown times slower
    # (the simulation's rule); with no think time every placed sibling is spinning
    _, inv, cnt = np.unique(
        machine.cpu_arrays["core"][cpu], return_inverse=True, return_counts=True
    )
    shared = float((cnt[inv] > 1).mean())
    cs_ns = cs_ns * (1 + (params.smt_slowdown - 1) * shared)
    w = machine.edge_weights_ns
    u = w["cpu-core"] + w["core-llc"]  # a core's trip to its LLC's coherence point
    a = mean_l + pause / 2 + loop
    out = np.zeros(n + 1)
    for k in range(1, n + 1):
        if n == 1:
            out[k] = cs_ns + loop  # the line never leaves the core
        elif lock == "qspinlock" and k > 1:
            each = [_qspinlock_s(cs_ns, think_ns, float(x), s, pause, loop, u) for x in pair_l]
            out[k] = float(np.dot(each, pairs) / pairs.sum())  # over the pairs a queue meets
        elif lock == "mcs" and k > 1:
            # the holder's release writes its successor's node (one transfer), whose next read
            # brings it back at a PAUSE boundary: linear in L, so its mean over the pairs is
            # at the mean L; the tail is touched only by the arrivals
            out[k] = cs_ns + mean_l + a
        elif lock == "ttas":
            out[k] = max(a + cs_ns, work(k - 1) + load.owner_work(k - 1) + s)
        else:  # ticket, seqcount, and the k = 1 state of every lock
            # saturated, the point serves per hand-off the k-1 re-reads, the release and the
            # releaser's next fetch-and-add (whose re-reads are those of the next release)
            # an arrival after think time is a write of its own: the waiters already answered
            # re-read once more (those still queued do not), at most `think` of extra work
            rounds = work(k - 1, plus=2) + min(work(k - 1), think_ns)
            out[k] = max(a + work(k - 1) / 2 + cs_ns, rounds)
    return out


def steady_state(n: int, think_ns: float, service_ns: np.ndarray) -> np.ndarray:
    """pi_k of the birth-death chain: births (n-k)/think, deaths 1/S(k)."""
    pi = np.zeros(n + 1)
    if think_ns <= 0:
        pi[n] = 1.0
        return pi
    logp = np.zeros(n + 1)
    for k in range(1, n + 1):
        logp[k] = logp[k - 1] + math.log((n - k + 1) / think_ns) + math.log(service_ns[k])
    logp -= logp.max()
    pi = np.exp(logp)
    return pi / pi.sum()


def _quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    order = np.argsort(values, kind="stable")
    cdf = np.cumsum(weights[order])
    idx = int(np.searchsorted(cdf, q * cdf[-1]))
    return float(values[order][min(idx, len(order) - 1)])


def run_markov(
    machine: Machine,
    cpus: tuple[int, ...],
    options: HandoffOptions,
    params: LockParams,
) -> HandoffResult:
    """Solve the chain and report what the simulation reports (see cohsim.lock.handoff.simulate):
    `machine` placed, `cpus` its threads' CPUs, `params` resolved."""
    lock, cs_ns, think_ns = options.lock, options.cs_ns, options.think_ns
    acquisitions = options.acquisitions
    n = len(cpus)
    svc = service_times(machine, cpus, lock, params, cs_ns, think_ns)
    pi = steady_state(n, think_ns, svc)
    k = np.arange(n + 1)
    x_per_ns = float((pi[1:] / svc[1:]).sum())
    big_k = float((k * pi).sum())
    mean = max(0.0, big_k / x_per_ns - cs_ns)
    # what an arriving thread finds: the chain seen by the other n-1 (arrival theorem)
    if think_ns <= 0 or n == 1:
        arr_k = np.array([n - 1])
        arr_w = np.array([1.0])
    else:
        pi1 = steady_state(n - 1, think_ns, svc[:n])
        arr_k = np.arange(n)
        arr_w = pi1
    waits = np.maximum(0.0, (arr_k + 1) * svc[arr_k + 1] - cs_ns)
    if n == 1:
        waits = svc[1:2] - cs_ns
    per_acq = {"ttas": 2.0, "ticket": 1.0, "seqcount": 1.0}.get(lock)
    work = np.array([(per_acq * (j - 1) + 1) if per_acq and j > 1 else 4.0 * (j > 1) for j in k])
    busy = np.minimum(1.0, work * params.llc_service_ns / np.maximum(svc, 1e-9))
    home_q = float((pi * busy * (k + 1) / 2 * (k > 1)).sum())
    home_req_per_acq = float((pi[1:] * work[1:]).sum() / max(pi[1:].sum(), 1e-300))
    return HandoffResult(
        machine=machine.name,
        lock=lock,
        model="markov",
        threads=n,
        placement=options.placement_label,
        smt=options.smt,
        cpus=cpus,
        cs_ns=float(cs_ns),
        think_ns=float(think_ns),
        seed=options.recorded_seed,
        acquisitions=acquisitions,
        p50_ns=_quantile(waits, arr_w, 0.5),
        p99_ns=_quantile(waits, arr_w, 0.99),
        mean_ns=mean,
        acquisitions_per_s=x_per_ns * NS_PER_S,
        spin_fraction=min(1.0, x_per_ns * mean / n),
        home_queue_mean=home_q,
        home_queue_max=int(n),
        home_requests=int(round(home_req_per_acq * acquisitions)),
        requests=int(round(home_req_per_acq * acquisitions)),
        p90_ns=_quantile(waits, arr_w, 0.9),
        p999_ns=_quantile(waits, arr_w, 0.999),
        span_ns=acquisitions / x_per_ns if x_per_ns > 0 else 0.0,
        params=params,
    )
