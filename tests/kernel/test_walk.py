"""A list walk in the kernel model's lines (cohsim.kernel.walk): the line where nothing was
measured, each band's scale on the elements in it, the same floats one at a time and in arrays."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cohsim.kernel.walk import units, units_array

BANDS = ((0.0, 0.5), (1000.0, 2.0), (5000.0, 4.0))


def test_no_bands_is_the_line():
    assert units(1234.5, ()) == 1234.5
    x = np.array([0.0, 7.0, 1e4])
    assert units_array(x, ()) is x


def test_each_band_prices_its_own_elements():
    assert units(0.0, BANDS) == 0.0
    assert units(600.0, BANDS) == 300.0
    assert units(1000.0, BANDS) == 500.0
    assert units(3000.0, BANDS) == 500.0 + 2000.0 * 2.0
    assert units(7000.0, BANDS) == 500.0 + 4000.0 * 2.0 + 2000.0 * 4.0  # the last band goes on


@given(st.lists(st.floats(0.0, 50_000.0), min_size=1, max_size=30))
def test_arrays_give_the_same_floats_and_grow(ns):
    x = np.array(ns)
    got = units_array(x, BANDS)
    assert got.tolist() == [units(n, BANDS) for n in ns]
    order = np.argsort(x)
    assert np.all(np.diff(got[order]) >= 0)


def test_a_walk_bends_as_the_16_vcpu_host_measured(catalog):
    """The measured host's file: a children walk of 1,000 costs about half the line's, one of
    10,000 about twice (calibration/data/devvm-16cpu-intel-xeon-f6m207/ring/README.md)."""
    bands = catalog.get("devvm-16cpu-intel-xeon-f6m207").walks.children
    assert units(1000.0, bands) / 1000.0 == pytest.approx(0.375)
    assert 1.5 < units(10_000.0, bands) / 10_000.0 < 2.5
    assert not catalog.get("m7i.metal-24xl").walks
