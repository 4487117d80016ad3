"""A traced thread's calls, worked out before the launch simulation (cohsim.kernel.launch) runs
them: what each call costs and does, and the factor by which each call's own work varies.

Planning: per call, the think time before it, its op (cohsim.kernel.classify), the op's costs
(cohsim.kernel.costs) for the call's layer count, its mount_lock section's work (with the
per-CPU counter sum where the op does one), and what it does to the mount table. Everything a
call needs that does not change during the run, so the simulation's hot loop does not work it
out again.

Call-to-call variation: each call's own work is its cost times exp(`call_sigma` Z), one
standard normal Z per call, drawn in blocks from a stream of its own (`CallFactors`), so that
how often the simulation's other generator is drawn does not move them (common random numbers
in calibration).
"""

from __future__ import annotations

import numpy as np

from cohsim.kernel.classify import ThreadState, classify, layers_of
from cohsim.kernel.costs import KernelParams, OpCost
from cohsim.workload.trace import SyscallEvent

#: a planned call: think time, op name, op, walk ns, unlocked work ns, per-layer read
#: sections, mount_lock section work ns (0: none), mount-table change
Step = tuple[int, str, OpCost, float, float, int, float, int]

#: what a successful call does to the mount table
TABLE_DELTA = {
    "move_mount": +1,
    "mount_overlay": +1,
    "umount_detach": -1,
    "umount": -1,
    "umount_overlay": -1,
}


class CallFactors:
    """Per-call work factors exp(sigma Z), drawn in blocks from their own stream of `seed`."""

    def __init__(self, sigma: float, seed: int) -> None:
        self.sigma = sigma
        self.rng = np.random.default_rng([seed, 1])
        self.buf: list[float] = []
        self.i = 0

    def __call__(self) -> float:
        if not self.sigma:
            return 1.0
        if self.i == len(self.buf):
            self.buf = np.exp(self.sigma * self.rng.standard_normal(4096)).tolist()
            self.i = 0
        self.i += 1
        return self.buf[self.i - 1]


def plan_calls(
    events: tuple[SyscallEvent, ...],
    kernel: KernelParams,
    layers: int | None,
    percpu_sum_ns: float,
) -> list[Step]:
    """Per event: think time before it, op name, op cost, walk and unlocked work (ns), its
    per-layer namespace_sem read sections, its mount_lock section's work (ns; 0: none) and
    what it does to the mount table. `layers` fixes every call's layer count (None: count
    them from the trace); `percpu_sum_ns` is what the per-CPU counter sum costs inside the
    mount_lock section of an op that does one."""
    k, state = kernel, ThreadState()
    layer_counts = layers_of(events) if layers is None else [layers] * len(events)
    steps: list[Step] = []
    for i, e in enumerate(events):
        think = 0
        if i and events[i - 1].duration_ns is not None:
            think = max(0, e.start_ns - events[i - 1].end_ns)
        name = classify(e, state)
        op = k.op(name)
        n = layer_counts[i]
        walk_ns = (op.walks + op.walks_per_layer * n) * k.walk_ns
        cpu = op.cpu_ns + op.per_layer_cpu_ns * n
        ml_work = op.mount_lock_ns + (percpu_sum_ns if op.percpu_sum else 0.0)
        delta = TABLE_DELTA.get(name, 0)
        steps.append((think, name, op, walk_ns, cpu, op.layer_reads * n, ml_work, delta))
    return steps
