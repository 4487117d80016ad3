"""The explain figure: the launch breakdown above the tornado chart of the unknowns."""

from __future__ import annotations

import dataclasses

import matplotlib.pyplot as plt

from cohsim.plots.explain import explain_figure, plot_breakdown, plot_tornado
from cohsim.predict import predict


def test_breakdown_and_tornado_draw_what_the_prediction_holds():
    p = predict(arch="chiplet", containers=6, layers=2, replicates=1, explain=True, jobs=1)
    fig, (a, b) = plt.subplots(2, 1)
    bars = plot_breakdown(p, a)
    assert p.breakdown is not None
    shown = [c for c in p.breakdown.mean_s if p.breakdown.mean_s[c] or p.breakdown.slowest_s[c]]
    assert len(bars) == 2 * len(shown)  # a segment per category, mean and slowest
    assert len(plot_tornado(p, b)) == 2 * len(p.sensitivity)
    labels = [t.get_text() for t in b.get_yticklabels()]
    assert labels[-1] == p.sensitivity[0].prior.key  # the largest swing on top
    plt.close(fig)
    bare = dataclasses.replace(p, breakdown=None, sensitivity=())
    fig2 = explain_figure(bare)
    assert [t.get_text() for ax in fig2.axes for t in ax.texts] == [
        "no breakdown",
        "no ranking (run with --explain)",
    ]
    plt.close(fig2)
