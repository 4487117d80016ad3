"""A list walk in the kernel model's lines (cohsim.kernel.walk): the line where nothing was
measured or known, each band's scale on the elements in it, the same floats one at a time and
in arrays, and the bands a machine's caches imply."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cohsim.errors import CohsimError
from cohsim.kernel.costs import load_kernel
from cohsim.kernel.walk import BandRows, cache_bands, units, units_array, walks_for
from cohsim.machine.parts import Microarch

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


def test_a_machine_with_known_caches_walks_at_their_loads(catalog):
    """A catalog machine's caches price its walks (cohsim.kernel.walk.cache_bands): below the
    knee (the L2 over the bytes a peer holds) each peer costs the L2 loads, beyond it the LLC
    loads, each over the kernel model's line (move_mount's per-peer cost)."""
    k = load_kernel()
    m = catalog.get("m7i.metal-24xl")
    micro, line = m.microarch, k.op("move_mount").per_peer_ns
    (start, low), (knee, high) = cache_bands(m, k)
    assert start == 0.0 and knee == pytest.approx(micro.l2_kib * 1024 / k.peer_bytes)
    assert low * line == pytest.approx(k.peer_l2_loads * micro.l2_load_ns)
    assert high * line == pytest.approx(k.peer_llc_loads * micro.llc_load_ns)
    assert walks_for(m, k).peers == walks_for(m, k).children == cache_bands(m, k)
    # the per-op costs set only the ratios between the ops: doubling the line leaves a
    # move_mount's walk as it was
    doubled = k.with_values(**{"move_mount.per_peer_ns": 2 * line})
    assert units(5000.0, cache_bands(m, doubled)) * 2 * line == pytest.approx(
        units(5000.0, cache_bands(m, k)) * line
    )


def test_which_machine_walks_cheapest_turns_on_the_l2(catalog):
    """A ring inside m7i.metal-24xl's 2 MiB L2 but past the 1 MiB of the others walks
    cheapest there; past every L2 the ring is in the LLC: an AMD core complex's own L3 (50
    cycles at 3.7 GHz) against Skylake-SP's mesh L3 (20.5 ns, Intel's TMA constant) and
    Sapphire Rapids' (37 ns)."""
    k = load_kernel()
    names = ("m7a.24xlarge", "r5.metal", "m7i.metal-24xl")

    def cost(peers: float) -> dict[str, float]:
        return {n: units(peers, walks_for(catalog.get(n), k).peers) for n in names}

    at = {peers: cost(peers) for peers in (2000.0, 5000.0, 10_000.0)}
    assert min(at[2000.0], key=at[2000.0].get) == "m7i.metal-24xl"
    assert min(at[5000.0], key=at[5000.0].get) == "m7a.24xlarge"
    assert at[10_000.0]["m7a.24xlarge"] < at[10_000.0]["r5.metal"] < at[10_000.0]["m7i.metal-24xl"]


def test_measured_walks_win_and_unknown_caches_keep_the_line(catalog):
    k = load_kernel()
    host = catalog.get("devvm-16cpu-intel-xeon-f6m207")
    assert walks_for(host, k) is host.walks
    vm = catalog.get("devvm-2cpu-intel-xeon-f6m167")
    assert not vm.microarch.caches_known and not walks_for(vm, k)
    assert cache_bands(vm, k) == ()


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"l2_kib": 1024.0}, "l2_kib given without l2_load_ns, llc_load_ns: give all three"),
        ({"l2_kib": 1024.0, "l2_load_ns": 5.0, "llc_load_ns": 4.0}, "must be at least"),
        ({"l2_kib": -1.0, "l2_load_ns": 5.0, "llc_load_ns": 40.0}, "positive number"),
    ],
)
def test_cache_figures_come_all_together_and_make_sense(values, message):
    with pytest.raises(CohsimError, match=message):
        Microarch("x", 140.0, 3.0, **values)


@given(
    st.lists(st.floats(0.0, 30_000.0), min_size=1, max_size=20),
    st.lists(st.floats(64.0, 4096.0), min_size=1, max_size=5),
)
def test_band_rows_give_each_rows_own_floats(ns, knees):
    """Rows of bands side by side (a joined model's replicates) price each row as
    `units_array` does with that row's bands alone, to the bit; rows of unequal band counts
    one by one."""
    bands = [((0.0, 0.3), (k, 1.7)) for k in knees]
    n = np.array([ns] * len(knees))
    got = BandRows(bands).units(n)
    assert np.array_equal(got, np.stack([units_array(r, b) for r, b in zip(n, bands, strict=True)]))
    ragged = [*bands, ((0.0, 0.5),)]
    n = np.array([ns] * len(ragged))
    got = BandRows(ragged).units(n)
    assert np.array_equal(
        got, np.stack([units_array(r, b) for r, b in zip(n, ragged, strict=True)])
    )
