"""The picture of a fit: each residual's measured value against its fitted (simulated) one.

`plot_fit` draws on a matplotlib Axes the caller owns (`FitResult.plot` passes it on), so
reading or making a fit never imports matplotlib; `cohsim.plots` draws the library's other
figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: (metric, marker) in the order drawn
_MARKERS = (
    ("stride_ns", "o"),
    ("containers_per_s", "s"),
    ("op_mean_ns", "x"),
    ("p50_ns", "^"),
    ("acquisitions_per_s", "v"),
)


def plot_fit(residuals: Sequence[dict[str, Any]], instance: str, ax: Any) -> list[Any]:
    """Measured vs fitted (log-log), one marker per metric, on `ax`; returns the artists
    drawn. `residuals`: a fit's residual rows (`FitResult.residuals`)."""
    artists = []
    for metric, marker in _MARKERS:
        pts = [(r["measured"], r["fitted"]) for r in residuals if r["metric"] == metric]
        if pts:
            m, f = zip(*pts, strict=True)
            artists.append(ax.scatter(m, f, marker=marker, s=14, label=metric))
    vals = [v for r in residuals for v in (r["measured"], r["fitted"]) if v > 0]
    if vals:
        lo, hi = min(vals) / 1.5, max(vals) * 1.5
        artists += ax.plot([lo, hi], [lo, hi], "k:", lw=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("measured")
    ax.set_ylabel("fitted (simulated)")
    ax.set_title(f"{instance}: calibration fit")
    ax.legend(fontsize="small")
    return artists
