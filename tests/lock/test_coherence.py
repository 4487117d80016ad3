"""The DES's coherence points (cohsim.lock.coherence): which points a run has, and how a
point integrates its queue over time."""

from cohsim.lock.coherence import Agent, coherence_points


def test_one_llc_per_socket_the_home_llc_point_is_the_hub():
    agents, hub = coherence_points([0, 0, 1], home=1, one_llc_per_socket=True, record=True)
    assert list(agents) == [0, 1] and hub is agents[1]
    assert hub.is_hub and hub.name == "home1" and hub.trace == []
    assert not agents[0].is_hub and agents[0].trace is None


def test_home_llc_point_added_when_no_thread_uses_it():
    agents, hub = coherence_points([0, 0], home=1, one_llc_per_socket=True, record=False)
    assert list(agents) == [0, 1] and hub is agents[1] and hub.trace is None


def test_several_llcs_per_socket_the_hub_is_its_own_point():
    agents, hub = coherence_points([3, 1, 3], home=0, one_llc_per_socket=False, record=False)
    assert list(agents) == [1, 3] and hub not in agents.values()
    assert hub.is_hub and hub.domain == -1 and hub.name == "home0"


def test_agent_integrates_its_occupancy():
    a = Agent("llc0", False, 0, trace=True)
    a.busy = True
    a.account(10, 0)  # empty until 10, then one in service
    a.account(30, 1)  # one from 10 to 30, still one
    a.busy = False
    a.account(40, 1)  # one from 30 to 40, now none
    assert a.area == 30 and a.max_n == 1 and a.n == 0
    assert a.trace == [(10, 1), (40, 0)]


def test_domain_points_merge_unless_told_not_to():
    """A domain point merges (holds a forwarded request until its answer, then answers its
    domain's next one) by default: a CCX's L3, an Intel socket's CBo. merges=False (a CMN socket
    that is not the home, a victim L3) makes it pass every miss on; the hub always orders."""
    agents, hub = coherence_points([0, 1], home=0, one_llc_per_socket=True, record=False)
    assert agents[1].merges and hub.merges
    agents, hub = coherence_points([0, 1], 0, True, False, merges=False)
    assert not agents[1].merges and hub.merges
    agents, hub = coherence_points([2, 5], 0, False, False, merges=False)
    assert not any(a.merges for a in agents.values()) and hub.merges
