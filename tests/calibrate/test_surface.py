"""surface: the covariances of a fit (the seed sets' spread of the minimum)."""

from __future__ import annotations

import numpy as np
import pytest

from cohsim.calibrate.surface import seed_cov


def test_seed_spread_is_the_minima_covariance_but_at_least_the_roughness():
    rough = np.diag([1e-4, 4e-4])
    same = np.array([[0.5, 0.5]] * 3)  # seed sets that agree: the roughness term stands
    assert np.allclose(seed_cov(same, rough), rough)
    spread = np.array([[0.4, 0.5], [0.6, 0.5], [0.5, 0.5]])  # variance 0.01 along the first
    c = seed_cov(spread, rough)
    assert c[0, 0] == pytest.approx(0.01) and c[1, 1] == pytest.approx(4e-4)
    assert c[0, 1] == pytest.approx(0.0, abs=1e-12)
    assert np.linalg.eigvalsh(c).min() >= -1e-15
    assert np.allclose(seed_cov(spread[:1], rough), rough)  # one seed set: roughness only
