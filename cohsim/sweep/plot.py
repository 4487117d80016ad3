"""A sweep's picture: launch time against the number of containers, one curve per machine.

One panel per strategy and layer count (small multiples, so a whole-catalog sweep stays
readable); in each, one curve per machine (instance and hardware variant) across the
sweep's container counts: the launch p99 as a solid line with its interval as a band, the
p50 dashed with a lighter band, and the deadline as a dotted line where it is near the data.
A machine keeps its colour in every panel, and one legend names them. Past `MAX_BANDS`
curves in a panel the bands would hide each other: they are left out, and the panel's
title says so. The functions follow cohsim.plots' convention: they draw on the `ax` they
are given and return what they drew; `sweep_figure` makes the figure that
`cohsim sweep --plot` saves (cohsim.plots.save).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

import cohsim.plots  # noqa: F401  (selects the file-only backend)
from cohsim.sweep.row import Row

MAX_BANDS = 8  #: the most curves in a panel drawn with their interval bands
Machine = tuple[str, str]  #: (instance, variant)
Panel = tuple[str, int]  #: (strategy, layers)


def panels(rows: Sequence[Row]) -> dict[Panel, dict[Machine, list[Row]]]:
    """The rows by panel and machine (first-seen order), each curve sorted by containers."""
    out: dict[Panel, dict[Machine, list[Row]]] = {}
    for r in rows:
        out.setdefault((r.strategy, r.layers), {}).setdefault((r.instance, r.variant), []).append(r)
    return {
        p: {m: sorted(rs, key=lambda r: r.containers) for m, rs in ms.items()}
        for p, ms in out.items()
    }


def machine_label(m: Machine) -> str:
    return m[0] if m[1] == "base" else f"{m[0]} ({m[1]})"


def plot_launch_vs_containers(
    curves: dict[Machine, list[Row]], ax: Axes, colors: dict[Machine, Any] | None = None
) -> list[str]:
    """Launch p99 (solid, with band) and p50 (dashed, lighter band) against containers, one
    curve per machine; returns the curves' labels in the order drawn."""
    bands = len(curves) <= MAX_BANDS
    labels = []
    for i, (m, rs) in enumerate(curves.items()):
        color = (colors or {}).get(m, f"C{i % 10}")
        x = [r.containers for r in rs]
        label = machine_label(m)
        ax.plot(x, [r.launch_p99_s for r in rs], color=color, marker="o", ms=3, label=label)
        ax.plot(x, [r.launch_p50_s for r in rs], color=color, ls="--", lw=1)
        if bands:
            ax.fill_between(x, [r.launch_p99_lo_s for r in rs], [r.launch_p99_hi_s for r in rs],
                            color=color, alpha=0.2, lw=0)  # fmt: skip
            ax.fill_between(x, [r.launch_p50_lo_s for r in rs], [r.launch_p50_hi_s for r in rs],
                            color=color, alpha=0.08, lw=0)  # fmt: skip
        labels.append(label)
    rows = [r for rs in curves.values() for r in rs]
    top = max((r.launch_p99_hi_s if bands else r.launch_p99_s for r in rows), default=0.0)
    deadlines = sorted({r.deadline_s for r in rows})
    if len(deadlines) == 1 and deadlines[0] <= 2 * top:
        ax.axhline(deadlines[0], color="red", ls=":", lw=1, label=f"deadline {deadlines[0]:g} s")
    ax.set_xlabel("containers launched at once")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("launch (s): p99 solid, p50 dashed")
    ax.grid(alpha=0.3)
    return labels


def sweep_figure(rows: Sequence[Row]) -> Figure:
    """The launch-vs-containers plot of a sweep: a panel per strategy and layer count."""
    groups = panels(rows)
    machines = list(dict.fromkeys(m for ms in groups.values() for m in ms))
    cmap = plt.get_cmap("tab10" if len(machines) <= 10 else "tab20")
    colors = {m: cmap(i % cmap.N) for i, m in enumerate(machines)}
    ncols = min(3, len(groups)) or 1
    nrows = max(1, math.ceil(len(groups) / ncols))
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(5.2 * ncols, 3.8 * nrows), squeeze=False, sharey=True
    )
    for ax, ((strategy, layers), curves) in zip(axes.flat, groups.items(), strict=False):
        plot_launch_vs_containers(curves, ax, colors)
        note = "" if len(curves) <= MAX_BANDS else f" (bands left out: {len(curves)} curves)"
        ax.set_title(f"{strategy}, {layers} layers{note}", fontsize=9)
    for ax in list(axes.flat)[len(groups) :]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if labels:
        fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 0.95), fontsize=6,
                   frameon=False, ncols=max(1, math.ceil(len(labels) / 45)))  # fmt: skip
    engines = "/".join(sorted({r.engine for r in rows}))
    seeds = "/".join(str(s) for s in sorted({r.seed for r in rows}))
    fig.suptitle(f"cohsim sweep: {len(rows)} points, engine {engines}, seed {seeds}", fontsize=10)
    fig.tight_layout()
    return fig
