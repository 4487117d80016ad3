"""`predict --plot`'s figure (cohsim.plots.launch): what each panel draws agrees with the
prediction's numbers and says which replicate and which time window it shows (issue 30)."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

from cohsim.plots.launch import (
    launch_figure,
    merged,
    plot_cdf,
    plot_mount_table,
    plot_ownership,
    span_ms,
)
from cohsim.predict import predict
from cohsim.units import NS_PER_MS


@pytest.fixture(scope="module")
def pred():
    return predict(arch="mesh", containers=12, layers=4, replicates=4, record=True, jobs=1)


def test_the_cdf_draws_every_replicate_and_the_reported_quantiles(pred):
    fig, ax = plt.subplots()
    plot_cdf(pred, ax)
    steps = [ln for ln in ax.get_lines() if len(ln.get_xdata()) == pred.containers]
    assert len(steps) == pred.replicates == 4
    assert "4 replicates" in ax.get_title()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "replicate 0 (nominal parameters)" in labels
    assert "replicates 1-3 (drawn parameters)" in labels
    assert "reported p50, p99 [interval]" in labels
    # the reported p50 and p99 are drawn where the text puts them
    marks = {}
    for bar in ax.containers:  # the error bars: the value, and the interval as caps
        point, caps, _ = bar
        y = round(float(point.get_ydata()[0]), 2)
        marks[y] = (float(point.get_xdata()[0]), sorted(float(c.get_xdata()[0]) for c in caps))
    for key, y in (("p50", 0.5), ("p99", 0.99)):
        iv = pred.launch_s[key]
        assert marks[y][0] == pytest.approx(iv.value)
        assert marks[y][1] == pytest.approx([iv.low, iv.high])
    plt.close(fig)


def test_the_mount_table_title_names_the_plotted_peak(pred):
    fig, ax = plt.subplots()
    line = plot_mount_table(pred, ax)
    plotted = int(np.max(line.get_ydata()))
    first = ax.get_title().splitlines()[0]
    assert "replicate 0" in first
    assert int(re.search(r"peak ([\d,]+)", first).group(1).replace(",", "")) == plotted
    if pred.peak_mount_table != plotted:  # the largest over the replicates, named as such
        assert f"largest over the 4 replicates: {pred.peak_mount_table:,}" in ax.get_title()
    plt.close(fig)


def test_the_lock_timeline_shows_the_whole_burst_and_every_hold(pred):
    """Issue 30: the panel drew the first ~90 ms (the first 4,000 holds) of a multi-second
    burst. Now it spans the whole burst, named in its title, and every hold of either lock
    lies inside a bar of its thread's row (holds closer than the panel resolves joined)."""
    rec = pred.record
    steps = 200
    fig, ax = plt.subplots()
    drawn = plot_ownership(pred, ax, steps=steps)
    total = span_ms(rec)
    assert ax.get_xlim() == (0, pytest.approx(total))
    assert total >= max(b for h in (rec.ns_holds, rec.ml_holds) for _, _, b in h) / NS_PER_MS
    title = ax.get_title()
    assert f"the whole {total:,.0f} ms burst" in title and "replicate 0" in title
    bars = [c for c in ax.collections]
    assert drawn == sum(len(c.get_paths()) for c in bars) > 0
    # each lock's rows: the bars of one row in one collection, their x spans
    spans = [
        sorted(
            (float(p.vertices[:, 0].min()), float(p.vertices[:, 0].max())) for p in c.get_paths()
        )
        for c in bars
    ]
    ends = [x for row in spans for x in row]
    for holds in (rec.ns_holds, rec.ml_holds):
        for _, a, b in holds:
            lo, hi = a / NS_PER_MS, b / NS_PER_MS
            assert any(x0 - 1e-9 <= lo and hi <= x1 + 1e-9 for x0, x1 in ends)
    # one bar at least a step wide: no hold too short to see
    assert min(x1 - x0 for x0, x1 in ends) >= total / steps * (1 - 1e-9)
    plt.close(fig)


def test_merged_joins_holds_closer_than_a_step():
    assert merged([(0.0, 0.1), (0.15, 0.2), (1.0, 1.01)], step=0.1) == [
        (0.0, pytest.approx(0.2)),
        (1.0, 0.1),
    ]


def test_the_whole_figure_says_what_it_shows(pred):
    fig = launch_figure(pred)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0].startswith("launch latency CDF: 4 replicates")
    assert all("replicate 0" in t for t in titles[1:])
    assert all(ax.get_xlabel() for ax in fig.axes)
    plt.close(fig)
