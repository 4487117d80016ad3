"""A package's public names imported on first use (PEP 562), so that importing the package
imports none of the modules behind them: `cohsim` and `cohsim.calibrate` (whose result side
must not import its estimator) export this way."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module `__getattr__` and `__dir__` of `package`: each name of `exports` (name ->
    the module defining it) is imported the first time it is asked for and kept in the
    package's namespace; a name whose module is the subpackage `package.name` is that
    subpackage itself (importing it has bound it there already)."""
    namespace = sys.modules[package].__dict__

    def get(name: str) -> Any:
        where = exports.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(where)
        value = module if where == f"{package}.{name}" else getattr(module, name)
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted({*namespace, *exports})

    return get, names
