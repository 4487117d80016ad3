"""Pictures of a launch prediction: the latency CDF, who held the mount locks when, and the
mount table over time. Each function draws on the `ax` it is given and returns what it drew.

The CDF draws every replicate (the nominal one bold, the drawn ones thin) and the p50 and p99
the prediction reports, with their intervals, so the picture and the text agree. The other
two panels show one replicate, the nominal one (replicate 0), and say so, both over the whole
simulated burst (its length in the title): the lock timeline, with holds closer than the
panel resolves drawn as one bar (named in the title), and the mount table with that
replicate's own peak (and the largest over the replicates, where that is another number).
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from cohsim.kernel.simulation.records import LaunchRecord
from cohsim.predict import Prediction
from cohsim.units import NS_PER_MS

#: the ownership panel's time resolution: the whole burst over this many steps (about the
#: panel's width in pixels at the figure's 100 dpi); holds closer than one step are drawn as
#: one bar, at least one step wide, so that a burst of any length draws whole and every hold
#: shows
STEPS = 1000


def _replicate_style(i: int, n: int) -> dict[str, Any]:
    """Replicate `i` of `n`'s line: the nominal one bold, the drawn ones thin, one legend
    entry for them all."""
    if i == 0:
        return {"color": "C0", "lw": 1.6, "label": "replicate 0 (nominal parameters)"}
    more = f"replicates 1-{n - 1}" if n > 2 else "replicate 1"
    label = f"{more} (drawn parameters)" if i == 1 else "_nolegend_"
    return {"color": "0.6", "lw": 0.8, "label": label}


def plot_cdf(p: Prediction, ax: Axes) -> list[Any]:
    """Launch latency CDF over containers, one step curve per replicate, the reported p50
    and p99 with their intervals, and the deadline."""
    reps = p.replicate_launch_s or (p.per_container_s,)
    drawn: list[Any] = []
    for i, launches in enumerate(reps):
        xs = np.sort(np.asarray(launches))
        ys = np.arange(1, len(xs) + 1) / len(xs)
        (line,) = ax.step(xs, ys, where="post", **_replicate_style(i, len(reps)))
        drawn.append(line)
    for i, (key, y) in enumerate((("p50", 0.5), ("p99", 0.99))):
        iv = p.launch_s[key]
        label = "reported p50, p99 [interval]" if i == 0 else "_nolegend_"
        bar = ax.errorbar(
            [iv.value], [y], xerr=[[iv.value - iv.low], [iv.high - iv.value]],
            fmt="o", color="black", ms=4, capsize=3, label=label,
        )  # fmt: skip
        drawn.append(bar)
    top = max(max(r) for r in reps)
    if p.deadline_s <= 2 * max(top, p.launch_s["p99"].high):  # the deadline, when near the data
        ax.axvline(p.deadline_s, color="red", ls="--", lw=1, label=f"deadline {p.deadline_s:g} s")
    ax.set_xlabel("launch latency (s)")
    ax.set_ylabel("fraction of containers")
    n = len(reps)
    ax.set_title(f"launch latency CDF: {n} replicate{'s' if n > 1 else ''}", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    return drawn


def span_ms(rec: LaunchRecord) -> float:
    """The simulated burst's length in a record (ms): its last change or release."""
    ends = [t for t, _ in rec.mount_table[-1:]]
    ends += [max(b for _, _, b in h) for h in (rec.ns_holds, rec.ml_holds) if h]
    return max(ends, default=0) / NS_PER_MS


def merged(segs: list[tuple[float, float]], step: float) -> list[tuple[float, float]]:
    """Hold intervals (start, end) as bars (start, width): those less than `step` apart joined,
    each at least `step` wide."""
    out: list[list[float]] = []
    for a, b in sorted(segs):
        if out and a - out[-1][1] < step:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, max(b - a, step)) for a, b in out]


def plot_ownership(p: Prediction, ax: Axes, steps: int = STEPS) -> int:
    """namespace_sem and mount_lock hold intervals per thread in the nominal replicate, over
    the whole simulated burst, which the title names; holds closer than the burst over `steps`
    drawn as one bar (`merged`). Returns the bars drawn."""
    rec = p.record
    if rec is None:
        ax.text(0.5, 0.5, "no record", ha="center")
        return 0
    total = span_ms(rec)
    step = total / steps if total > 0 else 1.0
    tids = sorted({t for t, _, _ in rec.ns_holds} | {t for t, _, _ in rec.ml_holds})
    row = {t: i for i, t in enumerate(tids)}
    drawn = 0
    for holds, color, h in ((rec.ns_holds, "tab:blue", 0.8), (rec.ml_holds, "tab:red", 0.4)):
        per_row: dict[int, list[tuple[float, float]]] = {}
        for t, a, b in holds:
            per_row.setdefault(t, []).append((a / NS_PER_MS, b / NS_PER_MS))
        for t, segs in per_row.items():  # one call per row: thousands of bars stay fast
            bars = merged(segs, step)
            ax.broken_barh(bars, (row[t] - h / 2, h), color=color)
            drawn += len(bars)
    ax.set_xlim(0, max(total, step))
    ax.set_xlabel("time from the burst's start (ms)")
    ax.set_ylabel("container thread")
    ax.set_title(
        f"lock holds, replicate 0: the whole {total:,.0f} ms burst\n"
        f"namespace_sem (blue), mount_lock (red); holds < {step:.2g} ms apart as one bar",
        fontsize=9,
    )
    return drawn


def plot_mount_table(p: Prediction, ax: Axes) -> Any:
    """Mounts in the nominal replicate's table over the whole burst (the ownership panel's
    window too)."""
    rec = p.record
    if rec is None or not rec.mount_table:
        ax.text(0.5, 0.5, "no record", ha="center")
        return None
    t = np.array([x for x, _ in rec.mount_table]) / NS_PER_MS
    n = np.array([y for _, y in rec.mount_table])
    (line,) = ax.step(t, n, where="post", label="replicate 0")
    ax.set_xlim(0, max(span_ms(rec), float(t[-1])))
    ax.set_xlabel("time from the burst's start (ms)")
    ax.set_ylabel("mounts")
    peak = int(n.max())
    title = f"mount table, replicate 0 (peak {peak:,})"
    if p.peak_mount_table != peak:
        title += f"\nlargest over the {p.replicates} replicates: {p.peak_mount_table:,}"
    ax.set_title(title, fontsize=9)
    return line


def launch_figure(p: Prediction) -> Figure:
    """The three panels side by side."""
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
    plot_cdf(p, axes[0])
    plot_ownership(p, axes[1])
    plot_mount_table(p, axes[2])
    wl = p.workload.get("strategy", p.workload.get("trace", ""))
    fig.suptitle(f"{p.machine}: {p.containers} containers, {wl}", fontsize=10)
    fig.tight_layout()
    return fig
