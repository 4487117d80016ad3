"""Provenance stamped on every result: version, seed, input digests, wall time.

Results are written as JSON with sorted keys and a trailing newline so that the same inputs
and seed give the same bytes; wall time is the one field that varies and is kept apart
(`wall_s`) so tests can compare everything else.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from cohsim import __version__


def file_digest(path: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def text_digest(text: str) -> str:
    """``sha256:<hex>`` of a string's UTF-8 bytes."""
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def stamp(
    *,
    seed: int | None = None,
    inputs: Iterable[str | os.PathLike[str]] = (),
    **resolved: Any,
) -> dict[str, Any]:
    """The provenance block of a result: cohsim version, seed, input digests, resolved inputs."""
    out: dict[str, Any] = {"cohsim_version": __version__}
    if seed is not None:
        out["seed"] = seed
    digests = {Path(p).name: file_digest(p) for p in inputs}
    if digests:
        out["input_digests"] = digests
    out.update(resolved)
    return out


def dumps(doc: Mapping[str, Any]) -> str:
    """Deterministic JSON text (sorted keys, fixed separators, trailing newline)."""
    return json.dumps(doc, sort_keys=True, indent=2, allow_nan=False) + "\n"


def plain_file_mode() -> int:
    """The mode `open(path, "w")` gives a new file: 0666 less the process's umask (read without
    changing it where Linux shows it, else set and restored at once)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            umask = next(int(ln.split()[1], 8) for ln in f if ln.startswith("Umask:"))
    except (OSError, StopIteration, ValueError, IndexError):
        umask = os.umask(0o022)
        os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: str | os.PathLike[str], text: str, *, make_dirs: bool = True) -> None:
    """Write a file so that it is either complete or absent: never half-written, with the mode
    a plain write gives (`plain_file_mode`). `make_dirs`: make missing folders above it (what a
    cache wants for its own folder); an output a person named passes False, and a missing folder
    is then the OSError of writing there."""
    target = Path(path)
    if make_dirs:
        target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, plain_file_mode())  # mkstemp makes 0600; give the file a normal mode
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
