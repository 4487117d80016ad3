"""The sweep cache: a point's key changes with every input of its prediction, and a file that
does not answer its key is not believed."""

from __future__ import annotations

import json
from dataclasses import replace

from conftest import copy_package, edit

import cohsim.cache as cohsim_cache
from cohsim.predict.options import RunOptions
from cohsim.sweep import SweepOptions, SweepPoint, pointcache

BASE = SweepPoint("r5.metal", 10, 5)
RUN = RunOptions(seed=1, replicates=2)


def key(catalog, point=BASE, run=RUN, **kw):
    return pointcache.point_digest(point, catalog, run, pointcache.Shared.read(**kw))


def test_the_key_changes_with_every_input(catalog, tmp_path):
    fit = tmp_path / "fit.json"
    fit.write_text("{}")
    keys = [
        key(catalog),
        key(catalog, replace(BASE, instance="m5.metal")),
        key(catalog, replace(BASE, containers=11)),
        key(catalog, replace(BASE, layers=6)),
        key(catalog, replace(BASE, strategy="common-parent")),
        key(catalog, replace(BASE, smt=False)),
        key(catalog, replace(BASE, sockets=1)),
        key(catalog, run=replace(RUN, seed=2)),
        key(catalog, run=replace(RUN, replicates=3)),
        key(catalog, run=replace(RUN, deadline_s=10.0)),
        key(catalog, run=replace(RUN, engine="analytic")),
        key(catalog, runtime="none"),
        key(catalog, calibration="none"),
        key(catalog, calibration=str(fit)),
    ]
    assert len(set(keys)) == len(keys)
    assert all(len(k) == 64 for k in keys)


def test_the_key_ignores_how_a_point_runs(catalog):
    """Processes and the record do not change a row: the same file answers."""
    assert key(catalog, run=replace(RUN, jobs=1)) == key(catalog, run=replace(RUN, jobs=7))
    # sockets=2 on a two-socket machine is the machine itself: the same TOML, but another point
    assert key(catalog) != key(catalog, replace(BASE, sockets=2))


def test_a_machine_file_edit_changes_the_key(catalog, tmp_path):
    text = catalog.path("r5.metal").read_text()
    assert "freq_ghz = 3.1" in text
    edited = tmp_path / "r5.metal.toml"
    edited.write_text(text.replace("freq_ghz = 3.1", "freq_ghz = 3.0", 1))
    same = tmp_path / "same" / "r5.metal.toml"
    same.parent.mkdir()
    same.write_text(text)
    assert key(catalog, SweepPoint(str(same), 10, 5)) != key(
        catalog, SweepPoint(str(edited), 10, 5)
    )


def test_the_source_is_read_when_a_sweep_starts(catalog, monkeypatch):
    """An edit to cohsim's source between two sweeps of one process makes other keys."""
    before = key(catalog)
    monkeypatch.setattr(pointcache, "code_digest", lambda: "edited")
    assert key(catalog) != before


def test_the_code_in_a_key_is_what_a_row_runs(tmp_path, monkeypatch):
    """The source of every module a point's computation imports (the simulation, both engines,
    the fit, the units), not the faces above it; read again at each sweep: an edit to the
    simulation between two makes other keys."""
    names = set(cohsim_cache.sources(pointcache.SOURCE))
    assert {
        "units.py",
        "predict/api.py",
        "kernel/simulation/launch.py",
        "kernel/simulation/mountlock.py",
        "kernel/analytic/burstmodel.py",
        "calibrate/calibration.py",
        "sweep/row.py",
    } <= names
    assert not [n for n in names if n.startswith(("cli/", "plots/", "plan/", "report/"))]
    before = pointcache.code_digest()
    copy = copy_package(tmp_path)
    monkeypatch.setattr(cohsim_cache, "PACKAGE", copy)
    assert pointcache.code_digest() == before
    edit(copy / "kernel" / "simulation" / "mountlock.py")
    assert pointcache.code_digest() != before


