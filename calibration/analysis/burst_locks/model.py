"""Where the level-3 simulation spends a traced burst's sequence, by lock, beside the trace.

    python -m calibration.analysis.burst_locks.model RUN_DIR ... [--seeds N]

For each mount_bench run folder (a traced run: mount-trace/*/run-*, its CSV says the shape,
containers, mount-table baseline and whether it sampled mountinfo), the run simulated as
calibration/reports/many_core.py simulates it (this host's committed fit, the nominal point,
`--seeds` seeds from the fit's, on the host's machine; cohsim.calibrate.mount_bench_trace and
the simulation, cohsim.kernel.simulation.launch.LaunchSim), with every namespace_sem and
pcpu_alloc_mutex wait and hold recorded by the section that made it:

- namespace_sem read, mountinfo pages: the read() sections of /proc/self/mountinfo (one per
  page of the table's text: seq_read_iter() takes the lock once a read() call, fs/
  seq_file.c:225 m_start .. :280 m_stop; fs/namespace.c:1535 down_read, :1555 up_read);
- namespace_sem read, layer clones: an overlay's clone_private_mount() of each layer;
- namespace_sem write: every write section;
- pcpu_alloc_mutex, inside a clone's read hold or elsewhere.

A wait runs from the request to running again with the lock (the wake-up and the wait for a
CPU included), as a lock:contention_begin..end span does (calibration.analysis.burst_locks.
trace). Per sequence: waits, wait time and the mean wait; sections and hold time; then the
threads' waits for a CPU, grace periods and mount_lock, and each op's mean call time,
simulated and measured (the run's CSV).

The sections are told apart by the function that updates the lock's tally (the simulation
keeps one tally a lock): a recording tally stands in for namespace_sem's and the mutex's.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

from calibration.analysis.burst_locks.trace import Batches
from cohsim.calibrate import (
    FitResult,
    MountRun,
    fit_bench_kernel,
    load_bench,
    load_fit,
    mount_bench_trace,
)
from cohsim.kernel.costs import KernelParams
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.simulation import clock
from cohsim.kernel.simulation.launch import LaunchSim
from cohsim.kernel.simulation.records import LockStats
from cohsim.machine.catalog import Catalog
from cohsim.machine.model import Machine
from cohsim.workload.trace import Trace

HOST = "devvm-16cpu-intel-xeon-f6m207"
REPO = Path(__file__).resolve().parents[3]
FIT = REPO / "calibration" / "fits" / f"{HOST}.json"
#: the function that updates a tally -> the section it belongs to
SECTIONS = {
    "read_mountinfo": "read, mountinfo pages",
    "read": "read, layer clones",
    "try_read": "read, layer clones",
    "try_read_alloc": "read, layer clones",
    "try_allocate": "elsewhere",
    "write_lock": "write",
    "write_unlock": "write",
}


def _section(frame: FrameType | None) -> str:
    """The section of the first caller outside the mutex's own module (pcpu.py)."""
    while frame is not None and frame.f_code.co_filename.endswith("pcpu.py"):
        frame = frame.f_back
    name = frame.f_code.co_name if frame is not None else "?"
    return SECTIONS.get(name, "elsewhere" if name in ("_call", "alloc") else name)


class RecordingStats(LockStats):
    """A lock's tally that also keeps each update of `wait_ns`, `hold_ns` and `acquisitions`
    under the section that made it (`SECTIONS`; for the mutex: inside which namespace_sem
    section it was taken, or "elsewhere")."""

    by: collections.defaultdict[str, list[float]]
    now: Callable[[], float] | None
    read_waits: list[tuple[float, float]]

    def __init__(self, now: Callable[[], float] | None = None) -> None:
        object.__setattr__(self, "by", _rows())
        object.__setattr__(self, "now", now)
        #: (time the wait ended, its length), ns, for the read waits (`now` given)
        object.__setattr__(self, "read_waits", [])
        super().__init__()

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("wait_ns", "hold_ns", "acquisitions") and hasattr(self, name):
            delta = value - getattr(self, name)
            section = _section(sys._getframe(1))
            row = self.by[section]  # [waits, wait ns, sections, hold ns]
            if name == "wait_ns" and delta > 0:
                row[0] += 1
                row[1] += delta
                if self.now is not None and section.startswith("read"):
                    self.read_waits.append((self.now(), delta))
            elif name == "acquisitions":
                row[2] += delta
            elif name == "hold_ns":
                row[3] += delta
        object.__setattr__(self, name, value)


