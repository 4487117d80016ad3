"""Who finishes when in the analytic burst model (cohsim.kernel.analytic.spread): in turn, one
gap apart, the gap the bottleneck's lock work after the cohort's last read."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cohsim.kernel.analytic.burstmodel import BurstModel
from cohsim.kernel.analytic.spread import finishing, gap
from cohsim.kernel.costs import load_kernel
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.simulation.launch import LaunchSim
from cohsim.predict import burst_workload


def test_the_gap_is_the_bottleneck_after_the_last_read():
    work = np.array([9.0, 1.0, 0.0, 3.0, 2.0, 0.5])
    own = np.array([1.0, 1.0, 5.0, 1.0, 100.0, 1.0])
    read = np.array([0.0, 0.0, 7.0, 0.0, 0.0, 0.0])
    # from call 2 (the last read) on: call 3 queues (4 x 3 >= 1), call 4 does not (8 < 100)
    assert gap(4, work, own, read) == 3.0
    # without the read, the 9 of call 0 is the bottleneck
    assert gap(4, work, own, np.zeros(6)) == 9.0
    # one container, or no call the cohort queues at: they finish together
    assert gap(1, work, own, read) == 0.0
    assert gap(4, work, np.full(6, 1e9), read) == 0.0


def test_the_containers_finish_one_gap_apart_the_last_at_the_end():
    assert finishing(10.0, 4, 2.0).tolist() == [4.0, 6.0, 8.0, 10.0]
    assert finishing(10.0, 1, 2.0).tolist() == [10.0]
    assert finishing(3.0, 3, 2.0).tolist() == [0.0, 1.0, 3.0]  # never below 0


@settings(max_examples=200, deadline=None)
@given(
    st.floats(0.0, 1e12),
    st.integers(1, 500),
    st.floats(0.0, 1e9),
)
def test_finishing_times_are_ordered_and_end_at_the_last(last, n, gap_ns):
    each = finishing(last, n, gap_ns)
    assert len(each) == n and each[-1] == last and each.min() >= 0.0
    assert (np.diff(each) >= 0).all()


def test_the_estimates_p50_lies_below_its_p99_as_the_simulations_does(catalog):
    """The estimate spreads the containers over the burst: its launch p99 - p50 within a factor
    of four of the simulation's (seed 1, nominal kernel), where before every container finished
    within one write hold of the last (0.1 ms). It was within a factor of two until a release
    woke its granted readers one after another (docs/kernel-audit.md C27, nominal 1 us apart):
    the simulation's p99 - p50 grew from 12.6 to 53.7 ms (m7i.metal-24xl common-parent 100 x
    50) and from 3.2 to 9.5 ms (c6gd.metal per-layer 50 x 20), the estimate's gap (18.6, 4.7)
    does not count the order the batches keep. A factor of three held m7i.metal-24xl's seed 1
    with 4 % to spare (x2.89); since level 2 answers an upgrade of a shared copy after the
    point's invalidations (cohsim/lock/line.py) its gap is 58.1 ms (x3.13), and it is no
    property of the change: over seeds 1-3 the simulation's gap is 58.1, 51.7 and 71.5 ms
    (x2.8-3.9; 53.7, 55.0, 60.2 before, x2.9-3.2), the estimate's 18.6 at each. c6gd.metal:
    4.2, 9.0, 4.8 ms against 4.7. Four is the seeds' spread, not a closer estimate."""
    k = load_kernel()
    for name, strategy, n, layers in (
        ("m7i.metal-24xl", "common-parent", 100, 50),
        ("c6gd.metal", "per-layer", 50, 20),
    ):
        m = catalog.get(name)
        trace = burst_workload(strategy, n, layers, seed=1)
        est = np.asarray(BurstModel(m, k, trace, layers=layers).estimate().launch_each_ns)
        costs = LineCosts(m, seed=1)
        costs.prefill()
        res = LaunchSim(m, k, trace, costs=costs, seed=1, layers=layers).run()
        des = np.array([r.end_ns - r.start_ns for r in res], dtype=float)
        est_gap = np.percentile(est, 99) - np.percentile(est, 50)
        des_gap = np.percentile(des, 99) - np.percentile(des, 50)
        assert est_gap > 1e6  # ms, not the one write hold of before
        assert des_gap / 4 < est_gap < 4 * des_gap
