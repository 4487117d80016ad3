"""The lock hand-off's parameters (cohsim.lock.params): defaults derived from the machine,
checks, and the result's JSON form."""

import pytest

from cohsim.errors import CohsimError
from cohsim.lock.params import LockParams, params_from_machine
from cohsim.machine.catalog import Catalog

CAT = Catalog()


def test_defaults_halve_the_class_latency_served_at_each_point():
    """llc = same_llc / 2; the hub halves the class that crosses to it: cross_llc on a
    chiplet socket, cross_socket on a two-socket mesh, llc itself on one LLC and socket."""
    chiplet = CAT.get("m7a.24xlarge")  # one socket, several LLC domains
    p = params_from_machine(chiplet)
    assert p.llc_service_ns == chiplet.coherence.same_llc_ns / 2
    assert p.hub_service_ns == chiplet.coherence.cross_llc_ns / 2
    two = CAT.get("r5.metal")  # two sockets, one LLC each
    assert params_from_machine(two).hub_service_ns == two.coherence.cross_socket_ns / 2
    one = CAT.get("m7i.metal-24xl")  # one socket, one LLC
    p1 = params_from_machine(one)
    assert p1.hub_service_ns == p1.llc_service_ns == one.coherence.same_llc_ns / 2
    assert p1.spin_loop_ns == pytest.approx(10.0 / one.microarch.freq_ghz)
    assert p1.smt_slowdown == 1.2 and p1.home_socket == 0


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"llc_service_ns": -1.0}, "llc_service_ns must not be negative"),
        ({"hub_service_ns": float("nan")}, "hub_service_ns must not be negative"),
        ({"spin_loop_ns": -0.5}, "spin_loop_ns must not be negative"),
        ({"smt_slowdown": 0.9}, "smt_slowdown must be at least 1"),
    ],
)
def test_impossible_parameters_are_refused(kw, message):
    base = {"llc_service_ns": 10.0, "hub_service_ns": 20.0}
    with pytest.raises(CohsimError, match=message):
        LockParams(**{**base, **kw})


def test_to_dict_rounds_floats_and_keeps_ints():
    p = LockParams(llc_service_ns=1 / 3, hub_service_ns=2.0, home_socket=1)
    d = p.to_dict()
    assert d["llc_service_ns"] == 0.3333 and d["home_socket"] == 1
