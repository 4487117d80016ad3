"""The parameters a calibration fits, and how the kernel ones apply to a kernel model.

Kernel parameters (fitted to mount_bench runs). Each op's 1-worker total is kept as
`models/kernel/*.toml` has it; what is fitted is how that total splits, which only runs with
several workers reveal (two workers on two CPUs gain nothing from serialized time):

- `ser_bind`: the fraction of the bind-mount ops' unlocked work (open_tree clone, move_mount,
  the common parent's mount_setattr) that is in fact done holding namespace_sem for writing
  (the close of an attached fd takes no lock: dissolve_on_fput returns first);
- `ser_overlay`: the same for the overlay mount's fixed part (its per-layer lowerdir lookups
  stay unlocked: overlayfs parses them before do_new_mount takes the lock);
- `ser_umount`: the same for the unmounts and the dissolving close of a detached clone, after
  the RCU wait is taken out;
- `rcu_exp_base_ns`: the expedited grace period, during which the caller sleeps and its CPU is
  free. The ops' totals stay fixed: a shorter grace period leaves more on-CPU time.

A fraction of 0 leaves an op that takes namespace_sem a section of 0 ns: it still waits for
the lock, as the kernel's does (`OpCost.takes_ns_write`, kept from the model file).

Lock parameters (pause_bench, `cohsim.calibrate.lockfit`): `same_llc_ns`, and `pause_ns`
measured directly; `wake_ns` (wake_bench), `rcu_exp_per_cpu_ns` (walk_bench) and
`wake_step_ns` (a traced burst's wake-up pace) are measured directly too
(cohsim.calibrate.measured). `DOC` says what each is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from cohsim.errors import CohsimError
from cohsim.kernel.costs import KernelParams
from cohsim.units import NS_PER_US

#: op groups whose serialized fraction is one parameter
GROUPS: dict[str, tuple[str, ...]] = {
    "ser_bind": ("open_tree_clone", "move_mount", "mount_setattr_ro"),
    "ser_overlay": ("mount_overlay",),
    "ser_umount": ("umount_detach", "umount", "umount_overlay", "close_detached"),
}
KERNEL_PARAMS = (*GROUPS, "rcu_exp_base_ns")
#: ops whose per-call mean at 2+ workers is fitted (those whose split the parameters set)
FIT_OPS = tuple(op for ops in GROUPS.values() for op in ops)
LOCK_PARAMS = ("same_llc_ns",)
#: what each parameter is (the fit JSON's `doc`)
DOC = {
    "ser_bind": "fraction of the bind-mount ops' unlocked work held under namespace_sem (write)",
    "ser_overlay": "fraction of the overlay mount's fixed work held under namespace_sem (write)",
    "ser_umount": "fraction of the unmounts' (and dissolving close's) work, RCU wait excluded, "
    "held under namespace_sem (write)",
    "rcu_exp_base_ns": "synchronize_rcu_expedited() fixed part, ns (caller sleeps)",
    "same_llc_ns": "cache-line transfer between two cores of the LLC (the two vCPUs), ns",
    "pause_ns": "latency of one PAUSE, ns (measured directly, pause_bench pause_ns)",
    "wake_ns": "a task that slept resumes on an idle CPU this much later, ns (measured "
    "directly, wake_bench wake_ns; this host only)",
    "rcu_exp_per_cpu_ns": "an expedited grace period's part per busy CPU (one IPI), ns "
    "(measured directly, walk_bench umount2 against the walkers; this host only)",
    "wake_step_ns": "how far apart a releaser of namespace_sem wakes the readers it granted, "
    "ns (measured directly, a traced burst's wake-ups; this host only)",
}
#: the host terms a fit measures directly (cohsim.calibrate.measured), applied to its own host
#: only (`FitResult.host_kernel`)
HOST_TERMS = ("wake_ns", "rcu_exp_per_cpu_ns", "wake_step_ns")
_MIN_BODY_NS = 50.0  # an op keeps at least this much of its own work when the RCU part grows


@dataclass(frozen=True)
class Param:
    """One fitted or measured parameter: its value, standard error and bounds (`high` may be
    inf). `group`, `doc` and `unit` follow from its name."""

    name: str
    value: float
    stderr: float
    low: float = 0.0
    high: float = math.inf

    @property
    def bounds(self) -> tuple[float, float]:
        return (self.low, self.high)

    @property
    def group(self) -> str:
        """ "kernel" (fitted to mount_bench) or "lock" (pause_bench, wake_bench)."""
        return "kernel" if self.name in KERNEL_PARAMS else "lock"

    @property
    def doc(self) -> str:
        return DOC[self.name]

    @property
    def unit(self) -> str:
        """ "ns" for a time, "fraction" for a share of an op's work."""
        return "ns" if self.name.endswith("_ns") else "fraction"


