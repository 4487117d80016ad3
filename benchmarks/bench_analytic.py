"""The analytic burst model against the simulation (issue 20: agreement and speed).

Run:  python benchmarks/bench_analytic.py [--full] [--speed-only | --spread]

Agreement: for each point (machine x containers x layers x strategy, seed 1, one replicate,
the kernel model's nominal values) prints the simulation's mount-phase p50 and launch p99 and
the estimate's errors (`BurstModel.estimate()`, in step: the launch p99 with the kernel's
fixed base, then without it), the two other spreads' mount p50 errors (gated, the rule of the
arbitration before 6.x; spread evenly; each its median container) for comparison, the time
the model took and the simulation's. The default grid is one machine per interconnect at 10
and 100 containers of 50 layers (about half a minute); --full adds 1, 20 and 100 layers and
50, 200 and 400 containers (minutes: 400 containers cost the simulation about 30 s each, so
only one machine gets them). The summary counts the points
within 15 % (the issue's target).

Spread (--spread): on the same grid, each engine's launch p10, p50 and p99 over the burst's
containers and the gap p99 - p50 (cohsim.kernel.analytic.spread: who finishes when), with
the estimate's errors on each.

Speed: the model alone over the catalog grid (every instance type x 8 container counts x 3
strategies at 50 layers): per prediction, 4 replicates with their own kernel draws, each with
the burst and one container alone (as cohsim.predict.closedform asks), timed in this process.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from dataclasses import replace

import numpy as np

from cohsim.kernel.analytic.burstmodel import AnalyticResult, BurstModel
from cohsim.kernel.costs import KernelParams, load_kernel
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.simulation.launch import LaunchSim
from cohsim.machine.catalog import Catalog
from cohsim.predict import burst_workload
from cohsim.predict.unknowns import draws, unknowns

MACHINES = ("m7i.metal-24xl", "m7a.24xlarge", "c6gd.metal", "r5.metal")
STRATEGIES = ("per-layer", "common-parent", "lowerdir-plus")
#: (containers, layers) of the default grid and of --full (400 containers on the first machine)
DEFAULT = ((10, 50), (100, 50))
FULL = ((10, 1), (10, 50), (10, 100), (50, 20), (50, 100), (100, 1), (100, 50), (200, 20))
LARGE = ((400, 20), (400, 50))
LOADS = (10, 25, 50, 100, 150, 200, 300, 400)  #: the catalog grid's container counts
TOLERANCE = 0.15


def _p50(result: AnalyticResult) -> float:
    """A spread's mount-phase p50 (ns)."""
    return float(np.median(result.mount_each_ns))


def point(
    catalog: Catalog, costs: dict[str, LineCosts], machine: str, n: int, layers: int, strategy: str
) -> tuple[str, tuple[float, float, float]]:
    """One line of the agreement table, and the estimate's three errors."""
    m, k = catalog.get(machine), load_kernel()
    trace = burst_workload(strategy, n, layers, seed=1)
    t0 = time.perf_counter()
    model = BurstModel(m, k, trace, layers=layers)
    est = model.estimate()
    t1 = time.perf_counter()
    gated, spread = (model.run(s) for s in ("gated", "uniform"))
    if machine not in costs:
        costs[machine] = LineCosts(m, seed=1)
        costs[machine].prefill()
    t2 = time.perf_counter()
    res = LaunchSim(m, k, trace, costs=costs[machine], seed=1, layers=layers).run()
    t3 = time.perf_counter()
    base = k.base_launch_ns
    des_m = float(np.median([r.mounts_done_ns - r.start_ns for r in res]))
    des_l = float(np.percentile([r.end_ns - r.start_ns for r in res], 99))
    est_m = float(np.median(est.mount_each_ns))
    est_l = float(np.percentile(est.launch_each_ns, 99))
    errs = (est_m / des_m - 1, (est_l + base) / (des_l + base) - 1, est_l / des_l - 1)
    flag = "" if max(abs(e) for e in errs[:2]) <= TOLERANCE else "  OUTSIDE"
    line = (
        f"{machine:15s} {strategy:13s} {n:4d} x {layers:3d}  des p50 {des_m / 1e6:9.1f} "
        f"p99 {des_l / 1e6:9.1f} ms | estimate p50 {errs[0]:+5.0%} p99 {errs[1]:+5.0%} "
        f"(no base {errs[2]:+5.0%}) | gated {_p50(gated) / des_m - 1:+5.0%} even "
        f"{_p50(spread) / des_m - 1:+5.0%} | {(t1 - t0) * 1e3:5.1f} ms vs {t3 - t2:5.2f} s{flag}"
    )
    return line, errs


def agreement(full: bool) -> None:
    catalog, costs = Catalog(), {}
    sizes = FULL if full else DEFAULT
    points = list(itertools.product(MACHINES, sizes, STRATEGIES))
    if full:
        points += [(MACHINES[0], size, s) for size in LARGE for s in STRATEGIES]
    errors = []
    for machine, (n, layers), strategy in points:
        line, errs = point(catalog, costs, machine, n, layers, strategy)
        errors.append(errs)
        print(line, flush=True)
    e = np.abs(np.array(errors))
    for i, what in enumerate(("mount p50", "launch p99", "launch p99 without the base")):
        inside = int((e[:, i] <= TOLERANCE).sum())
        print(
            f"{what}: within {TOLERANCE:.0%} on {inside} of {len(e)} points; median |error| "
            f"{np.median(e[:, i]):.1%}, largest {e[:, i].max():.1%}"
        )


