"""fitplot: a fit's measured vs fitted figures drawn."""

from __future__ import annotations

import pytest
from conftest import REPO

from cohsim.calibrate.fitresult import load_fit

DEVVM = "devvm-2cpu-intel-xeon-f6m167"


@pytest.fixture(scope="module")
def small_fit():
    """The committed fit (kernel and lock residuals: every marker but one is drawn)."""
    return load_fit(REPO / "calibration" / "fits" / f"{DEVVM}.json")


def test_plot_draws_measured_vs_fitted(small_fit):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    artists = small_fit.plot(ax)
    assert len(artists) >= 3
    plt.close(fig)
