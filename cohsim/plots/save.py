"""Writing a figure to a file: atomically, and one error line naming the file when it cannot.

`save_figure` writes the figure beside its target under a temporary name and renames it into
place, so a failed plot never leaves half a file, with the mode a plain file write gives (as
every output of cohsim); no missing folder is made. A file name matplotlib is not asked to
write (`FORMATS`), a missing folder or a file system that refuses either step is a CohsimError
naming the path.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from cohsim.errors import CohsimError
from cohsim.provenance import plain_file_mode

FORMATS = (".png", ".svg", ".pdf")  #: the plot files cohsim writes, by extension


def check_figure_path(path: str | Path) -> Path:
    """`path` as a Path if it names a file format cohsim writes, else a CohsimError."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise CohsimError(f"plot file must end in {', '.join(FORMATS)}", str(path))
    return path


def _cannot(exc: OSError, path: Path) -> CohsimError:
    why = f"no such directory: {path.parent}" if isinstance(exc, FileNotFoundError) else None
    return CohsimError(f"cannot write the plot: {why or exc.strerror or exc}", str(path))


def save_figure(fig: Figure, path: str | Path) -> None:
    """Write `fig` to `path` (PNG, SVG or PDF by extension) atomically, then close it."""
    try:
        path = check_figure_path(path)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=path.suffix)
    except OSError as exc:
        plt.close(fig)
        raise _cannot(exc, Path(path)) from None
    except BaseException:
        plt.close(fig)
        raise
    os.close(fd)
    try:
        os.chmod(tmp, plain_file_mode())  # mkstemp makes 0600: a plot gets a plain file's mode
        # Fixed metadata keeps the bytes stable from run to run.
        meta: dict[str, Any] = {"Software": None} if path.suffix.lower() == ".png" else {}
        fig.savefig(tmp, dpi=110, bbox_inches="tight", metadata=meta)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _cannot(exc, path) from None
        raise
    finally:
        plt.close(fig)
