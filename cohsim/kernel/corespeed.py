"""The kernel's CPU work at the target machine's core clock.

The kernel model's work parameters are times (ns) measured on the hosts that made them: the
op costs, path walks, allocator sections, the runtime's CPU work. Code that runs out of the
core's caches takes a number of cycles, not of nanoseconds, so on another machine it takes
`reference_ghz x reference_clock_scale / freq_ghz` of the measured time, where

- `reference_ghz` is the clock of the host the numbers were measured on (the kernel file's
  `cpu.reference_ghz`: the dev VMs' TSC rate; a calibration's own host where a fit applies,
  `cohsim.calibrate.fitresult.FitResult.kernel_params`),
- `reference_clock_scale` that host's effective clock over its stated one (a prior: a VM hides
  its real clock; 1 on the fitted host itself, where the ratio must be 1), and
- `freq_ghz` the target's sustained all-core clock (its machine file's `microarch.freq_ghz`,
  AWS's SustainedClockSpeedInGhz for the catalog instances).

Scaled (`CLOCKED_TOP`, and every `OpCost` field in ns but the peer walks): work that runs at
the core's clock. Not scaled, because the machine already prices it or it is not CPU work:
line transfers and per-CPU sums (levels 1 and 2, from the machine's latencies), the grace
period and wake-ups (IPIs and idle exits), the walks of a peer ring (a load-latency-bound
pointer chase: `peer_step_ns`, the ops' `per_peer_ns` and `mount_lock_per_peer_ns`, with their
own prior `propagation.peer_walk_scale`), the launch's fixed base, byte and mount counts.
Differences of instructions per cycle between core designs are not priced (an assumption: the
clock is the first-order term and the only one with public data for every instance).

Applied once per replicate where the engines receive their machine and kernel
(cohsim.predict.replicates), and for `cohsim kernel op`; the calibration's own simulations of
its host are not scaled (its ratio is 1).
"""

from __future__ import annotations

from dataclasses import fields
from typing import cast

from cohsim.kernel.calls import Recent
from cohsim.kernel.costs import KernelParams, OpCost
from cohsim.machine.model import Machine

#: KernelParams numbers that are CPU work at the core's clock (the walk intervals are CPU time
#: between a busy task's path walks, so a faster core walks as often in fewer ns)
CLOCKED_TOP = (
    "walk_ns",
    "legitimize_ns",
    "pcpu_alloc_ns",
    "systemd_parse_per_mount_ns",
    "runtime_cpu_ns",
    "prop_per_slave_mount_ns",
    "prop_per_slave_umount_ns",
    "walk_interval_ns",
    "daemon_walk_interval_ns",
)
#: OpCost times that are not CPU work at the core's clock (peer-ring walks: load latency)
UNCLOCKED_OP = ("per_peer_ns", "mount_lock_per_peer_ns")
CLOCKED_OP = tuple(
    f.name for f in fields(OpCost) if f.name.endswith("_ns") and f.name not in UNCLOCKED_OP
)


def clock_ratio(kernel: KernelParams, machine: Machine) -> float:
    """How long the kernel's CPU work takes on `machine` against its measured time."""
    return kernel.reference_ghz * kernel.reference_clock_scale / machine.microarch.freq_ghz


def _scaled(op: OpCost, ratio: float) -> OpCost:
    """`op` with its CPU work (`CLOCKED_OP`) times `ratio`: what `dataclasses.replace` makes,
    without running `__init__` again, as `OpCost.changed` (every replicate scales every op;
    scaled in place in the copy, without a dictionary of the changes: half as long again)."""
    new = object.__new__(type(op))
    values = new.__dict__
    values.update(op.__dict__)
    for f in CLOCKED_OP:
        values[f] = values[f] * ratio
    return new


#: the last kernels put at a clock, by the kernel's value and the clock, with the kernel's
#: fields that `==` leaves out (its sources, wake table and priors, copied as they are) by
#: identity: each replicate's kernel is a new object, and a warm process's next prediction
#: on the machine draws equal ones again. At most 64: a prediction's replicates (17 by
#: default for the analytic engine) and its sensitivity runs
_CLOCKED = Recent(64)


def at_clock(kernel: KernelParams, machine: Machine) -> KernelParams:
    """`kernel` with its CPU work at `machine`'s clock, and its reference the machine's (so
    that applying it twice changes nothing); the same object where the ratio is 1."""
    ratio = clock_ratio(kernel, machine)
    if ratio == 1.0:
        return kernel
    objs = (kernel.sources, kernel.wake_table, kernel.priors)
    rest = (kernel, machine.microarch.freq_ghz)
    hit = _CLOCKED.get(objs, rest)
    if hit is None:
        hit = _clocked(kernel, machine, ratio)
        _CLOCKED.put(objs, rest, hit)
    return cast(KernelParams, hit)


def _clocked(kernel: KernelParams, machine: Machine, ratio: float) -> KernelParams:
    """`at_clock`'s kernel, `ratio` its clock ratio."""
    ops = {name: _scaled(op, ratio) for name, op in kernel.ops.items()}
    top = {f: getattr(kernel, f) * ratio for f in CLOCKED_TOP}
    return kernel.changed(
        ops=ops, reference_ghz=machine.microarch.freq_ghz, reference_clock_scale=1.0, **top
    )
