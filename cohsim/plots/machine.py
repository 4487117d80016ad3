"""Pictures of the machine model: its topology and core-to-core latency heat maps.

Every function draws on the `ax` it is given and returns what it drew (matplotlib's helper
convention); `topology_figure` and `c2c_figure` make whole figures for `save.save_figure`.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from cohsim.machine.model import Machine


def plot_topology(m: Machine, ax: Axes) -> dict[str, int]:
    """Sockets as columns of LLC-domain boxes, each holding its cores; SMT shown by a split dot.

    Returns how many sockets, LLC domains and cores were drawn.
    """
    t = m.topology
    per_row = max(1, int(np.ceil(np.sqrt(t.llc_domains_per_socket))))
    rows = int(np.ceil(t.llc_domains_per_socket / per_row))
    box_w, box_h, gap = 1.0, 1.0, 0.25
    sock_w = per_row * (box_w + gap) + gap
    colors = plt.get_cmap("tab20")
    for s in range(t.sockets):
        x0 = s * (sock_w + 0.8)
        ax.add_patch(
            plt.Rectangle((x0, 0), sock_w, rows * (box_h + gap) + gap + 0.4, fill=False, lw=2)
        )
        ax.text(
            x0 + sock_w / 2,
            rows * (box_h + gap) + gap + 0.15,
            f"socket {s}: {t.interconnect} hub",
            ha="center",
            fontsize=8,
        )
        for d in range(t.llc_domains_per_socket):
            bx = x0 + gap + (d % per_row) * (box_w + gap)
            by = gap + (rows - 1 - d // per_row) * (box_h + gap)
            ax.add_patch(plt.Rectangle((bx, by), box_w, box_h, alpha=0.35, color=colors(d % 20)))
            side = int(np.ceil(np.sqrt(t.llc_domain_cores)))
            for c in range(t.llc_domain_cores):
                cx = bx + (c % side + 0.5) * box_w / side
                cy = by + (c // side + 0.5) * box_h / side
                ax.plot(
                    cx,
                    cy,
                    "o",
                    ms=3 if t.threads_per_core == 1 else 4,
                    color="black",
                    fillstyle="full" if t.threads_per_core == 1 else "left",
                )
    if t.sockets > 1:
        ax.annotate(
            "", xy=(sock_w + 0.8, 0.5), xytext=(sock_w, 0.5), arrowprops={"arrowstyle": "<->"}
        )
    ax.set_aspect("equal")
    ax.autoscale()
    ax.axis("off")
    lat = ", ".join(f"{k[:-3]} {v:.0f} ns" for k, v in m.coherence.values().items())
    ax.set_title(
        f"{m.name}: {t.sockets} socket(s), {t.llc_domains} LLC domain(s), {t.cores} "
        f"cores x {t.threads_per_core} threads\n{lat}",
        fontsize=9,
    )
    return {"sockets": t.sockets, "llc_domains": t.llc_domains, "cores": t.cores}


def plot_matrix(matrix: np.ndarray, ax: Axes, title: str, vmax: float | None = None) -> Any:
    """A core-to-core latency heat map (ns); returns the image."""
    img = ax.imshow(matrix, cmap="viridis", vmin=0, vmax=vmax, interpolation="nearest")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("CPU")
    ax.set_ylabel("CPU")
    return img


def c2c_figure(
    model: np.ndarray, measured: np.ndarray | None, name: str, matrix_name: str = ""
) -> Figure:
    """Model (and measured, side by side) core-to-core heat maps with one colour scale."""
    panels = 1 if measured is None else 2
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4.8), squeeze=False)
    vmax = float(
        np.nanmax(
            model
            if measured is None
            else np.fmax(model[: measured.shape[0], : measured.shape[0]], measured)
        )
    )
    shown = model if measured is None else model[: measured.shape[0], : measured.shape[0]]
    img = plot_matrix(shown, axes[0][0], f"model: {name}", vmax)
    if measured is not None:
        plot_matrix(measured, axes[0][1], f"measured: {matrix_name}", vmax)
    fig.colorbar(img, ax=axes[0].tolist(), label="one-way latency (ns)", shrink=0.8)
    return fig


def topology_figure(m: Machine) -> Figure:
    fig, ax = plt.subplots(figsize=(4 + 3 * m.topology.sockets, 4.5))
    plot_topology(m, ax)
    return fig
