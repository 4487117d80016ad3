"""What level 3 asks level 2: the cached line-cost tables (cohsim.kernel.linecosts)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from cohsim.kernel.linecosts import LineCosts, _grid


def small(catalog, **kw):
    return LineCosts(
        catalog.get("c6gd.metal"), acquisitions_per_thread=4, max_acquisitions=200, **kw
    )


def test_the_grid_is_powers_of_two_and_the_cpu_count():
    assert _grid(96) == [0, 1, 2, 4, 8, 16, 32, 64, 96]
    assert _grid(64) == [0, 1, 2, 4, 8, 16, 32, 64]
    assert _grid(2) == [0, 1, 2]


def test_prefill_in_parallel_gives_the_same_tables(catalog):
    """Each level-2 run is seeded on its own: spreading them over workers changes nothing."""
    serial = small(catalog, cache=False)
    serial.prefill()
    parallel = small(catalog, cache=False)
    with ThreadPoolExecutor(max_workers=2) as pool:
        parallel.prefill(pool.map)
    assert parallel.table() == serial.table()
    for kind in ("spinlock", "writer", "reader"):
        assert [parallel._interp(kind, k / 2) for k in range(200)] == [
            serial._interp(kind, k / 2) for k in range(200)
        ]
    # one run per distinct (lock, CPU count): the 0-, 1- and 2-CPU spinlock questions share one
    assert parallel.queries == serial.queries == len(serial._needed())


def test_costs_interpolate_between_the_counts_asked(catalog):
    c = small(catalog)
    c.prefill()
    asked = c.table()["writer"]
    assert c.writer_ns(8) == pytest.approx(asked[8], abs=0.001)  # the table is rounded
    assert min(asked[8], asked[16]) <= c.writer_ns(12) <= max(asked[8], asked[16])
    assert c.writer_ns(10_000) == c.writer_ns(catalog.get("c6gd.metal").vcpus)
    assert c.reader_ns(0) == c.reader_ns(1)  # a reader is at least itself


def test_a_writer_with_no_spinner_waits_for_nobody(catalog):
    """writer_ns(0) is the writer's own line (0), not the one-reader run's answer; one spinner
    costs a positive wait, and a fractional count lies in between (what the release after a
    hold caught by a fraction of a walker pays)."""
    costs = small(catalog)
    assert costs.writer_ns(0) == 0.0
    assert costs.writer_ns(1) > 0.0
    assert 0.0 < costs.writer_ns(0.25) == pytest.approx(0.25 * costs.writer_ns(1))
