"""Container launch prediction (the product's headline): `predict` and `replay`.

`predict` synthesises containerd's mount sequences for a strategy (cohsim.workload.synth), runs them on
a catalog machine against the kernel model (cohsim.kernel.launch, asking level 2 for line costs), and
summarises launch latency per container. `replay` does the same for a parsed trace.

Uncertainty: the simulation is run several times (replicates); each reported statistic is the
median over replicates with the replicates' range as its interval. Replicate 0 uses the fitted
parameters; the others use parameter sets drawn from the calibration's covariance (and their
own seeds), so the interval carries the fit's uncertainty. Without a fit, it only covers the
simulation's own randomness and says so. With a kernel fit, the mount phase's intervals are
then widened by the model's own error on the fitted host (`Calibration.misfit_sd`: the
in-sample scatter of the worker time per sequence), as a lognormal factor covering
`MISFIT_LEVEL` of it; each launch statistic's interval by the same absolute amount as the
mount phase's (the rest of a launch is not calibrated). The misfit was seen at 1-4 workers
on the fitted host; on a larger machine the model's error may well be larger.

Calibration: by default the committed fit that describes the machine (`calibrate.default_fit`)
is used for what it applies to — a kernel fit to every instance, a lock fit only to the
instances it names; `calibration="none"` uses the catalog and kernel files as they are.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import statistics
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cohsim import __version__
from cohsim.errors import CohsimError
from cohsim.kernel.costs import KernelParams, load_kernel
from cohsim.kernel.launch import LaunchRecord, LaunchSim, ThreadResult
from cohsim.kernel.linecosts import LineCosts
from cohsim.machine.catalog import Catalog
from cohsim.machine.model import Machine
from cohsim.workload.parse import parse_trace
from cohsim.workload.synth import STRATEGIES, synthesize
from cohsim.workload.trace import ThreadTrace, Trace

SCHEMA = 1
STATS = ("p50", "p95", "p99", "max")
MISFIT_LEVEL = 0.9  #: central share of the model's misfit the widened intervals cover


@dataclass(frozen=True)
class Interval:
    """A value with its interval bounds and unit."""

    value: float
    low: float
    high: float
    unit: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": round(self.value, 6),
            "low": round(self.low, 6),
            "high": round(self.high, 6),
            "unit": self.unit,
        }


@dataclass(frozen=True)
class Prediction:
    """What `cohsim predict` / `cohsim replay` report."""

    machine: str
    machine_note: str  #: e.g. which instance `--arch` chose
    workload: dict[str, Any]
    containers: int
    layers: int | None
    mount_ops: int
    syscalls: int
    launch_s: dict[str, Interval]
    mount_s: dict[str, Interval]  #: the mount phase alone: first mount syscall to the last
    failures: Interval
    deadline_s: float
    lock_wait_fraction: Interval
    locks: dict[str, Any]
    peak_mount_table: int
    calibration: str
    level: list[str]
    replicates: int
    seed: int
    kernel: str
    handoff_table: dict[str, dict[int, float]]
    per_container_s: tuple[float, ...] = field(repr=False)
    record: LaunchRecord | None = field(default=None, repr=False, compare=False)
    #: the model's misfit on the fitted host (log sd of the worker time per sequence), which
    #: widened the intervals; 0 without a kernel fit
    misfit_sd: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "machine": self.machine,
            "machine_note": self.machine_note,
            "workload": self.workload,
            "containers": self.containers,
            "layers": self.layers,
            "mount_ops": self.mount_ops,
            "syscalls": self.syscalls,
            "launch_s": {k: v.to_dict() for k, v in self.launch_s.items()},
            "mount_s": {k: v.to_dict() for k, v in self.mount_s.items()},
            "failures": self.failures.to_dict(),
            "deadline_s": self.deadline_s,
            "lock_wait_fraction": self.lock_wait_fraction.to_dict(),
            "locks": self.locks,
            "peak_mount_table": self.peak_mount_table,
            "calibration": self.calibration,
            "level": self.level,
            "replicates": self.replicates,
            "seed": self.seed,
            "kernel": self.kernel,
            "handoff_table_ns": self.handoff_table,
            "model_misfit": {
                "log_sd": round(self.misfit_sd, 6),
                "level": MISFIT_LEVEL,
                "widens": "mount_s intervals (lognormal factor); launch_s by the same amount",
            },
            "provenance": {"cohsim_version": __version__, "seed": self.seed},
        }


def resolve_calibration(
    spec: str | None, machine: Machine, kernel: KernelParams, samples: int, seed: int
) -> tuple[Machine, KernelParams, list[KernelParams], str, float]:
    """Apply a fit: `spec` None (the committed default), "none", or a fit JSON path. Returns
    the machine, the kernel, parameter draws, a note saying what was used, and the model's
    misfit on the fitted host where a kernel fit applies (0 otherwise)."""
    from cohsim.calibrate import default_fit, load_fit

    if spec == "none":
        return machine, kernel, [], "none (catalog and kernel files as they are)", 0.0
    cal = load_fit(spec) if spec is not None else default_fit(machine.name.split("+")[0])
    if cal is None:
        return machine, kernel, [], "none (no committed fit describes this machine)", 0.0
    applies = getattr(cal, "applies_to_", None) or cal._applies_to()
    used, notes = [], []
    fitted_kernel, draws, misfit = kernel, [], 0.0
    if "kernel" in applies:
        fitted_kernel = cal.kernel_params(kernel)
        if samples:
            draws = cal.sample_kernels(kernel, samples, seed)
        misfit = cal.misfit_sd("stride_ns")
        used.append("kernel")
        notes.append(applies["kernel"].get("caveat", ""))
    lock = applies.get("lock", {})
    base_name = machine.name.split("+")[0]
    if base_name in lock.get("instances", []) or machine.family in lock.get("families", []):
        machine = cal.machine(machine)
        fitted_kernel = cal.host_kernel(fitted_kernel)
        draws = [cal.host_kernel(d) for d in draws]
        used.append("lock")
    if not used:
        return machine, kernel, [], f"none ({cal.instance_}'s fit does not apply here)", 0.0
    source = spec if spec is not None else f"committed fit of {cal.instance_}"
    note = f"{source}: {' and '.join(used)} parameters"
    if notes and notes[0]:
        note += f" (caveat: {notes[0]})"
    return machine, fitted_kernel, draws, note, misfit


def resolve_machine(
    catalog: Catalog,
    *,
    arch: str | None,
    instance: str | None,
    smt: bool = True,
    sockets: int | None = None,
) -> tuple[Machine, str]:
    """The machine to predict for, and a note saying how it was chosen."""
    if (arch is None) == (instance is None):
        raise CohsimError("give exactly one of --arch and --instance")
    if arch is not None:
        a = catalog.archetype(arch)
        m, note = catalog.get(a.instance), f"--arch {arch} is {a.instance}: {a.why}"
    else:
        m, note = catalog.get(str(instance)), ""
    if sockets is not None:
        m = m.with_sockets(sockets)
    return m.with_smt(smt), note


def _summarise(
    per: list[np.ndarray], values: list[dict[str, float]]
) -> tuple[dict[str, Interval], dict[str, Interval]]:
    launch = {}
    for s in STATS:
        q = {"p50": 50, "p95": 95, "p99": 99, "max": 100}[s]
        xs = [float(np.percentile(p, q)) for p in per]
        launch[s] = Interval(float(np.median(xs)), min(xs), max(xs), "s")
    extra = {}
    for key in values[0]:
        xs = [v[key] for v in values]
        extra[key] = Interval(
            float(np.median(xs)),
            min(xs),
            max(xs),
            "containers" if key == "failures" else "fraction",
        )
    return launch, extra


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


def _one(
    machine: Machine,
    kernel: KernelParams,
    trace: Trace,
    costs: LineCosts,
    seed: int,
    layers: int | None,
    background: bool,
    record: bool,
    deadline_s: float,
) -> _Run:
    sim = LaunchSim(
        machine,
        kernel,
        trace,
        costs=costs,
        seed=seed,
        layers=layers,
        background=background,
        record=record,
    )
    res: list[ThreadResult] = sim.run()
    launch = np.array([(r.end_ns - r.start_ns + kernel.base_launch_ns) / 1e9 for r in res])
    mounts = np.array([(r.mounts_done_ns - r.start_ns) / 1e9 for r in res])
    busy = sum(r.end_ns - r.start_ns for r in res)
    wait = sum(r.lock_wait_ns for r in res)
    locks = {name: st.to_dict() for name, st in sim.stats.items()}
    locks["rcu"]["grace_periods"] = sim.rcu.count
    locks["mount_lock"]["legitimize_fallbacks"] = sim.ml.legitimize
    locks["namespace_sem"]["mountinfo_reads"] = sim.mountinfo_reads
    locks["seqcount_spin"]["background_spin_s"] = round(float(sim.ml.bg_spin_ns) / 1e9, 6)
    return _Run(
        launch,
        mounts,
        float((launch > deadline_s).sum()),
        wait / busy if busy else 0.0,
        locks,
        sim.peak_mounts,
        sim.record,
    )


def _one_packed(args: tuple[Any, ...]) -> _Run:
    return _one(*args)


def run_workload(
    machine: Machine,
    trace: Trace,
    *,
    kernel: KernelParams,
    seed: int = 0,
    replicates: int = 2,
    layers: int | None = None,
    deadline_s: float = 30.0,
    handoff_model: str = "des",
    background: bool = True,
    record: bool = False,
    machine_note: str = "",
    workload: dict[str, Any] | None = None,
    calibration: str = "none (catalog and kernel defaults)",
    kernel_samples: Sequence[KernelParams] = (),
    jobs: int | None = None,
    misfit_sd: float = 0.0,
) -> Prediction:
    """Simulate `trace` on `machine` `replicates` times and summarise.

    Replicate i runs with child seed i of `seed`; replicate 0 uses `kernel`, replicate i > 0
    uses `kernel_samples[(i - 1) % n]` when samples (from a calibration's covariance) are given,
    so the interval carries parameter uncertainty as well as the simulation's own variation.
    `misfit_sd` (a calibration's `misfit_sd`) then widens them (`_widen`).
    Replicates run in up to `jobs` worker processes (default: the CPUs this process may use);
    the result does not depend on how many.
    """
    if replicates < 1:
        raise CohsimError(f"replicates must be at least 1, not {replicates}")
    if deadline_s <= 0:
        raise CohsimError(f"deadline must be positive, not {deadline_s}")
    children = np.random.SeedSequence(seed).spawn(replicates)
    costs = LineCosts(machine, model=handoff_model, seed=seed)
    kernels = [kernel] + [
        kernel_samples[(i - 1) % len(kernel_samples)] if kernel_samples else kernel
        for i in range(1, replicates)
    ]
    tasks = [  # `costs` is filled in below, before any task is sent to a worker
        (
            machine,
            kernels[i],
            trace,
            costs,
            int(c.generate_state(1)[0]),
            layers,
            background,
            record and i == 0,
            deadline_s,
        )
        for i, c in enumerate(children)
    ]

    # Level 2 is asked everything first (its runs spread over the workers too), so that every
    # replicate gets the same complete table.
    workers = min(replicates, jobs if jobs is not None else len(os.sched_getaffinity(0)))
    if workers > 1:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            costs.prefill(pool.map)
            runs = list(pool.map(_one_packed, tasks))
    else:
        costs.prefill()
        runs = [_one(*t) for t in tasks]
    per = [r.launch_s for r in runs]
    values = [{"failures": r.failures, "lock_wait_fraction": r.lock_wait_fraction} for r in runs]
    launch_s, extra = _summarise(per, values)
    mount_s, _ = _summarise([r.mount_s for r in runs], values)
    if misfit_sd:
        launch_s, mount_s = _widen(launch_s, mount_s, misfit_sd)
    first = runs[0]
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
        deadline_s=deadline_s,
        lock_wait_fraction=extra["lock_wait_fraction"],
        locks=first.locks,
        peak_mount_table=max(r.peak_mounts for r in runs),
        calibration=calibration,
        level=[
            "level 3: kernel mount path and workload (simpy)",
            costs.level,
            "level 1: machine graph (per-CPU sums, line latencies)",
        ],
        replicates=replicates,
        seed=seed,
        kernel=kernel.name,
        handoff_table=costs.table(),
        per_container_s=tuple(float(x) for x in per[0]),
        record=first.record,
        misfit_sd=misfit_sd,
    )


def _widen(
    launch_s: dict[str, Interval], mount_s: dict[str, Interval], misfit_sd: float
) -> tuple[dict[str, Interval], dict[str, Interval]]:
    """The intervals widened by the model's misfit: each mount-phase bound by the lognormal
    factor exp(z misfit_sd) covering `MISFIT_LEVEL`, each launch statistic's bounds by the
    same absolute amount as the mount phase's statistic of the same name."""
    f = math.exp(statistics.NormalDist().inv_cdf(0.5 + MISFIT_LEVEL / 2) * misfit_sd)
    mount = {k: Interval(v.value, v.low / f, v.high * f, v.unit) for k, v in mount_s.items()}
    launch = {
        k: Interval(
            v.value,
            max(0.0, v.low - (mount_s[k].low - mount[k].low)),
            v.high + (mount[k].high - mount_s[k].high),
            v.unit,
        )
        for k, v in launch_s.items()
    }
    return launch, mount


@dataclass(frozen=True)
class _Target:
    """What `predict` and `replay` run their workload on, as their callers name it: the
    machine (catalog kind or instance, SMT, sockets), the kernel and the calibration."""

    arch: str | None
    instance: str | None
    smt: bool
    sockets: int | None
    kernel: str | None
    calibration: str | None
    catalog: Catalog | None

    def simulate(self, trace: Trace, *, workload: dict[str, Any], **run: Any) -> Prediction:
        """Pick the machine, apply the calibration, run the replicates."""
        machine, note = resolve_machine(
            self.catalog or Catalog(),
            arch=self.arch,
            instance=self.instance,
            smt=self.smt,
            sockets=self.sockets,
        )
        replicates, seed = run.get("replicates", 2), run.get("seed", 0)
        machine, kparams, draws, cal_note, misfit = resolve_calibration(
            self.calibration, machine, load_kernel(self.kernel), replicates - 1, seed
        )
        return run_workload(
            machine,
            trace,
            kernel=kparams,
            kernel_samples=draws,
            calibration=cal_note,
            misfit_sd=misfit,
            machine_note=note,
            workload=workload,
            **run,
        )


def predict(
    *,
    arch: str | None = None,
    instance: str | None = None,
    containers: int = 100,
    layers: int = 50,
    strategy: str = "per-layer",
    smt: bool = True,
    sockets: int | None = None,
    kernel: str | None = None,
    calibration: str | None = None,
    catalog: Catalog | None = None,
    **run: Any,
) -> Prediction:
    """How long `containers` containers of an L-layer image take to start, launched at once.

    `run` takes `run_workload`'s options (seed, replicates, deadline_s, handoff_model,
    background, record, jobs)."""
    if strategy not in STRATEGIES:
        raise CohsimError(f"unknown strategy {strategy!r} (expected {', '.join(STRATEGIES)})")
    if containers < 1 or layers < 1:
        raise CohsimError("containers and layers must be at least 1")
    trace = burst_workload(strategy, containers, layers, seed=run.get("seed", 0))
    target = _Target(arch, instance, smt, sockets, kernel, calibration, catalog)
    workload = {"strategy": strategy, "arrival": "all at once"}
    return target.simulate(trace, layers=layers, workload=workload, **run)


def replay(
    path: str,
    *,
    arch: str | None = None,
    instance: str | None = None,
    smt: bool = True,
    sockets: int | None = None,
    kernel: str | None = None,
    calibration: str | None = None,
    catalog: Catalog | None = None,
    format: str = "auto",
    lenient: bool = False,
    layers: int | None = None,
    **run: Any,
) -> Prediction:
    """A real strace/perf trace replayed on a machine model: every traced thread issues its
    syscalls, with its own think times. `run` as for `predict`."""
    trace = parse_trace(path, format=format, lenient=lenient)
    if not trace.threads:
        raise CohsimError("the trace has no mount-related syscalls to replay", path)
    workload = {
        "trace": Path(path).name,
        "format": trace.format,
        "unknown_skipped": trace.unknown_skipped,
        "malformed_skipped": trace.malformed_skipped,
    }
    target = _Target(arch, instance, smt, sockets, kernel, calibration, catalog)
    return target.simulate(trace, layers=layers, workload=workload, **run)


def burst_workload(strategy: str, containers: int, layers: int, *, seed: int = 0) -> Trace:
    """`containers` containers launched at once: containerd's sequence for one container,
    synthesised once and given to every container's thread. Same syscalls, flags and counts
    as `synthesize(strategy, containers, layers)`; only the (cost-free) path names repeat,
    which keeps a 1,000-container prediction from spending seconds writing paths."""
    one = synthesize(strategy, 1, layers, seed=seed)
    events = one.threads[0].events
    first = one.threads[0].tid
    threads = tuple(ThreadTrace(first + k, events) for k in range(containers))
    return Trace(
        threads=threads,
        source=f"synth:{strategy}:{containers}x{layers}",
        format="synth",
        meta=one.meta,
    )
