"""A sweep's points kept on disk: each finished point is one file, named by its inputs' digest.

A point's row depends only on its inputs, so it is kept in `<dir>/<digest>.json`, where the
digest is the sha256 of every input that can change the answer:

- the machine as TOML (cohsim.machine.catalog.machine_to_toml, after the point's SMT and
  socket variant: another variant is another machine);
- the kernel model file's text, and the calibration: the named fit's text, "none", or (by
  default) the text of every committed fit, since the one that applies is chosen among them;
- the point's strategy, container and layer counts; the run options (seed, replicates,
  deadline, engine, hand-off model, background, priors), the runtime and the pinned priors;
- the cohsim version and a digest of cohsim's source (what a prediction runs and this
  package, not the command line or the plots): changed code makes new files, never a stale
  answer.

A file is written atomically (a temporary file renamed into place) the moment its point is
known, so an interrupted sweep (Ctrl-C, a killed worker or process) has lost only the points
in flight, and never leaves half a file: running it again computes only what is missing.
Each file holds its key and a check: the sha256 of the key and the row as written. A file
that cannot be read, answers another key, or whose row no longer matches its check (edited by
hand) is not believed: a miss, computed again, which `load` reports (`bad`) so that the sweep
warns. A file of another schema (an older cohsim's) is a quiet miss. Values are JSON numbers,
read back bit for bit, so a row from the cache is the row the prediction gives: the same
output bytes, cached or not.

Where: `SweepOptions.cache` if given; else `$COHSIM_CACHE/sweep` (`COHSIM_CACHE=off` turns it
off), else `$XDG_CACHE_HOME/cohsim/sweep`, else `~/.cache/cohsim/sweep`. A folder this process
cannot write in (`writable`) is used read-only: the points it holds are read, new ones are
not kept (the commands say so in one line).

Format history: schema 1, the key and the row; schema 2 (2026-11-27), also the check.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cohsim import __version__, provenance
from cohsim.io import catalog_dir, fits_dir, read_text
from cohsim.kernel import linecache
from cohsim.kernel.costs import DEFAULT_KERNEL, load_kernel
from cohsim.machine.catalog import Catalog, machine_to_toml
from cohsim.predict.options import RunOptions
from cohsim.predict.pins import check as check_pins
from cohsim.sweep.grid import Point

SCHEMA = 2
#: cohsim's packages whose source makes a row (with cohsim's own modules): what a prediction
#: runs, and this package; not the faces above it (cli, plots, plan)
_CODE = ("machine", "lock", "workload", "kernel", "bench", "calibrate", "predict", "sweep")


def default_dir() -> Path | None:
    """The sweep cache's directory from the environment (`sweep/` beside level 2's tables,
    cohsim.kernel.linecache), or None when `COHSIM_CACHE=off`."""
    tables = linecache.cache_dir()
    return None if tables is None else tables.parent / "sweep"


def code_digest() -> str:
    """sha256 over the cohsim source that makes a row (file names too), as the files are now
    (read again each time: about 6 ms)."""
    root = Path(__file__).resolve().parent.parent
    files = sorted([*root.glob("*.py"), *(p for pkg in _CODE for p in (root / pkg).rglob("*.py"))])
    h = hashlib.sha256()
    for p in files:
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


@dataclass(frozen=True)
class Shared:
    """The inputs every point of a sweep shares, read once when the sweep starts."""

    kernel: str  #: the kernel model file's text
    calibration: str  #: the fit's text, "none", or every committed fit's name and text
    runtime: str  #: the container runtime's name
    code: str  #: `code_digest()`
    pins: tuple[tuple[str, float], ...] = ()  #: priors pinned to given values (sorted)

    @classmethod
    def read(
        cls,
        kernel: str | None = None,
        calibration: str | None = None,
        runtime: str = "runc",
        pins: tuple[tuple[str, float], ...] = (),
    ) -> Shared:
        """Read the files now (a missing kernel or fit file is a CohsimError naming it; an
        unknown prior pinned or an impossible value, a UsageError: cohsim.predict.pins)."""
        name = kernel if kernel is not None else DEFAULT_KERNEL
        path = Path(name) if name.endswith(".toml") else catalog_dir() / "kernel" / f"{name}.toml"
        if calibration == "none":
            fit = "none"
        elif calibration is not None:
            fit = read_text(Path(calibration))
        else:
            fits = sorted(fits_dir().glob("*.json"))
            fit = "\0".join(f"{p.name}\0{read_text(p)}" for p in fits)
        if pins:
            check_pins(load_kernel(kernel), dict(pins))
        return cls(read_text(path), fit, runtime, code_digest(), tuple(sorted(pins)))


def run_inputs(run: RunOptions) -> dict[str, Any]:
    """The run options that change a prediction's answer (not how many processes run it)."""
    return {
        "seed": run.seed,
        "replicates": run.replicates,
        "deadline_s": run.deadline_s,
        "engine": run.engine,
        "handoff_model": run.handoff_model,
        "background": run.background,
        "priors": run.priors,
    }


