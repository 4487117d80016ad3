"""Level 2's answers for level 3 kept on disk: a second run on the same machine asks nothing.

Filling a machine's line-cost table (cohsim.kernel.linecosts) runs 15-17 level-2 simulations,
0.4 s on a 96-CPU machine and 5-11 s on a two-socket one on 2 cores, every time a prediction,
a sweep point or a calibration needs it. The answers depend only on their inputs, so they are
kept in a file named by the digest of every input:

- the machine, as its TOML (cohsim.machine.catalog.machine_to_toml: topology, latencies,
  microarchitecture; an SMT-off or one-socket variant is another machine);
- the level-2 parameters (None: the machine's defaults), the model, the seed, the
  acquisitions asked per query, the reference section and the seqcount writer's gap;
- the source of the code that computes them (cohsim/lock/, cohsim/machine/ and the table's own
  module): any change to level 1 or 2 makes new files, never a stale answer.

A file is JSON: the digest it answers and the values asked, `[kind, count, ns]`. The values are
written with Python's float repr and read back bit for bit, so a table from the cache is the
table the simulations would give: the same bytes out, cache or not. A file that cannot be read
or does not answer its digest is ignored (and written again); writing is atomic, so processes
sharing the directory never see half a file.

Where: `$COHSIM_CACHE` if set (`off` turns the cache off), else `$XDG_CACHE_HOME/cohsim`, else
`~/.cache/cohsim`; the tables are under `linecosts/` there. A directory that cannot be written
only costs the time it would have saved.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from cohsim import provenance
from cohsim.machine.catalog import machine_to_toml
from cohsim.machine.model import Machine

SCHEMA = 1
_CODE = ("lock", "machine")  #: packages of cohsim whose source is part of every key


def cache_dir() -> Path | None:
    """The line-cost cache's directory, or None when `COHSIM_CACHE=off`."""
    env = os.environ.get("COHSIM_CACHE", "")
    if env.lower() == "off":
        return None
    if env:
        return Path(env) / "linecosts"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "cohsim" / "linecosts"


@functools.cache
def code_digest() -> str:
    """sha256 over the source of level 1, level 2 and the table's module (file names too)."""
    root = Path(__file__).resolve().parent.parent
    files = sorted(p for pkg in _CODE for p in (root / pkg).glob("*.py"))
    files.append(root / "kernel" / "linecosts.py")
    h = hashlib.sha256()
    for p in files:
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def digest(machine: Machine, inputs: dict[str, Any]) -> str:
    """The key of one table: the machine, the other inputs (JSON-able), the code."""
    doc = {
        "schema": SCHEMA,
        "machine": machine_to_toml(machine),
        "inputs": inputs,
        "code": code_digest(),
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def params_doc(params: object) -> dict[str, Any] | None:
    """Level-2 parameters as JSON-able fields (None stays None: the machine's defaults)."""
    if params is None:
        return None
    assert dataclasses.is_dataclass(params) and not isinstance(params, type)
    return dataclasses.asdict(params)


def load(key: str) -> dict[tuple[str, int], float] | None:
    """The values asked for `key`, or None (no cache, no file, or a file that does not answer
    it)."""
    d = cache_dir()
    if d is None:
        return None
    try:
        doc = json.loads((d / f"{key}.json").read_text(encoding="utf-8"))
        if doc.get("schema") != SCHEMA or doc.get("digest") != key:
            return None
        return {(str(k), int(n)): float(v) for k, n, v in doc["values"]}
    except (OSError, ValueError, TypeError, KeyError):
        return None


def save(key: str, values: dict[tuple[str, int], float]) -> None:
    """Keep the values asked for `key` (quietly nothing where the directory cannot be
    written)."""
    d = cache_dir()
    if d is None:
        return
    doc = {
        "schema": SCHEMA,
        "digest": key,
        "values": [[k, n, v] for (k, n), v in sorted(values.items())],
    }
    try:
        provenance.write_atomic(d / f"{key}.json", json.dumps(doc) + "\n")
    except OSError:
        pass
