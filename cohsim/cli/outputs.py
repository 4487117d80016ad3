"""Output paths on the command line: refused before any work when they cannot be written.

Every writer the commands call (`--plot`, `trace synth --out`, `calibrate --out`, `bench
--out`) writes atomically, a temporary file beside the target renamed into place, so a failed
write leaves no half-written file; each turns a refusal of the file system into one error
line naming the path (`writing`). What atomic writing cannot save is the work done before
the write fails, so a command checks its output paths first (`check_file`, `check_dir`): a
file path that is a directory, a folder that is a file, a folder that does not exist or that
cannot be written in is a CohsimError naming the path before anything runs. No folder is made
for an output file; an output directory (`bench --out DIR`, `sweep --cache DIR`) is made when
written, one level only: its parent must exist, as for `mkdir` without `-p`. A written file
gets the mode a plain file write gives (0666 less the umask), whatever its kind.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cohsim.errors import CohsimError


def _check_folder(folder: Path, path: str) -> None:
    """`folder` must be an existing directory that takes a new file (tried with a nameless
    temporary file, gone when closed)."""
    if not folder.exists():
        raise CohsimError(f"no such directory: {folder} (make it first)", path)
    if not folder.is_dir():
        raise CohsimError(f"cannot write a file in {folder} (not a directory)", path)
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise CohsimError(
            f"cannot write a file in {folder} ({exc.strerror or exc})", path
        ) from None


def check_file(path: str) -> None:
    """A file can be written at `path` (as far as can be told without writing it)."""
    p = Path(path)
    if p.is_dir():
        raise CohsimError("is a directory, not a file to write", path)
    _check_folder(p.parent, path)


def check_dir(path: str) -> None:
    """Files can be written in the directory `path`, or it can be made in its existing parent."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise CohsimError("is not a directory", path)
    _check_folder(p if p.exists() else p.absolute().parent, path)


def check_cache_dir(path: str) -> None:
    """A cache folder: an existing directory, or one that can be made in its existing parent.
    An existing one that cannot be written in is not refused: it is used read-only
    (cohsim.sweep.pointcache); one that does not exist and cannot be made is."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise CohsimError("is not a directory", path)
    if not p.exists():
        _check_folder(p.absolute().parent, path)


@contextmanager
def writing(path: str | os.PathLike[str]) -> Iterator[None]:
    """Within it, an OSError (the file system refusing a write) is a CohsimError naming `path`."""
    try:
        yield
    except OSError as exc:
        raise CohsimError(f"cannot write: {exc.strerror or exc}", str(path)) from None


def check_plot(path: str | None) -> None:
    """`--plot FILE`, if given: a format cohsim draws in, at a path that takes a file."""
    if path:
        from cohsim.plots.save import check_figure_path  # matplotlib only when plotting

        check_figure_path(path)
        check_file(path)
