"""Placements: the orders of the real pause_bench, SMT off, CPU lists, bad input."""

import pytest

from cohsim.errors import CohsimError
from cohsim.machine.catalog import Catalog
from cohsim.machine.placement import cpu_order, parse_cpu_list, place


@pytest.fixture(scope="module")
def cat():
    return Catalog()


def test_compact_is_linux_order_siblings_last(cat):
    r5 = cat.get("r5.metal")  # 2 x 24 cores x 2 threads
    m, cpus = place(r5, 50, "compact")
    assert cpus[:48] == tuple(range(48))  # every physical core of both sockets first
    assert cpus[48:] == (48, 49)  # then the siblings of cores 0 and 1
    assert m is r5


def test_one_socket_stays_on_socket_zero(cat):
    r5 = cat.get("r5.metal")
    _, cpus = place(r5, 48, "one-socket")
    sock = r5.cpu_arrays["socket"]
    assert all(sock[c] == 0 for c in cpus)
    assert cpus[:24] == tuple(range(24)) and cpus[24] == 48
    with pytest.raises(CohsimError, match="only 48 CPUs"):
        place(r5, 49, "one-socket")


def test_scatter_alternates_sockets_then_domains(cat):
    r5 = cat.get("r5.metal")
    _, cpus = place(r5, 4, "scatter")
    assert [int(r5.cpu_arrays["socket"][c]) for c in cpus] == [0, 1, 0, 1]
    m7a = cat.get("m7a.24xlarge")  # 12 CCXs of 8 cores
    _, cpus = place(m7a, 12, "scatter")
    assert sorted(int(m7a.cpu_arrays["llc"][c]) for c in cpus) == list(range(12))
    assert sorted(cpu_order(m7a, "scatter")) == list(range(m7a.vcpus))


def test_smt_off_uses_one_thread_per_core(cat):
    m7i = cat.get("m7i.metal-24xl")
    m, cpus = place(m7i, 48, "compact", smt=False)
    assert m.topology.threads_per_core == 1 and cpus == tuple(range(48))
    with pytest.raises(CohsimError, match="48 cores"):
        place(m7i, 49, "compact", smt=False)


def test_cpu_lists(cat):
    m7i = cat.get("m7i.metal-24xl")
    assert parse_cpu_list("0,2,4-6") == [0, 2, 4, 5, 6]
    assert place(m7i, 2, "0,48")[1] == (0, 48)
    assert place(m7i, 2, [5, 7])[1] == (5, 7)
    with pytest.raises(CohsimError, match="out of range"):
        place(m7i, 1, [96])
    with pytest.raises(CohsimError, match="twice"):
        place(m7i, 2, "1,1")
    with pytest.raises(CohsimError, match="unknown placement"):
        place(m7i, 2, "spread")
