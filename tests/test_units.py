"""The unit conversions (cohsim.units): the factors agree with each other, and dividing by the
float factor rounds exactly as the bare literal it replaced did."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cohsim import units


def test_the_factors_agree():
    assert units.NS_PER_S == units.NS_PER_S_INT == units.NS_PER_MS * 1000
    assert units.NS_PER_MS == units.NS_PER_US * 1000
    assert units.US_PER_S == units.US_PER_S_INT == units.NS_PER_S / units.NS_PER_US
    assert isinstance(units.NS_PER_US, int) and isinstance(units.NS_PER_S_INT, int)


def test_conversions():
    assert units.ns_to_s(2_500_000_000) == 2.5
    assert units.s_to_ns(0.25) == 250_000_000
    assert units.ns_to_us(1_500) == 1.5
    assert units.ns_to_ms(3_000_000) == 3.0
    assert units.per_s_to_gap_ns(1_000) == 1_000_000


@given(st.integers(min_value=0, max_value=10**15))
def test_same_bits_as_the_literals(ns):
    assert units.ns_to_s(ns) == ns / 1e9
    assert units.ns_to_ms(ns) == ns / 1e6
    assert units.ns_to_us(ns) == ns / 1e3
