"""The DES's cache line (cohsim.lock.line): where requests for the line merge.

Three mechanisms, each with a readable example and, where one fits, a property:

- an Intel socket that is not the line's home sends one request per fill to the home (its
  CBo issues one request per line to the system); its other cores are answered inside it;
- an LLC that keeps no record of its cores' lines (LockParams.domain_merges False) sends every
  miss to the home;
- SMT siblings share their core's one miss to the line.
"""

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cohsim.lock import line
from cohsim.lock.handoff import simulate
from cohsim.lock.params import params_from_machine
from cohsim.machine.catalog import Catalog

CAT = Catalog()


def _agents(r):
    """(hub's requests, every domain point's requests) of a recorded run."""
    agents = r.record.agents
    hub = next(v[0] for k, v in agents.items() if k.startswith("home"))
    return hub, {k: v[0] for k, v in agents.items() if not k.startswith("home")}


def _on_socket1(n):
    """r5.metal: one thread on socket 0 (the line's home), n - 1 on socket 1's cores."""
    return [0, *range(24, 24 + n - 1)]


def test_a_remote_intel_socket_sends_the_home_one_request_per_fill():
    """r5.metal, line homed on socket 0, a ticket lock between one thread there and 23 on
    socket 1: each release makes every waiter re-read, but socket 1's CBo forwards one read per
    fill and answers the rest from the copy it fetched. The home sees about three requests per
    hand-off (a release, a fetch-and-add, one read), not 24."""
    m = CAT.get("r5.metal")
    r = simulate(m, 24, lock="ticket", placement=_on_socket1(24), acquisitions=300, record=True)
    hub, points = _agents(r)
    assert hub / r.acquisitions < 4
    assert points["llc1"] / r.acquisitions > 20  # socket 1's point answers its cores


def test_more_remote_spinners_load_their_socket_not_the_home():
    """The same with 6 threads and with 24: socket 1's point serves the extra re-reads, the
    home's load per hand-off stays level."""
    m = CAT.get("r5.metal")
    few, many = (
        simulate(m, n, lock="ticket", placement=_on_socket1(n), acquisitions=300, record=True)
        for n in (6, 24)
    )
    assert _agents(many)[0] / many.acquisitions < 1.25 * _agents(few)[0] / few.acquisitions
    assert _agents(many)[1]["llc1"] > 3 * _agents(few)[1]["llc1"]


def test_without_domain_merging_every_miss_reaches_the_home():
    """m7a.24xlarge, 24 threads on 3 CCDs, with domain_merges False (a victim L3 that keeps no
    record of its cores' lines, as AMD Family 10h's): a CCD's point passes its misses to the IO
    die, which serves about one request per waiter and hand-off (24.6 in this run) against
    about one per other CCD when they merge (3.4)."""
    m = CAT.get("m7a.24xlarge")
    p = params_from_machine(m)
    kw = dict(lock="ticket", placement="compact", acquisitions=200, record=True)
    merged = simulate(m, 24, params=p, **kw)
    passed = simulate(m, 24, params=replace(p, domain_merges=False), **kw)
    assert _agents(merged)[0] / merged.acquisitions < 5
    assert _agents(passed)[0] / passed.acquisitions > 20


def test_smt_siblings_share_their_core_miss():
    """m7i.metal-24xl: ticket spinners on 8 cores, then the same 8 cores with both siblings
    spinning. The siblings' re-reads after a release wait for their core's one miss: the home
    serves about as many requests per hand-off as with one thread per core."""
    m = CAT.get("m7i.metal-24xl")
    one = simulate(m, 8, lock="ticket", placement=list(range(8)), record=True)
    both = simulate(
        m, 16, lock="ticket", placement=list(range(8)) + list(range(48, 56)), record=True
    )
    assert _agents(both)[0] / both.acquisitions < 1.25 * _agents(one)[0] / one.acquisitions


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(["m7i.metal-24xl", "r5.metal", "c6a.metal"]),
    n=st.integers(1, 6),
    lock=st.sampled_from(["ttas", "ticket", "qspinlock", "seqcount"]),
    reverse=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_core_has_one_miss_to_the_line_at_a_time(name, n, lock, reverse, seed):
    """Whatever the lock and order, with both siblings of n cores spinning, a core never has
    two of its threads' requests for the line out at once (the sibling waits for the one out)."""
    out: dict[tuple[int, int], int] = {}
    answered = []
    original = line.LineModel._miss

    def counted(self, req):
        key = (id(self), self.core[req.th])
        out[key] = out.get(key, 0) + 1
        assert out[key] == 1, "a second miss from one core"
        done = req.done

        def back(value, seq):
            out[key] -= 1
            answered.append(key)
            done(value, seq)

        req.done = back
        original(self, req)

    m = CAT.get(name)
    cpus = [*range(n), *(c + m.topology.cores for c in range(n))]  # both siblings of n cores
    think = 50.0 if lock == "seqcount" else 0.0
    line.LineModel._miss = counted  # type: ignore[method-assign]
    try:
        simulate(
            m,
            2 * n,
            lock=lock,
            placement=cpus[::-1] if reverse else cpus,
            think_ns=think,
            acquisitions=60,
            seed=seed,
        )
    finally:
        line.LineModel._miss = original  # type: ignore[method-assign]
    assert answered  # (the run stops at its last acquisition, with misses still out)


@pytest.mark.parametrize("lock", ["ttas", "ticket", "qspinlock"])
def test_one_thread_per_core_is_unchanged_by_the_fill_buffer(lock):
    """With no siblings placed, no miss ever waits for another: the property above never
    holds anything back, and one thread per core runs as it did before the mechanism."""
    m = CAT.get("r5.metal")
    r = simulate(m, 6, lock=lock, placement="scatter", smt=False, acquisitions=100, seed=2)
    assert r.acquisitions == 100 and r.spin_fraction > 0
