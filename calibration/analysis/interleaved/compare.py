"""Session 3's mount_bench data beside this folder's interleaved rounds, per shape.

    python -m calibration.analysis.interleaved.compare

Worker time a sequence (the fit's `stride_ns`, us): the median over repeats (session 3,
run back to back) or rounds (here, each in a shuffled order), the spread (largest /
smallest), and the slowdown over the same strategy and layer count at 1 worker.
"""

from __future__ import annotations

import collections
import statistics

from calibration.analysis import DEVVM
from cohsim.calibrate import MountRun, load_bench

SESSION3 = DEVVM / "mount-wake-long" / "mount"
ROUNDS = DEVVM / "mount-interleaved-rounds" / "mount_bench.csv"


def by_shape(runs: tuple[MountRun, ...]) -> dict[tuple[str, int, int], list[float]]:
    out: dict[tuple[str, int, int], list[float]] = collections.defaultdict(list)
    for r in runs:
        out[(r.strategy, r.workers, r.layers)].append(r.stride_ns / 1e3)
    return out


def main() -> int:
    old = by_shape(load_bench([SESSION3]).mount)
    new = by_shape(load_bench([ROUNDS]).mount)
    print("shape: session 3 median (spread) | interleaved median (spread) | slowdown over 1 worker")
    moved = []
    for key in sorted(new):
        s, w, layers = key
        a, b = statistics.median(old[key]), statistics.median(new[key])
        ra = a / statistics.median(old[(s, 1, layers)])
        rb = b / statistics.median(new[(s, 1, layers)])
        line = (
            f"{s} {w}w {layers}L: {a:.1f} ({max(old[key]) / min(old[key]):.2f}) | "
            f"{b:.1f} ({max(new[key]) / min(new[key]):.2f})"
        )
        if w > 1:
            line += f" | {ra:.2f} -> {rb:.2f} ({100 * (rb / ra - 1):+.0f} %)"
            moved.append(abs(rb / ra - 1))
        print(line)
    print(
        f"slowdowns moved by {100 * statistics.median(moved):.0f} % (median), "
        f"{100 * max(moved):.0f} % at most, over {len(moved)} multi-worker shapes"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