def _need_sources() -> None:
    """The tallies subclass the simulation's: refused (one line) where it is compiled."""
    if not (clock.__file__ or "").endswith(".py"):
        raise SystemExit(
            "burst_locks.model: cohsim's simulation is compiled here; run it on the sources "
            "with COHSIM_PURE_PYTHON=1"
        )


def _rows() -> collections.defaultdict[str, list[float]]:
    return collections.defaultdict(lambda: [0, 0.0, 0, 0.0])


@dataclass
class Simulated:
    """One shape's simulations, summed over the seeds (ns), and their sequences."""

    sequences: int = 0
    #: section -> [waits, wait ns, sections, hold ns], namespace_sem's and the mutex's
    ns: dict[str, list[float]] = field(default_factory=lambda: _rows())
    pcpu: dict[str, list[float]] = field(default_factory=lambda: _rows())
    run_queue_ns: float = 0.0
    rcu_ns: float = 0.0
    mount_lock_ns: float = 0.0
    stride_ns: list[float] = field(default_factory=list)
    #: per seed, namespace_sem's read waits: (when each ended, its length), us
    read_waits: list[list[tuple[float, float]]] = field(default_factory=list)
    calls: dict[str, list[int]] = field(default_factory=lambda: collections.defaultdict(list))


def _clock(sim: LaunchSim) -> Callable[[], float]:
    """The simulation's time now (ns), as a function."""
    return lambda: float(sim.env.now)


@dataclass(frozen=True)
class FitRun:
    """What simulating a mount_bench run as `fit` simulates its runs takes: the fit's host,
    its line costs, the kernel as the fit has it for the run's strategy and layers."""

    fit: FitResult
    run: MountRun
    machine: Machine
    costs: LineCosts
    kernel: KernelParams

    @classmethod
    def of(cls, fit: FitResult, run: MountRun) -> FitRun:
        machine = Catalog().get(fit.instance)
        kernel = fit_bench_kernel(
            fit.host_kernel(fit.kernel_params()), fit.op_extra_ns, run.strategy, run.layers
        )
        return cls(fit, run, machine, LineCosts(machine, seed=fit.seed), kernel)

    def trace(self, seed: int) -> Trace:
        """The run's calls as the fit draws them with `seed` (its think time at the layer
        count nearest the run's)."""
        run, think = self.run, self.fit.think_ns[self.run.strategy]
        nearest = min(think, key=lambda k: abs(int(k) - run.layers))
        return mount_bench_trace(
            run.strategy,
            run.workers,
            run.layers,
            run.containers,
            sequences_per_container=run.sequences_per_container,
            think_ns=round(think[nearest]),
            rng=np.random.default_rng(seed),
            start_spread_ns=20_000.0,
            mountinfo_sample=run.sampled,
        )


def simulate(
    fit: FitResult,
    run: MountRun,
    seeds: int,
    first_seed: int = 0,
) -> Simulated:
    """`run`'s shape simulated `seeds` times as the fit simulates it, its locks recorded."""
    setup = FitRun.of(fit, run)
    machine, costs, kernel = setup.machine, setup.costs, setup.kernel
    out = Simulated()
    for j in range(first_seed, first_seed + seeds):
        seed = fit.seed + j
        trace = setup.trace(seed)
        calls: list[tuple[int, str, int, int]] = []
        _need_sources()
        sim = LaunchSim(machine, kernel, trace, costs=costs, seed=seed, layers=run.layers,
                        background=False, node_mounts=run.baseline_mounts, calls=calls)  # fmt: skip
        ns, pcpu = RecordingStats(_clock(sim)), RecordingStats()
        sim.stats["namespace_sem"] = sim.nss.stats = ns
        sim.stats["pcpu_alloc_mutex"] = sim.pcpu.stats = pcpu
        results = sim.run()
        per_worker = run.containers * run.sequences_per_container
        out.sequences += run.workers * per_worker
        out.stride_ns.append(
            statistics.fmean((r.mounts_done_ns - r.start_ns) / per_worker for r in results)
        )
        for mine, theirs in ((out.ns, ns.by), (out.pcpu, pcpu.by)):
            for k, row in theirs.items():
                mine[k] = [a + b for a, b in zip(mine[k], row, strict=True)]
        out.read_waits.append([(t / 1e3, d / 1e3) for t, d in ns.read_waits])
        out.run_queue_ns += sum(r.run_queue_ns for r in results)
        out.rcu_ns += sim.stats["rcu"].wait_ns
        out.mount_lock_ns += sim.stats["mount_lock"].wait_ns
        for _tid, op, start, end in calls:
            out.calls[op].append(end - start)
    return out


