"""The simulation's CPU time a sequence under a committed fit, beside the traced one (us).

    python sim_cpu.py [FIT.json]

Each shape is simulated as the fit simulates it (`Calibration.mount_bench_kernel`, think
time, jitter, the fit's line costs, 4 containers x 2 sequences per worker), over 4 seeds. The
simulated CPU time is every CPU's time held by a task (`CPUs.busy_ns`: the workers' work,
think time and spinning); the traced one is the workers' time on a vCPU (`cpu_use.py` over
the plain traces of sessions 6, 8 and 9). Also the share of the vCPUs' time the workers
hold, traced and simulated (the simulation's over its whole run).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[4]
DATA = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(DATA / "session8" / "mount-trace"))
from cpu_use import cpu_use, default_traces  # noqa: E402
from sim_waits import FitSim  # noqa: E402  (session 8's: a fit's simulation of a shape)
from sleep_stacks import sequences, shape  # noqa: E402


def main(argv: list[str]) -> int:
    path = argv[0] if argv else ROOT / "calibration/fits/devvm-2cpu-intel-xeon-f6m167.json"
    fs = FitSim(path)
    print(
        "shape: worker CPU time a sequence, traced | simulated (us); vCPUs busy, traced | simulated"
    )
    for trace in default_traces():
        strategy, workers, layers = shape(Path(trace))
        wall, use = cpu_use(trace)
        real = use.get("workers", 0.0) / sequences(Path(trace))
        per_seq, share = [], []
        for seed in range(4):
            sim, _calls = fs.run(strategy, workers, layers, seed)
            cpus = sim.cpus
            per_seq.append(cpus.busy_ns() / (workers * 4 * 2) / 1e3)
            share.append(cpus.busy_ns() / (cpus.capacity * sim.env.now))
        busy = use.get("workers", 0.0) / (2 * wall)
        print(
            f"{strategy} {workers}w {layers}L: {real:.0f} | {statistics.fmean(per_seq):.0f}; "
            f"{100 * busy:.0f} % | {100 * statistics.fmean(share):.0f} %"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
