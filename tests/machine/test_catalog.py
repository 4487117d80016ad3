"""The instance catalog: every file loads, cites its sources, round-trips; bad files are refused."""

from __future__ import annotations

import csv
import re

import pytest
from conftest import DATA, REPO
from hypothesis import given
from test_model import machines

from cohsim.errors import CohsimError
from cohsim.machine.catalog import Catalog, load_machine, machine_from_dict, machine_to_toml
from cohsim.machine.parts import CACHE_KEYS

#: Every machine file of the catalog, by name (what Catalog().get takes).
MACHINE_FILES = sorted(
    n.stem for n in (REPO / "models").rglob("*.toml") if n.parent.name in ("instances", "servers")
)

GOOD = """schema = 1
name = "tiny"
kind = "server"
vendor = "Test"
cpu_model = "Test CPU"
family = "test"

[topology]
interconnect = "chiplet"
sockets = 1
numa_nodes = 1
cores_per_socket = 16
threads_per_core = 2
llc_domain_cores = 8

[microarch]
uarch = "Test"
pause_cycles = 64
freq_ghz = 3.0

[coherence]
smt_ns = 10.0
same_llc_ns = 25.0
cross_llc_ns = 100.0

[sources]
topology = "assumption: a test machine"
microarch = "assumption: a test machine"
coherence = "assumption: a test machine"
"""


