"""Measured core-to-core latency matrices: the reader and the index of what each one measured.

The files (calibration/data/core-to-core-latency/, from nviennot/core-to-core-latency and
KCORES/core-to-core-latency-plus) are headerless CSV lower triangles in nanoseconds: row i,
column j < i is the one-way CAS ping-pong latency between Linux CPUs i and j; the diagonal and the
upper triangle are empty. Some files cover only the first CPUs of the machine (truncated).

`matrices.toml` beside them says which catalog machine each matrix was measured on, the family it
belongs to, and on which socket the benchmark's line was homed (the benchmark allocates its line
once, so cores of the other socket see a remotely homed line; see the README's caveat).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cohsim.errors import CohsimError
from cohsim.io import read_text, read_toml


def read_matrix(path: str | Path) -> np.ndarray:
    """The full symmetric matrix (ns, float64, NaN on the diagonal) of a lower-triangle CSV."""
    path = Path(path)
    text = read_text(path)
    rows = [line.rstrip("\r").split(",") for line in text.split("\n")]
    while rows and rows[-1] == [""]:
        rows.pop()
    n = len(rows)
    if n < 2:
        raise CohsimError(f"a matrix needs at least 2 rows, found {n}", str(path))
    out = np.full((n, n), np.nan)
    for i, fields in enumerate(rows):
        where = f"{path}:{i + 1}"
        if len(fields) != n:
            raise CohsimError(f"row has {len(fields)} fields, expected {n} (ragged matrix)", where)
        for j, field in enumerate(fields):
            field = field.strip()
            if j >= i:
                if field:
                    raise CohsimError(
                        f"column {j + 1} is on or above the diagonal but holds "
                        f"{field!r} (expected a lower triangle)",
                        where,
                    )
                continue
            if not field:
                raise CohsimError(
                    f"column {j + 1} is empty below the diagonal (expected a lower triangle)", where
                )
            try:
                value = float(field)
            except ValueError:
                raise CohsimError(f"column {j + 1} is not a number: {field!r}", where) from None
            if not np.isfinite(value) or value <= 0:
                raise CohsimError(f"column {j + 1} must be a positive latency, not {field}", where)
            out[i, j] = out[j, i] = value
    return out


@dataclass(frozen=True)
class MatrixInfo:
    """One measured matrix and what it was measured on."""

    path: Path  #: the CSV file
    machine: str  #: catalog machine it was measured on (its topology numbers the CPUs)
    family: str  #: parameter family (machines of one CPU generation)
    home: int | None  #: socket homing the benchmark's line; None = each pair's own socket
    note: str  #: one line for people


def home_from_text(text: str, where: str) -> int | None:
    """Parse a home policy: "local" (each pair's own socket) or "socketN"."""
    if text == "local":
        return None
    if text.startswith("socket") and text[6:].isdigit():
        return int(text[6:])
    raise CohsimError(f"home must be 'local' or 'socketN', not {text!r}", where)


def home_to_text(home: int | None) -> str:
    return "local" if home is None else f"socket{home}"


def matrix_index(root: str | Path) -> list[MatrixInfo]:
    """Read `matrices.toml` in `root` (the directory holding the matrices)."""
    root = Path(root)
    path = root / "matrices.toml"
    doc = read_toml(path)
    out = []
    for k, entry in enumerate(doc.get("matrix", [])):
        where = f"{path}[matrix {k + 1}]"
        unknown = set(entry) - {"file", "machine", "family", "home", "note"}
        if unknown:
            raise CohsimError(f"unknown key {sorted(unknown)[0]}", where)
        missing = {"file", "machine", "family", "home"} - set(entry)
        if missing:
            raise CohsimError(f"missing key {sorted(missing)[0]}", where)
        out.append(
            MatrixInfo(
                path=root / entry["file"],
                machine=entry["machine"],
                family=entry["family"],
                home=home_from_text(entry["home"], where),
                note=entry.get("note", ""),
            )
        )
    return out