def test_load_and_save(tmp_path):
    row = {"a": 0.1 + 0.2, "b": "x", "n": 3}
    pointcache.save(tmp_path, "k1", row)
    assert pointcache.load(tmp_path, "k1") == row  # floats bit for bit
    assert pointcache.load(tmp_path, "k2") is None
    assert pointcache.load(None, "k1") is None
    # a file that answers another key, or is half a file, is not believed
    (tmp_path / "k3.json").write_text((tmp_path / "k1.json").read_text())
    (tmp_path / "k4.json").write_text('{"schema": 2, "digest": "k4", "row": {"a"')
    bad: list = []
    assert pointcache.load(tmp_path, "k3", bad=bad) is None
    assert pointcache.load(tmp_path, "k4", bad=bad) is None
    assert bad == [tmp_path / "k3.json", tmp_path / "k4.json"]
    assert json.loads((tmp_path / "k1.json").read_text())["digest"] == "k1"
    assert not list(tmp_path.glob(".*"))  # no temporary files left


def test_an_entry_edited_by_hand_is_not_believed(tmp_path):
    """Valid JSON, the right key, a row changed since it was written: a miss, reported."""
    pointcache.save(tmp_path, "k1", {"launch_p99_s": 4.5, "digest": "k1"})
    path = tmp_path / "k1.json"
    doc = json.loads(path.read_text())
    assert doc["check"] == pointcache.check_of("k1", doc["row"])
    doc["row"]["launch_p99_s"] = 1.0
    path.write_text(json.dumps(doc))
    bad: list = []
    assert pointcache.load(tmp_path, "k1", bad=bad) is None and bad == [path]
    # an older cohsim's file (schema 1, no check) is a quiet miss
    path.write_text(json.dumps({"schema": 1, "digest": "k1", "row": {"launch_p99_s": 4.5}}))
    assert pointcache.load(tmp_path, "k1", bad=bad) is None and bad == [path]


def test_read_all_parses_what_it_believes_and_warns_once(tmp_path, capsys):
    """The entries kept, parsed; one `parse` refuses (an older layout) left out quietly; files
    not believed left out with one line for them all; a key asked twice read once."""
    for k, v in (("k1", 1), ("k2", "old"), ("k3", 3), ("k4", 4)):
        pointcache.save(tmp_path, k, {"v": v})
    for k in ("k3", "k4"):  # edited since written
        doc = json.loads((tmp_path / f"{k}.json").read_text())
        doc["row"]["v"] = 0
        (tmp_path / f"{k}.json").write_text(json.dumps(doc))

    def parse(doc):
        return int(doc["v"])  # "old": ValueError

    got = pointcache.read_all(tmp_path, ["k1", "k2", "k3", "k1", "k4", "k5"], parse)
    assert got == {"k1": 1}
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"cohsim: warning: {tmp_path / 'k3.json'} and 1 more: does not match its key "
        "(edited since it was written?): not used, computed again"
    ]
    assert pointcache.read_all(None, ["k1"], parse) == {}
    assert capsys.readouterr().err == ""


def test_writable_is_tried_not_read_from_modes(tmp_path, monkeypatch):
    assert pointcache.writable(tmp_path) and pointcache.writable(tmp_path / "new" / "deeper")
    assert pointcache.readonly_note(tmp_path) is None and pointcache.readonly_note(None) is None
    (tmp_path / "file").write_text("")
    assert not pointcache.writable(tmp_path / "file" / "sweep")

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(pointcache.tempfile, "TemporaryFile", refuse)
    assert not pointcache.writable(tmp_path)
    assert pointcache.readonly_note(tmp_path) == (
        f"the sweep cache {tmp_path} is read-only: the points it holds are used, new ones are "
        "not kept"
    )


def test_where_the_cache_lives(monkeypatch, tmp_path):
    monkeypatch.setenv("COHSIM_CACHE", str(tmp_path))
    assert SweepOptions().cache_dir() == tmp_path / "sweep"
    assert SweepOptions(cache=tmp_path / "mine").cache_dir() == tmp_path / "mine"
    assert SweepOptions(cache="off").cache_dir() is None
    monkeypatch.setenv("COHSIM_CACHE", "off")
    assert SweepOptions().cache_dir() is None
    monkeypatch.delenv("COHSIM_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert SweepOptions().cache_dir() == tmp_path / "xdg" / "cohsim" / "sweep"
