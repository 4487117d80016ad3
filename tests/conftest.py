"""Shared fixtures: the repository's data directories and the shipped catalog.

Before anything runs, the tests check that the cohsim they import is this working tree: a
developer who installed cohsim without `-e` and then edited it would otherwise test the stale
installed copy and see old behaviour pass.
"""

from __future__ import annotations

import atexit
import importlib.machinery
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

import cohsim
from cohsim.machine.catalog import Catalog
from cohsim.measure import programs

# Level 2's tables on disk (cohsim.kernel.linecache): the tests keep theirs in a directory of
# their own, not the user's cache, and start each run without one.
if "COHSIM_CACHE" not in os.environ:
    os.environ["COHSIM_CACHE"] = tempfile.mkdtemp(prefix="cohsim-test-cache-")
    atexit.register(shutil.rmtree, os.environ["COHSIM_CACHE"], True)

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "calibration" / "data"


def _calibration_package() -> None:
    """Make the repository's `calibration` folder (analysis and reports, not shipped) importable
    as a package where cohsim is installed rather than edited in place (CI): a module whose
    path is that folder, without putting the repository on sys.path (that would shadow the
    installed, compiled cohsim with the tree's sources)."""
    if importlib.util.find_spec("calibration") is not None:
        return
    spec = importlib.machinery.ModuleSpec("calibration", None, is_package=True)
    spec.submodule_search_locations = [str(REPO / "calibration")]
    sys.modules["calibration"] = importlib.util.module_from_spec(spec)


_calibration_package()
C2C_DIR = DATA / "core-to-core-latency"

#: what the wheel ships, by where it lies in the working tree and in the installed package
_SHIPPED = (
    ("cohsim", "cohsim", "**/*.py"),
    ("models", "cohsim/_catalog", "**/*.toml"),
    ("calibration/fits", "cohsim/_fits", "*.json"),
    ("calibration/bench", "cohsim/_bench", "*.c"),
)


def stale_files(installed_root: Path) -> list[str]:
    """The working tree's shipped files that differ from (or are missing in) the installed
    package under `installed_root` (the directory holding `cohsim/`), and installed modules
    the working tree no longer has."""
    stale = []
    for tree, installed, pattern in _SHIPPED:
        here = {p.relative_to(REPO / tree): p for p in (REPO / tree).glob(pattern)}
        there_dir = installed_root / installed
        there = {p.relative_to(there_dir): p for p in there_dir.glob(pattern)}
        for rel, path in sorted(here.items()):
            if "__pycache__" in rel.parts:
                continue
            other = there.get(rel)
            if other is None or other.read_bytes() != path.read_bytes():
                stale.append(f"{tree}/{rel}")
        gone = sorted(set(there) - set(here))
        # the data packages (cohsim/_catalog, ...) lie inside the installed cohsim/: not modules
        gone = [rel for rel in gone if not rel.parts[0].startswith("_") or len(rel.parts) == 1]
        stale += [f"{installed}/{rel} (gone from the tree)" for rel in gone]
    return stale


def pytest_sessionstart(session: pytest.Session) -> None:
    installed_root = Path(cohsim.__file__).resolve().parent.parent
    if installed_root == REPO:
        return  # an editable install or a run from the tree: the tests see the working tree
    stale = stale_files(installed_root)
    if stale:
        raise pytest.UsageError(
            f"the installed cohsim ({installed_root / 'cohsim'}) is not this working tree: "
            f"{len(stale)} file(s) differ, e.g. {stale[0]}. Install it editable "
            '(pip install -e ".[dev]") or reinstall before testing.'
        )


def copy_package(where: Path) -> Path:
    """A copy of this cohsim's package folder (its .py files, no bytecode) under `where`, as
    an installed cohsim holds it (tests of the caches' keys edit it)."""
    dst = where / "cohsim"
    src = Path(cohsim.__file__).resolve().parent
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    return dst


def edit(path: Path) -> None:
    """A change that does nothing but is a change: a comment at the end of a source."""
    path.write_text(path.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")


settings.register_profile("cohsim", deadline=None, print_blob=True)
settings.load_profile("cohsim")


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return Catalog()


@pytest.fixture(scope="session")
def cache_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment with a build cache of the session's own (the benchmark tests)."""
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path_factory.mktemp("xdg-cache"))}


@pytest.fixture(scope="session")
def exes(cache_env: dict[str, str]) -> dict[str, Path]:
    """Every benchmark built once in that cache."""
    if shutil.which(os.environ.get("CC", "cc").split()[0]) is None:
        pytest.skip("no C compiler")
    return {b: programs.build(b, env=cache_env) for b in programs.BENCHES}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `pure_python` replace methods of the simulation's objects or subclass its
    clock, which compiled classes refuse: where cohsim.kernel is compiled (setup.py) they are
    skipped here and run on the sources by tests/kernel/simulation/test_compiled.py."""
    from cohsim.kernel.simulation import clock

    if (clock.__file__ or "").endswith(".py"):
        return
    skip = pytest.mark.skip(reason="cohsim.kernel is compiled: test_compiled.py runs this")
    for item in items:
        if "pure_python" in item.keywords:
            item.add_marker(skip)