def test_catalog_covers_every_instance_in_the_reference_table(catalog):
    with open(DATA / "reference" / "instances.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 29
    for row in rows:
        m = catalog.get(row["instance"])
        assert m.kind == "instance"
        assert m.topology.cores == int(row["cores"])
        assert m.topology.threads_per_core == int(row["threads_per_core"])
        assert m.vcpus == int(row["vcpus"])
        assert m.topology.interconnect == row["interconnect"]
        for col, attr in (
            ("sockets", "sockets"),
            ("numa_nodes", "numa_nodes"),
            ("llc_domain_cores", "llc_domain_cores"),
        ):
            if row[col] != "unknown":
                assert getattr(m.topology, attr) == int(row[col]), (row["instance"], col)
            else:  # the file must say the value is assumed
                assert "assumption" in m.sources["topology"], row["instance"]


def test_measured_servers_are_in_the_catalog(catalog):
    servers = {m.name for m in catalog.machines() if m.kind == "server"}
    assert {
        "epyc-9654-2s-smtoff",
        "epyc-9454-2s",
        "xeon-w9-3475X-1s",
        "xeon-8358-2s-smtoff",
        "xeon-8360Y-2s",
        "xeon-gold-6336Y-2s",
        "epyc-7763-2s",
        "epyc-7773X-1s",
        "epyc-7742-2s",
        "xeon-gold-6242-2s",
        "xeon-e5-2695v4-2s",
    } <= servers


def test_every_number_cites_a_real_file_or_says_it_is_assumed(catalog):
    path_re = re.compile(r"calibration/data/[\w./-]+\.(?:csv|json|md)")
    for m in catalog.machines():
        for key, text in m.sources.items():
            files = path_re.findall(text)
            assert files or text.startswith("assumption"), (m.name, key, text)
            for f in files:
                assert (REPO / f).is_file(), (m.name, key, f)
        assert {"topology", "microarch.pause_cycles", "microarch.freq_ghz"} <= set(m.sources)
        for key in m.coherence.values():
            assert f"coherence.{key}" in m.sources, (m.name, key)


def test_archetypes_name_a_machine_of_their_kind(catalog):
    for kind in ("mesh", "chiplet", "cmn"):
        a = catalog.archetype(kind)
        assert catalog.get(a.instance).topology.interconnect == kind
    with pytest.raises(CohsimError, match="unknown architecture"):
        catalog.archetype("ring")


def test_unknown_name_suggests_close_ones(catalog):
    with pytest.raises(CohsimError, match=r"did you mean m7a\.24xlarge"):
        catalog.get("m7a.24xlarg")


@pytest.mark.parametrize("name", MACHINE_FILES)
def test_catalog_files_round_trip(catalog, name, tmp_path):
    m = catalog.get(name)
    path = tmp_path / f"{name}.toml"
    path.write_text(machine_to_toml(m))
    again = load_machine(path)
    assert again == m and again.sources == m.sources


@given(machines())
def test_random_machines_round_trip(m):
    import tomllib

    doc = tomllib.loads(
        machine_to_toml(m).replace(
            "[sources]", "[sources]\ntopology = 'a'\nmicroarch = 'a'\ncoherence = 'a'"
        )
    )
    doc["kind"] = "instance"
    assert machine_from_dict(doc, "x") == m


def test_good_file_loads(tmp_path):
    p = tmp_path / "tiny.toml"
    p.write_text(GOOD)
    m = load_machine(p)
    assert m.vcpus == 32 and m.topology.llc_domains == 2


@pytest.mark.parametrize(
    "edit, message",
    [
        (('family = "test"', 'family = "test"\ncolour = "red"'), r"unknown key colour"),
        (("sockets = 1", 'sockets = "one"'), r"topology\.sockets must be a int, not str"),
        (("freq_ghz = 3.0\n", ""), r"missing key microarch\.freq_ghz"),
        (
            ("same_llc_ns = 25.0", "same_llc_ns = -25.0"),
            r"coherence\.same_llc_ns must not be negative",
        ),
        (("cross_llc_ns = 100.0\n", ""), r"cross_llc_ns is required"),
        (('coherence = "assumption: a test machine"\n', ""), r"coherence\.smt_ns has no source"),
        (("schema = 1", "schema = 7"), r"schema 7 is not supported"),
        (("[coherence]", "[coherence\n"), r"invalid TOML"),
        (("[microarch]", "[microarch]\nturbo_ghz = 4.0"), r"unknown key microarch\.turbo_ghz"),
        (
            ("freq_ghz = 3.0\n", "freq_ghz = 3.0\nl2_kib = 1024.0\n"),
            r"l2_kib given without l2_load_ns, llc_load_ns: give all three",
        ),
    ],
)
def test_bad_files_fail_with_one_line_naming_file_and_key(tmp_path, edit, message):
    p = tmp_path / "tiny.toml"
    p.write_text(GOOD.replace(*edit, 1))
    with pytest.raises(CohsimError, match=message) as err:
        load_machine(p)
    assert str(err.value).startswith(str(p)) and "\n" not in str(err.value)


WALKS = """
[walks]
children_from = [0, 500, 2000]
children_scale = [0.4, 0.8, 2.0]
"""
WALKS_SOURCE = 'walks = "assumption: a test machine"\n'


def test_a_file_with_walks_loads_and_round_trips(tmp_path):
    p = tmp_path / "tiny.toml"
    p.write_text(GOOD.replace("\n[sources]", WALKS + "\n[sources]") + WALKS_SOURCE)
    m = load_machine(p)
    assert m.walks.children == ((0.0, 0.4), (500.0, 0.8), (2000.0, 2.0)) and not m.walks.peers
    assert load_machine(p).walks and not load_machine(_good(tmp_path)).walks
    back = tmp_path / "back.toml"
    back.write_text(machine_to_toml(m))
    assert load_machine(back) == m


def test_a_file_with_caches_loads_and_round_trips(tmp_path):
    caches = "l2_kib = 2048.0\nl2_load_ns = 4.4\nllc_load_ns = 37.0\n"
    sources = "".join(f'"microarch.{k}" = "assumption: a test machine"\n' for k in CACHE_KEYS)
    p = tmp_path / "tiny.toml"
    p.write_text(GOOD.replace("freq_ghz = 3.0\n", "freq_ghz = 3.0\n" + caches) + sources)
    m = load_machine(p)
    assert m.microarch.caches_known and m.microarch.llc_load_ns == 37.0
    back = tmp_path / "back.toml"
    back.write_text(machine_to_toml(m))
    assert load_machine(back) == m
    assert not load_machine(_good(tmp_path)).microarch.caches_known


def _good(tmp_path):
    p = tmp_path / "plain.toml"
    p.write_text(GOOD)
    return p


@pytest.mark.parametrize(
    "walks, source, message",
    [
        (WALKS, "", r"walks has no source"),
        (WALKS.replace("[0, 500, 2000]", "[0, 500]"), WALKS_SOURCE, r"differ in length"),
        (WALKS.replace("[0, 500, 2000]", "[100, 500, 2000]"), WALKS_SOURCE, r"must start at 0"),
        (WALKS.replace("[0, 500, 2000]", "[0, 2000, 500]"), WALKS_SOURCE, r"and increase"),
        (WALKS.replace("[0.4, 0.8, 2.0]", "[0.4, 0, 2.0]"), WALKS_SOURCE, r"must be positive"),
        (WALKS.replace("[0.4, 0.8, 2.0]", '["a"]'), WALKS_SOURCE, r"must be a number"),
        (WALKS.replace("children_scale", "kids_scale"), WALKS_SOURCE, r"unknown key walks\.kids"),
        (WALKS.replace("[0.4, 0.8, 2.0]", "[]"), WALKS_SOURCE, r"non-empty array"),
        (WALKS, '"walks.kids_from" = "assumption: x"\n', r"sources\.walks\.kids_from names no"),
        ("", WALKS_SOURCE, r"sources\.walks names no parameter"),
    ],
)
def test_bad_walks_fail_with_one_line(tmp_path, walks, source, message):
    p = tmp_path / "tiny.toml"
    p.write_text(GOOD.replace("\n[sources]", walks + "\n[sources]") + source)
    with pytest.raises(CohsimError, match=message) as err:
        load_machine(p)
    assert str(err.value).startswith(str(p)) and "\n" not in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(CohsimError, match="no such file"):
        load_machine(tmp_path / "nope.toml")


def test_files_are_read_when_asked_for_and_a_misnamed_one_is_refused_then(tmp_path):
    """A catalog indexes its files by name and reads one when it is asked for: a broken file
    costs nothing until it is used, then it is one clear error naming it."""
    (tmp_path / "instances").mkdir()
    (tmp_path / "instances" / "tiny.toml").write_text(GOOD)
    (tmp_path / "instances" / "other.toml").write_text(GOOD)  # says name = "tiny"
    catalog = Catalog(tmp_path)
    assert catalog.names() == ["other", "tiny"] and catalog.get("tiny").name == "tiny"
    with pytest.raises(CohsimError, match="does not match the file name") as err:
        catalog.get("other")
    assert str(err.value).startswith(str(tmp_path / "instances" / "other.toml"))
    with pytest.raises(CohsimError, match="does not match the file name"):
        catalog.machines()


def test_duplicate_names_are_refused(tmp_path):
    for sub in ("instances", "servers"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "tiny.toml").write_text(GOOD)
    with pytest.raises(CohsimError, match="also defined"):
        Catalog(tmp_path)


@pytest.mark.parametrize("name", MACHINE_FILES)
def test_catalog_machines_are_physically_ordered(catalog, name):
    """Symmetric positive latencies; SMT < same LLC < other LLC <= cross-socket; counts agree."""
    import numpy as np

    from cohsim.machine.parts import PairClass

    m = catalog.get(name)
    lat = m.latency_matrix(0)
    off = ~np.eye(m.vcpus, dtype=bool)
    assert np.allclose(lat, lat.T) and (lat[off] > 0).all()
    c = m.class_latency_ns(0)
    get = [c.get(k) for k in (PairClass.SMT, PairClass.SAME_LLC, PairClass.CROSS_LLC)]
    present = [v for v in get if v is not None]
    assert present == sorted(present) and len(set(present)) == len(present)
    if PairClass.CROSS_SOCKET in c:
        assert c[PairClass.CROSS_SOCKET] >= max(present)
    t = m.topology
    assert m.vcpus == t.sockets * t.cores_per_socket * t.threads_per_core
