"""Run options: one object, every default written once, bad values refused when it is made."""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import replace

import pytest

from cohsim.errors import CohsimError
from cohsim.predict import Burst, RunOptions, RunOverrides
from cohsim.predict.options import ENGINES, REPLICATES, check_seed, resolve_options


def test_defaults():
    o = RunOptions()
    assert (o.seed, o.n_replicates, o.deadline_s, o.handoff_model) == (0, 4, 30.0, "des")
    assert o.replicates is None  # the engine's own count
    assert o.background and not o.record and o.jobs is None
    assert o.priors and not o.explain


def test_each_engine_has_its_replicates_written_once():
    """Issue 30: the analytic engine's interval from 3 draws was t at 2 degrees of freedom
    (+- 3.37 sd); it takes milliseconds a replicate, so it draws many more by default. The
    simulation keeps its 4."""
    assert set(REPLICATES) == set(ENGINES)
    assert RunOptions(engine="des").n_replicates == REPLICATES["des"] == 4
    assert RunOptions(engine="analytic").n_replicates == REPLICATES["analytic"] == 17
    with pytest.raises(TypeError):
        REPLICATES["des"] = 8  # type: ignore[index]


@pytest.mark.parametrize("engine", ENGINES)
def test_replicates_asked_for_win(engine):
    assert RunOptions(engine=engine, replicates=3).n_replicates == 3
    assert resolve_options(None, {"engine": engine, "replicates": 7}).n_replicates == 7


def test_another_engine_takes_its_own_default():
    """The field keeps "not asked" (None), so that changing the engine of options made with
    the defaults changes the count with it, and one asked for stays."""
    assert replace(RunOptions(), engine="analytic").n_replicates == REPLICATES["analytic"]
    assert resolve_options(None, {"engine": "analytic"}).n_replicates == REPLICATES["analytic"]
    asked = RunOptions(replicates=6)
    assert replace(asked, engine="analytic").n_replicates == 6


def test_the_keywords_are_the_fields():
    """All but the deadline, which is the question's: `Burst.deadline_s` (`predict`'s
    `deadline_s=` keyword), whose default `RunOptions.deadline_s` is."""
    fields = {f.name: f.type for f in dataclasses.fields(RunOptions)}
    assert set(typing.get_type_hints(RunOverrides)) == set(fields) - {"deadline_s"}
    assert RunOptions().deadline_s == Burst().deadline_s


def test_overrides_replace_fields_and_nothing_else():
    base = RunOptions(seed=4, jobs=1)
    assert resolve_options(None, {}) == RunOptions()
    assert resolve_options(base, {}) is base
    assert resolve_options(base, {"replicates": 5}) == RunOptions(seed=4, jobs=1, replicates=5)
    with pytest.raises(TypeError):
        resolve_options(base, {"sed": 1})  # type: ignore[typeddict-unknown-key]


@pytest.mark.parametrize(
    "kw, message",
    [
        (dict(seed=-1), "seed must be a non-negative integer, not -1"),
        (dict(seed=1.5), "seed must be a non-negative integer, not 1.5"),
        (dict(seed=True), "seed must be a non-negative integer, not True"),
        (dict(replicates=0), "replicates must be at least 1, not 0"),
        (dict(deadline_s=-3.0), "deadline must be positive, not -3.0"),
    ],
)
def test_bad_values_are_refused_when_made(kw, message):
    with pytest.raises(CohsimError, match=message):
        RunOptions(**kw)


def test_check_seed():
    assert check_seed(0) == 0 and check_seed(2**40) == 2**40
    with pytest.raises(CohsimError):
        check_seed(-5)


def test_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        RunOptions().seed = 3  # type: ignore[misc]
