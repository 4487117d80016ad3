"""The machine model against every measured core-to-core matrix, and prediction for a machine
nobody measured (leave-the-machine-out within its family)."""

from __future__ import annotations

import pytest
from conftest import C2C_DIR

from cohsim.machine.c2c import compare, detect_home, fit, predict_from_family
from cohsim.machine.matrix import matrix_index, read_matrix

INDEX = {i.path.name: i for i in matrix_index(C2C_DIR)}


@pytest.fixture(scope="module")
def matrices():
    return {name: read_matrix(info.path) for name, info in INDEX.items()}


@pytest.mark.parametrize("name", sorted(INDEX))
def test_catalog_model_matches_its_matrix(catalog, matrices, name):
    """Per-class medians within 10%, per-pair median absolute error at most 15%."""
    info = INDEX[name]
    c = compare(catalog.get(info.machine), matrices[name], info.home, name)
    for cls in c.classes:
        assert abs(cls.pct_error) <= 10.0, (name, cls)
    assert c.median_abs_pct_error <= 15.0, name


@pytest.mark.parametrize("name", sorted(INDEX))
def test_catalog_numbers_are_what_the_fit_command_gives(catalog, matrices, name):
    """The catalog's latencies for a measured machine are exactly `cohsim c2c --fit`'s output,
    and the home socket recorded in matrices.toml is the one the data points to."""
    info = INDEX[name]
    m = catalog.get(info.machine)
    assert detect_home(m, matrices[name], name) == info.home
    assert fit(m, matrices[name], info.home, name).coherence == m.coherence


def test_remote_home_is_visible_in_amd_two_socket_matrices(catalog, matrices):
    c = compare(catalog.get("c6a.metal"), matrices["aws_c6a.metal_epyc-7R13_2s.csv"], 0)
    by = {s.pair_class: s for s in c.classes}
    assert by["remote_home"].measured_median_ns > 1.7 * by["cross_llc"].measured_median_ns
    assert by["remote_home"].model_ns > 1.7 * by["cross_llc"].model_ns
    # ignoring the home prices 3,840 remote pairs at half their measured latency
    wrong = compare(catalog.get("c6a.metal"), matrices["aws_c6a.metal_epyc-7R13_2s.csv"], None)
    assert {s.pair_class: s for s in wrong.classes}["cross_llc"].pct_error < -25


def test_ccx_structure_of_amd_parts(catalog, matrices):
    """CCX size 4 (Rome), 6 (Genoa 9454) and 8 (Milan, Genoa 9654) all show in the data."""
    for machine, matrix, ccx in (
        ("epyc-7742-2s", "epyc-7742_rome_2s.csv", 4),
        ("epyc-9454-2s", "epyc-9454_genoa_2s.csv", 6),
        ("epyc-7763-2s", "epyc-7763_milan_2s.csv", 8),
    ):
        m = catalog.get(machine)
        assert m.topology.llc_domain_cores == ccx
        meas = matrices[matrix]
        inside = meas[1:ccx, 0].max()
        outside = meas[ccx, 0]
        assert outside > 2.5 * inside, machine


FAMILY = {  # target -> its own matrix and the other machines of its family (issue 2)
    "c5.metal": ("aws_c5.metal_xeon-8275CL_2s.csv", ["xeon-gold-6242-2s", "xeon-gold-6242-1s"]),
    "c6i.metal": (
        "aws_c6i.metal_xeon-8375C_2s.csv",
        ["xeon-8358-2s-smtoff", "xeon-8360Y-2s", "xeon-gold-6336Y-2s"],
    ),
    "c6a.metal": ("aws_c6a.metal_epyc-7R13_2s.csv", ["epyc-7763-2s", "epyc-7773X-1s"]),
}
# The one known miss: the only two-socket Milan matrix we have (EPYC 7763, KCORES) measures
# 304 ns across sockets, the c6a.metal (7R13) 197 ns; a family median cannot bridge that.
KNOWN_MISS = {("c6a.metal", "cross_socket"), ("c6a.metal", "remote_home")}


CLASSES = {
    "c5.metal": ("smt", "same_llc", "cross_socket"),
    "c6i.metal": ("smt", "same_llc", "cross_socket"),
    "c6a.metal": ("smt", "same_llc", "cross_llc", "cross_socket", "remote_home"),
}


def _prediction_cases():
    for target, (matrix, members) in FAMILY.items():
        for cls in CLASSES[target]:
            marks = (
                [
                    pytest.mark.xfail(
                        strict=True,
                        reason="EPYC 7763 cross-socket 304 ns vs 7R13 197 ns: see KNOWN_MISS",
                    )
                ]
                if (target, cls) in KNOWN_MISS
                else []
            )
            yield pytest.param(target, matrix, members, cls, marks=marks, id=f"{target}-{cls}")


@pytest.mark.parametrize("target, matrix, members, cls", list(_prediction_cases()))
def test_unmeasured_machine_predicted_from_its_family(
    catalog, matrices, target, matrix, members, cls
):
    """Per-class medians within 20% when the machine's own matrix is left out."""
    predicted = predict_from_family(catalog.get(target), [catalog.get(n) for n in members])
    c = compare(predicted, matrices[matrix], INDEX[matrix].home, matrix)
    by = {s.pair_class: s for s in c.classes}
    assert set(by) == set(CLASSES[target])
    assert abs(by[cls].pct_error) <= 20.0, by[cls]
