"""A sweep's points kept on disk: each finished point is one file, named by its inputs' digest.

A point's row depends only on its inputs, so it is kept in `<dir>/<digest>.json`, where the
digest is the sha256 of every input that can change the answer:

- the machine as TOML (cohsim.machine.catalog.machine_to_toml, after the point's SMT and
  socket variant: another variant is another machine);
- the kernel model file's text, and the calibration: the named fit's text, "none", or (by
  default) the text of every committed fit, since the one that applies is chosen among them;
- the point's strategy, container and layer counts; the run options (seed, replicates,
  deadline, engine, hand-off model, background, priors), the runtime and the pinned priors;
- the cohsim version and a digest of the code that makes a row: the source of this package's
  `compute` (cohsim.sweep.runner, `SOURCE`) and of every cohsim module it imports,
  transitively (what a prediction runs; not the command line or the plots: cohsim.cache reads
  the import graph), read again each time a sweep starts: changed code makes new files,
  never a stale answer.

A file is written atomically (a temporary file renamed into place) the moment its point is
known, so an interrupted sweep (Ctrl-C, a killed worker or process) has lost only the points
in flight, and never leaves half a file: running it again computes only what is missing.
Each file holds its key and a check: the sha256 of the key and the row as written. A file
that cannot be read, answers another key, or whose row no longer matches its check (edited by
hand) is not believed: a miss, computed again, which `load` reports (`bad`) so that the sweep
warns. A file of another schema (an older cohsim's) is a quiet miss. Values are JSON numbers,
read back bit for bit, so a row from the cache is the row the prediction gives: the same
output bytes, cached or not. The key, the file and the write are cohsim.cache's, as for level
2's tables (cohsim.kernel.linecache).

Where: `SweepOptions.cache` if given; else `$COHSIM_CACHE/sweep` (`COHSIM_CACHE=off` turns it
off), else `$XDG_CACHE_HOME/cohsim/sweep`, else `~/.cache/cohsim/sweep`. A folder this process
cannot write in (`writable`) is used read-only: the points it holds are read, new ones are
not kept (the commands say so in one line). The plan's report keeps its full predictions in
the same folder, under keys of their own (cohsim.plan.pointdetail).

Format history: schema 1, the key and the row; schema 2 (2026-11-27), also the check.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from cohsim import __version__, cache
from cohsim.io import catalog_dir, fits_dir, read_text
from cohsim.kernel.costs import DEFAULT_KERNEL, load_kernel
from cohsim.machine.catalog import Catalog, machine_to_toml
from cohsim.predict.options import RunOptions
from cohsim.predict.pins import check as check_pins
from cohsim.sweep.grid import SweepPoint

T = TypeVar("T")

#: the module whose `compute` makes a row: its import graph is the code in every key
SOURCE = "cohsim.sweep.runner"
STORE = cache.Store(schema=2, field="row")
#: the check a file keeps beside its row: sha256 of the key and the row's JSON
check_of = cache.check_of


def default_dir() -> Path | None:
    """The sweep cache's directory from the environment (`sweep/` beside level 2's tables,
    cohsim.kernel.linecache), or None when `COHSIM_CACHE=off`."""
    return cache.folder("sweep")


def code_digest() -> str:
    """sha256 over the cohsim source that makes a row (`SOURCE` and every cohsim module it
    imports; file names too), as the files are now (read again each time: a few ms)."""
    return cache.code_digest(SOURCE)


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
        "replicates": run.n_replicates,
        "deadline_s": run.deadline_s,
        "engine": run.engine,
        "handoff_model": run.handoff_model,
        "background": run.background,
        "priors": run.priors,
    }


def point_digest(
    point: SweepPoint,
    catalog: Catalog,
    run: RunOptions,
    shared: Shared,
) -> str:
    """The key of one point: every input of its prediction (an unknown instance, or a variant
    its machine does not have, is a CohsimError)."""
    doc = {
        "schema": STORE.schema,
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
    return cache.key_of(doc)


def load(folder: Path | None, key: str, *, bad: list[Path] | None = None) -> dict[str, Any] | None:
    """The row kept for `key`, or None (no cache, no file, or one that does not answer it).
    A file that is there but is not believed (unreadable, another key, a row edited since it
    was written) is appended to `bad`; one of another schema is not."""
    row = STORE.load(folder, key, bad=bad)
    return row if isinstance(row, dict) else None


def read_all(
    folder: Path | None,
    keys: Sequence[str],
    parse: Callable[[dict[str, Any]], T],
    store: cache.Store = STORE,
) -> dict[str, T]:
    """Each key's entry kept in `folder` (by `store`: the sweep's rows by default), parsed by
    `parse`, for the keys that have one; an entry `parse` refuses (KeyError, TypeError,
    ValueError: an older layout) is left out, to be computed again. The files not believed
    (another key, edited since they were written) are left out too, with one warning line on
    stderr for them all (a key asked twice is read once)."""
    got: dict[str, T] = {}
    bad: list[Path] = []
    for key in dict.fromkeys(keys):
        doc = store.load(folder, key, bad=bad)
        if isinstance(doc, dict):
            try:
                got[key] = parse(doc)
            except (KeyError, TypeError, ValueError):
                pass  # an older layout: computed again
    if bad:
        more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
        print(
            f"cohsim: warning: {bad[0]}{more}: does not match its key (edited since it was "
            "written?): not used, computed again",
            file=sys.stderr,
        )
    return got


def save(folder: Path | None, key: str, row: dict[str, Any]) -> None:
    """Keep `row` for `key` (quietly nothing where the folder cannot be written: the cache
    only saves time; the commands say once when it is read-only, `writable`)."""
    STORE.save(folder, key, row)


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
