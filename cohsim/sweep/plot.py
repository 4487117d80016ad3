"""A sweep's picture: launch time against the number of containers, one curve per machine.

Each curve is one instance (variant, strategy and layer count) across the sweep's container
counts: the launch p99 as a solid line with its interval as a band, the p50 dashed with a
lighter band, and the deadline as a horizontal line where it is near the data. The
functions follow cohsim.plots' convention: they draw on the `ax` they are given and return
what they drew; `sweep_figure` makes the figure that `cohsim sweep --plot` saves
(cohsim.plots.save).
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

import cohsim.plots  # noqa: F401  (selects the file-only backend)
from cohsim.sweep.row import Row

Curve = tuple[str, str, str, int]  #: (instance, variant, strategy, layers)


def curves(rows: Sequence[Row]) -> dict[Curve, list[Row]]:
    """The rows grouped into curves (first-seen order), each sorted by container count."""
    out: dict[Curve, list[Row]] = {}
    for r in rows:
        out.setdefault((r.instance, r.variant, r.strategy, r.layers), []).append(r)
    return {k: sorted(v, key=lambda r: r.containers) for k, v in out.items()}


def _label(key: Curve, keys: Sequence[Curve]) -> str:
    """The curve's name, leaving out what every curve shares."""
    parts = [key[0]]
    for i, fmt in ((1, "{}"), (2, "{}"), (3, "{} layers")):
        if len({k[i] for k in keys}) > 1:
            parts.append(fmt.format(key[i]))
    return ", ".join(parts)


def plot_launch_vs_containers(rows: Sequence[Row], ax: Axes) -> list[str]:
    """Launch p99 (solid, with band) and p50 (dashed, lighter band) against containers, one
    colour per curve; returns the curves' labels in the order drawn."""
    groups = curves(rows)
    labels = []
    cmap = plt.get_cmap("tab20" if len(groups) > 10 else "tab10")
    for i, (key, rs) in enumerate(groups.items()):
        color = cmap(i % cmap.N)
        x = [r.containers for r in rs]
        label = _label(key, list(groups))
        ax.plot(x, [r.launch_p99_s for r in rs], color=color, marker="o", ms=3, label=label)
        ax.fill_between(
            x, [r.launch_p99_lo_s for r in rs], [r.launch_p99_hi_s for r in rs],
            color=color, alpha=0.2, lw=0,
        )  # fmt: skip
        ax.plot(x, [r.launch_p50_s for r in rs], color=color, ls="--", lw=1)
        ax.fill_between(
            x, [r.launch_p50_lo_s for r in rs], [r.launch_p50_hi_s for r in rs],
            color=color, alpha=0.08, lw=0,
        )  # fmt: skip
        labels.append(label)
    top = max((r.launch_p99_hi_s for r in rows), default=0.0)
    deadlines = sorted({r.deadline_s for r in rows})
    if len(deadlines) == 1 and deadlines[0] <= 2 * top:
        ax.axhline(deadlines[0], color="red", ls=":", lw=1, label=f"deadline {deadlines[0]:g} s")
    ax.set_xlabel("containers launched at once")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("launch latency (s): p99 solid, p50 dashed")
    ax.set_title("launch time vs burst size (bands: intervals)", fontsize=9)
    ax.grid(alpha=0.3)
    if labels:
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return labels


def sweep_figure(rows: Sequence[Row]) -> Figure:
    """The launch-vs-containers plot of a sweep as a figure."""
    fig, ax = plt.subplots(figsize=(9, 5))
    plot_launch_vs_containers(rows, ax)
    engines = sorted({r.engine for r in rows})
    seeds = sorted({r.seed for r in rows})
    fig.suptitle(
        f"cohsim sweep: {len(rows)} points, engine {'/'.join(engines)}, "
        f"seed {'/'.join(map(str, seeds))}",
        fontsize=10,
    )
    return fig
