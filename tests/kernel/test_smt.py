"""The one SMT / co-run slowdown both engines use (cohsim.kernel.smt)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cohsim.kernel.smt import slowdown, slowdown_array, slowdown_rows, slowdown_table


def test_siblings_share_cores_only_past_one_thread_a_core(catalog):
    m = catalog.get("m7i.metal-24xl")  # 48 cores, 96 threads
    table = slowdown_table(m, 1.6)
    assert len(table) == m.vcpus + 1
    assert table[0] == table[48] == 1.0
    assert table[96] == pytest.approx(1.6)  # every thread shares its core
    assert table[72] == pytest.approx(1.0 + 0.6 * 2 * 24 / 72)
    assert table == sorted(table)


def test_the_array_form_is_the_scalar_form(catalog):
    for name in ("m7i.metal-24xl", "c6gd.metal"):
        m = catalog.get(name)
        busy = np.array([1.0, 30.5, 50.0, float(m.vcpus)])
        assert slowdown_array(m, 1.4, busy) == pytest.approx([slowdown(m, 1.4, b) for b in busy])


def test_without_smt_a_measured_corun_slowdown_grows_with_the_other_cpus(catalog):
    m = catalog.get("c6gd.metal")
    assert slowdown_table(m, 1.6) == [1.0] * (m.vcpus + 1)
    vm = dataclasses.replace(m, microarch=dataclasses.replace(m.microarch, corun_slowdown=1.36))
    assert slowdown(vm, 1.6, 1) == 1.0
    assert slowdown(vm, 1.6, vm.vcpus) == pytest.approx(1.36)
    assert slowdown_array(vm, 1.6, np.array([1.0, float(vm.vcpus)])) == pytest.approx([1, 1.36])


def test_the_simulations_rows_are_the_slowdown_by_busy_and_spinning_cpus(catalog):
    m = catalog.get("xeon-gold-6242-1s")  # 16 cores, 32 threads
    rows = slowdown_rows(m, 1.6, 1.05)
    assert len(rows) == m.vcpus + 1
    for busy, row in enumerate(rows):
        if busy <= m.topology.cores:  # no thread beside a busy sibling: one value
            assert row == [slowdown(m, 1.6, busy)]
            continue
        assert len(row) == busy  # 0..busy-1 of the others spinning
        assert row == [slowdown(m, 1.6, busy, k, 1.05) for k in range(busy)]
    assert rows[32][0] == pytest.approx(1.6) and rows[32][31] == pytest.approx(1.05)


def test_without_smt_the_rows_are_the_corun_slowdown_whoever_spins(catalog):
    m = catalog.get("devvm-16cpu-intel-xeon-f6m207")  # a VM: co-run slowdown 1.15
    assert slowdown_rows(m, 1.6, 1.05) == [[v] for v in slowdown_table(m, 1.6)]
