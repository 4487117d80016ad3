"""Level 2's answers for level 3 kept on disk: a second run on the same machine asks nothing.

Filling a machine's line-cost table (cohsim.kernel.linecosts) runs 15-17 level-2 simulations,
0.4 s on a 96-CPU machine and 5-11 s on a two-socket one on 2 cores, every time a prediction,
a sweep point or a calibration needs it. The answers depend only on their inputs, so they are
kept in a file named by the digest of every input (cohsim.cache: the key, the file, the write):

- the machine, as its TOML (cohsim.machine.catalog.machine_to_toml: topology, latencies,
  microarchitecture; an SMT-off or one-socket variant is another machine);
- the level-2 parameters (None: the machine's defaults), the model, the seed, the
  acquisitions asked per query, the reference section and the seqcount writer's gap;
- the code that computes them: the source of cohsim.kernel.linecosts (`SOURCE`) and of every
  cohsim module it imports, transitively (level 1 and 2, the units, ...: read from the
  import graph, not a list kept here), taken once a process: the code the process runs.

A file holds the digest it answers, the values asked, `[kind, count, ns]`, and their check.
The values are written with Python's float repr and read back bit for bit, so a table from the
cache is the table the simulations would give: the same bytes out, cache or not. A file that
cannot be read, does not answer its digest or was edited since it was written is ignored (and
written again); writing is atomic, so processes sharing the directory never see half a file.

Where: `$COHSIM_CACHE` if set (`off` turns the cache off), else `$XDG_CACHE_HOME/cohsim`, else
`~/.cache/cohsim`; the tables are under `linecosts/` there. A directory that cannot be written
only costs the time it would have saved.

Format history: schema 1, the digest and the values; schema 2 (2026-11-27), also the check.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any

from cohsim import cache
from cohsim.machine.catalog import machine_to_toml
from cohsim.machine.model import Machine

#: the module that computes the tables: its import graph is the code in every key
SOURCE = "cohsim.kernel.linecosts"
STORE = cache.Store(schema=2, field="values")


def cache_dir() -> Path | None:
    """The line-cost cache's directory, or None when `COHSIM_CACHE=off`."""
    return cache.folder("linecosts")


@functools.cache
def code_digest(root: Path | None = None) -> str:
    """sha256 over the source of `SOURCE` and every cohsim module it imports (file names
    too), under the package folder `root` (default: this cohsim's), once a process."""
    return cache.code_digest(SOURCE, root=root)


def digest(machine: Machine, inputs: dict[str, Any]) -> str:
    """The key of one table: the machine, the other inputs (JSON-able), the code."""
    doc = {
        "schema": STORE.schema,
        "machine": machine_to_toml(machine),
        "inputs": inputs,
        "code": code_digest(),
    }
    return cache.key_of(doc)


def params_doc(params: object) -> dict[str, Any] | None:
    """Level-2 parameters as JSON-able fields (None stays None: the machine's defaults)."""
    if params is None:
        return None
    assert dataclasses.is_dataclass(params) and not isinstance(params, type)
    return dataclasses.asdict(params)


def load(key: str) -> dict[tuple[str, int], float] | None:
    """The values asked for `key`, or None (no cache, no file, or a file that does not answer
    it)."""
    values = STORE.load(cache_dir(), key)
    if values is None:
        return None
    try:
        return {(str(k), int(n)): float(v) for k, n, v in values}
    except (ValueError, TypeError):
        return None


def save(key: str, values: dict[tuple[str, int], float]) -> None:
    """Keep the values asked for `key` (quietly nothing where the directory cannot be
    written)."""
    STORE.save(cache_dir(), key, [[k, n, v] for (k, n), v in sorted(values.items())])
