"""cohsim.io's data directories: from the installed data packages, or from a source checkout's
own folders where the package is imported from the checkout without being installed."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from cohsim import io

REPO = Path(__file__).resolve().parents[1]


def test_installed_data_packages_hold_the_catalog_fits_and_bench_sources() -> None:
    assert (io.catalog_dir() / "servers").is_dir()
    assert any(io.fits_dir().glob("*.json"))
    assert (io.bench_source_dir() / "mount_bench.c").is_file()


def test_a_source_checkout_not_installed_reads_its_own_folders(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing(package: str) -> None:
        raise ModuleNotFoundError(f"No module named {package!r}")

    monkeypatch.setattr(resources, "files", missing)
    # as imported from this checkout (an installed cohsim's io.py sits in site-packages)
    monkeypatch.setattr(io, "__file__", str(REPO / "cohsim" / "io.py"))
    assert io.catalog_dir() == REPO / "models"
    assert io.fits_dir() == REPO / "calibration/fits"
    assert io.bench_source_dir() == REPO / "calibration/bench"
