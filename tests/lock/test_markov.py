"""The Markov chain: agreement with the DES where its assumptions hold, speed, shape."""

import time

import numpy as np
import pytest

from cohsim.lock.handoff import simulate
from cohsim.lock.markov import steady_state
from cohsim.machine.catalog import Catalog

CAT = Catalog()
# cmn, one socket, one LLC domain, no SMT: every pair is one class, L is uniform
UNIFORM = "m8g.metal-24xl"


def test_steady_state_is_a_distribution():
    pi = steady_state(8, 500.0, np.linspace(1, 400, 9))
    assert pi.sum() == pytest.approx(1.0) and (pi >= 0).all()
    assert steady_state(8, 0.0, np.ones(9))[8] == 1.0  # no think time: everyone in the chain


@pytest.mark.parametrize(
    "lock,threads",
    [
        ("qspinlock", 2),
        ("qspinlock", 8),
        ("qspinlock", 32),
        ("qspinlock", 96),
        ("ticket", 64),
        ("ticket", 96),
    ],
)
def test_agrees_with_des_on_uniform_machine(lock, threads):
    """Within 10% where the chain's assumptions hold: one coherence point, uniform L, no
    think time (the DES's think time is fixed, the chain's exponential). The ticket chain is
    checked where the home is saturated (its S(k) = work(k+1)); at 8-32 threads the DES sees
    partial second rounds of re-reads the chain leaves out (10-25% apart, see the report).
    On real topologies they differ more: compact placements hand off between near neighbours
    while the chain averages L over all pairs, and ttas is unfair in the DES (the releaser
    re-takes a lock still in its cache) while the chain assumes fair hand-off."""
    m = CAT.get(UNIFORM)
    des = simulate(m, threads, lock=lock, acquisitions=1000)
    mk = simulate(m, threads, lock=lock, model="markov")
    assert mk.model == "markov" and mk.level.endswith("(markov)")
    assert mk.mean_ns == pytest.approx(des.mean_ns, rel=0.10)
    assert mk.acquisitions_per_s == pytest.approx(des.acquisitions_per_s, rel=0.10)


def test_fast_and_monotone():
    m = CAT.get("m7i.metal-24xl")
    t0 = time.perf_counter()
    curve = [simulate(m, n, lock="ticket", model="markov") for n in (1, 2, 4, 8, 16, 32, 48, 96)]
    assert time.perf_counter() - t0 < 0.5  # the budget is 50 ms per curve; slack for CI
    means = [r.mean_ns for r in curve]
    assert means == sorted(means)
    q = [simulate(m, n, lock="qspinlock", model="markov").acquisitions_per_s for n in (2, 96)]
    assert q[1] > 0.8 * q[0]


def test_think_time_lowers_contention():
    m = CAT.get(UNIFORM)
    busy = simulate(m, 16, lock="ticket", model="markov", think_ns=0)
    idle = simulate(m, 16, lock="ticket", model="markov", think_ns=20_000)
    assert idle.mean_ns < busy.mean_ns
