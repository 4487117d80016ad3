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

from cohsim.benchdata import simulate_run
from cohsim.calibrate import load_fit
from cohsim.catalog import Catalog
from cohsim.contention import LineCosts
from cohsim.kernel import load_kernel
from cohsim.launch import LaunchSim

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[4]
sys.path.insert(0, str(HERE))
from cpu_use import DEFAULT, cpu_use  # noqa: E402
from sleep_stacks import sequences  # noqa: E402

DATA = HERE.parent.parent


def shape(name: str) -> tuple[str, int, int]:
    """("common-parent", 2, 1) from ".../trace-common-parent-2w-1L.txt.xz"."""
    stem = Path(name).name.removesuffix(".txt.xz").split("-", 1)[1]
    strategy, w, layers = stem.rsplit("-", 2)
    return strategy, int(w.removesuffix("w")), int(layers.removesuffix("L"))


def main(argv: list[str]) -> int:
    path = argv[0] if argv else ROOT / "calibration/fits/devvm-2cpu-intel-xeon-f6m167.json"
    fit = load_fit(path)
    machine = Catalog().get(fit.instance_)
    kernel = fit.host_kernel(fit.kernel_params(load_kernel(fit.kernel)))
    costs = LineCosts(machine, seed=fit.seed)
    print(
        "shape: worker CPU time a sequence, traced | simulated (us); vCPUs busy, traced | simulated"
    )
    for trace in DEFAULT:
        strategy, workers, layers = shape(trace)
        wall, use = cpu_use(str(DATA / trace))
        real = use.get("workers", 0.0) / sequences(DATA / trace)
        k = fit.mount_bench_kernel(kernel, strategy, layers)
        per_seq, share = [], []
        for seed in range(4):
            sims: list[LaunchSim] = []
            simulate_run(
                machine,
                k,
                strategy,
                workers,
                layers,
                containers=4,
                think_ns=fit.think_ns_[strategy][str(layers)],
                seed=seed,
                costs=costs,
                jitter=True,
                sims=sims,
            )
            cpus = sims[0].cpus
            per_seq.append(cpus.busy_ns() / (workers * 4 * 2) / 1e3)
            share.append(cpus.busy_ns() / (cpus.capacity * sims[0].env.now))
        busy = use.get("workers", 0.0) / (2 * wall)
        print(
            f"{strategy} {workers}w {layers}L: {real:.0f} | {statistics.fmean(per_seq):.0f}; "
            f"{100 * busy:.0f} % | {100 * statistics.fmean(share):.0f} %"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
