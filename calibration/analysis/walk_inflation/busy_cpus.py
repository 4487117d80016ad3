"""walk_bench on the 16-vCPU Emerald Rapids VM: what 1-15 busy CPUs walking paths do to
containerd's mount ops, measured, against what the model prices.

    python -m calibration.analysis.walk_inflation.busy_cpus [WALK_DIR]

WALK_DIR (default calibration/data/devvm-16cpu-intel-xeon-f6m207/walk) holds one run folder
per mounter count (m1 .. m4, and m1-second-sitting: m1 again six minutes later), each a
walk_bench CSV with K = 0, 1, 2, 4, 8 and 16 - M stat walkers beside M mounters, 10 and 50
layers, 3 rounds. Every thread is pinned to its own CPU and the other CPUs are idle, so K + M
CPUs are busy.

Two tables:

1. **The unmounts against the busy CPUs.** Each `umount2` waits for one expedited RCU grace
   period (`synchronize_rcu_expedited()` in namespace_unlock()), an overlay's for two
   (docs/kernel-audit.md). Linux 6.18 IPIs only the CPUs that are not idle: an idle CPU is in an
   extended quiescent state and is skipped (kernel/rcu/tree_exp.h,
   sync_rcu_exp_select_node_cpus(): `rcu_watching_snap_in_eqs()`), and the IPIs go out one
   after another (`smp_call_function_single(..., wait=0)` per CPU of a leaf rcu_node). Per run
   folder and layer count: the p50 with no walker, and the least-squares line p50 = a + b K
   through the per-round p50s at K >= 1 (b: what one more busy CPU adds; standard error from
   the residuals). umount2_overlay's slope is per grace period (halved).
2. **The mount_lock ops against the walkers** (m1 and its second sitting): each op's p50 beside
   K walkers minus its p50 with none (median of the per-round differences), and what the model
   charges: `cohsim.kernel.linetake` on the host's machine model, as
   `calibration.analysis.walk_inflation.predict` prices one walker on the 2-vCPU VM, with K
   walkers busy (each walking every measured mean stat call beside the mounter) and the
   release behind the walkers that spin through the section (level 2's writer wait for K times
   the chance that a walk overlaps it).

Nothing is fitted to the model; the slopes are the measurement's.
"""

from __future__ import annotations

import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from calibration.analysis.prop_read.fit import ols
from calibration.analysis.walk_inflation.predict import ACCESSES
from cohsim.kernel.costs import load_kernel
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.linetake import LineTakes
from cohsim.machine.catalog import Catalog

REPO = Path(__file__).resolve().parents[3]
WALK = REPO / "calibration/data/devvm-16cpu-intel-xeon-f6m207/walk"
HOST = "devvm-16cpu-intel-xeon-f6m207"
RUNS = ("m1", "m1-second-sitting", "m2", "m3", "m4")
#: the ops table 2 shows: mount_lock's writers (ACCESSES) and two that hold namespace_sem
SHOWN = ("open_tree", "mount_setattr", "move_mount", "close")

Key = tuple[int, int, str]  # walkers, layers, op


def load(path: Path) -> tuple[int, dict[Key, dict[str, float]], dict[Key, dict[str, float]]]:
    """(mounters, p50 per (K, layers, op) per round, the walkers' mean call per (K, layers,
    'stat') per round) of one walk_bench CSV with one mounter count."""
    p50: dict[Key, dict[str, float]] = defaultdict(dict)
    walk: dict[Key, dict[str, float]] = defaultdict(dict)
    mounters = 0
    with path.open() as f:
        for r in csv.DictReader(f):
            if r["repeat"] == "all" or r["role"] not in ("mounter", "walker"):
                continue
            key = (int(r["walkers"]), int(r["layers"]), r["op"])
            if r["role"] == "mounter" and r["metric"] == "p50_ns":
                mounters = max(mounters, int(r["mounters"]))
                p50[key][r["repeat"]] = float(r["value"])
            elif r["role"] == "walker" and r["metric"] == "mean_ns" and r["mounters"] != "0":
                walk[key][r["repeat"]] = float(r["value"])
    return mounters, p50, walk


