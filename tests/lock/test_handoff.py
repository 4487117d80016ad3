"""The lock hand-off's entry point (cohsim.lock.handoff): input checks, the model it names,
and sweeps with one seeded stream per point."""

import pytest

from cohsim.errors import CohsimError
from cohsim.lock.handoff import simulate, sweep
from cohsim.machine.catalog import Catalog

CAT = Catalog()


def test_bad_input():
    m = CAT.get("m7i.metal-24xl")
    with pytest.raises(CohsimError, match="only 96 CPUs"):
        simulate(m, 97)
    with pytest.raises(CohsimError, match="unknown lock"):
        simulate(m, 2, lock="mcs")
    with pytest.raises(CohsimError, match="unknown placement"):
        simulate(m, 2, placement="everywhere")
    with pytest.raises(CohsimError, match="unknown model"):
        simulate(m, 2, model="guess")
    with pytest.raises(CohsimError, match="48 cores"):
        simulate(m, 60, smt=False)


def test_the_result_says_which_model_answered():
    m = CAT.get("m7a.24xlarge")
    for model in ("des", "markov"):
        r = simulate(m, 4, model=model, acquisitions=200)
        assert r.model == model and r.level == f"level 2: lock hand-off ({model})"
        assert r.to_dict()["model"] == model


def test_sweep_is_simulate_per_point_on_child_streams():
    """Point i of a sweep is `simulate` with child stream i of the seed; progress counts."""
    import numpy as np

    m = CAT.get("m7a.24xlarge")
    ticks: list[int] = []
    out = sweep(m, [2, 4], seed=5, acquisitions=200, progress=ticks.append)
    children = np.random.SeedSequence(5).spawn(2)
    pairs = zip([2, 4], children, strict=True)
    alone = [simulate(m, n, seed=c, acquisitions=200) for n, c in pairs]
    assert [r.to_dict() for r in out] == [r.to_dict() for r in alone]
    assert ticks == [1, 1]
