"""Running the replicates: one workload simulated several times on one machine, summarised.

Replicate i runs with child seed i of the one seed; replicate 0 uses the fitted kernel
parameters, replicate i > 0 a parameter set drawn from the calibration's covariance when
draws are given. Level 2 is asked for every line cost first, so that every replicate gets
the same complete table; then the replicates run, in worker processes when there are CPUs
for them. Each replicate's result is a small picklable `_Run`; the result does not depend on
how many workers ran them.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Unpack

import numpy as np

from cohsim.kernel.costs import KernelParams
from cohsim.kernel.launch import LaunchSim
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.records import LaunchRecord, ThreadResult
from cohsim.machine.model import Machine
from cohsim.predict.intervals import summarise, widen
from cohsim.predict.options import RunOptions, RunOverrides, resolve_options
from cohsim.predict.results import Prediction
from cohsim.units import NS_PER_S
from cohsim.workload.trace import Trace


@dataclass(frozen=True)
class _Task:
    """One replicate to run (picklable: it may be sent to a worker process)."""

    machine: Machine
    kernel: KernelParams
    trace: Trace
    costs: LineCosts
    seed: int
    layers: int | None
    background: bool
    record: bool
    deadline_s: float


@dataclass(frozen=True)
class _Run:
    """What one replicate gives back (picklable: replicates may run in worker processes)."""

    launch_s: np.ndarray
    mount_s: np.ndarray
    failures: float
    lock_wait_fraction: float
    locks: dict[str, Any]
    peak_mounts: int
    record: LaunchRecord | None


def _one(task: _Task) -> _Run:
    """Simulate one replicate."""
    kernel = task.kernel
    sim = LaunchSim(
        task.machine,
        kernel,
        task.trace,
        costs=task.costs,
        seed=task.seed,
        layers=task.layers,
        background=task.background,
        record=task.record,
    )
    res: list[ThreadResult] = sim.run()
    launch = np.array([(r.end_ns - r.start_ns + kernel.base_launch_ns) / NS_PER_S for r in res])
    mounts = np.array([(r.mounts_done_ns - r.start_ns) / NS_PER_S for r in res])
    busy = sum(r.end_ns - r.start_ns for r in res)
    wait = sum(r.lock_wait_ns for r in res)
    locks = {name: st.to_dict() for name, st in sim.stats.items()}
    locks["rcu"]["grace_periods"] = sim.rcu.count
    locks["mount_lock"]["legitimize_fallbacks"] = sim.ml.legitimize
    locks["namespace_sem"]["mountinfo_reads"] = sim.mountinfo_reads
    locks["seqcount_spin"]["background_spin_s"] = round(float(sim.ml.bg_spin_ns) / NS_PER_S, 6)
    return _Run(
        launch,
        mounts,
        float((launch > task.deadline_s).sum()),
        wait / busy if busy else 0.0,
        locks,
        sim.peak_mounts,
        sim.record,
    )


def _tasks(
    machine: Machine,
    trace: Trace,
    kernels: Sequence[KernelParams],
    costs: LineCosts,
    layers: int | None,
    options: RunOptions,
) -> list[_Task]:
    """One task per replicate: replicate i gets `kernels[i]` and child seed i of the seed;
    only replicate 0 keeps a record."""
    children = np.random.SeedSequence(options.seed).spawn(options.replicates)
    return [
        _Task(
            machine=machine,
            kernel=kernels[i],
            trace=trace,
            costs=costs,
            seed=int(c.generate_state(1)[0]),
            layers=layers,
            background=options.background,
            record=options.record and i == 0,
            deadline_s=options.deadline_s,
        )
        for i, c in enumerate(children)
    ]


def _run_all(tasks: list[_Task], costs: LineCosts, jobs: int | None) -> list[_Run]:
    """Fill `costs` (which every task holds), then run the tasks, in up to `jobs` workers."""
    # Level 2 is asked everything first (its runs spread over the workers too), so that every
    # replicate gets the same complete table.
    workers = min(len(tasks), jobs if jobs is not None else len(os.sched_getaffinity(0)))
    if workers > 1:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            costs.prefill(pool.map)
            return list(pool.map(_one, tasks))
    costs.prefill()
    return [_one(t) for t in tasks]


def run_workload(
    machine: Machine,
    trace: Trace,
    *,
    kernel: KernelParams,
    options: RunOptions | None = None,
    layers: int | None = None,
    machine_note: str = "",
    workload: dict[str, Any] | None = None,
    calibration: str = "none (catalog and kernel defaults)",
    kernel_samples: Sequence[KernelParams] = (),
    misfit_sd: float = 0.0,
    **run: Unpack[RunOverrides],
) -> Prediction:
    """Simulate `trace` on `machine` `options.replicates` times and summarise.

    `options` (or its fields as keywords) says how (`RunOptions`). Replicate i > 0 uses
    `kernel_samples[(i - 1) % n]` when samples (from a calibration's covariance) are given, so
    the interval carries parameter uncertainty as well as the simulation's own variation;
    `misfit_sd` (a calibration's `misfit_sd`) then widens them (`intervals.widen`).
    `machine_note`, `workload` and `calibration` are reported as they are.
    """
    opts = resolve_options(options, run)
    costs = LineCosts(machine, model=opts.handoff_model, seed=opts.seed)
    kernels = [kernel] + [
        kernel_samples[(i - 1) % len(kernel_samples)] if kernel_samples else kernel
        for i in range(1, opts.replicates)
    ]
    runs = _run_all(_tasks(machine, trace, kernels, costs, layers, opts), costs, opts.jobs)
    per = [r.launch_s for r in runs]
    values = [{"failures": r.failures, "lock_wait_fraction": r.lock_wait_fraction} for r in runs]
    launch_s, extra = summarise(per, values)
    mount_s, _ = summarise([r.mount_s for r in runs], values)
    if misfit_sd:
        launch_s, mount_s = widen(launch_s, mount_s, misfit_sd)
    return Prediction(
        machine=machine.name,
        machine_note=machine_note,
        workload=workload or {},
        containers=len(trace.threads),
        layers=layers,
        mount_ops=trace.mount_ops,
        syscalls=trace.syscalls,
        launch_s=launch_s,
        mount_s=mount_s,
        failures=extra["failures"],
        deadline_s=opts.deadline_s,
        lock_wait_fraction=extra["lock_wait_fraction"],
        locks=runs[0].locks,
        peak_mount_table=max(r.peak_mounts for r in runs),
        calibration=calibration,
        level=[
            "level 3: kernel mount path and workload (simpy)",
            costs.level,
            "level 1: machine graph (per-CPU sums, line latencies)",
        ],
        replicates=opts.replicates,
        seed=opts.seed,
        kernel=kernel.name,
        handoff_table=costs.table(),
        per_container_s=tuple(float(x) for x in per[0]),
        record=runs[0].record,
        misfit_sd=misfit_sd,
    )
