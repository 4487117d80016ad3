"""What a sweep writes: tidy CSV (one row per point) and a JSON document (rows + provenance).

Both are made from the rows alone and the options that every row shares, never from how
the points were computed (which workers, which scheduler, how many came from the cache, how
long it took), so the same sweep gives the same bytes wherever it runs. The JSON document
(schema 1) holds the columns, the rows in grid order (each with its inputs' digest, which
covers cohsim's source) and the provenance: cohsim version, seed, replicates, deadline,
engine, kernel model, calibration and runtime. Cells are written one way: floats by repr
(rows round them once, cohsim.sweep.row), bools as true/false.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from cohsim import __version__, provenance
from cohsim.kernel.costs import DEFAULT_KERNEL
from cohsim.sweep import pointcache
from cohsim.sweep.row import COLUMNS, Row
from cohsim.sweep.sweepoptions import SweepOptions

SCHEMA = 1


def _cell(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def csv_text(rows: Sequence[Row]) -> str:
    """Tidy CSV: a header of `COLUMNS`, one line per row, in the rows' order."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([_cell(v) for v in r.to_dict().values()])
    return out.getvalue()


def json_doc(rows: Sequence[Row], options: SweepOptions) -> dict[str, Any]:
    """The sweep's JSON document: columns, rows (grid order) and provenance."""
    run = options.point_run
    return {
        "schema": SCHEMA,
        "kind": "cohsim sweep",
        "columns": list(COLUMNS),
        "rows": [r.to_dict() for r in rows],
        "provenance": {
            "cohsim_version": __version__,
            **pointcache.run_inputs(run),
            "kernel": options.target.kernel or DEFAULT_KERNEL,
            "calibration": options.target.calibration or "committed default fit",
            "runtime": options.runtime,
            "pinned_priors": dict(options.target.pins),
            "points": len(rows),
        },
    }


def json_text(rows: Sequence[Row], options: SweepOptions) -> str:
    """`json_doc` as deterministic JSON text (sorted keys, trailing newline)."""
    return provenance.dumps(json_doc(rows, options))
