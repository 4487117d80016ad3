"""The peer walk's cost on the three hosts that ran prop_bench's ring, side by side, and
against the kernel model's per-peer costs.

    python -m calibration.analysis.prop_read.hosts

The runs (`RUNS`): the 2-vCPU AMD EPYC Milan VM (``devvm-2cpu-amd-epyc-f25m1/prop-ring/``, to
10,000 peers), the 2-vCPU Emerald Rapids VM (``devvm-2cpu-intel-xeon-f6m207/prop-ring/spread/``:
its two one-CPU rings and its two rings made alternately on both CPUs, to 20,000) and the
16-vCPU Emerald Rapids VM (``devvm-16cpu-intel-xeon-f6m207/ring/``: one CPU, and ``spread/``,
made by threads pinned in turn to each of its 16 CPUs, to 20,000). In every run the binds are
children of the destination as well as its peers, and the timed calls run on one unpinned
thread. Printed:

1. per op, the cost of each added peer between consecutive R, per run (ns a peer; the
   medians' difference over R's: `ring.increments`);
2. each spread run against the one-CPU run it pairs with: the p50s' ratio per R (spread over
   one CPU) and the slopes of the median lines (`ring.fit`);
3. the burst's walks against the model: a burst's ring grows from 1 to a peak P and falls back,
   so its walks see R spread over 0..P (the simulated 100 x 50 per-layer burst on
   m7i.metal-48xl: p10 / p50 / p90 of 768 / 2,604 / 4,177 at a peak of 4,882, a throwaway
   count of the DES's move_mount walks, not committed; weighting by them instead of uniformly
   moves the factors below by 0.01-0.03). Per op and P (5,000, 10,000, 20,000 where the run
   reaches P): the mean over R uniform on 0..P of time(R) - time(0) (linear between the per-R
   medians) over the model's b x P / 2, b the kernel file's per-peer cost of the op
   (`MODEL_OPS`): the factor by which the measured walk would change the model's walk time
   in such a burst. time(0) is taken out as the op's fixed part, which the model prices apart.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from calibration.analysis.prop_read.ring import fit, increments, medians, samples
from cohsim.kernel.costs import load_kernel

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "calibration/data"
EMR2 = DATA / "devvm-2cpu-intel-xeon-f6m207/prop-ring/spread"
EMR16 = DATA / "devvm-16cpu-intel-xeon-f6m207/ring"
#: label -> CSV, in the order printed
RUNS = {
    "amd-2": DATA / "devvm-2cpu-amd-epyc-f25m1/prop-ring/prop_bench.csv",
    "emr-2 one CPU": EMR2 / "one-cpu/prop_bench.csv",
    "emr-2 one CPU, repeat": EMR2 / "repeat/one-cpu/prop_bench.csv",
    "emr-2 spread": EMR2 / "prop_bench.csv",
    "emr-2 spread, repeat": EMR2 / "repeat/prop_bench.csv",
    "emr-16 one CPU": EMR16 / "prop_bench.csv",
    "emr-16 spread": EMR16 / "spread/prop_bench.csv",
}
#: (spread run, the one-CPU run of the same sitting)
PAIRS = (
    ("emr-2 spread", "emr-2 one CPU"),
    ("emr-2 spread, repeat", "emr-2 one CPU, repeat"),
    ("emr-16 spread", "emr-16 one CPU"),
)
#: prop_bench op -> (kernel model op, its per-peer field): the walk the model prices
MODEL_OPS = {
    "ring_move_mount": ("move_mount", "per_peer_ns"),
    "ring_detach2": ("umount_detach", "mount_lock_per_peer_ns"),
    "ring_umount": ("umount", "mount_lock_per_peer_ns"),
}
#: the ops printed in part 1
OPS = ("ring_move_mount", "ring_detach2", "ring_umount", "ring_bind", "ring_open_tree")
PEAKS = (5000, 10000, 20000)


def burst_factor(
    times: dict[tuple[str, int], list[float]], op: str, b_ns: float, peak: int
) -> float:
    """The mean of time(R) - time(0) over R uniform on 0..`peak` (linear between the per-R
    medians) over `b_ns` x peak / 2; nan where the run stops short of `peak`."""
    m = medians(times, op)
    rs = np.array(list(m), float)
    if peak > rs.max():
        return float("nan")
    y = np.array(list(m.values())) - m[0]
    grid = np.linspace(0.0, peak, 4001)
    return float(np.interp(grid, rs, y).mean() / (b_ns * peak / 2))


def main(argv: list[str]) -> int:
    if argv:
        print("usage: python -m calibration.analysis.prop_read.hosts", file=sys.stderr)
        return 2
    runs = {label: samples(path)[0] for label, path in RUNS.items()}
    print("1. ns a peer between consecutive R (medians of 5 repeats)")
    for op in OPS:
        print(f"  {op}")
        for label, times in runs.items():
            steps = " / ".join(f"{r1}-{r2} {d:.0f}" for r1, r2, d in increments(times, op))
            print(f"    {label:<22} {steps}")
    print("2. spread over one CPU: p50 ratio per R; slopes of the median lines (ns a peer)")
    for spread, one in PAIRS:
        print(f"  {spread} / {one}")
        for op in OPS:
            ms, mo = medians(runs[spread], op), medians(runs[one], op)
            ratios = " ".join(f"{n}:{ms[n] / mo[n]:.2f}" for n in ms if n in mo)
            bs, bo = fit(runs[spread], op)["bm"], fit(runs[one], op)["bm"]
            print(f"    {op:<16} {ratios}   slope {bs:.1f} / {bo:.1f} = {bs / bo:.2f}")
    kernel = load_kernel("linux-6.18")
    print("3. a burst's walks (R uniform on 0..P) at the measured cost over the model's b x R")
    for op, (model_op, field) in MODEL_OPS.items():
        b = float(getattr(kernel.op(model_op), field))
        print(f"  {op} against {model_op}.{field} = {b:g} ns a peer")
        for label, times in runs.items():
            cells = " ".join(
                f"P={p}: x{f:.2f}" for p in PEAKS if np.isfinite(f := burst_factor(times, op, b, p))
            )
            print(f"    {label:<22} {cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
