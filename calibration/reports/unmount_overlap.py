"""How the simulation's unmounts meet between workers, to set beside the session-6 traces.

    python -m calibration.reports.unmount_overlap [FIT.json]

Simulates mount_bench as the traces in
calibration/data/devvm-2cpu-intel-xeon-f6m167/mount-trace/unmount-breakdown/ ran it (2 workers,
1 layer, 100 containers per worker, no mountinfo sample) for common-parent and per-layer, with the
committed fit (default) and 2 seeds. Prints, per unmount op, how many calls overlapped another
worker's unmount and their mean time, against the calls that did not. The last line of each
case gives the two workers' phases. Both use calibration/analysis/mount_trace/overlap.py; compare
with `python -m calibration.analysis.mount_trace.overlap TRACE.txt.xz`.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from calibration.analysis.mount_trace.overlap import Call, meets, phase
from cohsim.calibrate import fit_bench_kernel, load_fit, simulate_run
from cohsim.kernel.linecosts import LineCosts
from cohsim.machine.catalog import Catalog

ROOT = Path(__file__).resolve().parents[2]
HOST = "devvm-2cpu-intel-xeon-f6m167"
TRACES = ROOT / "calibration" / "data" / HOST / "mount-trace" / "unmount-breakdown"

UNMOUNTS = ("umount", "umount_overlay", "umount_detach")


def overlaps(every: list[Call]) -> None:
    um = [c for c in every if c.kind in UNMOUNTS]
    for op in UNMOUNTS:
        mine = [c for c in um if c.kind == op]
        if not mine:
            continue
        flags = [meets(c, um) for c in mine]
        met = [c for c, f in zip(mine, flags, strict=True) if f]
        alone = [c for c, f in zip(mine, flags, strict=True) if not f]

        def mean_us(xs: list[Call]) -> str:
            return f"{statistics.fmean(c.end - c.start for c in xs):5.1f} us" if xs else "-"

        print(
            f"  {op:15s} n={len(mine):4d}  overlapping {len(met):4d} ({len(met) / len(mine):.0%})"
            f" {mean_us(met)}, alone {mean_us(alone)}"
        )


def main(argv: list[str]) -> int:
    fit = load_fit(argv[0] if argv else ROOT / "calibration" / "fits" / f"{HOST}.json")
    machine = Catalog().get(fit.instance)
    costs = LineCosts(machine, seed=fit.seed)
    base = fit.host_kernel(fit.kernel_params())
    for strategy in ("common-parent", "per-layer"):
        kernel = fit_bench_kernel(base, fit.op_extra_ns, strategy, 1)
        for seed in (0, 1):
            calls: list[tuple[int, str, int, int]] = []
            run = simulate_run(
                machine,
                kernel,
                strategy,
                2,
                1,
                containers=100,
                think_ns=fit.think_ns[strategy]["1"],
                seed=seed,
                costs=costs,
                jitter=True,
                mountinfo_sample=False,
                calls=calls,
            )
            print(f"{strategy}, 2 workers, 1 layer, seed {seed}: {run.stride_ns / 1e3:.1f} us/seq")
            every = [Call(tid, op, start / 1e3, end / 1e3) for tid, op, start, end in calls]
            overlaps(every)
            phase(every)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
