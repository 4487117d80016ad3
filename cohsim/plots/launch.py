"""Pictures of a launch prediction: the latency CDF, who held the mount locks when, and the
mount table over time. Each function draws on the `ax` it is given and returns what it drew."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from cohsim.predict import Prediction
from cohsim.units import NS_PER_MS


def plot_cdf(p: Prediction, ax: Axes) -> Any:
    """Launch latency CDF over containers, with the deadline."""
    xs = np.sort(np.asarray(p.per_container_s))
    ys = np.arange(1, len(xs) + 1) / len(xs)
    (line,) = ax.step(xs, ys, where="post", label=p.machine)
    if p.deadline_s <= 2 * xs[-1]:  # show the deadline when it is near the data
        ax.axvline(p.deadline_s, color="red", ls="--", lw=1, label=f"deadline {p.deadline_s:g} s")
    ax.set_xlabel("launch latency (s)")
    ax.set_ylabel("fraction of containers")
    ax.set_title("launch latency CDF", fontsize=9)
    ax.legend(fontsize=7)
    return line


def plot_ownership(p: Prediction, ax: Axes, limit: int = 4000) -> int:
    """namespace_sem and mount_lock hold intervals per thread (the first `limit` of each)."""
    rec = p.record
    if rec is None:
        ax.text(0.5, 0.5, "no record", ha="center")
        return 0
    tids = sorted({t for t, _, _ in rec.ns_holds} | {t for t, _, _ in rec.ml_holds})
    row = {t: i for i, t in enumerate(tids)}
    drawn = 0
    for holds, color, h in ((rec.ns_holds, "tab:blue", 0.8), (rec.ml_holds, "tab:red", 0.4)):
        per_row: dict[int, list[tuple[float, float]]] = {}
        for t, a, b in holds[:limit]:
            per_row.setdefault(t, []).append((a / NS_PER_MS, max(b - a, 1) / NS_PER_MS))
        for t, segs in per_row.items():  # one call per row: thousands of bars stay fast
            ax.broken_barh(segs, (row[t] - h / 2, h), color=color)
            drawn += len(segs)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("container thread")
    ax.set_title("lock ownership: namespace_sem (blue), mount_lock (red)", fontsize=9)
    return drawn


def plot_mount_table(p: Prediction, ax: Axes) -> Any:
    """Mounts in the table over time."""
    rec = p.record
    if rec is None or not rec.mount_table:
        ax.text(0.5, 0.5, "no record", ha="center")
        return None
    t = np.array([x for x, _ in rec.mount_table]) / NS_PER_MS
    n = np.array([y for _, y in rec.mount_table])
    (line,) = ax.step(t, n, where="post")
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("mounts")
    ax.set_title(f"mount table (peak {p.peak_mount_table})", fontsize=9)
    return line


def launch_figure(p: Prediction) -> Figure:
    """The three panels side by side."""
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    plot_cdf(p, axes[0])
    plot_ownership(p, axes[1])
    plot_mount_table(p, axes[2])
    wl = p.workload.get("strategy", p.workload.get("trace", ""))
    fig.suptitle(f"{p.machine}: {p.containers} containers, {wl}", fontsize=10)
    return fig
