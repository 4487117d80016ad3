"""Pictures of what a launch prediction rests on: where a container's launch time goes (the
breakdown by mechanism, cohsim.predict.breakdown) and which unknowns move its p99 most (a
tornado chart of the sensitivity ranking, cohsim.predict.unknowns). Each function draws on the
`ax` it is given and returns what it drew."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from cohsim.predict import Prediction
from cohsim.units import ns_to_ms, s_to_ns


def _ms(s: float) -> float:
    return ns_to_ms(s_to_ns(s))


def plot_breakdown(p: Prediction, ax: Axes) -> list[Any]:
    """The mean and the slowest container's launch, one stacked bar each, by mechanism (ms),
    the fixed base left out (its size is in the title)."""
    b = p.breakdown
    if b is None:
        ax.text(0.5, 0.5, "no breakdown", ha="center")
        return []
    cats = [c for c in b.mean_s if b.mean_s[c] or b.slowest_s[c]]
    cmap = plt.get_cmap("tab20")
    drawn = []
    for row, (label, part) in enumerate((("mean", b.mean_s), ("slowest", b.slowest_s))):
        left = 0.0
        for i, c in enumerate(cats):
            width = _ms(part[c])
            lbl = c.replace("_", " ") if row == 0 else None
            drawn.append(ax.barh(label, width, left=left, color=cmap(i % 20), label=lbl))
            left += width
    ax.set_xlabel("ms of a container's launch (the fixed base not shown)")
    ax.set_title(f"launch breakdown (+ {_ms(b.base_s):g} ms fixed base)", fontsize=9)
    ax.legend(fontsize=6, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    return drawn


def plot_tornado(p: Prediction, ax: Axes) -> list[Any]:
    """Each ranked unknown's launch p99 at its low and its high end, around the nominal
    replicate's p99, largest swing at the top."""
    rows = list(p.sensitivity)
    if not rows:
        ax.text(0.5, 0.5, "no ranking (run with --explain)", ha="center")
        return []
    nominal = float(np.percentile(p.per_container_s, 99))  # the nominal replicate's
    drawn = []
    for y, r in enumerate(reversed(rows)):
        for end, color in ((r.launch_p99_low_s, "tab:blue"), (r.launch_p99_high_s, "tab:red")):
            drawn.append(ax.barh(y, end - nominal, left=nominal, color=color, alpha=0.8))
    ax.axvline(nominal, color="black", lw=1)
    ax.set_yticks(range(len(rows)), [r.prior.key for r in reversed(rows)], fontsize=7)
    ax.set_xlabel("launch p99 (s): blue at the prior's low end, red at its high end")
    ax.set_title(
        f"unknowns by their effect on p99 (seed noise {p.sensitivity_noise_s:.3f} s)",
        fontsize=9,
    )
    return drawn


def explain_figure(p: Prediction) -> Figure:
    """The breakdown above the tornado chart."""
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(9, 7.5), gridspec_kw={"height_ratios": [1, 2.2]}
    )
    plot_breakdown(p, top)
    plot_tornado(p, bottom)
    fig.suptitle(f"{p.machine}: {p.containers} containers, what the launch rests on", fontsize=10)
    fig.tight_layout()
    return fig
