"""Where the shipped data lives: the instance catalog and the committed fits.

In the repository they are `models/` and `calibration/fits/`; in an installed wheel they are
the data packages `cohsim._catalog` and `cohsim._fits` (see pyproject.toml). Both resolve
through importlib.resources, so an installed cohsim works from any working directory.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def _package_dir(package: str) -> Path:
    return Path(str(resources.files(package)))


def catalog_dir() -> Path:
    """The directory holding the instance catalog (`instances/`, `servers/`, `archetypes/`)."""
    return _package_dir("cohsim._catalog")


def fits_dir() -> Path:
    """The directory holding committed calibration fits (JSON)."""
    return _package_dir("cohsim._fits")


def bench_source_dir() -> Path:
    """The directory holding the C sources of the real benchmarks."""
    return _package_dir("cohsim._bench")
