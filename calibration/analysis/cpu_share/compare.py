"""Each mount call's CPU time beside its wall time, measured by mount_bench --cpu-time and
simulated, and how much of the wait the workers spent spinning.

    python -m calibration.analysis.cpu_share.compare RUN_DIR [--fit FIT.json] [--seeds N]
        [--shapes per-layer:2:10,...]

Measured (RUN_DIR: a `cohsim bench mount --cpu-time` folder): per call kind the mean wall time
and the mean CPU time, the worker's thread CPU clock around the call less one clock read
(`run,cpu_clock_ns`), the repeats' median. Simulated: the same shape as the fit simulates its
mount_bench runs (the fit's kernel, machine and think time; cohsim.calibrate.mount_bench_trace
and the simulation), each call's CPU time from the thread clock of
calibration.analysis.cpu_share.clock, the mean over `--seeds` seeds.

Per shape: per call kind wall and CPU, measured / simulated; then per sequence the CPU spent in
the calls, and the part of it above one worker's (`extra`): what the contention added to the
CPU, the spinning of the waits (a writer spinning on namespace_sem's owner, on mount_lock, on
the allocator's mutex) and the holds made longer. A wait slept costs wall time and no CPU.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from calibration.analysis.burst_locks.model import FitRun
from calibration.analysis.cpu_share.clock import Calls, recording
from cohsim.calibrate import (
    FitResult,
    MountRun,
    load_bench,
    load_fit,
)
from cohsim.calibrate.measuredruns import LABEL_OPS
from cohsim.kernel.simulation.launch import LaunchSim

REPO = Path(__file__).resolve().parents[3]
FIT = REPO / "calibration" / "fits" / "devvm-2cpu-intel-xeon-f6m167.json"
RUNS = REPO / "calibration" / "data" / "devvm-2cpu-intel-xeon-f6m207" / "mount-cpu-time"

Shape = tuple[str, int, int]


@dataclass(frozen=True)
class OpCpu:
    """One call kind in one shape: mean wall and CPU time of a call (ns), calls a sequence."""

    wall_ns: float
    cpu_ns: float
    per_sequence: float


def measured(runs: list[MountRun]) -> dict[Shape, dict[str, OpCpu]]:
    """Per shape, per op (the simulation's names, `LABEL_OPS`), the repeats' medians; runs
    without --cpu-time are refused."""
    by: dict[Shape, list[MountRun]] = collections.defaultdict(list)
    for r in runs:
        by[r.key].append(r)
    out: dict[Shape, dict[str, OpCpu]] = {}
    for key, reps in sorted(by.items()):
        if "cpu_clock_ns" not in reps[0].labels.get("run", {}):
            raise SystemExit(f"{'/'.join(map(str, key))}: no CPU times (run without --cpu-time)")
        ops = {}
        for label, op in LABEL_OPS[key[0]].items():
            rows = [r.labels[label] for r in reps if r.labels.get(label, {}).get("count", 0) > 0]
            if not rows or "cpu_mean_ns" not in rows[0]:
                continue
            clock = statistics.median(r.labels["run"]["cpu_clock_ns"] for r in reps)
            ops[op] = OpCpu(
                statistics.median(v["mean_ns"] for v in rows),
                max(0.0, statistics.median(v["cpu_mean_ns"] for v in rows) - clock),
                statistics.median(v["calls_per_sequence"] for v in rows),
            )
        out[key] = ops
    return out


def simulated(fit: FitResult, run: MountRun, seeds: int) -> dict[str, OpCpu]:
    """`run`'s shape simulated `seeds` times as the fit simulates its runs, every call's CPU
    time on the thread clock."""
    setup = FitRun.of(fit, run)
    wall: dict[str, list[int]] = collections.defaultdict(list)
    cpu: dict[str, list[int]] = collections.defaultdict(list)
    sequences = 0
    for j in range(seeds):
        seed = fit.seed + j
        trace = setup.trace(seed)
        with recording() as rec:
            sim = LaunchSim(setup.machine, setup.kernel, trace, costs=setup.costs, seed=seed,
                            layers=run.layers, background=False,
                            node_mounts=run.baseline_mounts, calls=Calls(rec))  # fmt: skip
            sim.run()
        calls = sim.calls
        assert isinstance(calls, Calls)
        for (_tid, op, start, end), c in zip(calls, calls.cpu, strict=True):
            wall[op].append(end - start)
            cpu[op].append(c)
        sequences += run.workers * run.containers * run.sequences_per_container
    return {
        op: OpCpu(statistics.fmean(wall[op]), statistics.fmean(cpu[op]), len(wall[op]) / sequences)
        for op in wall
    }


def in_calls(ops: dict[str, OpCpu]) -> float:
    """CPU time a sequence spends in its calls (ns)."""
    return sum(o.cpu_ns * o.per_sequence for o in ops.values())


def report(fit: FitResult, runs: list[MountRun], seeds: int, shapes: list[Shape]) -> str:
    """The table: per shape, per op, then the sequence's CPU and its extra over one worker's
    (where the runs hold the same strategy and layers at one worker)."""
    meas = measured(runs)
    first = {r.key: r for r in reversed(runs)}
    sims: dict[Shape, dict[str, OpCpu]] = {}

    def sim(key: Shape) -> dict[str, OpCpu]:
        if key not in sims:
            sims[key] = simulated(fit, first[key], seeds)
        return sims[key]

    def cpu(key: Shape) -> tuple[float, float]:
        m, s = meas[key], sim(key)
        return in_calls(m), in_calls({op: s[op] for op in m if op in s})

    lines = [f"fit {fit.instance}; {seeds} seed(s); per call: wall / CPU us, measured | simulated"]
    for key in shapes or sorted(meas):
        if key not in meas:
            raise SystemExit(f"{'/'.join(map(str, key))}: not in the runs")
        (mc, sc), one = cpu(key), (key[0], 1, key[2])
        extra = ""
        if one in meas and key != one:
            m1, s1 = cpu(one)
            extra = f"; extra over 1 worker: {(mc - m1) / 1e3:.1f} | {(sc - s1) / 1e3:.1f}"
        lines.append(
            f"{key[0]} {key[1]} x {key[2]}: CPU in the calls a sequence "
            f"{mc / 1e3:.1f} | {sc / 1e3:.1f} us{extra}"
        )
        s = sim(key)
        for op, o in meas[key].items():
            t = s.get(op)
            sim_text = f"{t.wall_ns / 1e3:9.1f} / {t.cpu_ns / 1e3:7.1f}" if t else "        -"
            lines.append(
                f"    {op:18s} {o.wall_ns / 1e3:9.1f} / {o.cpu_ns / 1e3:7.1f} | {sim_text}"
            )
    return "\n".join(lines)


def _shape(text: str) -> Shape:
    strategy, workers, layers = text.split(":")
    return (strategy, int(workers), int(layers))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="?", type=Path, default=RUNS, help="a --cpu-time run folder")
    ap.add_argument("--fit", type=Path, default=FIT, help="the fit that simulates them")
    ap.add_argument("--seeds", type=int, default=2, help="simulations a shape (default 2)")
    ap.add_argument("--shapes", default="", help="strategy:workers:layers,... (default all)")
    a = ap.parse_args(argv)
    shapes = [_shape(t) for t in a.shapes.split(",") if t]
    print(report(load_fit(a.fit), load_bench([a.runs]).mount, a.seeds, shapes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
