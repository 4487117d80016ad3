"""The unknowns of a prediction: drawing the kernel model's priors in the replicates, pinning
the ones a user or a measurement gives, and ranking them by how much they move the answer.

The kernel file's `[priors]` (cohsim.kernel.costs.Prior) range the numbers no measurement
identifies on a large machine. Replicate 0 runs at the nominal values (the file's, or the fit's
where a calibration applies); replicate i > 0 draws every prior that is not pinned, each from
its own stream: a child of the one seed keyed by the prior's name, so that a prior's draws do
not change when another is pinned or added, nor when more replicates are asked for (replicate
i's draw is the i-th number of that stream). A pinned prior — a value the user gave
(`--node-mounts`), or one the applied calibration measured on this very host — is not drawn.

The priors' corners (`corner`): every drawn prior at the end that makes a launch faster, and
every one at the end that makes it slower. The priors are bounded, so no draw of them lies
beyond these two (as far as a launch grows monotonically with each prior, as each does in the
model: a longer cost, more mounts, more work in the background); they bound the ends of an
interval (cohsim.predict.intervals.bounded).

The sensitivity ranking (`cohsim predict --explain`): each unpinned prior at its low and its
high end, the others nominal, with replicate 0's seed (common random numbers: the difference
is the prior's, not the simulation's noise), ranked by how far apart the two launch p99s are.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cohsim.errors import CohsimError
from cohsim.kernel.costs import KernelParams
from cohsim.kernel.priors import Prior

#: the prior streams' branch of the seed (replicate seeds are the seed's plain children)
PRIOR_STREAM = 2


def pin(kernel: KernelParams, pins: Mapping[str, float]) -> KernelParams:
    """`kernel` with the priors named in `pins` ("background.node_mounts": 2204) set to the
    given values; a key that is not one of its priors, or a negative value, is a CohsimError."""
    by_key = {p.key: p for p in kernel.priors}
    values = {}
    for key, v in pins.items():
        if key not in by_key:
            known = ", ".join(by_key) or "none"
            raise CohsimError(f"cannot pin {key}: not a prior of {kernel.name} (priors: {known})")
        if isinstance(v, bool) or not isinstance(v, int | float) or not v >= 0:
            raise CohsimError(f"{key} must be a number >= 0, not {v!r}")
        values[by_key[key].attr] = float(v)
    return kernel.with_values(**values) if values else kernel


def unknowns(kernel: KernelParams, pinned: Sequence[str] = ()) -> tuple[Prior, ...]:
    """The kernel's priors less the pinned ones, in the file's order."""
    return tuple(p for p in kernel.priors if p.key not in pinned)


def _stream(seed: int, key: str) -> np.random.Generator:
    """The prior's own stream: a child of `seed` keyed by its name (crc32: stable)."""
    ss = np.random.SeedSequence(seed, spawn_key=(PRIOR_STREAM, zlib.crc32(key.encode())))
    return np.random.default_rng(ss)


def draws(priors: Sequence[Prior], seed: int, replicates: int) -> list[dict[str, float]]:
    """Each replicate's prior values by KernelParams field: {} for replicate 0 (nominal),
    a draw of every prior for each replicate after it."""
    out: list[dict[str, float]] = [{} for _ in range(replicates)]
    for p in priors:
        us = _stream(seed, p.key).random(replicates)
        for i in range(1, replicates):
            out[i][p.attr] = p.at(float(us[i]))
    return out


#: the priors whose high end makes a launch faster (every other prior's makes it slower: a
#: longer cost, more mounts, more background work); tests/predict/test_corners.py checks each
#: direction the analytic engine and the simulation see
FASTER_AT_HIGH = {
    # more cache misses in flight at once: the per-CPU sum's misses overlap more
    "percpu.mlp",
    # a longer interval between a walker's path walks: fewer walkers spin on mount_lock
    "launch.walk_interval_ns",
    "background.daemon_walk_interval_ns",
}


def corner(kernel: KernelParams, priors: Sequence[Prior], slow: bool) -> KernelParams:
    """`kernel` with every prior of `priors` at the end that makes a launch slower (`slow`),
    or at the one that makes it faster (`FASTER_AT_HIGH`)."""
    return kernel.with_values(
        **{p.attr: p.high if slow != (p.key in FASTER_AT_HIGH) else p.low for p in priors}
    )


@dataclass(frozen=True)
class Sensitivity:
    """One prior's effect: the launch and mount-phase p99 (s) with it at each end."""

    prior: Prior
    nominal: float  #: its nominal value
    launch_p99_low_s: float
    launch_p99_high_s: float
    mount_p99_low_s: float
    mount_p99_high_s: float

    @property
    def swing_s(self) -> float:
        """How far apart the launch p99s at the two ends are."""
        return abs(self.launch_p99_high_s - self.launch_p99_low_s)

    def to_dict(self) -> dict[str, Any]:
        p = self.prior
        return {
            "key": p.key,
            "low": p.low,
            "nominal": self.nominal,
            "high": p.high,
            "shape": p.shape,
            "launch_p99_s": {
                "at_low": round(self.launch_p99_low_s, 6),
                "at_high": round(self.launch_p99_high_s, 6),
            },
            "mount_p99_s": {
                "at_low": round(self.mount_p99_low_s, 6),
                "at_high": round(self.mount_p99_high_s, 6),
            },
            "swing_s": round(self.swing_s, 6),
            "measure": p.measure,
            "why": p.why,
        }


def rank(rows: Sequence[Sensitivity]) -> tuple[Sensitivity, ...]:
    """Largest launch-p99 swing first; ties (to the ns) by key."""
    return tuple(sorted(rows, key=lambda r: (-round(r.swing_s, 9), r.prior.key)))
