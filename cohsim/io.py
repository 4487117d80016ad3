"""Files and where they live: reading what people write, finding what the package ships.

Reading: `read_text` and `read_toml` turn a missing, unreadable or invalid file into one
CohsimError line naming it.

Where the shipped data lives: the instance catalog, the committed fits and the benchmarks' C
sources. In the repository they are `models/`, `calibration/fits/` and `calibration/bench/`;
in an installed wheel they are the data packages `cohsim._catalog`, `cohsim._fits` and
`cohsim._bench` (see pyproject.toml). All resolve through importlib.resources, so an installed
cohsim works from any working directory; a checkout's own cohsim imported without being
installed (`python -m` from the repository root beside a non-editable install) reads the
checkout's folders.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from cohsim.errors import CohsimError


def read_text(path: str | Path, what: str = "file") -> str:
    """The file's UTF-8 text; a missing or unreadable file is a CohsimError naming it."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CohsimError(f"no such {what}", str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CohsimError(f"cannot read: {exc}", str(path)) from None


def read_toml(path: str | Path, what: str = "file") -> dict[str, Any]:
    """The parsed TOML document; invalid TOML is a CohsimError with tomllib's line and column."""
    try:
        return tomllib.loads(read_text(path, what))
    except tomllib.TOMLDecodeError as exc:
        raise CohsimError(f"invalid TOML: {exc}", str(path)) from None


#: where each data package sits in a source checkout (pyproject.toml's package-dir)
SOURCE_DIRS = {
    "cohsim._catalog": "models",
    "cohsim._fits": "calibration/fits",
    "cohsim._bench": "calibration/bench",
}


def _package_dir(package: str) -> Path:
    try:
        return Path(str(resources.files(package)))
    except ModuleNotFoundError:
        # cohsim imported from a source checkout that is not installed, e.g. `python -m
        # calibration.analysis...` from the repository root beside a non-editable install:
        # the data packages are the checkout's own folders
        source = Path(__file__).resolve().parents[1] / SOURCE_DIRS[package]
        if source.is_dir():
            return source
        raise


def catalog_dir() -> Path:
    """The directory holding the instance catalog (`instances/`, `servers/`, `archetypes/`)."""
    return _package_dir("cohsim._catalog")


def fits_dir() -> Path:
    """The directory holding committed calibration fits (JSON)."""
    return _package_dir("cohsim._fits")


def bench_source_dir() -> Path:
    """The directory holding the C sources of the real benchmarks."""
    return _package_dir("cohsim._bench")
