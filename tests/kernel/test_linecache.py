"""Level 2's tables kept on disk (cohsim.kernel.linecache): read back bit for bit, keyed by
every input, ignored when broken, off when asked."""

from __future__ import annotations

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
    kept.write_text('{"schema": 1, "digest": "not this one", "values": []}')
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
