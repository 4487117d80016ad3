"""The report's pictures: launch against containers, who held namespace_sem, what the fixes
buy. Each plot function draws on the `ax` it is given and returns what it drew;
`data_uri` turns a figure into PNG bytes inside a data: URI, so the report carries its
pictures in itself (no file beside it, nothing fetched)."""

from __future__ import annotations

import base64
import io
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from cohsim.report.content import Curve, Detail, Fix  # noqa: E402

DPI = 100


def data_uri(fig: Figure) -> str:
    """The figure as a PNG data: URI (fixed metadata: the same figure gives the same bytes);
    the figure is closed."""
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    finally:
        plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


#: a p50 this close to its p99 at every point (relative) lies under the p99's line: not drawn
P50_APART = 0.03


def apart(curve: Curve) -> bool:
    """Whether the curve's p50 is distinguishable from its p99 at some point."""
    return any(
        o.launch_p99.value > (1 + P50_APART) * o.launch_p50.value for o in curve.points.values()
    )


def plot_curves(
    curves: tuple[Curve, ...], deadline_s: float, containers: int, ax: Axes
) -> list[Any]:
    """Launch p99 (solid, with its interval as a band) and, where it lies apart from the p99,
    p50 (dashed) against containers, one colour per distinct result (a merged curve names
    every machine that gives it); the deadline and the question's count as guides. The
    legend names what is drawn, and says where the p50 lies under the p99."""
    drawn: list[Any] = []
    for i, curve in enumerate(curves):
        color = f"C{i % 10}"
        ns = sorted(curve.points)
        p99 = [curve.points[n].launch_p99 for n in ns]
        ax.fill_between(ns, [v.low for v in p99], [v.high for v in p99], color=color, alpha=0.15)
        (line,) = ax.plot(ns, [v.value for v in p99], color=color, marker=".", label=curve.label)
        drawn.append(line)
        if apart(curve):
            p50 = [curve.points[n].launch_p50.value for n in ns]
            drawn.append(ax.plot(ns, p50, color=color, ls="--", lw=0.8)[0])
    _style_legend(ax, [apart(c) for c in curves])
    ax.axhline(deadline_s, color="red", lw=1, ls=":", label=f"deadline {deadline_s:g} s")
    ax.axvline(containers, color="grey", lw=1, ls=":", label=f"the question: {containers}")
    ax.set_yscale("log")
    ax.set_xlabel("containers launched at once")
    ax.set_ylabel("launch latency (s)")
    ax.set_title("launch latency against the burst, top distinct results", fontsize=10)
    ax.legend(fontsize=7)
    return drawn


def _style_legend(ax: Axes, shown: list[bool]) -> None:
    """Legend entries for the line styles: the p99 with its band, the p50 where some curve's
    is drawn, and a note where some curve's is not (`shown`: per curve)."""
    ax.plot([], [], color="0.3", marker=".", label="p99 (line), its interval (band)")
    if any(shown):
        ax.plot([], [], color="0.3", ls="--", lw=0.8, label="p50 (dashed)")
    if not all(shown):
        note = f"p50 within {P50_APART:.0%} of the p99: not drawn"
        ax.plot([], [], color="none", label=note + (" for some" if any(shown) else ""))


def held(d: Detail) -> dict[str, float]:
    """namespace_sem's write holds by mechanism in a detail's prediction (s; {} if none)."""
    b = d.prediction.breakdown
    return dict(b.ns_write_s) if b else {}


def plot_holders(details: tuple[Detail, ...], ax: Axes) -> list[Any]:
    """namespace_sem held for writing, by the mechanism of the call that held it: one stacked
    bar per top candidate (s, the nominal replicate)."""
    holds = [held(d) for d in details]
    mechanisms = list(dict.fromkeys(m for h in holds for m in h))
    labels = [d.row.candidate.label for d in details]
    left = [0.0] * len(details)
    drawn: list[Any] = []
    for j, m in enumerate(mechanisms):
        widths = [h.get(m, 0.0) for h in holds]
        label = m.replace("_", " ")
        drawn.append(ax.barh(labels, widths, left=left, color=f"C{j % 10}", label=label))
        left = [a + w for a, w in zip(left, widths, strict=True)]
    ax.invert_yaxis()
    ax.set_xlabel("s namespace_sem was held for writing during the burst")
    ax.set_title("what every lock wait waited for: namespace_sem's holders", fontsize=10)
    if mechanisms:
        ax.legend(fontsize=7, ncol=min(4, len(mechanisms)))
    return drawn


def plot_fixes(fixes: tuple[Fix, ...], ax: Axes) -> list[Any]:
    """Each top candidate's safe burst as it is and with each fix, at the median over the
    draws they share (bars; + at the search's ceiling). The ends of each point's own
    interval are left out: they are not paired between the rows (cohsim.report.content)."""
    rows: list[tuple[str, int]] = []
    seen: set[str] = set()
    for f in fixes:
        base = f.base
        if base.candidate.label not in seen:
            seen.add(base.candidate.label)
            rows.append((f"{base.candidate.label} (as is)", base.burst.value))
        mark = " (at the search's ceiling, or more)" if f.burst.capped else ""
        rows.append((f"  + {f.name}{mark}", f.burst.value))
    if not rows:
        ax.text(0.5, 0.5, "no fix applies", ha="center")
        return []
    ys = list(range(len(rows)))
    colors = ["C7" if "(as is)" in r[0] else "C2" for r in rows]
    bars = ax.barh(ys, [r[1] for r in rows], color=colors)
    ax.set_yticks(ys, [r[0] for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(
        "safe burst: containers at once within the deadline at p99 (median over the shared draws)"
    )
    ax.set_title("what each fix would buy", fontsize=10)
    return [bars]


def figure(draw: Any, *args: Any, size: tuple[float, float] = (9.0, 5.0)) -> str:
    """A one-panel figure drawn by `draw(*args, ax)`, as a data: URI."""
    fig, ax = plt.subplots(figsize=size)
    draw(*args, ax)
    fig.tight_layout()
    return data_uri(fig)