def rows(s: Simulated) -> list[str]:
    """The simulation's per-sequence tallies, one line a section."""
    n, lines = s.sequences, []
    for lock, by in (("namespace_sem", s.ns), ("pcpu_alloc_mutex", s.pcpu)):
        for k, (waits, wait, sections, hold) in sorted(by.items()):
            if not (waits or sections):
                continue
            where = f"inside {k}" if lock == "pcpu_alloc_mutex" and k != "elsewhere" else k
            lines.append(
                f"  {lock} {where:28s} {sections / n:6.1f} sections/seq "
                f"{hold / n / 1e3:8.1f} us held  {waits / n:6.1f} waits/seq "
                f"{wait / n / 1e3:9.1f} us/seq  mean {wait / max(1, waits) / 1e3:7.1f} us"
            )
    lines.append(
        f"  waiting for a CPU (run queue) {s.run_queue_ns / n / 1e3:.0f} us/seq, grace periods "
        f"{s.rcu_ns / n / 1e3:.0f}, mount_lock {s.mount_lock_ns / n / 1e3:.0f}"
    )
    if s.read_waits and s.read_waits[0]:
        lines.append(
            f"  namespace_sem read grants (first seed): {Batches.of(s.read_waits[0]).text()}"
        )
    return lines


def report(
    fit: FitResult,
    folder: Path,
    seeds: int,
    first_seed: int = 0,
    shape: tuple[str, int, int] | None = None,
) -> str:
    """The simulation of the run in `folder` (of `shape` if it holds several: the first
    repeat's settings, the repeats' median time) beside the measured per-op means."""
    runs = [r for r in load_bench([folder]).mount if shape is None or r.key == shape]
    if len({r.key for r in runs}) != 1:
        raise SystemExit(f"{folder}: name one shape of {sorted({r.key for r in runs})}")
    run = runs[0]
    measured_ns = statistics.median(r.stride_ns for r in runs)
    s = simulate(fit, run, seeds, first_seed)
    stride = statistics.fmean(s.stride_ns)
    seeds_text = (
        f"seeds {first_seed}..{first_seed + seeds - 1}" if seeds > 1 else f"seed {first_seed}"
    )
    out = [
        f"{folder.name}: {run.strategy} {run.workers} x {run.layers}, {run.containers} container(s)"
        f" a worker, sample {'yes' if run.sampled else 'no'}; model ({seeds_text}) "
        f"{stride / 1e3:.0f} us a sequence, measured {measured_ns / 1e3:.0f} "
        f"({stride / measured_ns - 1:+.0%}; {len(runs)} run(s))",
        *rows(s),
        "  per op, mean call time (us): simulated / measured",
    ]
    measured = {
        op: statistics.median(r.op_means[op] for r in runs if op in r.op_means)
        for op in run.op_means
    }
    for op, v in sorted(s.calls.items()):
        m = measured.get(op)
        tail = f" / {m / 1e3:9.1f} ({statistics.fmean(v) / m - 1:+.0%})" if m else ""
        out.append(f"    {op:18s} {statistics.fmean(v) / 1e3:9.1f}{tail}")
    return "\n".join(out)


def main(argv: Sequence[str]) -> int:
    ap = argparse.ArgumentParser(description="the simulation's lock waits for a traced run")
    ap.add_argument("runs", nargs="+", type=Path, help="mount_bench run folders")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--fit", type=Path, default=FIT)
    ap.add_argument("--first-seed", type=int, default=0, help="seeds from the fit's + this")
    ap.add_argument("--shape", help="STRATEGY,WORKERS,LAYERS: the folder's runs of this shape")
    args = ap.parse_args(argv)
    fit = load_fit(args.fit)
    shape = None
    if args.shape:
        s, w, layers = args.shape.split(",")
        shape = (s, int(w), int(layers))
    for folder in args.runs:
        text = report(fit, folder, args.seeds, args.first_seed, shape)
        print(text, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
