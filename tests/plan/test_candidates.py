"""Which candidates a plan compares (cohsim.plan.candidates)."""

from __future__ import annotations

import pytest

from cohsim.errors import CohsimError
from cohsim.plan import select
from cohsim.plan.candidates import strategies_of


def test_by_default_every_instance_type_once_in_catalog_order(catalog):
    cands = select(catalog)
    instances = [m.name for m in catalog.machines() if m.kind == "instance"]
    assert [c.instance for c in cands] == instances
    assert {c.strategy for c in cands} == {"per-layer"}
    assert all(c.smt and c.sockets is None for c in cands)
    by_name = {c.instance: c for c in cands}
    assert by_name["m7a.24xlarge"].vcpus == 96 and by_name["m7i.metal-48xl"].vcpus == 192
    assert select(catalog, instances=["all"]) == cands


def test_variants_only_where_the_hardware_allows(catalog):
    cands = select(catalog, instances=["r5.metal", "m7a.24xlarge", "c6gd.metal"], variants=True)
    assert [c.label for c in cands] == [
        "r5.metal per-layer",
        "r5.metal+smt-off per-layer",
        "r5.metal+1s per-layer",
        "m7a.24xlarge per-layer",  # one thread per core, one socket: no variant
        "c6gd.metal per-layer",
    ]
    assert [c.vcpus for c in cands] == [96, 48, 48, 96, 64]


def test_family_by_catalog_family(catalog):
    genoa = select(catalog, family="genoa")
    assert {c.instance for c in genoa} == {
        "c7a.metal-48xl",
        "m7a.24xlarge",
        "m7a.metal-48xl",
        "r7a.metal-48xl",
    }
    with pytest.raises(CohsimError, match="unknown family 'z9'.*genoa"):
        select(catalog, family="z9")


def test_strategies_and_each_strategy_per_machine(catalog):
    assert strategies_of("all") == ("per-layer", "common-parent", "lowerdir-plus")
    cands = select(catalog, instances=["m7a.24xlarge"], strategies=strategies_of("all"))
    assert [c.strategy for c in cands] == ["per-layer", "common-parent", "lowerdir-plus"]
    with pytest.raises(CohsimError, match="unknown strategy 'x'"):
        strategies_of("x")


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"instances": ["m7a.24xlarg"]}, "unknown instance 'm7a.24xlarg'; did you mean m7a"),
        ({"instances": ["all", "r5.metal"]}, "unknown instance 'all'"),
        ({"instances": ["r5.metal"], "family": "genoa"}, "not both"),
    ],
)
def test_bad_choices_are_one_clear_error(catalog, kw, message):
    with pytest.raises(CohsimError, match=message):
        select(catalog, **kw)
