"""Print how a committed fit matches the mount_bench runs it saw: per run shape, the measured
and simulated worker time per sequence and, per op, measured / simulated mean call time (us).

    python -m calibration.reports.in_sample [FIT.json] [MOUNT_DATA_DIR] [strategy ...]

Default fit: calibration/fits/devvm-2cpu-intel-xeon-f6m167.json; default data: the mount runs it
was fitted to (calibration/data/devvm-2cpu-intel-xeon-f6m167/mount-wake-long/mount).
Simulated with 4 seeds.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from cohsim.calibrate import bench_of, group_runs, load_bench, load_fit
from cohsim.kernel.linecosts import LineCosts
from cohsim.machine.catalog import Catalog

ROOT = Path(__file__).resolve().parents[2]
HOST = "devvm-2cpu-intel-xeon-f6m167"


def main(argv: list[str]) -> int:
    path = argv[0] if argv and argv[0].endswith(".json") else ROOT / f"calibration/fits/{HOST}.json"
    dirs = [a for a in argv if Path(a).is_dir()]
    only = [a for a in argv if not a.endswith(".json") and a not in dirs]
    fit = load_fit(path)
    data = load_bench(
        dirs or [ROOT / "calibration" / "data" / fit.instance / "mount-wake-long" / "mount"]
    )
    machine = Catalog().get(fit.instance)
    costs = LineCosts(machine, seed=fit.seed)
    kernel = fit.host_kernel(fit.kernel_params())
    for (s, w, layers), group in group_runs(data.mount).items():
        if only and s not in only:
            continue
        sim = bench_of(fit, machine, costs).run(
            kernel, s, w, layers, group[0].baseline_mounts, seeds=[0, 1, 2, 3]
        )
        meas = statistics.median(r.stride_ns for r in group)
        line = (
            f"{s:13s} {w}w {layers:2d}L  sequence {meas / 1e3:8.1f} us measured, "
            f"{sim.stride_ns / 1e3:8.1f} simulated ({sim.stride_ns / meas - 1:+.0%}) |"
        )
        for op in sorted(group[0].op_means):
            if op in sim.op_means:
                m = statistics.median(r.op_means[op] for r in group)
                line += f" {op} {m / 1e3:.1f}/{sim.op_means[op] / 1e3:.1f}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
