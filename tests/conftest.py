"""Shared fixtures: the repository's data directories and the shipped catalog."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

from cohsim.machine.catalog import Catalog

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "calibration" / "data"
C2C_DIR = DATA / "core-to-core-latency"

settings.register_profile("cohsim", deadline=None, print_blob=True)
settings.load_profile("cohsim")


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return Catalog()
