"""Reading the files people write, with one-line errors that name the file."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from .errors import CohsimError


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
