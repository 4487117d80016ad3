"""The overlay mount's CPU time against the depth of its layers' directories: what one trap
look-up costs, alone and contended.

    python -m calibration.analysis.layer_depth.slope RUN_DIR ... [--op mount|fsconfig_create]

RUN_DIRs: `cohsim bench mount --cpu-time --layer-depth N` folders, the same shapes at several
depths. overlayfs looks every ancestor of each lower layer's root up in the inode hash (under
the global inode_hash_lock), takes the ancestor inode's i_lock and its dentry's reference
(`ovl_check_layer`, fs/overlayfs/super.c:1237-1264): one more ancestor is one more such step a
layer. Per shape (strategy, workers, layers): the overlay's creating call's CPU time (the
thread CPU clock around it, the clock read taken off; `mount` for the strategies that mount
with a `lowerdir=` list, `fsconfig_create` for lowerdir-plus), the repeats' median at each
depth, and the least-squares slope over the depths divided by the layers: ns per trap
look-up step. Then the sequence's wall time at each depth (the repeats' median of the mean).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from calibration.analysis.cpu_share.compare import measured
from cohsim.calibrate import MountRun, load_bench

#: the call that creates the overlay (the simulation's op names, as cpu_share.compare reads them)
CREATE = ("mount_overlay", "fsconfig_create")

Shape = tuple[str, int, int]


def depth_of(run: MountRun) -> int:
    """The run's layer depth (mount_bench writes the row only when it is not the default 3)."""
    return int(run.labels.get("run", {}).get("layer_depth", 3))


def cpu_by_depth(runs: Sequence[MountRun]) -> dict[Shape, dict[int, tuple[float, float]]]:
    """Per shape, per depth: (the creating call's CPU time, the sequence's mean wall time), ns,
    the repeats' medians (the CPU as `cpu_share.compare.measured` reads it: the clock read taken
    off; runs without --cpu-time are refused)."""
    by_depth: dict[int, list[MountRun]] = defaultdict(list)
    for r in runs:
        by_depth[depth_of(r)].append(r)
    out: dict[Shape, dict[int, tuple[float, float]]] = defaultdict(dict)
    for depth, at in sorted(by_depth.items()):
        seqs: dict[Shape, list[float]] = defaultdict(list)
        for r in at:
            seqs[r.key].append(r.labels["sequence"]["mean_ns"])
        for key, ops in measured(at).items():
            cpu = next(ops[op].cpu_ns for op in CREATE if op in ops)
            out[key][depth] = (cpu, statistics.median(seqs[key]))
    return dict(out)


def slope(points: dict[int, tuple[float, float]], layers: int) -> float:
    """ns of the creating call's CPU per added ancestor per layer (least squares)."""
    depths = sorted(points)
    x = np.array(depths, dtype=float)
    y = np.array([points[d][0] for d in depths])
    return float(np.polyfit(x, y, 1)[0]) / layers


def report(runs: Sequence[MountRun]) -> str:
    table = cpu_by_depth(runs)
    depths = sorted({d for pts in table.values() for d in pts})
    head = " ".join(f"{d:>7}" for d in depths)
    lines = [
        f"{'shape':<26} creating call's CPU (us) at depth {head} | ns a step | "
        f"sequence (us) at depth {head}"
    ]
    for key, pts in sorted(table.items()):
        if len(pts) < 2:
            continue
        cpu = " ".join(f"{pts[d][0] / 1e3:7.1f}" if d in pts else " " * 7 for d in depths)
        seq = " ".join(f"{pts[d][1] / 1e3:7.0f}" if d in pts else " " * 7 for d in depths)
        name = f"{key[0]} {key[1]} x {key[2]}"
        lines.append(f"{name:<26} {' ' * 30}{cpu} | {slope(pts, key[2]):9.0f} | {' ' * 22}{seq}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="slope", description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path)
    a = ap.parse_args(argv)
    print(report(load_bench([str(p) for p in a.runs]).mount))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
