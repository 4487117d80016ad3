"""The uncertainty of a fit: covariances at the optimum.

Lock fit (a smooth least-squares problem): cov = (J^T J)^-1 s^2 with s^2 = SSR / (n - p)
(`lsq_cov`). Kernel fit (a simulated, rough cost): cov = H^-1 + C_seed. H is the curvature of a
quadratic surface fitted to the cost around the optimum (`surface`); with every residual in
units of its measured noise (`cohsim.calibrate.noise`), H^-1 is how far re-measuring the host
would move the estimate (the noise is not rescaled by the misfit, as scipy's curve_fit with
absolute_sigma: what the model cannot fit is its own error, carried into the prediction
intervals by the residuals' scatter). C_seed is the estimate's noise from the simulation
itself: the same surface is fitted with other seed sets, and C_seed is the covariance of where
they put the minimum — the fit's own seeds move the estimate by that much — but at least
H^-1 cov(g) H^-1, cov(g) from the costs' scatter about one surface (how well its roughness
lets the minimum be placed) (`seed_cov`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np


def lsq_cov(jac: np.ndarray, resid: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """(J^T J)^-1 s^2 in the original parameter units (J taken in scaled coordinates)."""
    n, p = jac.shape
    dof = max(1, n - p)
    s2 = float(resid @ resid) / dof
    jtj = jac.T @ jac
    inv = np.linalg.pinv(jtj)
    return inv * s2 * np.outer(scale, scale)


def surface(
    cost: Callable[[np.ndarray], float], u: np.ndarray, radius: float, seed: int, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fit cost ~ c + g.d + d'Hd/2 (d = v - u) over >= `n` Sobol points within `radius` of `u`
    (clipped to [0, 1]); return the surface's minimum (kept within the design box, or `u` if
    the surface is not convex), H, positive definite (eigenvalues floored), and how uncertain
    the minimum's place is from the cost's roughness: H^-1 cov(g) H^-1, cov(g) the least
    squares covariance of g with the scatter of the costs about the surface (to first order
    at a stationary point), at most `radius`^2 in any direction (the design box). Simulated
    costs are rough (interleavings flip with small changes), so a minimum found among the
    dents is only known to within that."""
    p = u.size
    from scipy.stats import qmc  # imported here: predictions that only read a fit stay fast

    # Sobol points come in powers of two (their balance needs it): at least n of them
    m = max(1, math.ceil(math.log2(max(n, 2))))
    design = qmc.Sobol(p, seed=seed + 1).random_base2(m)
    pts = np.clip(u + radius * (2 * design - 1), 0.0, 1.0)
    pts = np.vstack([u[None, :], pts])
    y = np.array([cost(v) for v in pts])
    d = pts - u
    iu = [(i, j) for i in range(p) for j in range(i, p)]
    cols = [
        np.ones(len(d)),
        *(d[:, i] for i in range(p)),
        *(d[:, i] * d[:, j] * (0.5 if i == j else 1.0) for i, j in iu),
    ]
    x = np.column_stack(cols)
    coef = np.linalg.lstsq(x, y, rcond=None)[0]
    scatter = y - x @ coef
    dof = max(1, len(y) - x.shape[1])
    cov_coef = np.linalg.pinv(x.T @ x) * float(scatter @ scatter) / dof
    g = coef[1 : p + 1]
    h = np.zeros((p, p))
    for (i, j), c in zip(iu, coef[p + 1 :], strict=True):
        h[i, j] = h[j, i] = c
    w, v = np.linalg.eigh(h)
    best = u
    if w.min() > 0:
        step = -np.linalg.solve(h, g)
        cand = np.clip(u + np.clip(step, -radius, radius), 0.0, 1.0)
        if cost(cand) <= y[0]:
            best = cand
    # a flat or concave direction: curvature floored at what the design could resolve
    w = np.maximum(w, max(float(np.abs(y - y.mean()).max()), 1e-9) * 1e-3 / radius**2)
    h_inv = (v / w) @ v.T
    rough = h_inv @ cov_coef[1 : p + 1, 1 : p + 1] @ h_inv
    # where the roughness swamps the curvature the surface cannot place the minimum at all:
    # it is then only known to lie in the design box (a standard deviation of `radius`)
    rw, rv = np.linalg.eigh((rough + rough.T) / 2)
    rough = (rv * np.clip(rw, 0.0, radius**2)) @ rv.T
    return best, (v * w) @ v.T, rough


def seed_cov(minima: np.ndarray, rough: np.ndarray) -> np.ndarray:
    """The estimate's spread from the simulation's randomness: the covariance of the minima
    that different seed sets' surfaces give (rows of `minima`), and at least the spread the
    roughness of one surface implies (`rough`, from `surface`) in every direction (a few seed
    sets may agree by chance)."""
    p = minima.shape[1]
    c = np.cov(minima.T, ddof=1).reshape(p, p) if len(minima) > 1 else np.zeros((p, p))
    w, v = np.linalg.eigh((rough - c + (rough - c).T) / 2)
    return c + (v * np.clip(w, 0.0, None)) @ v.T


def block_diagonal(blocks: Sequence[np.ndarray]) -> np.ndarray:
    """The covariance of the parts together: each part's block on the diagonal."""
    size = sum(b.shape[0] for b in blocks)
    cov = np.zeros((size, size))
    i = 0
    for b in blocks:
        cov[i : i + b.shape[0], i : i + b.shape[0]] = b
        i += b.shape[0]
    return cov
