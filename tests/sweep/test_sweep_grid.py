"""A sweep's grid: the points, their order, the variants, and the names refused."""

from __future__ import annotations

import pytest

from cohsim.errors import CohsimError
from cohsim.sweep import SweepPoint, grid, select_instances, variants_of


def test_grid_order_is_instances_variants_strategies_layers_containers(catalog):
    pts = grid(catalog, ["r5.metal", "m7i.metal-24xl"], [10, 5], [3, 1],
               ["common-parent", "per-layer"], variants=True)  # fmt: skip
    # r5.metal: 2 sockets with SMT -> base, smt-off, 1s; m7i.metal-24xl: one socket with SMT
    assert [(p.instance, p.variant) for p in pts[::8]] == [
        ("r5.metal", "base"), ("r5.metal", "smt-off"), ("r5.metal", "1s"),
        ("m7i.metal-24xl", "base"), ("m7i.metal-24xl", "smt-off"),
    ]  # fmt: skip
    assert len(pts) == 5 * 2 * 2 * 2
    first = pts[:8]
    assert [(p.strategy, p.layers, p.containers) for p in first] == [
        (s, n_layers, n)
        for s in ("common-parent", "per-layer")
        for n_layers in (3, 1)
        for n in (10, 5)
    ]


def test_variants_follow_the_hardware(catalog):
    assert variants_of(catalog.get("r5.metal")) == [(True, None), (False, None), (True, 1)]
    assert variants_of(catalog.get("m7g.metal")) == [(True, None)]  # no SMT, one socket
    assert SweepPoint("r5.metal", 2, 2, smt=False, sockets=1).variant == "smt-off+1s"


def test_duplicates_are_dropped(catalog):
    pts = grid(catalog, ["m7g.metal", "m7g.metal"], [2, 2, 3], [1])
    assert [(p.instance, p.containers) for p in pts] == [("m7g.metal", 2), ("m7g.metal", 3)]


def test_instances_and_families(catalog):
    every = select_instances(catalog, "all")
    assert len(every) == 29 and all(catalog.get(n).kind == "instance" for n in every)
    assert select_instances(catalog) == every
    genoa = select_instances(catalog, family="genoa")
    assert genoa and all(catalog.get(n).family == "genoa" for n in genoa)
    assert select_instances(catalog, ["m7g.metal", "r5.metal", "m7g.metal"]) == [
        "m7g.metal", "r5.metal"
    ]  # fmt: skip


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda c: select_instances(c, ["m7a.24xlarg"]), "unknown instance 'm7a.24xlarg'"),
        (lambda c: select_instances(c, family="pentium"), "unknown family 'pentium'"),
        (lambda c: select_instances(c, ["r5.metal"], family="genoa"), "not both"),
        (lambda c: grid(c, ["r5.metal"], [], [1]), "no containers counts"),
        (lambda c: SweepPoint("r5.metal", 0, 1), "containers must be a positive integer"),
        (lambda c: SweepPoint("r5.metal", 2, -1), "layers must be a positive integer"),
        (lambda c: SweepPoint("r5.metal", 2, 1, strategy="x"), "unknown strategy 'x'"),
        (lambda c: SweepPoint("m7g.metal", 2, 1, sockets=2).machine(c), "sockets must be between"),
    ],
)
def test_bad_requests_are_one_clear_error(catalog, call, message):
    with pytest.raises(CohsimError, match=message):
        call(catalog)
