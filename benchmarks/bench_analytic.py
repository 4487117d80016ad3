"""The analytic burst model against the simulation (issue 20: agreement and speed).

Run:  python benchmarks/bench_analytic.py [--full]
For each point (machine x containers x layers x strategy, seed 1, one replicate, the kernel
model's nominal values) prints the simulation's mount-phase p50, the two analytic estimates
(containers in step; spread evenly) with their errors, whether the simulation lies between
them, and the time each took. The default grid is one machine per interconnect at 10 and 100
containers; --full adds 50 and 200 containers and 1 and 20 layers (slow: minutes).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time

from cohsim.kernel.analytic import BurstModel
from cohsim.kernel.costs import load_kernel
from cohsim.kernel.launch import LaunchSim
from cohsim.kernel.linecosts import LineCosts
from cohsim.machine.catalog import Catalog
from cohsim.predict import burst_workload

MACHINES = ("m7i.metal-24xl", "m7a.24xlarge", "c6gd.metal", "r5.metal")
STRATEGIES = ("per-layer", "common-parent", "lowerdir-plus")


def point(catalog: Catalog, machine: str, n: int, layers: int, strategy: str) -> str:
    m, k = catalog.get(machine), load_kernel()
    trace = burst_workload(strategy, n, layers, seed=1)
    t0 = time.perf_counter()
    model = BurstModel(m, k, trace, layers=layers)
    lock = model.run("lockstep").mount_ns
    t1 = time.perf_counter()
    spread = model.run("uniform").mount_ns
    t2 = time.perf_counter()
    costs = LineCosts(m, seed=1)
    costs.prefill()
    t3 = time.perf_counter()
    res = LaunchSim(m, k, trace, costs=costs, seed=1, layers=layers).run()
    des = statistics.median(r.mounts_done_ns - r.start_ns for r in res)
    t4 = time.perf_counter()
    inside = min(lock, spread) <= des <= max(lock, spread)
    return (
        f"{machine:15s} {strategy:13s} {n:4d} x {layers:2d}  des {des / 1e6:9.2f} ms  "
        f"lockstep {lock / 1e6:9.2f} ({lock / des - 1:+5.0%})  uniform {spread / 1e6:9.2f} "
        f"({spread / des - 1:+5.0%})  {'inside' if inside else 'OUTSIDE'}  "
        f"[{(t1 - t0) * 1e3:5.1f} + {(t2 - t1) * 1e3:5.1f} ms vs {t4 - t3:5.2f} s]"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--full", action="store_true", help="the larger grid (minutes)")
    args = p.parse_args()
    counts, layers = ((10, 50, 100, 200), (1, 20, 50)) if args.full else ((10, 100), (50,))
    catalog = Catalog()
    for machine, n, nl, strategy in itertools.product(MACHINES, counts, layers, STRATEGIES):
        print(point(catalog, machine, n, nl, strategy), flush=True)


if __name__ == "__main__":
    main()
