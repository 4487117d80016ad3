"""A host's terms measured directly rather than fitted: what `Calibration.fit` takes from
wake_bench and walk_bench as they are, each a property of the host it ran on.

- `wake_ns` (wake_bench): half the cross-CPU minus same-CPU futex round trip, the median over
  repeats: how much later a task that slept resumes on an idle CPU (idle exit, VM wake-up).
- `wake_step_ns` (a burst's scheduler trace, wake_bench-format rows with lock `wake-q`: calibration.
  analysis.burst_locks.trace --pace-csv): how far apart a releaser of namespace_sem wakes the
  readers it granted the lock (wake_up_q(), one try_to_wake_up() and IPI each), the median
  over the traced runs' medians.
- `rcu_exp_per_cpu_ns` (walk_bench): what one more busy CPU adds to an expedited grace period
  (docs/kernel-audit.md C20; cohsim.kernel.callcost.grace_period_ns). Beside one mounter, each
  `umount2` waits for one grace period, and every walker is a CPU the grace period must IPI:
  the least-squares slope of umount2's p50 (per walker count, the median over repeats and
  layer counts) against 1..K walkers. K = 0 is left out: the first busy CPU costs more than
  the next (its IPI is answered at the end of a walk's RCU read-side section). A run with
  fewer than two walker counts from 1 up cannot separate the slope, and is skipped with that
  reason.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cohsim.calibrate.fitjson import round_sig
from cohsim.calibrate.fitparams import Param
from cohsim.errors import CohsimError
from cohsim.kernel.costs import KernelParams
from cohsim.kernel.waketable import PACE_LOCK

#: the `lock` column of wake-up pace rows (wake_bench --pace, or a trace's)
WAKE_STEP_LOCK = PACE_LOCK


@dataclass(frozen=True)
class WalkPoint:
    """umount2's p50 in one walk_bench configuration with one mounter."""

    walkers: int
    layers: int
    repeat: int
    umount2_p50_ns: float


def walk_points(rows: Sequence[tuple[int, dict[str, str]]], where: str) -> list[WalkPoint]:
    """The one-mounter umount2 p50s of a walk_bench CSV's rows."""
    out = []
    for line, r in rows:
        if (
            r.get("role") != "mounter"
            or r.get("mounters") != "1"
            or r.get("op") != "umount2"
            or r.get("metric") != "p50_ns"
            or r.get("repeat") == "all"
        ):
            continue
        try:
            out.append(
                WalkPoint(int(r["walkers"]), int(r["layers"]), int(r["repeat"]), float(r["value"]))
            )
        except (KeyError, ValueError):
            raise CohsimError("malformed walk_bench row", f"{where}:{line}") from None
    return out


def wake_steps(rows: Sequence[tuple[int, dict[str, str]]], where: str) -> list[float]:
    """The `step_p50` values (ns) of wake-up pace rows (lock `wake-q`)."""
    out = []
    for line, r in rows:
        if r.get("metric") == "step_p50":
            try:
                out.append(float(r["value"]))
            except (KeyError, ValueError):
                raise CohsimError("malformed wake-up pace row", f"{where}:{line}") from None
    return out


def grace_slope(points: Sequence[WalkPoint]) -> tuple[float, float, int] | None:
    """(ns per busy CPU, its standard error, walker counts used), or None when fewer than two
    walker counts from 1 up were measured."""
    by_k: dict[int, list[float]] = defaultdict(list)
    for p in points:
        if p.walkers >= 1:
            by_k[p.walkers].append(p.umount2_p50_ns)
    if len(by_k) < 2:
        return None
    ks = sorted(by_k)
    x = np.array(ks, dtype=float)
    y = np.array([statistics.median(by_k[k]) for k in ks])
    design = np.column_stack([np.ones_like(x), x])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    resid = y - design @ coef
    dof = len(ks) - 2
    se = math.sqrt(resid @ resid / dof * np.linalg.inv(design.T @ design)[1, 1]) if dof else 0.0
    return float(coef[1]), se, len(ks)


def _median_param(name: str, values: Sequence[float], why: str) -> tuple[Param, dict[str, object]]:
    """A term measured as the median of `values`: the parameter (the standard error of their
    mean; 0 for one value) and its note in the fit's `fixed`."""
    mid = statistics.median(values)
    se = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return Param(name, round_sig(mid), round_sig(se)), {"value": round_sig(mid), "why": why}


def measured_wake(runs: Sequence[float]) -> tuple[Param, dict[str, object]]:
    """wake_bench's `wake_ns` per repeat -> the parameter and its note in the fit's `fixed`."""
    return _median_param(
        "wake_ns",
        runs,
        f"measured directly: wake_bench's wake_ns, median of {len(runs)} repeats "
        "(half the cross-CPU minus same-CPU futex round trip); a property of this host "
        "(idle exit, VM wake-up), applied only where the fit's lock part applies",
    )


def measured_grace(
    points: Sequence[WalkPoint], base: KernelParams
) -> tuple[Param | None, dict[str, object]]:
    """walk_bench's umount2 against the walkers -> the per-busy-CPU part of the grace period
    and its note; (None, the model file's value with why) where the run cannot tell it."""
    found = grace_slope(points)
    if found is None or found[0] <= 0.0:
        return None, {
            "value": base.rcu_exp_per_cpu_ns,
            "why": "model file value kept: no walk_bench run with two or more walker counts "
            "beside one mounter (the per-busy-CPU part of the grace period is measured there)",
        }
    slope, se, n = found
    note = {
        "value": round_sig(slope),
        "why": f"measured directly: walk_bench's umount2 p50 beside one mounter against "
        f"{n} walker counts from 1 up (least squares through the medians over repeats and "
        "layers): each busy CPU is one more IPI of the expedited grace period "
        "(docs/kernel-audit.md C20); a property of this host, applied to its own predictions",
    }
    return Param("rcu_exp_per_cpu_ns", round_sig(slope), round_sig(se)), note


def measured_wake_step(steps: Sequence[float]) -> tuple[Param, dict[str, object]]:
    """The measured wake-up paces' median (ns) -> `wake_step_ns` and its note."""
    return _median_param(
        "wake_step_ns",
        steps,
        f"measured directly: the median of {len(steps)} wake-up pace rows (wake-q "
        "step_p50: wake_bench --pace's median gap between one waker's wake-ups of the "
        "sleepers it woke, or a traced burst's between one releaser's wake-ups of the "
        "namespace_sem readers it granted; wake_up_q(), kernel/locking/rwsem.c); a property "
        "of this host (its IPIs), applied to its own predictions",
    )


def measured_terms(
    base: KernelParams,
    wakes: Sequence[float],
    walk: Sequence[WalkPoint],
    steps: Sequence[float] = (),
) -> list[tuple[str, Param | None, dict[str, object]]]:
    """(name, parameter or None where the data cannot tell it, note for the fit's `fixed`) of
    each term the data measure: `wake_ns` where wake_bench ran, `rcu_exp_per_cpu_ns` where
    walk_bench did, `wake_step_ns` where a burst was traced."""
    out: list[tuple[str, Param | None, dict[str, object]]] = []
    if wakes:
        out.append(("wake_ns", *measured_wake(wakes)))
    if walk:
        out.append(("rcu_exp_per_cpu_ns", *measured_grace(walk, base)))
    if steps:
        out.append(("wake_step_ns", *measured_wake_step(steps)))
    return out