def grace_rows(
    p50: dict[Key, dict[str, float]], layers: int
) -> list[tuple[str, float, float, float, float]]:
    """Per unmount op: (op, p50 with no walker, a, b per grace period, its se)."""
    rows = []
    for op, gps in (("umount2", 1), ("umount2_overlay", 2)):
        alone = statistics.median(p50[(0, layers, op)].values())
        pts = [
            (float(k), statistics.median(rounds.values()))
            for (k, lay, o), rounds in p50.items()
            if o == op and lay == layers and k >= 1
        ]
        x, y = np.array(pts).T
        (a, b), (_, se), _ = ols([x], y)
        rows.append((op, alone, float(a), float(b) / gps, float(se) / gps))
    return rows


def model_extra(op: str, k: int, alone: float, call: float) -> float:
    """What the engines' line prices add to `op` beside `k` walkers walking every `call` ns."""
    m = Catalog().get(HOST)
    writes, readers = ACCESSES[op]
    nested = load_kernel().op(op).mount_lock_readers
    gap = alone / (2 * writes + readers)
    takes = LineTakes(m, call)
    # the walkers whose walk overlaps a write section spin through it: level 2's writer wait
    spinners = k * min(1.0, (gap + call) / call) * min(1.0, gap / call)
    release = LineCosts(m).writer_ns(spinners) if spinners > 0 else 0.0
    return writes * (takes.ns(0, float(k), gap) + release) + nested * takes.ns(0, float(k), gap)


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else WALK
    print("== the unmounts against busy CPUs (p50 ns; line through K >= 1 walkers)")
    print(f"{'run':18} {'M':>2} {'L':>3} {'op':16} {'K=0':>8} {'a':>8} {'b/CPU/GP':>9} {'se':>6}")
    runs = {}
    for name in RUNS:
        path = root / name / "walk_bench.csv"
        if not path.exists():
            continue
        runs[name] = mounters, p50, walk = load(path)
        for layers in (10, 50):
            for op, alone, a, b, se in grace_rows(p50, layers):
                print(
                    f"{name:18} {mounters:2d} {layers:3d} {op:16} {alone:8.0f} {a:8.0f}"
                    f" {b:9.0f} {se:6.0f}"
                )
    print()
    print("== the mount_lock ops beside K walkers, one mounter (p50 ns: beside K - none)")
    print(
        f"{'run':18} {'L':>3} {'op':14} {'none':>6}"
        + "".join(f"{'K=' + str(k):>7}" for k in (1, 2, 4, 8, 15))
    )
    for name in ("m1", "m1-second-sitting"):
        if name not in runs:
            continue
        _, p50, walk = runs[name]
        for layers in (10, 50):
            for op in SHOWN:
                base = p50[(0, layers, op)]
                alone = statistics.median(base.values())
                extra = [
                    statistics.median(
                        v - base[r] for r, v in p50[(k, layers, op)].items() if r in base
                    )
                    for k in (1, 2, 4, 8, 15)
                ]
                print(
                    f"{name:18} {layers:3d} {op:14} {alone:6.0f}"
                    + "".join(f"{e:+7.0f}" for e in extra)
                )
    print()
    print("== what the model charges them (ns added; host model, K walkers)")
    _, p50, walk = runs["m1"]
    for layers in (10, 50):
        for op in ACCESSES:
            alone = statistics.median(p50[(0, layers, op)].values())
            extra = [
                model_extra(op, k, alone, statistics.median(walk[(k, layers, "stat")].values()))
                for k in (1, 2, 4, 8, 15)
            ]
            print(
                f"{'model':18} {layers:3d} {op:14} {alone:6.0f}"
                + "".join(f"{e:+7.0f}" for e in extra)
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
