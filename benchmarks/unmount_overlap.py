"""How the simulation's unmounts meet between workers, to set beside the session-6 traces.

    python benchmarks/unmount_overlap.py [FIT.json]

Simulates mount_bench as the traces in
calibration/data/devvm-2cpu-intel-xeon-f6m167/session6/mount-trace/ ran it (2 workers, 1 layer,
100 containers per worker, no mountinfo sample) for common-parent and per-layer, with the
committed fit (default) and 2 seeds. Prints, per unmount op, how many calls overlapped another
worker's unmount and their mean time, against the calls that did not. The last line of each
case gives the two workers' phases as the trace directory's `overlap.py` does. Compare with
`python overlap.py trace-common-parent-2w-1L.txt.xz` there.
"""

from __future__ import annotations

import bisect
import statistics
import sys
from pathlib import Path

from cohsim.benchdata import bench_kernel, simulate_run, with_op_extra
from cohsim.calibrate import load_fit
from cohsim.catalog import Catalog
from cohsim.contention import LineCosts
from cohsim.kernel import load_kernel

ROOT = Path(__file__).resolve().parent.parent
HOST = "devvm-2cpu-intel-xeon-f6m167"
UNMOUNTS = ("umount", "umount_overlay", "umount_detach")


def overlaps(calls: list[tuple[int, str, int, int]]) -> None:
    um = [c for c in calls if c[1] in UNMOUNTS]
    for op in UNMOUNTS:
        mine = [c for c in um if c[1] == op]
        if not mine:
            continue
        met = [c for c in mine if any(o[0] != c[0] and o[2] < c[3] and o[3] > c[2] for o in um)]
        alone = [c for c in mine if c not in met]

        def mean_us(xs: list) -> str:
            return f"{statistics.fmean(c[3] - c[2] for c in xs) / 1e3:5.1f} us" if xs else "-"

        print(
            f"  {op:15s} n={len(mine):4d}  overlapping {len(met):4d} ({len(met) / len(mine):.0%})"
            f" {mean_us(met)}, alone {mean_us(alone)}"
        )


def phase(calls: list[tuple[int, str, int, int]], op: str) -> None:
    tids = sorted({c[0] for c in calls})
    a = sorted(c[2] for c in calls if c[1] == op and c[0] == tids[0])
    b = sorted(c[2] for c in calls if c[1] == op and c[0] == tids[-1])
    if len(a) < 5 or len(b) < 5:
        return
    d = []
    for t in a:
        i = bisect.bisect(b, t)
        d.append(min(abs(t - b[j]) for j in (i - 1, i) if 0 <= j < len(b)) / 1e3)
    half = (a[-1] - a[0]) / (len(a) - 1) / 2e3
    near = sum(x < 30 for x in d) / len(d)
    print(
        f"  phase of {op}: median distance to the other worker's {statistics.median(d):.1f} us"
        f" (independent phases: {half / 2:.1f}), within 30 us {near:.0%}"
        f" (independent: {min(30 / half, 1):.0%}); period {2 * half:.1f} us"
    )


def main(argv: list[str]) -> int:
    fit = load_fit(argv[0] if argv else ROOT / "calibration" / "fits" / f"{HOST}.json")
    machine = Catalog().get(fit.instance_)
    costs = LineCosts(machine, seed=fit.seed)
    base = bench_kernel(fit.host_kernel(fit.kernel_params(load_kernel(fit.kernel))))
    for strategy, op in (("common-parent", "umount"), ("per-layer", "umount_detach")):
        kernel = with_op_extra(base, fit.op_extra_ns_.get(strategy, {}).get("1", {}), 1)
        for seed in (0, 1):
            calls: list[tuple[int, str, int, int]] = []
            run = simulate_run(
                machine,
                kernel,
                strategy,
                2,
                1,
                containers=100,
                think_ns=fit.think_ns_[strategy]["1"],
                seed=seed,
                costs=costs,
                jitter=True,
                mountinfo_sample=False,
                calls=calls,
            )
            print(f"{strategy}, 2 workers, 1 layer, seed {seed}: {run.stride_ns / 1e3:.1f} us/seq")
            overlaps(calls)
            phase(calls, op)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
