"""Fixtures shared by the benchmark tests: one build cache for the session, and every benchmark
built in it once."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from cohsim.bench import runner as bench


@pytest.fixture(scope="session")
def cache_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path_factory.mktemp("xdg-cache"))}


@pytest.fixture(scope="session")
def exes(cache_env: dict[str, str]) -> dict[str, Path]:
    if shutil.which(os.environ.get("CC", "cc").split()[0]) is None:
        pytest.skip("no C compiler")
    return {b: bench.build(b, env=cache_env) for b in bench.BENCHES}
