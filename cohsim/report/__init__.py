"""The plan's report: one self-contained HTML file (`cohsim plan --html FILE`).

`content` computes what the report shows beyond the plan's table (curves, fixes, full
predictions of the top rows, the priors), `figures` draws it as embedded PNGs, `html` writes
the document; `write_report(path, gather(plan, evaluate))` writes the file atomically.
"""

from __future__ import annotations

import os

from cohsim.errors import CohsimError
from cohsim.provenance import write_atomic
from cohsim.report.content import ReportData, gather
from cohsim.report.html import render, title

__all__ = ["ReportData", "gather", "render", "title", "write_report"]


def write_report(path: str | os.PathLike[str], data: ReportData) -> None:
    """Render the report and write it to `path`: complete or not at all (a refusal of the
    file system is a CohsimError naming the path)."""
    text = render(data)
    try:
        write_atomic(path, text, make_dirs=False)
    except OSError as exc:
        raise CohsimError(f"cannot write the report: {exc.strerror or exc}", str(path)) from None
