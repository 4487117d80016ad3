"""The search for the safe burst (cohsim.plan.burst), against a closed-form stand-in."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from fakeplan import FakeEvaluator, largest_meeting
from hypothesis import given, settings
from hypothesis import strategies as st

from cohsim.errors import CohsimError
from cohsim.plan import Candidate, Outcome, Probe, safe_bursts
from cohsim.predict.intervals import Interval


def _cands(*vcpus: int) -> list[Candidate]:
    return [Candidate(f"m{v}", "per-layer", vcpus=v) for v in vcpus]


def test_the_safe_burst_is_the_closed_forms_and_its_interval_brackets_it():
    fake = FakeEvaluator()
    (b,) = safe_bursts(_cands(64), fake, layers=50, deadline_s=30.0, start=100, max_burst=1000)
    assert b.value == largest_meeting(30.0, 64) == 434
    # the p99's high end (+20 % above the base) gives the smaller burst, its low end the larger
    assert b.low == largest_meeting(30.0, 64, factor=1.2) == 396
    assert b.high == largest_meeting(30.0, 64, factor=0.9) == 458
    assert not b.capped
    # the count and the one above were both evaluated, and they pass and fail
    assert b.probes[b.value].meets(30.0) and not b.probes[b.value + 1].meets(30.0)
    assert b.probes[b.low].meets(30.0, "high") and not b.probes[b.low + 1].meets(30.0, "high")
    assert b.probes[b.high].meets(30.0, "low") and not b.probes[b.high + 1].meets(30.0, "low")


def test_all_candidates_advance_together_round_by_round():
    fake = FakeEvaluator()
    cands = _cands(2, 64, 192)
    bursts = safe_bursts(cands, fake, layers=50, deadline_s=30.0, start=100, max_burst=1000)
    assert [b.value for b in bursts] == [largest_meeting(30.0, v) for v in (2, 64, 192)]
    # round 1 is every candidate at the question's count, in candidate order
    assert [(p.candidate, p.containers) for p in fake.rounds[0]] == [(c, 100) for c in cands]
    # a bracket of 1,000 closes in about log2(1000) + the doubling: rounds, not points
    assert len(fake.rounds) <= 16
    assert sum(len(r) for r in fake.rounds) > len(fake.rounds)  # several points per round
    # no point is asked twice
    asked = [(p.candidate, p.containers) for r in fake.rounds for p in r]
    assert len(asked) == len(set(asked))
    assert all(p.layers == 50 for r in fake.rounds for p in r)


def test_a_burst_of_one_that_fails_is_zero_and_a_passing_ceiling_is_capped():
    fake = FakeEvaluator()
    fail, cap = safe_bursts(
        _cands(1, 100_000), fake, layers=5, deadline_s=0.501, start=10, max_burst=40
    )
    assert (fail.value, fail.low, fail.high, fail.capped) == (0, 0, 0, False)
    assert not fail.probes[1].meets(0.501)
    assert cap.capped and cap.value == cap.low == cap.high == 40
    assert max(cap.probes) == 40 and min(cap.probes) == 10  # from the question to the ceiling


class _Noisy:
    """A launch p99 that is not monotone in the count: random pass/fail above a threshold."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.memo: dict[tuple[Candidate, int], bool] = {}

    def __call__(self, probes: Sequence[Probe]) -> list[Outcome]:
        out = []
        for p in probes:
            key = (p.candidate, p.containers)
            if key not in self.memo:
                self.memo[key] = p.containers < 50 or self.rng.random() < 0.3
            o = FakeEvaluator().outcome(p)
            v = 1.0 if self.memo[key] else 100.0
            out.append(
                Outcome(**{**o.__dict__, "launch_p99": o.launch_p99.__class__(v, v, v, "s")})
            )
        return out


@pytest.mark.parametrize("seed", range(8))
def test_whatever_the_noise_the_figure_passes_and_the_next_count_fails(seed):
    noisy = _Noisy(seed)
    (b,) = safe_bursts(_cands(64), noisy, layers=5, deadline_s=30.0, start=100, max_burst=500)
    if b.capped:
        assert b.value == 500 and b.probes[500].meets(30.0)
    else:
        assert b.value >= 49
        assert b.probes[b.value].meets(30.0) if b.value else True
        assert not b.probes[b.value + 1].meets(30.0)


def test_bad_bounds_and_a_short_answer_are_refused():
    with pytest.raises(CohsimError, match="positive count"):
        safe_bursts(_cands(4), FakeEvaluator(), layers=1, deadline_s=1.0, start=0, max_burst=9)
    with pytest.raises(CohsimError, match="below"):
        safe_bursts(_cands(4), FakeEvaluator(), layers=1, deadline_s=1.0, start=10, max_burst=9)
    with pytest.raises(CohsimError, match="answered 0 points for 1"):
        safe_bursts(_cands(4), lambda ps: [], layers=1, deadline_s=1.0, start=1, max_burst=9)


class _PowerLaw:
    """A monotone launch p99 = base + a N^k (the interval a fixed factor around it)."""

    def __init__(self, base: float, a: float, k: float) -> None:
        self.base, self.a, self.k = base, a, k

    def p99(self, n: int) -> float:
        return self.base + self.a * n**self.k

    def __call__(self, probes: Sequence[Probe]) -> list[Outcome]:
        out = []
        for p in probes:
            o = FakeEvaluator().outcome(p)
            v = self.p99(p.containers)
            out.append(Outcome(**{**o.__dict__, "launch_p99": Interval(v, 0.8 * v, 1.3 * v, "s")}))
        return out


@given(
    base=st.floats(0.0, 5.0),
    a=st.floats(1e-4, 1.0),
    k=st.floats(0.5, 4.0),
    start=st.integers(1, 300),
)
@settings(max_examples=60)
def test_on_a_monotone_curve_the_search_finds_the_exact_largest_count(base, a, k, start):
    curve = _PowerLaw(base, a, k)
    deadline = 30.0
    (b,) = safe_bursts(_cands(64), curve, layers=5, deadline_s=deadline, start=start,
                       max_burst=2000)  # fmt: skip

    def brute(scale: float) -> int:
        return max(n for n in range(0, 2001) if n == 0 or scale * curve.p99(n) <= deadline)

    assert (b.value, b.low, b.high) == (brute(1.0), brute(1.3), brute(0.8))
    assert b.capped == (b.value == 2000)
    assert len(b.probes) <= 3 * 2 * 12  # at worst twice a bisection's rounds, a few a round