def _quantiles(launch_ns: list[float] | tuple[float, ...]) -> np.ndarray:
    """A burst's launch p10, p50, p99 (ms, without the fixed base)."""
    return np.percentile(np.asarray(launch_ns, dtype=float), (10, 50, 99)) / 1e6


def spread_point(
    catalog: Catalog, costs: dict[str, LineCosts], machine: str, n: int, layers: int, strategy: str
) -> tuple[str, tuple[float, float, float]]:
    """One line of the spread table (the containers' spread: cohsim.kernel.analytic.spread):
    each engine's launch p10, p50, p99 (ms, without the fixed base) and the spread p99 - p50;
    the estimate's errors on the launch p50 and p99 with the base and on the spread."""
    m, k = catalog.get(machine), load_kernel()
    trace = burst_workload(strategy, n, layers, seed=1)
    est = _quantiles(BurstModel(m, k, trace, layers=layers).estimate().launch_each_ns)
    if machine not in costs:
        costs[machine] = LineCosts(m, seed=1)
        costs[machine].prefill()
    res = LaunchSim(m, k, trace, costs=costs[machine], seed=1, layers=layers).run()
    des = _quantiles([r.end_ns - r.start_ns for r in res])
    base = k.base_launch_ns / 1e6
    des_gap, est_gap = des[2] - des[1], est[2] - est[1]
    errs = (
        (est[1] + base) / (des[1] + base) - 1,
        (est[2] + base) / (des[2] + base) - 1,
        est_gap / des_gap - 1 if des_gap else 0.0,
    )
    line = (
        f"{machine:15s} {strategy:13s} {n:4d} x {layers:3d}  des p10/p50/p99 "
        f"{des[0]:8.1f} {des[1]:8.1f} {des[2]:8.1f} ms, p99-p50 {des_gap:7.1f} | estimate "
        f"{est[0]:8.1f} {est[1]:8.1f} {est[2]:8.1f}, p99-p50 {est_gap:7.1f} | p50 "
        f"{errs[0]:+5.0%} p99 {errs[1]:+5.0%} (with the base) p99-p50 {errs[2]:+5.0%}"
    )
    return line, errs


def spreads(full: bool) -> None:
    """The spread table over the agreement grid, and its summary."""
    catalog, costs = Catalog(), {}
    sizes = FULL if full else DEFAULT
    errors = []
    for machine, (n, layers), strategy in itertools.product(MACHINES, sizes, STRATEGIES):
        line, errs = spread_point(catalog, costs, machine, n, layers, strategy)
        errors.append(errs)
        print(line, flush=True)
    e = np.array(errors)
    for i, what in enumerate(("launch p50", "launch p99", "launch p99 - p50")):
        print(
            f"{what}: median error {np.median(e[:, i]):+.1%}, median |error| "
            f"{np.median(np.abs(e[:, i])):.1%}, within 15 % on "
            f"{int((np.abs(e[:, i]) <= TOLERANCE).sum())} of {len(e)}"
        )


def _kernels(kernel: KernelParams, replicates: int = 4) -> list[KernelParams]:
    """Replicate 0 nominal, the others with their draws of the priors (as predict does)."""
    return [
        kernel.with_values(**v) if v else kernel for v in draws(unknowns(kernel), 1, replicates)
    ]


def speed() -> None:
    catalog = Catalog()
    kernels = _kernels(load_kernel())
    names = catalog.names()
    per_prediction = []
    t0 = time.perf_counter()
    for strategy, n in itertools.product(STRATEGIES, LOADS):
        trace = burst_workload(strategy, n, 50, seed=1)
        alone = replace(trace, threads=trace.threads[:1])  # as closedform asks
        for name in names:
            m = catalog.get(name)
            t = time.perf_counter()
            for k in kernels:
                BurstModel(m, k, trace, layers=50).estimate()
                BurstModel(m, k, alone, layers=50).estimate()
            per_prediction.append(time.perf_counter() - t)
    total = time.perf_counter() - t0
    ms = sorted(x * 1e3 for x in per_prediction)
    print(
        f"catalog grid, model only ({len(names)} instance types x {len(LOADS)} loads x "
        f"{len(STRATEGIES)} strategies = {len(ms)} predictions of 4 replicates): {total:.1f} s "
        f"(workloads included); per prediction median {statistics.median(ms):.1f} ms, "
        f"p90 {ms[int(0.9 * len(ms))]:.1f} ms, max {ms[-1]:.1f} ms"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--full", action="store_true", help="the larger grid (minutes)")
    p.add_argument("--speed-only", action="store_true", help="only the model's speed")
    p.add_argument(
        "--spread", action="store_true", help="only the containers' spread against the simulation"
    )
    args = p.parse_args()
    if args.spread:
        spreads(args.full)
        return
    if not args.speed_only:
        agreement(args.full)
    speed()


if __name__ == "__main__":
    main()
