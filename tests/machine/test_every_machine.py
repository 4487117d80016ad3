"""Every catalog machine runs through every level: the lock hand-off (DES and Markov) and the
launch simulation for every strategy (issues 3 and 5: "for every catalog machine")."""

from __future__ import annotations

import pytest

from cohsim.kernel.costs import load_kernel
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.simulation.launch import LaunchSim
from cohsim.lock.handoff import simulate
from cohsim.machine.catalog import Catalog
from cohsim.workload.synth import STRATEGIES, synthesize

NAMES = Catalog().names()


@pytest.mark.parametrize("name", NAMES)
def test_lock_handoff_runs(catalog, name):
    m = catalog.get(name)
    n = min(4, m.vcpus)
    for lock in ("ttas", "qspinlock"):
        des = simulate(m, n, lock=lock, acquisitions=200, seed=1)
        markov = simulate(m, n, lock=lock, model="markov")
        assert des.p50_ns > 0 and markov.mean_ns > 0
        assert des.model == "des" and markov.model == "markov"


@pytest.mark.parametrize("name", NAMES)
def test_launch_runs_for_every_strategy(catalog, name):
    m = catalog.get(name)
    # a coarse level-2 table keeps this sweep fast; the numbers are not checked here
    costs = LineCosts(m, acquisitions_per_thread=4, max_acquisitions=300)
    kernel = load_kernel()
    for strategy in STRATEGIES:
        trace = synthesize(strategy, 3, 2, seed=0)
        res = LaunchSim(m, kernel, trace, costs=costs, layers=2).run()
        assert len(res) == 3 and all(r.end_ns > r.start_ns for r in res)
