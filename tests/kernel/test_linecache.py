"""Level 2's tables kept on disk (cohsim.kernel.linecache): read back bit for bit, keyed by
every input, ignored when broken, off when asked."""

from __future__ import annotations

import json

import pytest
from conftest import copy_package, edit

from cohsim import cache
from cohsim.kernel import linecache
from cohsim.kernel.linecosts import LineCosts


def small(catalog, **kw):
    return LineCosts(
        catalog.get("c6gd.metal"), acquisitions_per_thread=4, max_acquisitions=200, **kw
    )


def test_a_second_table_comes_from_the_disk_bit_for_bit(catalog, tmp_path, monkeypatch):
    """The first fill runs level 2 and keeps the table; a second one for the same inputs asks
    level 2 nothing and gives the same floats; another input (seed, SMT) is another file; a
    file that does not answer its digest is ignored and written again."""
    monkeypatch.setenv("COHSIM_CACHE", str(tmp_path))
    first = small(catalog)
    first.prefill()
    assert first.queries > 0 and not first.from_cache
    (kept,) = (tmp_path / "linecosts").iterdir()
    again = small(catalog)
    again.prefill()
    assert again.queries == 0 and again.from_cache and again.table() == first.table()
    for kind in ("spinlock", "writer", "reader"):
        assert again._table(kind) == first._table(kind)
    other = small(catalog, seed=1)
    assert other.key() != first.key()
    m = catalog.get("r5.metal")  # SMT off is another machine
    assert LineCosts(m).key() != LineCosts(m.with_smt(False)).key()
    kept.write_text('{"schema": 2, "digest": "not this one", "values": []}')
    broken = small(catalog)
    broken.prefill()
    assert broken.queries > 0 and not broken.from_cache and broken.table() == first.table()
    assert small(catalog).key() in kept.read_text()  # written again


def test_the_cache_can_be_turned_off(catalog, tmp_path, monkeypatch):
    monkeypatch.setenv("COHSIM_CACHE", "off")
    c = small(catalog)
    c.prefill()
    assert c.queries > 0 and not c.from_cache
    monkeypatch.setenv("COHSIM_CACHE", str(tmp_path / "ro"))
    (tmp_path / "ro").write_text("a file where the directory would be")
    d = small(catalog)
    d.prefill()  # cannot be written: only the time it would have saved is lost
    assert d.queries > 0 and d.table() == c.table()


def test_a_table_edited_by_hand_is_computed_again(catalog, tmp_path, monkeypatch):
    """The right digest, a value changed since it was written: not used, asked of level 2
    again, and written over."""
    monkeypatch.setenv("COHSIM_CACHE", str(tmp_path))
    first = small(catalog)
    first.prefill()
    (kept,) = (tmp_path / "linecosts").iterdir()
    doc = json.loads(kept.read_text())
    assert doc["digest"] == first.key()
    doc["values"][0][2] *= 2
    kept.write_text(json.dumps(doc))
    again = small(catalog)
    again.prefill()
    assert again.queries > 0 and not again.from_cache and again.table() == first.table()
    assert json.loads(kept.read_text())["values"] != doc["values"]  # written over


@pytest.fixture
def fresh_code_digest():
    """linecache's code digest worked out again (it is kept once a process)."""
    linecache.code_digest.cache_clear()
    yield
    linecache.code_digest.cache_clear()


#: what level 2's tables are made of: level 1 (the machine), level 2 (the lock DES and the
#: Markov chain), the unit conversions, the table's own module
LEVEL2_SOURCES = (
    "machine/model.py",
    "machine/catalog.py",
    "lock/handoffsim.py",
    "lock/line.py",
    "lock/markov.py",
    "units.py",
    "kernel/linecosts.py",
)


def test_the_key_changes_with_the_code_of_levels_1_and_2(
    catalog, tmp_path, monkeypatch, fresh_code_digest
):
    """An edit to any module level 2's table is computed with (imported by
    cohsim.kernel.linecosts, directly or not) makes another key; one to a module it does not
    import (the CLI, the plots) keeps it. Run on copies of the package, as an installed cohsim
    reads its own."""
    here = small(catalog).key()
    for name in (*LEVEL2_SOURCES, "cli/app.py", "plots/lock.py"):
        copy = copy_package(tmp_path / name.replace("/", "_"))
        edit(copy / name)
        monkeypatch.setattr(cache, "PACKAGE", copy)
        linecache.code_digest.cache_clear()
        changed = small(catalog).key() != here
        assert changed == (name in LEVEL2_SOURCES), name
