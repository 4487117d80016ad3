"""The machine model: numbering, graph, classes and latencies."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cohsim.errors import CohsimError
from cohsim.machine.catalog import Catalog
from cohsim.machine.model import Machine
from cohsim.machine.parts import Coherence, Microarch, PairClass, Topology


def make(interconnect="chiplet", sockets=2, cps=16, tpc=2, llc=8, lat=(10.0, 25.0, 100.0, 200.0)):
    topo = Topology(interconnect, sockets, cps, tpc, llc, sockets)
    smt, same, cross, sock = lat
    coh = Coherence(
        same_llc_ns=same,
        smt_ns=smt if tpc > 1 else None,
        cross_llc_ns=cross if cps // llc > 1 else None,
        cross_socket_ns=sock if sockets > 1 else None,
    )
    return Machine("test", topo, Microarch("x", 64, 3.0), coh)


@st.composite
def machines(draw):
    interconnect = draw(st.sampled_from(["mesh", "chiplet", "cmn"]))
    sockets = draw(st.integers(1, 2))
    llc = draw(st.integers(1, 6))
    per_socket = draw(st.integers(1, 3)) if interconnect == "chiplet" else 1
    tpc = draw(st.integers(1, 2)) if interconnect != "cmn" else 1
    smt = draw(st.floats(2, 15))
    same = smt + draw(st.floats(1, 40))
    cross = same + draw(st.floats(1, 150))
    sock = (cross if per_socket > 1 else same) + draw(st.floats(0, 200))
    return make(interconnect, sockets, llc * per_socket, tpc, llc, (smt, same, cross, sock))


def test_linux_numbering_puts_siblings_after_all_cores():
    m = make(sockets=2, cps=16, tpc=2, llc=8)
    arr = m.cpu_arrays
    assert m.vcpus == 64
    assert arr["socket"][15] == 0 and arr["socket"][16] == 1
    assert arr["core"][3] == arr["core"][35]  # sibling of cpu 3 is 3 + 32 cores
    assert m.pair_class(3, 35) is PairClass.SMT
    assert m.cpu_of(socket=1, core=2, thread=1) == 32 + 16 + 2


def test_remote_home_costs_as_much_as_crossing_sockets():
    m = make()
    # cpus 16 and 24 are on socket 1, different CCX; a line homed on socket 0
    assert m.pair_class(16, 24, home=0) is PairClass.REMOTE_HOME
    assert m.pair_class(16, 24, home=1) is PairClass.CROSS_LLC
    assert m.pair_class(16, 24) is PairClass.CROSS_LLC
    assert m.transfer_ns(16, 24, home=0) == pytest.approx(200.0)
    assert m.transfer_ns(16, 24, home=1) == pytest.approx(100.0)
    # inside one CCX the L3 orders the transfer wherever the line is homed
    assert m.transfer_ns(16, 17, home=0) == pytest.approx(25.0)


def test_mesh_socket_is_one_llc_so_no_remote_home_effect():
    m = make("mesh", sockets=2, cps=24, tpc=2, llc=24, lat=(8.0, 47.0, 47.0, 134.0))
    assert (m.class_matrix(0) != PairClass.REMOTE_HOME).all()
    assert m.transfer_ns(30, 40, home=0) == pytest.approx(47.0)


def test_route_to_home_crosses_the_socket_link():
    m = make()
    assert m.route(20, 0) == [("cpu", 20), ("core", 20), ("llc", 2), ("hub", 1), ("hub", 0)]
    assert m.route(0, 0)[-1] == ("hub", 0)


def test_smt_off_and_one_socket_variants():
    m = make()
    assert m.with_smt(False).vcpus == 32
    assert m.with_smt(True) is m
    one = m.with_sockets(1)
    assert one.topology.sockets == 1 and one.vcpus == 32
    with pytest.raises(CohsimError, match="sockets must be between"):
        m.with_sockets(3)


def test_fewer_cores_variant():
    m = make("mesh", sockets=1, cps=16, tpc=1, llc=16, lat=(8.0, 50.0, 50.0, 50.0))
    two = m.with_cores(2)
    assert two.vcpus == 2 and two.topology.llc_domain_cores == 2 and two.name.endswith("+2c")
    assert two.coherence == m.coherence and m.with_cores(16) is m
    assert two.percpu_walk_ns < m.percpu_walk_ns
    chiplet = make("chiplet", sockets=1, cps=16, tpc=2, llc=8)
    assert chiplet.with_cores(8).vcpus == 16 and chiplet.with_cores(4).topology.llc_domains == 1
    with pytest.raises(CohsimError, match="whole LLC domains"):
        chiplet.with_cores(12)
    with pytest.raises(CohsimError, match="one socket"):
        make().with_cores(2)


@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(lat=(30.0, 25.0, 100.0, 200.0)), "same_llc_ns"),
        (dict(lat=(10.0, 25.0, 100.0, 90.0)), "cross_socket_ns"),
        (dict(lat=(-1.0, 25.0, 100.0, 200.0)), "positive"),
        (dict(cps=12, llc=8), "multiple of llc_domain_cores"),
        (dict(interconnect="ring"), "interconnect"),
    ],
)
def test_impossible_machines_are_refused(bad, match):
    with pytest.raises(CohsimError, match=match):
        make(**bad)


def test_missing_latency_is_refused():
    topo = Topology("chiplet", 2, 16, 2, 8, 2)
    with pytest.raises(CohsimError, match="cross_socket_ns is required"):
        Machine("t", topo, Microarch("x", 64, 3.0), Coherence(25.0, 10.0, 100.0))


def test_out_of_range_cpu():
    with pytest.raises(CohsimError, match="out of range"):
        make().transfer_ns(0, 64)


@given(machines(), st.sampled_from([None, 0, 1]))
def test_latency_matrix_is_symmetric_positive_and_ordered(m, home):
    home = None if home is not None and home >= m.topology.sockets else home
    lat = m.latency_matrix(home)
    off = ~np.eye(m.vcpus, dtype=bool)
    assert np.allclose(lat, lat.T)
    assert (lat[off] > 0).all() and (np.diag(lat) == 0).all()
    c = m.class_latency_ns(home)
    chain = [PairClass.SMT, PairClass.SAME_LLC, PairClass.CROSS_LLC, PairClass.CROSS_SOCKET]
    present = [k for k in chain if k in c]
    for i, a in enumerate(present):
        for b in present[i + 1 :]:
            strict = a is PairClass.SMT or b is PairClass.CROSS_LLC
            assert c[a] < c[b] if strict else c[a] <= c[b], (a, b, c)


@given(machines(), st.data())
def test_matrix_agrees_with_graph_walk(m, data):
    a = data.draw(st.integers(0, m.vcpus - 1))
    b = data.draw(st.integers(0, m.vcpus - 1))
    home = data.draw(st.integers(0, m.topology.sockets - 1))
    assert m.latency_matrix(home)[a, b] == pytest.approx(m.transfer_ns(a, b, home))
    assert m.transfer_ns(a, b, home) == pytest.approx(m.transfer_ns(b, a, home))


@given(machines())
def test_counts_are_consistent(m):
    t = m.topology
    assert m.vcpus == t.sockets * t.cores_per_socket * t.threads_per_core
    assert len(set(m.cpu_arrays["llc"])) == t.llc_domains
    assert m.graph.number_of_nodes() == t.sockets + t.llc_domains + t.cores + m.vcpus


def test_graph_distances_are_networkx_dijkstras_to_the_last_bit():
    """Machine._distance walks the tree itself (a prediction need not import networkx): on
    every catalog machine it gives networkx's shortest-path length, the same float, for every
    node pair among a sample and for the pairs transfer_ns asks for."""
    import random

    import networkx as nx

    rng = random.Random(0)
    for m in Catalog().machines():
        nodes = list(m.graph.nodes)
        pairs = [(rng.choice(nodes), rng.choice(nodes)) for _ in range(150)]
        for home in [None, *range(m.topology.sockets)]:
            cls = m.class_matrix(home)
            for c in np.unique(cls):
                a, b = (int(x) for x in np.argwhere(cls == c)[0])
                p = m.coherence_point(a, b, home)
                pairs += [(("cpu", b), p), (p, ("cpu", a)), (("cpu", a), ("cpu", b))]
        for x, y in pairs:
            want = float(nx.shortest_path_length(m.graph, x, y, weight="weight"))
            assert m._distance(x, y) == want, (m.name, x, y)