@dataclass(frozen=True)
class PartFit:
    """What one part of a calibration (the kernel fit, the lock fit) learned: the fitted
    parameters (and, for the lock, the measured ones), the fitted ones' covariance (`names` x
    `names`), the residual rows of the fit JSON, the optimizer's report and what was kept
    fixed (and why)."""

    parameters: dict[str, Param]
    names: list[str]
    cov: np.ndarray
    residuals: list[dict[str, Any]]
    optimizer: dict[str, Any]
    fixed: dict[str, dict[str, Any]]


def _rcu_ops(kernel: KernelParams) -> list[str]:
    return sorted(n for n, op in kernel.ops.items() if op.rcu)


def kernel_bounds(base: KernelParams) -> dict[str, tuple[float, float]]:
    """Bounds of the kernel parameters: fractions in [0, 1]; the grace period between 1 us and
    what leaves every RCU op `_MIN_BODY_NS` of its unlocked work, which a longer grace period
    takes where the op's split is not fitted (its lock section kept)."""
    room = min(base.op(n).cpu_ns / base.op(n).rcu for n in _rcu_ops(base))
    out = {g: (0.0, 1.0) for g in GROUPS}
    out["rcu_exp_base_ns"] = (float(NS_PER_US), base.rcu_exp_base_ns + room - _MIN_BODY_NS)
    return out


def kernel_start(base: KernelParams) -> dict[str, float]:
    """The model file's own split, as fractions (the fit's starting point)."""
    out: dict[str, float] = {}
    for g, ops in GROUPS.items():
        tot = [base.op(n).cpu_ns + base.op(n).ns_write_ns for n in ops if n in base.ops]
        ser = [base.op(n).ns_write_ns for n in ops if n in base.ops]
        out[g] = sum(ser) / sum(tot) if sum(tot) else 0.0
    out["rcu_exp_base_ns"] = base.rcu_exp_base_ns
    return out


def apply_kernel_params(base: KernelParams, values: Mapping[str, float]) -> KernelParams:
    """`base` with the fitted split: each op's total (work + RCU wait) unchanged. An op whose
    group's fraction is not given keeps its lock section, the rest its unlocked work; a grace
    period that leaves less than none is refused."""
    rcu = float(values.get("rcu_exp_base_ns", base.rcu_exp_base_ns))
    shift = base.rcu_exp_base_ns - rcu  # on-CPU work the shorter grace period leaves
    new: dict[str, float] = {"rcu_exp_base_ns": rcu}
    body = {n: op.cpu_ns + op.ns_write_ns + shift * op.rcu for n, op in base.ops.items()}
    for n in _rcu_ops(base):
        if body[n] < 0:
            raise CohsimError(f"rcu_exp_base_ns {rcu:.0f} exceeds op {n}'s total")
    split = {n: values.get(g) for g, ops in GROUPS.items() for n in ops if n in base.ops}
    for n in sorted(set(split) | set(_rcu_ops(base))):
        f = split.get(n)
        if f is None:
            cpu = body[n] - base.op(n).ns_write_ns
            if cpu < 0:
                raise CohsimError(f"rcu_exp_base_ns {rcu:.0f} exceeds op {n}'s unlocked work")
            new[f"{n}.cpu_ns"] = cpu
            continue
        f = min(1.0, max(0.0, float(f)))
        new[f"{n}.ns_write_ns"] = f * body[n]
        new[f"{n}.cpu_ns"] = (1.0 - f) * body[n]
    return base.with_values(**new)
