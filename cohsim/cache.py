"""Answers kept on disk, keyed by everything that makes them: one key, one file format, one writer.

A cached answer depends on its inputs and on the code that computes it, so its key hashes both
(dask's tokenize habit: the key is derived, never kept by hand):

- the inputs: `key_of(doc)`, the sha256 of their JSON with sorted keys;
- the code: `code_digest(module)`, the sha256 of the source of the module that computes the
  answer and of every cohsim module it imports, transitively. The imports are read from the
  sources (ast, as tests/test_structure.py reads them): an import inside a function counts,
  and so does each package's `__init__` above a module (importing the module runs it). A module
  the computation comes to import is in the key from the moment its import is written; a
  module it does not reach is not, so editing the CLI keeps level 2's tables.

The sources are the `.py` files of the package folder (`PACKAGE`), named by their path inside
it: a checkout and an install of it give the same digest. A wheel ships them, beside the
modules setup.py compiles with mypyc too, so the digest reads the same files in a compiled
build, a pure one (`COHSIM_PURE_PYTHON`, cohsim._pure) and an editable install. Each file is
read again each time; only the parse of a source is kept per process, under the source's own
bytes, so an edit is never missed (the first digest in a process parses: 0.04 s for level 2's
21 modules, 0.2 s for a sweep point's 100 on a loaded 2-core machine; later ones read and hash
them, 2-14 ms).

An entry is one JSON file `<folder>/<key>.json`: its schema, its key (`digest`), its value, and a
check, the sha256 of the key and the value's JSON (`check_of`). `Store.load` believes a file
only when it answers its key and its value still matches the check: a file copied under
another name, edited by hand or cut short is a miss (computed again and written over) and is
reported; a file of another schema (another cohsim's) is a quiet miss. Values are JSON,
floats written with Python's repr and read back bit for bit: an answer from the cache is the
answer the computation gives. Writing is atomic (cohsim.provenance.write_atomic: a temporary
file renamed into place, with the mode a plain write gives), so processes sharing a folder
never see half a file, and a folder that cannot be written only costs the time it saves.

Where: `$COHSIM_CACHE` if set (`off` turns every cache off), else `$XDG_CACHE_HOME/cohsim`,
else `~/.cache/cohsim`; each kind of answer in a folder of its own there (`folder`).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cohsim import provenance

#: the folder of cohsim's sources (this module's own folder: the package root)
PACKAGE = Path(__file__).resolve().parent
_TOP = "cohsim"


def folder(name: str) -> Path | None:
    """The folder of one kind of cached answer (`linecosts`, `sweep`), or None when
    `COHSIM_CACHE=off`."""
    env = os.environ.get("COHSIM_CACHE", "")
    if env.lower() == "off":
        return None
    if env:
        return Path(env) / name
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "cohsim" / name


# ----- the code in a key -----------------------------------------------------------------------


def source_path(module: str, root: Path) -> Path | None:
    """The .py file of a cohsim module (a package's `__init__.py`) under the package folder
    `root`, or None where there is none (a name imported from a module, not a module)."""
    parts = module.split(".")
    if parts[0] != _TOP:
        return None
    base = root.joinpath(*parts[1:])
    for path in (base.with_name(base.name + ".py") if parts[1:] else None, base / "__init__.py"):
        if path is not None and path.is_file():
            return path
    return None


@functools.cache
def _imports(module: str, is_package: bool, source: bytes) -> tuple[tuple[str, ...], ...]:
    """What a source imports from cohsim, as it reads: `(module,)` for `import cohsim.x`,
    `(module, name, ...)` for `from module import name, ...` (relative imports resolved).
    Kept per process under the source's bytes: the same text parses the same."""
    here = module.split(".") if is_package else module.split(".")[:-1]
    found: list[tuple[str, ...]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(a.name,) for a in node.names if a.name.split(".")[0] == _TOP]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                up = here[: len(here) - node.level + 1]
                base = ".".join([*up, node.module] if node.module else up)
            else:
                base = node.module or ""
            if base.split(".")[0] == _TOP:
                found.append((base, *(a.name for a in node.names)))
    return tuple(found)


def _with_parents(module: str) -> list[str]:
    """The module and every package above it (importing it runs their `__init__` first)."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def sources(*modules: str, root: Path | None = None) -> dict[str, bytes]:
    """The source of `modules` and of every cohsim module they import, transitively, by
    their path inside the package folder (`root`, default `PACKAGE`), sorted by it.
    A module named that has no source is a ValueError (a key over nothing would be wrong)."""
    root = PACKAGE if root is None else root
    todo = [m for name in modules for m in _with_parents(name)]
    seen: set[str] = set()
    out: dict[str, bytes] = {}
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        path = source_path(module, root)
        if path is None:
            if module in modules:
                raise ValueError(f"no source for {module} under {root}")
            continue
        text = path.read_bytes()
        out[path.relative_to(root).as_posix()] = text
        for base, *names in _imports(module, path.name == "__init__.py", text):
            for name in names or [""]:
                sub = f"{base}.{name}" if name else base
                target = sub if name and source_path(sub, root) is not None else base
                todo += _with_parents(target)
    return dict(sorted(out.items()))


def code_digest(*modules: str, root: Path | None = None) -> str:
    """sha256 over the sources `sources(*modules)` reads, with their paths, as they are now."""
    h = hashlib.sha256()
    for name, text in sources(*modules, root=root).items():
        h.update(name.encode() + b"\0" + text + b"\0")
    return h.hexdigest()


def key_of(doc: Mapping[str, Any]) -> str:
    """The key of an answer: sha256 of its inputs' JSON (sorted keys), code digest among them."""
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


# ----- entries ---------------------------------------------------------------------------------


def check_of(key: str, value: Any) -> str:
    """The check an entry keeps beside its value: sha256 of the key and the value's JSON."""
    text = key + "\0" + json.dumps(value, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Store:
    """One kind of entry: its file's schema and the field that holds its value."""

    schema: int  #: the format's number: a file of another is a quiet miss
    field: str = "value"  #: the value's field in the file

    def load(self, where: Path | None, key: str, *, bad: list[Path] | None = None) -> Any | None:
        """The value kept for `key` in folder `where`, or None (no cache, no file, or one that
        does not answer it). A file that is there but is not believed (unreadable, another
        key, a value edited since it was written) is appended to `bad`; one of another schema
        is not."""
        if where is None:
            return None
        path = where / f"{key}.json"
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            doc = None
        if isinstance(doc, dict):
            if doc.get("schema") != self.schema:
                return None  # another cohsim's file: a quiet miss
            value = doc.get(self.field)
            if value is not None and doc.get("digest") == key:
                if doc.get("check") == check_of(key, value):
                    return value
        if bad is not None:
            bad.append(path)
        return None

    def save(self, where: Path | None, key: str, value: Any) -> None:
        """Keep `value` for `key` in folder `where` (made where missing), atomically; quietly
        nothing where it cannot be written (the cache only saves time)."""
        if where is None:
            return
        doc = {"schema": self.schema, "digest": key, "check": check_of(key, value)}
        doc[self.field] = value
        try:
            provenance.write_atomic(where / f"{key}.json", json.dumps(doc, sort_keys=True) + "\n")
        except OSError:
            pass
