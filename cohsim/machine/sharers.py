"""What an exclusive access costs when other CPUs hold the line (level 1).

A store or atomic to a line that j other CPUs hold a copy of (they read it since the last
store: path walks reading mount_lock's sequence counter, the previous holder of its spinlock)
cannot complete before the line is the requester's alone: its request goes to the coherence
point, which invalidates every copy (or forwards the Modified one), and the grant waits for the
last answer. The invalidations go out together, so the time is that of the slowest sharer: the
largest level-1 transfer latency (`Machine.latency_matrix`) between the requester and any of the
j sharers, not their sum.

`fetch_ns(machine, j)` is its expectation for a requester and j sharers placed at random among
the machine's CPUs (the scheduler spreads busy threads over all of them): for each requester,
with F its distribution of latencies to the other CPUs, P(max <= v) = F(v)^j (sharers drawn
independently; fractional j, an expected count, uses the same power), averaged over the
requesters; the line homed on socket 0 (a kernel global such as mount_lock lives in the
kernel image's memory, on node 0). j = 0 costs nothing at this level: the line is still the
requester's own (an L1 hit, below what the model resolves).

What it leaves out: the coherence point's queue when many requests for the line arrive at once
(a mesh home agent serving one request for the address at a time): level 2 prices that
(`cohsim.kernel.linecosts.LineCosts.writer_ns`), for the CPUs spinning on the line. This is the
price of the copies left behind by readers that have moved on.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from cohsim.machine.model import Machine


@lru_cache(maxsize=64)
def _distribution(machine: Machine) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct latencies (ascending); per kind of requester (rows: the requesters whose
    latencies to the others are alike, as a socket's cores are), the fraction of the other CPUs
    at each latency or below (the CDF F_r(v)); and the share of the requesters of each kind."""
    lat = machine.latency_matrix(0)
    n = lat.shape[0]
    if n < 2:
        return np.zeros(1), np.ones((1, 1)), np.ones(1)
    values = np.unique(lat[~np.eye(n, dtype=bool)])
    off = lat + np.diag(np.full(n, np.inf))  # a CPU is not its own sharer
    cdf = (off[:, :, None] <= values[None, None, :]).sum(axis=1) / (n - 1)
    kinds, counts = np.unique(cdf, axis=0, return_counts=True)
    return values, kinds, counts / n


def fetch_ns(
    machine: Machine, certain: float = 0.0, candidates: float = 0.0, chance: float = 0.0
) -> float:
    """The expected time (ns) for one CPU to get exclusive ownership of a line held by
    `certain` other CPUs for sure (the previous holder, walks spinning on it) and by each of
    `candidates` more with probability `chance` (CPUs that may have read it since), all placed
    at random. A fractional count is a last CPU present with that fraction as its chance."""
    if machine.vcpus < 2:
        return 0.0
    groups = [(float(int(certain)), 1.0), (1.0, certain - int(certain))]
    groups += [(float(int(candidates)), chance), (1.0, (candidates - int(candidates)) * chance)]
    groups = [(n, p) for n, p in groups if n > 0.0 and p > 0.0]
    if not groups:
        return 0.0
    _, cdf, _ = _distribution(machine)
    # P(slowest sharer <= v) = prod over groups of E[F(v)^J], J ~ Binomial(n, p)
    g = np.ones_like(cdf)
    none = 1.0  # P(no sharer at all): nothing to fetch
    for n, p in groups:
        g *= (1.0 - p + p * cdf) ** n
        none *= (1.0 - p) ** n
    return float(_expected(machine, g[None], np.full((1, cdf.shape[0], 1), none))[0])


def _expected(machine: Machine, g: np.ndarray, none: np.ndarray) -> np.ndarray:
    """E[slowest sharer's latency] per row of `g` (cases x requester kinds x latencies: P(slowest
    <= each latency)), `none` (cases x kinds x 1) the chance of no sharer (nothing to fetch),
    averaged over the requester kinds."""
    values, _, weights = _distribution(machine)
    below = np.concatenate([none, g[:, :, :-1]], axis=2)
    return ((g - below) * values).sum(axis=2) @ weights


def fetch_ns_poisson(machine: Machine, certain: int, expected: np.ndarray) -> np.ndarray:
    """`fetch_ns` with `certain` sharers for sure and, besides them, a Poisson number of sharers
    with each mean in `expected` (many CPUs, each with a small chance: the binomial's limit,
    P(slowest <= v) = F(v)^certain exp(-mean (1 - F(v)))), at every mean at once."""
    lam = np.asarray(expected, dtype=float)[:, None, None]
    if machine.vcpus < 2:
        return np.zeros(lam.shape[0])
    _, cdf, _ = _distribution(machine)
    g = cdf**certain * np.exp(-lam * (1.0 - cdf))
    none = np.exp(-lam) if certain == 0 else np.zeros_like(lam)
    return _expected(machine, g, np.broadcast_to(none, (lam.shape[0], cdf.shape[0], 1)))
