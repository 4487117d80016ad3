"""An exclusive access to a line other CPUs hold: the slowest sharer's transfer, from level 1."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cohsim.machine.catalog import Catalog
from cohsim.machine.sharers import fetch_ns


def make():
    """A two-socket Cascade Lake: SMT pairs, one mesh LLC a socket, the socket link."""
    return Catalog().get("xeon-gold-6242-2s")


def _mean_transfer(m):
    lat = m.latency_matrix(0)
    n = lat.shape[0]
    return lat[~np.eye(n, dtype=bool)].mean()


def test_nobody_holds_it_costs_nothing():
    m = make()
    assert fetch_ns(m) == 0.0
    assert fetch_ns(m, 0.0, 40, 0.0) == 0.0


def test_one_sharer_costs_the_mean_transfer():
    m = make()
    assert fetch_ns(m, 1) == pytest.approx(_mean_transfer(m))


def test_many_sharers_cost_the_slowest_class():
    """Sixty-four random sharers on a two-socket machine: almost surely one across the link."""
    m = make()
    assert fetch_ns(m, 64) == pytest.approx(m.latency_matrix(0).max(), rel=1e-3)


def test_a_chance_is_a_fraction_of_a_certain_sharer():
    m = make()
    assert fetch_ns(m, 0, 1, 0.25) == pytest.approx(0.25 * fetch_ns(m, 1))
    assert fetch_ns(m, 0.25) == pytest.approx(0.25 * fetch_ns(m, 1))
    assert fetch_ns(m, 0, 5, 1.0) == pytest.approx(fetch_ns(m, 5))


@settings(max_examples=60, deadline=None)
@given(
    st.floats(0, 20),
    st.floats(0, 50),
    st.floats(0, 1),
    st.floats(0, 5),
)
def test_more_sharers_never_cost_less(certain, candidates, chance, more):
    m = make()
    base = fetch_ns(m, certain, candidates, chance)
    assert fetch_ns(m, certain + more, candidates, chance) >= base - 1e-9
    assert fetch_ns(m, certain, candidates + more, chance) >= base - 1e-9
    assert 0.0 <= base <= m.latency_matrix(0).max() + 1e-9
