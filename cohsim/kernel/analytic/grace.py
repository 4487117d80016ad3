"""The grace periods of a cohort in step, in the analytic burst model
(cohsim.kernel.analytic.burstmodel): how long its last container waits for the grace periods of
a call the cohort makes together (`cohort_grace`), and how grace periods run back to back while
the cohort keeps asking (`back_to_back`).

Each takes one container's numbers per call (the last axis) and, where arrays carry a leading
axis of replicates (one model of each replicate's kernel, joined:
`BurstModel.joined`), each replicate's grace period `g` as a column: every element is what one
replicate's model alone gives.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


def cohort_grace(h: Array, rcu: Array, g: float | Array, n: int) -> tuple[Array, Array]:
    """How long the last of a cohort of `n` waits for the grace periods of a call it makes in
    step (h: each one's write hold, served one after another; rcu: the call's grace periods;
    g: one grace period), and how many grace periods the cohort runs for it. A caller needs a
    grace period that starts after its call; the first caller starts one, and everyone who
    asks while it runs waits for the next, which starts when it ends: the last, (n - 1) h
    after the first, waits for the end of the one after the one running then, at
    (floor((n - 1) h / G) + 2) G; woken together, they do the same for a second one. They run
    back to back, at most one a caller."""
    if n == 1:
        return rcu * g, rcu
    periods = np.floor((n - 1) * h / g) + 2.0
    wait = np.where(rcu > 0, periods * g + (rcu - 1) * 2.0 * g, 0.0)
    count = np.where(rcu > 0, np.minimum(float(n), periods) + (rcu - 1) * 2.0, 0.0)
    return wait, count


def back_to_back(
    d: Array,
    h: Array,
    r: Array,
    free: Array,
    serial: Array,
    rcu: Array,
    g: float | Array,
    n: int,
) -> Array:
    """The calls' in-step times `d` with the grace periods of a cohort of `n` that keeps
    asking (`g`: one grace period): from the second call with grace periods in the span on,
    the cohort was woken by the previous one's grace period, and grace periods run back to
    back while anyone asks during one (cohsim.kernel.simulation.rcu: a request waits for the
    next to start; it starts when the running one ends). Woken at the end of one, a container
    works W (its calls since, without their grace periods' wait) and asks during the one
    running then, the (floor(W / G) + 1)-th since, so it is woken at the end of the next: the
    cycle is (floor(W / G) + 2) G, a second grace period of the call 2 G more. The cohort so
    splits in two halves woken G apart; where a half's in-step time (its N / 2 holds one
    after another, or its own path) is shorter than G, the halves never overlap and W is
    that (the cycle 2 G); otherwise they contend and W is the whole cohort's. The cycle
    replaces the calls' times since the previous call with grace periods (`free`: the own
    path without the grace periods' wait). Which calls have grace periods is read off the
    first replicate's `rcu` (an op's count, the same in every replicate of a plan)."""
    calls = np.flatnonzero(np.reshape(rcu, (-1, rcu.shape[-1]))[0] > 0)
    if len(calls) < 2:
        return d
    at, prev = calls[1:], calls[:-1]

    def since(x: Array) -> Array:  # the sum of x over the calls since the previous one
        c = np.cumsum(x, axis=-1)
        return c[..., at] - c[..., prev]

    whole = since(np.maximum(n * h + r, free) + n * serial)
    half = since(np.maximum(n / 2.0 * h + r, free) + n / 2.0 * serial)
    w = np.where(half < g, half, whole)
    cycle = (np.floor(w / g) + 2.0) * g + (rcu[..., at] - 1.0) * 2.0 * g
    out = d.copy()
    out[..., calls[0] + 1 :] = 0.0
    out[..., at] = cycle
    last = int(calls[-1])
    out[..., last + 1 :] = d[..., last + 1 :]
    return out
