"""The lock hand-off's entry point (cohsim.lock.handoff): input checks, the model it names,
sweeps with one seeded stream per point; monotone in threads, and the pause_bench study's
directions (r5.metal one socket, m7i SMT off, m7a best)."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cohsim.errors import CohsimError
from cohsim.lock.handoff import simulate, sweep
from cohsim.lock.params import LOCKS
from cohsim.machine.catalog import Catalog
from cohsim.machine.placement import PLACEMENTS, cpu_order, placement_machine

CAT = Catalog()


def test_bad_input():
    m = CAT.get("m7i.metal-24xl")
    with pytest.raises(CohsimError, match="only 96 CPUs"):
        simulate(m, 97)
    with pytest.raises(CohsimError, match="unknown lock"):
        simulate(m, 2, lock="clh")
    with pytest.raises(CohsimError, match="unknown placement"):
        simulate(m, 2, placement="everywhere")
    with pytest.raises(CohsimError, match="unknown model"):
        simulate(m, 2, model="guess")
    with pytest.raises(CohsimError, match="48 cores"):
        simulate(m, 60, smt=False)


def test_the_result_says_which_model_answered():
    m = CAT.get("m7a.24xlarge")
    for model in ("des", "markov"):
        r = simulate(m, 4, model=model, acquisitions=200)
        assert r.model == model and r.level == f"level 2: lock hand-off ({model})"
        assert r.to_dict()["model"] == model


def test_sweep_is_simulate_per_point_on_child_streams():
    """Point i of a sweep is `simulate` with child stream i of the seed; progress counts."""
    import numpy as np

    m = CAT.get("m7a.24xlarge")
    ticks: list[int] = []
    out = sweep(m, [2, 4], seed=5, acquisitions=200, progress=ticks.append)
    children = np.random.SeedSequence(5).spawn(2)
    pairs = zip([2, 4], children, strict=True)
    alone = [simulate(m, n, seed=c, acquisitions=200) for n, c in pairs]
    assert [r.to_dict() for r in out] == [r.to_dict() for r in alone]
    assert ticks == [1, 1]


# ----- monotone in threads, and the published directions of the pause_bench study ----------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(CAT.names()),
    lock=st.sampled_from(LOCKS),
    placement=st.sampled_from(PLACEMENTS),
    smt=st.booleans(),
    a=st.floats(0, 1),
    b=st.floats(0, 1),
)
def test_markov_latency_is_monotone_in_threads(name, lock, placement, smt, a, b):
    """Every catalog machine, lock kind and placement: more threads never wait less (the
    Markov chain, pause-bench's fast path: p50 and mean acquisition latency)."""
    m = CAT.get(name)
    cap = len(cpu_order(placement_machine(m, smt), placement))
    n1, n2 = sorted((1 + round(a * (cap - 1)), 1 + round(b * (cap - 1))))
    r1, r2 = (
        simulate(m, n, lock=lock, placement=placement, smt=smt, model="markov") for n in (n1, n2)
    )
    assert r1.p50_ns <= r2.p50_ns * (1 + 1e-9) and r1.mean_ns <= r2.mean_ns * (1 + 1e-9)


DES_SUBSET = [
    ("m7a.24xlarge", "compact"),
    ("m7i.metal-24xl", "compact"),
    ("r5.metal", "one-socket"),
    ("c6a.metal", "compact"),
    ("m8g.metal-24xl", "compact"),
]


def _writer_mean_ns(r):
    waits = [a - s for t, s, a in r.record.waits if t == 0]
    return sum(waits) / len(waits)


@pytest.mark.parametrize("name,placement", DES_SUBSET)
@pytest.mark.parametrize("lock", ["ttas", "ticket", "qspinlock", "seqcount"])
def test_des_is_monotone_in_threads(name, placement, lock):
    """The DES on a subset (one machine per interconnect, r5.metal on one socket), 2 to 48
    threads. What grows: p50 and mean (which counts the waits still open at the end, so a
    thread the unfair ttas starves adds its wait), and for ttas the hand-off cost
    1/throughput too; for seqcount the writer's wait (level 3's writer_ns; the readers mostly
    do not wait at all). A step that only adds SMT siblings (r5.metal's one socket at 48: the
    24 cores' siblings) sends no more requests to the home, the siblings sharing their core's
    one miss to the line: there the figures may not grow, but do not fall beyond noise."""
    m = CAT.get(name)
    runs = [
        simulate(m, n, lock=lock, placement=placement, acquisitions=300, seed=3, record=True)
        for n in (2, 8, 24, 48)
    ]
    if lock == "seqcount":
        curves = [[_writer_mean_ns(r) for r in runs]]
    elif lock == "ttas":
        curves = [[r.p50_ns for r in runs], [r.mean_ns for r in runs]]
        curves.append([1 / r.acquisitions_per_s for r in runs])
    else:
        curves = [[r.p50_ns for r in runs], [r.mean_ns for r in runs]]
    core = m.cpu_arrays["core"]
    used = [{int(core[c]) for c in r.cpus} for r in runs]
    siblings_only = [b == a for a, b in zip(used, used[1:], strict=False)]
    for c in curves:
        for step, (a, b) in enumerate(zip(c, c[1:], strict=False)):
            assert b >= (0.9 * a if siblings_only[step] else a), c


def _run(model, name, n, lock, **kw):
    return simulate(CAT.get(name), n, lock=lock, model=model, acquisitions=300, seed=1, **kw)


def _better(a, b):
    """a beats b: waits less (p50) and hands off more often (throughput)."""
    return a.p50_ns < b.p50_ns and a.acquisitions_per_s > b.acquisitions_per_s


DIRECTIONS = [("markov", "ttas"), ("markov", "ticket"), ("des", "ttas"), ("des", "ticket")]


@pytest.mark.parametrize("model,lock", DIRECTIONS)
def test_r5_one_socket_beats_two_at_high_thread_counts(model, lock):
    """r5.metal (2 x 24 Cascade Lake cores, mesh): 48 threads on socket 0 (24 cores and their
    siblings) beat 48 on two sockets (compact, scatter), and the full two sockets at 96 hand off
    less often than one socket at its 48: the line crosses UPI to and from the second socket
    (its CBo sends one request per fill, then answers its own cores), and socket 0's 24 cores'
    siblings share their cores' misses."""
    one = _run(model, "r5.metal", 48, lock, placement="one-socket")
    for placement in ("compact", "scatter"):
        assert _better(one, _run(model, "r5.metal", 48, lock, placement=placement)), placement
    assert one.acquisitions_per_s > _run(model, "r5.metal", 96, lock).acquisitions_per_s


@pytest.mark.parametrize("model,lock", DIRECTIONS)
def test_m7i_smt_off_scales_better(model, lock):
    """m7i.metal-24xl (48 Sapphire Rapids cores, one mesh): at 48 threads SMT on places the same
    48 cores (compact fills first threads first), so SMT off is no worse; at 96 the siblings
    double the spinners at the one home CHA: the hand-off costs more than SMT off's 48."""
    off48 = _run(model, "m7i.metal-24xl", 48, lock, smt=False)
    on48 = _run(model, "m7i.metal-24xl", 48, lock)
    assert off48.p50_ns <= on48.p50_ns and off48.acquisitions_per_s >= on48.acquisitions_per_s
    on96 = _run(model, "m7i.metal-24xl", 96, lock)
    assert off48.acquisitions_per_s > on96.acquisitions_per_s and off48.p50_ns < on96.p50_ns


@pytest.mark.parametrize("model,lock", DIRECTIONS)
@pytest.mark.parametrize("n", [48, 96])
def test_m7a_scales_best(model, lock, n):
    """m7a.24xlarge (96 Genoa cores in 12 CCDs): each CCD's L3 serves its own spinners, so about
    one request per complex reaches the IO die, against every request at one CHA on m7i's one
    mesh. r5.metal's two sockets merge per socket too (each CBo sends one request per line),
    and it is compared where both place the same number of cores (48): at 96 threads its 48
    cores' siblings share their core's miss, against m7a's 96 cores' own requests, and the
    Markov chain's ttas counts the line's moves between m7a's 12 complexes one after the
    other."""
    best = _run(model, "m7a.24xlarge", n, lock)
    others = ("m7i.metal-24xl", "r5.metal") if n == 48 else ("m7i.metal-24xl",)
    for other in others:
        assert _better(best, _run(model, other, n, lock)), other


@pytest.mark.parametrize("model", ["des", "markov"])
def test_latency_percentiles_are_ordered_and_the_span_is_the_window(model):
    m = Catalog().get("m7a.24xlarge")
    r = simulate(m, 8, lock="ticket", acquisitions=400, model=model)
    assert r.p50_ns <= r.p90_ns <= r.p99_ns <= r.p999_ns
    if model == "des":
        assert r.max_ns is not None and r.p999_ns <= r.max_ns
    else:
        assert r.max_ns is None
    assert r.span_ns == pytest.approx(r.acquisitions / r.acquisitions_per_s * 1e9, rel=1e-3)
