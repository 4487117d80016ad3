"""How one level-2 point runs (cohsim.lock.handoffoptions): pause_bench's defaults written once, bad
values refused when the options are made, keywords that replace fields, and the same options
giving the same result every time."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cohsim.errors import CohsimError
from cohsim.lock.handoff import simulate, sweep
from cohsim.lock.handoffoptions import HandoffOptions, HandoffOverrides, resolve_options
from cohsim.lock.params import LOCKS, MODELS, params_from_machine
from cohsim.machine.catalog import Catalog

CAT = Catalog()


def test_the_defaults_are_pause_benchs():
    o = HandoffOptions()
    assert (o.lock, o.placement, o.smt, o.model, o.record) == (
        "ttas",
        "compact",
        True,
        "des",
        False,
    )
    assert (o.cs_ns, o.think_ns, o.acquisitions, o.seed, o.params) == (100.0, 0.0, 2000, 0, None)
    assert resolve_options(None, {}) == o


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"lock": "clh"}, "unknown lock 'clh'"),
        ({"model": "guess"}, "unknown model 'guess'"),
        ({"cs_ns": -1.0}, "must not be negative"),
        ({"think_ns": -0.5}, "must not be negative"),
        ({"acquisitions": 0}, "at least 1"),
        ({"lock": "seqcount", "cs_ns": 0.0, "think_ns": 0.0}, "seqcount readers"),
    ],
)
def test_bad_values_are_refused_when_made(fields: HandoffOverrides, message: str) -> None:
    with pytest.raises(CohsimError, match=message):
        HandoffOptions(**fields)
    with pytest.raises(CohsimError, match=message):  # also as keywords to the entry point
        simulate(CAT.get("m7a.24xlarge"), 2, **fields)


def test_a_cpu_list_is_kept_as_a_tuple_and_named_by_its_cpus():
    cpus = [0, 48, 1, 49]
    o = HandoffOptions(placement=cpus)
    cpus.append(2)  # the caller's list changing later does not change the options
    assert o.placement == (0, 48, 1, 49) and o.placement_label == "0,48,1,49"
    assert HandoffOptions(placement="0-3").placement_label == "0-3"
    r = simulate(CAT.get("m7i.metal-24xl"), 4, o, lock="ticket", acquisitions=100)
    assert r.placement == "0,48,1,49" and r.cpus == (0, 48, 1, 49)


def test_options_and_keywords_answer_alike():
    m = CAT.get("m7a.24xlarge")
    p = params_from_machine(m)
    o = HandoffOptions(lock="ticket", placement="scatter", acquisitions=150, seed=4, params=p)
    by_keywords = simulate(
        m, 6, lock="ticket", placement="scatter", acquisitions=150, seed=4, params=p
    )
    assert simulate(m, 6, o) == by_keywords
    # keywords replace the fields of the options given
    assert simulate(m, 6, HandoffOptions(lock="ttas", seed=9), lock="ticket", seed=4,
                    placement="scatter", acquisitions=150, params=p) == by_keywords  # fmt: skip
    assert sweep(m, [2, 3], o) == sweep(m, [2, 3], **{**o.__dict__})


def test_a_seed_sequence_gives_the_same_streams_every_time():
    """A SeedSequence in the options is copied before streams are drawn from it: the same
    options give the same sweep twice, and the caller's sequence spawns nothing."""
    m = CAT.get("m7a.24xlarge")
    ss = np.random.SeedSequence(11)
    o = HandoffOptions(seed=ss, acquisitions=100)
    first, second = sweep(m, [2, 4], o), sweep(m, [2, 4], o)
    assert first == second and ss.n_children_spawned == 0
    assert [r.seed for r in first] == [11, 11]  # a child stream records its root's entropy
    assert simulate(m, 3, o).seed == 11
    assert HandoffOptions(seed=np.random.SeedSequence([1, 2])).recorded_seed is None


@settings(max_examples=25, deadline=None)
@given(
    lock=st.sampled_from(LOCKS),
    model=st.sampled_from(MODELS),
    cs_ns=st.one_of(st.just(0.0), st.floats(1.0, 500.0)),
    think_ns=st.one_of(st.just(0.0), st.floats(1.0, 500.0)),
)
def test_the_result_names_the_options_it_ran(lock, model, cs_ns, think_ns):
    """Property: whatever the options, the result names the lock, section, think time,
    placement, SMT and seed it ran with, and which model answered. (Times of a nanosecond or
    more: a subnormal think time, 1e-311 ns, overflows the Markov chain's weights.)"""
    if lock == "seqcount" and cs_ns + think_ns <= 0:
        return
    o = HandoffOptions(
        lock=lock, model=model, cs_ns=cs_ns, think_ns=think_ns, acquisitions=40, seed=2
    )
    r = simulate(CAT.get("m7a.24xlarge"), 2, o)
    assert (r.lock, r.model, r.cs_ns, r.think_ns) == (lock, model, cs_ns, think_ns)
    assert (r.placement, r.smt, r.seed, r.threads) == ("compact", True, 2, 2)
