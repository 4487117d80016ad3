"""Subpackages that are also their entry point: `cohsim.predict` callable as `predict`,
`cohsim.plan` as `plan`.

`from cohsim import predict` must give something to call, and `import cohsim.predict.api`
must keep working: Python binds a subpackage to its parent's attribute of the same name
whenever it is imported, so a function of that name at the top would be replaced by the
subpackage (or, put there after it, would break `import cohsim.plan.api as api`, which looks
the subpackage up as that attribute). So the subpackage is made callable instead: calling it
calls its entry point, with the same arguments and result.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any


class EntryPackage(ModuleType):
    """A package module that, called, calls its `__entry__` function."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        entry: Callable[..., Any] = self.__dict__["__entry__"]
        return entry(*args, **kwargs)


def make_callable(name: str, entry: Callable[..., Any]) -> None:
    """Make the package `name` (already in sys.modules) call `entry` when called."""
    module = sys.modules[name]
    module.__entry__ = entry  # type: ignore[attr-defined]
    module.__class__ = EntryPackage