def point_digest(
    point: Point,
    catalog: Catalog,
    run: RunOptions,
    shared: Shared,
) -> str:
    """The key of one point: every input of its prediction (an unknown instance, or a variant
    its machine does not have, is a CohsimError)."""
    doc = {
        "schema": SCHEMA,
        "machine": machine_to_toml(point.machine(catalog)),
        "kernel": shared.kernel,
        "calibration": shared.calibration,
        "point": point.to_dict(),
        "run": run_inputs(run),
        "runtime": shared.runtime,
        "pins": [list(p) for p in shared.pins],
        "cohsim_version": __version__,
        "code": shared.code,
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def check_of(key: str, row: dict[str, Any]) -> str:
    """The check a file keeps beside its row: sha256 of the key and the row's JSON."""
    text = key + "\0" + json.dumps(row, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def load(folder: Path | None, key: str, *, bad: list[Path] | None = None) -> dict[str, Any] | None:
    """The row kept for `key`, or None (no cache, no file, or one that does not answer it).
    A file that is there but is not believed (unreadable, another key, a row edited since it
    was written) is appended to `bad`; one of another schema is not."""
    if folder is None:
        return None
    path = folder / f"{key}.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        doc = None
    if isinstance(doc, dict) and doc.get("schema") != SCHEMA:
        return None  # an older cohsim's file: a quiet miss
    row = doc.get("row") if isinstance(doc, dict) else None
    if (
        isinstance(row, dict)
        and doc is not None
        and doc.get("digest") == key
        and doc.get("check") == check_of(key, row)
    ):
        return row
    if bad is not None:
        bad.append(path)
    return None


def save(folder: Path | None, key: str, row: dict[str, Any]) -> None:
    """Keep `row` for `key` (quietly nothing where the folder cannot be written: the cache
    only saves time; the commands say once when it is read-only, `writable`)."""
    if folder is None:
        return
    doc = {"schema": SCHEMA, "digest": key, "check": check_of(key, row), "row": row}
    try:
        provenance.write_atomic(folder / f"{key}.json", json.dumps(doc, sort_keys=True) + "\n")
    except OSError:
        pass


def writable(folder: Path) -> bool:
    """Whether new points can be kept in `folder` (made, with the folders above it, where
    missing): the nearest existing folder at or above it takes a new file. Tried with a
    nameless temporary file, not read from the modes (root writes in a 0555 folder; nobody
    writes on a read-only mount)."""
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        return False
    try:
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError:
        return False
    return True


def readonly_note(folder: Path | None) -> str | None:
    """The one line a command prints when the cache folder cannot be written, else None."""
    if folder is None or writable(folder):
        return None
    return (
        f"the sweep cache {folder} is read-only: the points it holds are used, "
        "new ones are not kept"
    )
