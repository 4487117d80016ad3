"""Running cohsim as pure Python where its simulation modules are compiled (setup.py builds
them with mypyc where it can): with COHSIM_PURE_PYTHON set, cohsim's modules are loaded from
their .py sources, which are installed beside the compiled ones.

For checks: the compiled and the pure-Python simulation must give the same bytes
(tests/kernel/simulation/test_compiled.py), and the tests that reach into the simulation's objects
(replacing a method, subclassing the clock: compiled classes allow neither) run on the
sources.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

#: set (to anything but "" or "0") in the environment: cohsim runs as pure Python
ENV = "COHSIM_PURE_PYTHON"


class SourceFinder(importlib.abc.MetaPathFinder):
    """Finds cohsim's modules as .py sources only, ahead of compiled ones."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not fullname.startswith("cohsim.") or path is None:
            return None
        name = fullname.rpartition(".")[2]
        for entry in path:
            source = os.path.join(entry, name + ".py")
            if os.path.isfile(source):
                return importlib.util.spec_from_file_location(fullname, source)
        return None  # a package, or not cohsim's: the usual finders


def wanted() -> bool:
    """Does the environment ask for pure Python?"""
    return os.environ.get(ENV, "") not in ("", "0")


def install() -> None:
    """Load cohsim's modules from their sources from now on."""
    if not any(isinstance(f, SourceFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, SourceFinder())
