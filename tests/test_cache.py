"""Answers kept on disk (cohsim.cache): the key's code comes from the import graph of what
computes the answer, an entry is believed only when it answers its key, a write is atomic."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import copy_package, edit

from cohsim import cache, provenance


def tiny(root: Path, files: dict[str, str]) -> Path:
    """A package named cohsim under `root`, of the given files (path: text)."""
    for name, text in files.items():
        path = root / "cohsim" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "cohsim"


TINY = {
    "__init__.py": "",
    "top.py": "import os\n\ndef f():\n    from cohsim.pkg import mid  # deferred\n",
    "pkg/__init__.py": "",
    "pkg/mid.py": "from . import leaf\nfrom cohsim import __version__, errors\n",
    "pkg/leaf.py": "X = 1\n",
    "errors.py": "",
    "other.py": "import cohsim.pkg.leaf\n",
}


def test_the_sources_are_the_import_graph(tmp_path):
    """What `top` imports, transitively: a deferred import, a relative one, a name from a
    package (its __init__), a module from a package; the packages above each; not `other`,
    which nothing imports, nor the standard library."""
    root = tiny(tmp_path, TINY)
    assert list(cache.sources("cohsim.top", root=root)) == [
        "__init__.py",
        "errors.py",
        "pkg/__init__.py",
        "pkg/leaf.py",
        "pkg/mid.py",
        "top.py",
    ]
    assert list(cache.sources("cohsim.other", root=root)) == [
        "__init__.py",
        "other.py",
        "pkg/__init__.py",
        "pkg/leaf.py",
    ]
    with pytest.raises(ValueError, match="no source for cohsim.gone"):
        cache.sources("cohsim.gone", root=root)


def test_an_edit_to_a_module_imported_transitively_changes_the_key(tmp_path):
    root = tiny(tmp_path, TINY)
    before = cache.code_digest("cohsim.top", root=root)
    edit(root / "other.py")  # not imported: the same key
    assert cache.code_digest("cohsim.top", root=root) == before
    edit(root / "pkg" / "leaf.py")  # top -> pkg.mid -> pkg.leaf
    after = cache.code_digest("cohsim.top", root=root)
    assert after != before
    # a new import is followed at once (the parse is kept under the source's bytes)
    (root / "pkg" / "leaf.py").write_text("from cohsim import other\n", encoding="utf-8")
    assert "other.py" in cache.sources("cohsim.top", root=root)
    edit(root / "other.py")
    assert cache.code_digest("cohsim.top", root=root) != after


def test_the_real_graph_and_an_installed_copy(tmp_path):
    """Level 2's table module reaches the units and levels 1 and 2, not the faces above it;
    a copy of the package elsewhere (an installed wheel) gives the same digest, compiled
    modules beside the sources or not, and an edit to units.py in it another one."""
    names = cache.sources("cohsim.kernel.linecosts")
    level2 = {"units.py", "machine/model.py", "lock/handoffsim.py", "kernel/linecache.py"}
    assert level2 <= set(names)
    assert not [n for n in names if n.startswith(("cli/", "plots/", "predict/", "sweep/"))]
    mine = cache.code_digest("cohsim.kernel.linecosts")
    copy = copy_package(tmp_path)
    assert cache.code_digest("cohsim.kernel.linecosts", root=copy) == mine
    (copy / "kernel" / "linecosts.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    assert cache.code_digest("cohsim.kernel.linecosts", root=copy) == mine
    edit(copy / "units.py")
    assert cache.code_digest("cohsim.kernel.linecosts", root=copy) != mine


def test_a_key_is_the_inputs_json():
    assert cache.key_of({"a": 1, "b": [1.5]}) == cache.key_of({"b": [1.5], "a": 1})
    assert cache.key_of({"a": 1}) != cache.key_of({"a": 2})


def test_where_the_answers_live(tmp_path, monkeypatch):
    monkeypatch.setenv("COHSIM_CACHE", str(tmp_path))
    assert cache.folder("linecosts") == tmp_path / "linecosts"
    monkeypatch.setenv("COHSIM_CACHE", "OFF")
    assert cache.folder("linecosts") is None
    monkeypatch.delenv("COHSIM_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.folder("sweep") == tmp_path / "xdg" / "cohsim" / "sweep"


STORE = cache.Store(schema=3)


def test_an_entry_that_does_not_answer_its_key_is_not_used(tmp_path):
    """Read back bit for bit; a value edited by hand, a file copied under another key's name,
    half a file: not used, and reported; another schema, or no file: a quiet miss."""
    value = [["writer", 4, 0.1 + 0.2]]
    STORE.save(tmp_path, "k1", value)
    assert STORE.load(tmp_path, "k1") == value
    path = tmp_path / "k1.json"
    doc = json.loads(path.read_text())
    assert doc["digest"] == "k1" and doc["check"] == cache.check_of("k1", value)
    doc["value"][0][2] = 0.25  # the right key, a value changed since
    path.write_text(json.dumps(doc))
    shutil.copy(path, tmp_path / "k2.json")
    (tmp_path / "k3.json").write_text('{"schema": 3, "digest": "k3", "value": [')
    bad: list[Path] = []
    for key in ("k1", "k2", "k3"):
        assert STORE.load(tmp_path, key, bad=bad) is None
    assert bad == [tmp_path / "k1.json", tmp_path / "k2.json", tmp_path / "k3.json"]
    STORE.save(tmp_path, "k4", value)
    assert cache.Store(schema=2).load(tmp_path, "k4", bad=bad) is None
    assert STORE.load(tmp_path, "k5", bad=bad) is None and STORE.load(None, "k4") is None
    assert len(bad) == 3


def test_a_write_is_atomic(tmp_path, monkeypatch):
    """A write that fails, or a process killed before the rename, leaves the entry that was
    there whole and no temporary file; a new entry has a plain file's mode."""
    STORE.save(tmp_path, "k", {"a": 1})
    path = tmp_path / "k.json"
    assert path.stat().st_mode & 0o777 == provenance.plain_file_mode()

    def fail(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(provenance.os, "replace", fail)
    STORE.save(tmp_path, "k", {"a": 2})  # quietly not kept
    assert STORE.load(tmp_path, "k") == {"a": 1}

    def killed(src: str, dst: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(provenance.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        STORE.save(tmp_path, "k", {"a": 3})
    assert STORE.load(tmp_path, "k") == {"a": 1}
    assert sorted(os.listdir(tmp_path)) == ["k.json"]
    monkeypatch.undo()
    STORE.save(tmp_path / "new" / "deeper", "k", {"a": 4})  # folders made
    assert STORE.load(tmp_path / "new" / "deeper", "k") == {"a": 4}
    (tmp_path / "file").write_text("")
    STORE.save(tmp_path / "file", "k", {"a": 5})  # cannot be written: nothing, quietly
