"""Pictures of the lock hand-off level: latency and the home agent's queue against threads.

Every function draws on the `ax` it is given and returns what it drew;
`cohsim.plots.save.save_figure` writes the file atomically.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from cohsim.lock.params import HandoffResult


def plot_latency(results: Sequence[HandoffResult], ax: Axes, label: str = "") -> list[Line2D]:
    """p50 and mean acquisition latency (log scale) against thread count; returns the lines."""
    n = [r.threads for r in results]
    tag = f"{label} " if label else ""
    lines = ax.plot(n, [max(r.p50_ns, 1e-3) for r in results], "o-", label=f"{tag}p50")
    lines += ax.plot(n, [max(r.mean_ns, 1e-3) for r in results], "s--", label=f"{tag}mean")
    ax.set_xlabel("threads")
    ax.set_ylabel("acquisition latency (ns)")
    ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return lines


def plot_home_queue(results: Sequence[HandoffResult], ax: Axes) -> list[Line2D]:
    """Mean and maximum requests at the home agent against thread count; returns the lines."""
    n = [r.threads for r in results]
    lines = ax.plot(n, [r.home_queue_mean for r in results], "o-", label="mean")
    lines += ax.plot(n, [r.home_queue_max for r in results], "^:", label="max")
    ax.set_xlabel("threads")
    ax.set_ylabel("requests at the home agent")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return lines


def sweep_figure(results: Sequence[HandoffResult], title: str) -> Figure:
    """Latency and home-queue panels for one pause-bench sweep."""
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    plot_latency(results, a1)
    plot_home_queue(results, a2)
    fig.suptitle(title)
    return fig
