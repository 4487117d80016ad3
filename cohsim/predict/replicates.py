"""Running the replicates: one workload simulated several times on one machine, summarised.

Replicate i runs with child seed i of the one seed; replicate 0 uses the nominal kernel
parameters (the fitted ones where a calibration applies), replicate i > 0 a parameter set drawn
from the calibration's covariance when draws are given, with every unpinned prior of the kernel
model drawn too (cohsim.predict.unknowns). Replicate 0 also records every call, for the launch
breakdown (cohsim.predict.breakdown). Where the priors are drawn and the draws make an
interval, replicate 0 is also answered at the priors' two corners (every drawn prior at its
fast end, then at its slow end: cohsim.predict.unknowns.corner), which bound the interval's
ends: run by the analytic engine; for the simulation, its nominal run scaled by how far the
closed form says each corner reaches (`_corner_reach`; simulated where the closed form does
not answer the workload). With `explain`, each unpinned prior
then runs at its low and at its high end with replicate 0's seed, for the sensitivity
ranking.

Level 2 is asked for every line cost first, so that every replicate gets the same complete
table; then the replicates (and the sensitivity runs) run, in worker processes when there are
CPUs for them. Each run's result is a small picklable `Run`; the result does not depend on
how many workers ran them.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from typing import Any, Unpack

import numpy as np

from cohsim.errors import CohsimError
from cohsim.kernel.corespeed import at_clock
from cohsim.kernel.costs import KernelParams
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.priors import Prior
from cohsim.kernel.simulation.launch import LaunchSim
from cohsim.kernel.simulation.launchresult import engine_result
from cohsim.kernel.simulation.records import ThreadResult
from cohsim.machine.model import Machine
from cohsim.predict.breakdown import Call, launch_breakdown
from cohsim.predict.closedform import NOTES, analytic_replicates
from cohsim.predict.intervals import (
    MIN_DRAWS,
    Draw,
    Summary,
    method,
    scaled,
    spread,
    summarise,
)
from cohsim.predict.options import RunOptions, RunOverrides, resolve_options
from cohsim.predict.results import Prediction
from cohsim.predict.runs import ReplicateTask, Run, run_of
from cohsim.predict.unknowns import Sensitivity, corner, draws, pin, rank, unknowns
from cohsim.units import NS_PER_S
from cohsim.workload.trace import Trace


def _one(task: ReplicateTask) -> Run:
    """Simulate one replicate, the kernel's CPU work at the machine's clock
    (cohsim.kernel.corespeed; the analytic engine's replicates: `_run_all`)."""
    return _simulate(replace(task, kernel=at_clock(task.kernel, task.machine)))


def _simulate(task: ReplicateTask) -> Run:
    """Simulate one replicate (the discrete-event engine)."""
    calls: list[Call] | None = [] if task.breakdown else None
    sim = LaunchSim(
        task.machine,
        task.kernel,
        task.trace,
        costs=task.costs,
        seed=task.seed,
        layers=task.layers,
        background=task.background,
        record=task.record,
        calls=calls,
    )
    threads: list[ThreadResult] = sim.run()
    result = engine_result(sim, threads)
    breakdown = None
    if calls is not None:
        breakdown = launch_breakdown(threads, calls, task.kernel, sim.ns_write_by_op)
    return run_of(task, result, sim.record, breakdown, sim.table.ring_peak)


def _tasks(
    machine: Machine,
    trace: Trace,
    kernels: Sequence[KernelParams],
    costs: LineCosts,
    layers: int | None,
    options: RunOptions,
) -> list[ReplicateTask]:
    """One task per replicate: replicate i gets `kernels[i]` and child seed i of the seed;
    only replicate 0 keeps a record and the calls for the breakdown."""
    children = np.random.SeedSequence(options.seed).spawn(options.n_replicates)
    return [
        ReplicateTask(
            machine=machine,
            kernel=kernels[i],
            trace=trace,
            costs=costs,
            seed=int(c.generate_state(1)[0]),
            layers=layers,
            background=options.background,
            record=options.record and i == 0,
            deadline_s=options.deadline_s,
            breakdown=i == 0,
            engine=options.engine,
        )
        for i, c in enumerate(children)
    ]


def _kernels(
    kernel: KernelParams,
    samples: Sequence[KernelParams],
    priors: Sequence[Prior],
    options: RunOptions,
) -> list[KernelParams]:
    """Each replicate's kernel: replicate 0 `kernel`; replicate i > 0 the calibration's
    sample (i - 1) mod n where there are samples, with its draw of every prior in `priors`."""
    values = draws(priors, options.seed, options.n_replicates)
    base = [kernel] + [
        samples[(i - 1) % len(samples)] if samples else kernel
        for i in range(1, options.n_replicates)
    ]
    return [k.with_values(**v) if v else k for k, v in zip(base, values, strict=True)]


def _sensitivity_tasks(
    first: ReplicateTask, priors: Sequence[Prior], seed: int
) -> list[ReplicateTask]:
    """Replicate 0 again with each prior at its low end, then at its high end (the others
    nominal, the same seed); last, replicate 0 with the next child seed of `seed` (the
    simulation's own noise, to compare the swings with). None without priors."""
    if not priors:
        return []
    other = int(np.random.SeedSequence(seed).spawn(2)[1].generate_state(1)[0])
    return [
        *(
            replace(first, kernel=first.kernel.with_values(**{p.attr: end}), record=False,
                    breakdown=False)
            for p in priors
            for end in (p.low, p.high)
        ),
        replace(first, seed=other, record=False, breakdown=False),
    ]  # fmt: skip


def _corner_tasks(
    first: ReplicateTask, priors: Sequence[Prior], replicates: int
) -> list[ReplicateTask]:
    """Replicate 0 with every prior of `priors` at its fast end, then at its slow end (the
    same seed; cohsim.predict.unknowns.corner): the bounds of an interval's ends. None where
    nothing is drawn or too few draws make no interval beyond the replicates."""
    if not priors or replicates - 1 < MIN_DRAWS:
        return []
    return [
        replace(first, kernel=corner(first.kernel, priors, slow), record=False, breakdown=False)
        for slow in (False, True)
    ]


def _corner_reach(
    first: ReplicateTask, ends: Sequence[ReplicateTask], base_s: float
) -> list[float] | None:
    """How far the priors' corners reach, as the closed form prices them: each corner's
    launch p99 above the base over the same at the nominal point (milliseconds). The
    simulation's nominal run scaled by these stands for its corners, which, simulated, would
    cost two more runs, half again a default prediction. None where the closed form cannot
    answer the workload (a replayed trace): the corners are then simulated."""
    if not ends:
        return None
    closed = [replace(t, engine="analytic") for t in (first, *ends)]
    try:
        at_nominal, *at_corners = _run_all(closed, first.costs, 1)
    except CohsimError:
        return None
    reach = _p99(at_nominal.launch_s) - base_s
    if reach <= 0:
        return [1.0 for _ in at_corners]
    return [(_p99(c.launch_s) - base_s) / reach for c in at_corners]


def _run_with_corners(
    tasks: list[ReplicateTask],
    ends: list[ReplicateTask],
    more: list[ReplicateTask],
    costs: LineCosts,
    opts: RunOptions,
    base_s: float,
) -> tuple[list[Run], list[Draw], list[Run], bool]:
    """Run the replicates, the corners (unless the closed form prices them for the
    simulation: `_corner_reach`) and the `more` runs after them. Returns the replicates'
    runs, the corners as draws, the `more` runs, and whether the corners were priced."""
    reach = _corner_reach(tasks[0], ends, base_s) if opts.engine != "analytic" else None
    run_ends = ends if reach is None else []
    done = _run_all(tasks + run_ends + more, costs, opts.jobs, progress=opts.progress or bool(more))
    runs, k = done[: len(tasks)], len(tasks) + len(run_ends)
    return runs, _corner_draws(done[len(tasks) : k], reach, runs[0], base_s), done[k:], bool(reach)


def _corner_draws(
    corners: Sequence[Run], reach: Sequence[float] | None, nominal: Run, base_s: float
) -> list[Draw]:
    """The corners as draws: their runs, or the nominal run scaled by each corner's `reach`
    (`_corner_reach`)."""
    d = Draw(nominal.launch_s, nominal.mount_s)
    ran = [Draw(r.launch_s, r.mount_s) for r in corners]
    return ran + [scaled(d, f, base_s) for f in reach or ()]


def _p99(x: np.ndarray) -> float:
    return float(np.percentile(x, 99))


def _sensitivity(
    priors: Sequence[Prior], kernel: KernelParams, runs: Sequence[Run]
) -> tuple[Sensitivity, ...]:
    """The ranking from `_sensitivity_tasks`' runs (low, high per prior, in order; the last,
    the noise run, is not used here)."""
    rows = [
        Sensitivity(
            p, kernel.value(p.attr), _p99(lo.launch_s), _p99(hi.launch_s), _p99(lo.mount_s),
            _p99(hi.mount_s),
        )
        for p, lo, hi in zip(priors, runs[0:-1:2], runs[1::2], strict=True)
    ]  # fmt: skip
    return rank(rows)


def _run_all(
    tasks: list[ReplicateTask], costs: LineCosts, jobs: int | None, progress: bool = False
) -> list[Run]:
    if tasks and tasks[0].engine == "analytic":
        # milliseconds each, and no level-2 table: worker processes would cost more; the
        # replicates of one burst are priced together (cohsim.predict.closedform)
        clocked = [replace(t, kernel=at_clock(t.kernel, t.machine)) for t in tasks]
        return analytic_replicates(clocked)
    return _simulate_all(tasks, costs, jobs, progress)


def _simulate_all(
    tasks: list[ReplicateTask], costs: LineCosts, jobs: int | None, progress: bool = False
) -> list[Run]:
    """Fill `costs` (which every task holds), then run the tasks, in up to `jobs` workers;
    with `progress`, a progress bar on stderr (where it is a terminal, after a second)."""
    # Level 2 is asked everything first (its runs spread over the workers too), so that every
    # replicate gets the same complete table.
    workers = min(len(tasks), jobs if jobs is not None else len(os.sched_getaffinity(0)))

    def shown(runs: Iterable[Run]) -> list[Run]:
        if not progress:
            return list(runs)
        from tqdm import tqdm  # its import (importlib.metadata) is paid only when shown

        bar = tqdm(runs, total=len(tasks), desc="simulations", file=sys.stderr, disable=None,
                   delay=1.0, unit="run")  # fmt: skip
        return list(bar)

    if workers > 1:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            costs.prefill(pool.map)
            return shown(pool.map(_one, tasks))
    costs.prefill()
    return shown(_one(t) for t in tasks)


def _summary(
    runs: Sequence[Run], corners: Sequence[Draw], misfit_sd: float, base_s: float, deadline_s: float
) -> Summary:
    """The launch's and the mount phase's statistics and the chance of missing the deadline,
    with their joint intervals (cohsim.predict.intervals; the launch's scale above its fixed
    base `base_s`, its ends bounded by the priors' `corners`)."""
    draws = [Draw(r.launch_s, r.mount_s) for r in runs]
    return summarise(
        draws, base_s=base_s, deadline_s=deadline_s, misfit_sd=misfit_sd, corners=corners
    )


def _priors_report(
    kernel: KernelParams, drawn: Sequence[Prior], pins: Mapping[str, float], measured: Sequence[str]
) -> dict[str, Any]:
    """Which priors the replicates drew, and which were pinned (value, by whom)."""
    pinned: dict[str, Any] = {}
    for p in kernel.priors:
        if p.key in pins:
            v = pins[p.key]
            pinned[p.key] = {"value": v, "by": "user", "range": [p.low, p.high]}
            pinned[p.key]["inside_range"] = p.low <= v <= p.high
        elif p.key in measured:
            pinned[p.key] = {"value": kernel.value(p.attr), "by": "calibration (measured here)"}
    return {"drawn": [p.key for p in drawn], "pinned": pinned}


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
    pins: Mapping[str, float] | None = None,
    measured: Sequence[str] = (),
    **run: Unpack[RunOverrides],
) -> Prediction:
    """Simulate `trace` on `machine` `options.n_replicates` times and summarise.

    `options` (or its fields as keywords) says how (`RunOptions`). Replicate i > 0 uses
    `kernel_samples[(i - 1) % n]` when samples (from a calibration's covariance) are given,
    with its own draw of the kernel model's priors (unless `options.priors` is off), so the
    interval carries parameter uncertainty as well as the simulation's own variation;
    `misfit_sd` (a calibration's `misfit_sd`) then widens them (`intervals.widened`). `pins`
    sets priors to a user's values ("background.node_mounts": 2204) and `measured` names the
    priors the calibration measured on this host: neither is drawn. `machine_note`,
    `workload` and `calibration` are reported as they are.
    """
    opts = resolve_options(options, run)
    pins = dict(pins or {})
    kernel = pin(kernel, pins)
    samples = [pin(k, pins) for k in kernel_samples]
    drawn = unknowns(kernel, [*pins, *measured]) if opts.priors else ()
    costs = LineCosts(machine, model=opts.handoff_model, seed=opts.seed)
    tasks = _tasks(machine, trace, _kernels(kernel, samples, drawn, opts), costs, layers, opts)
    ranked = unknowns(kernel, [*pins, *measured]) if opts.explain else ()
    ends = _corner_tasks(tasks[0], drawn, opts.n_replicates)
    more = _sensitivity_tasks(tasks[0], ranked, opts.seed)
    base_s = kernel.base_launch_ns / NS_PER_S
    runs, corner_draws, extra, priced = _run_with_corners(tasks, ends, more, costs, opts, base_s)
    sens = _sensitivity(ranked, kernel, extra)
    noise = abs(_p99(extra[-1].launch_s) - _p99(runs[0].launch_s)) if more else 0.0
    summary = _summary(runs, corner_draws, misfit_sd, base_s, opts.deadline_s)
    return Prediction(
        machine=machine.name,
        machine_note=machine_note,
        workload=workload or {},
        containers=len(trace.threads),
        layers=layers,
        mount_ops=trace.mount_ops,
        syscalls=trace.syscalls,
        launch_s=summary.launch_s,
        mount_s=summary.mount_s,
        failures=summary.failures,
        miss_chance=summary.miss_chance,
        deadline_s=opts.deadline_s,
        lock_wait_fraction=spread([r.lock_wait_fraction for r in runs], "fraction"),
        locks=runs[0].result.locks(),
        peak_mount_table=max(r.peak_mounts for r in runs),
        peak_peer_group=max(r.peak_peer_group for r in runs),
        mountinfo_read_s=_peak_reads(runs),
        systemd=runs[0].result.systemd or {},
        profile=runs[0].result.profile,
        calibration=calibration,
        level=_levels(opts.engine, costs),
        engine=_engine(opts.engine),
        replicates=opts.n_replicates,
        seed=opts.seed,
        kernel=kernel.name,
        handoff_table=costs.table(),
        per_container_s=tuple(float(x) for x in runs[0].launch_s),
        replicate_launch_s=tuple(tuple(float(x) for x in r.launch_s) for r in runs),
        record=runs[0].record,
        misfit_sd=misfit_sd,
        breakdown=runs[0].breakdown,
        interval=method(opts.n_replicates, corners=bool(corner_draws), priced=priced),
        priors=_priors_report(kernel, drawn, pins, measured),
        sensitivity=sens,
        sensitivity_noise_s=noise,
    )


def _peak_reads(runs: Sequence[Run]) -> dict[str, float]:
    """One whole mountinfo read at the peak, in the host's and a container's namespace: the
    largest over the replicates (s)."""
    return {
        ns: round(max(r.peak_read_ns[ns] for r in runs) / NS_PER_S, 6)
        for ns in ("host", "container")
    }


def _levels(engine: str, costs: LineCosts) -> list[str]:
    """The levels that answered, from the top."""
    if engine == "analytic":
        return [
            "level 3: analytic burst model (closed form, cohsim.kernel.analytic.burstmodel)",
            "level 1: machine graph (per-CPU sums)",
        ]
    return [
        "level 3: kernel mount path and workload (discrete-event, simpy's event order)",
        costs.level,
        "level 1: machine graph (per-CPU sums, line latencies)",
    ]


def _engine(engine: str) -> dict[str, Any]:
    """The prediction's `engine` block: which engine answered, and what it reports
    differently from the simulation."""
    if engine == "analytic":
        return {"name": "analytic", **NOTES}
    return {"name": "des"}
