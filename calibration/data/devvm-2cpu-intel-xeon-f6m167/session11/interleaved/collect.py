"""mount_bench at every shape of session 3, in rounds, each round in a shuffled order.

    python collect.py OUTDIR [ROUNDS]

Session 3 ran its shapes strategy by strategy, then worker count, then layer count, with the
repeats back to back, so a change in the VM's speed between those blocks looks like a
difference between strategies or worker counts. Here each round runs all 27 shapes once
(per-layer, common-parent, lowerdir-plus x 1, 2, 4 workers x 1, 10, 50 layers; 100
containers a worker, 2 sequences a container, the other options at their defaults, as
session 3), in an order shuffled per round (random.Random(11)). Each run's output goes to
OUTDIR/runs/ROUND/SHAPE/; then OUTDIR/mount_bench.csv joins their rows with the repeat column
set to the round, and OUTDIR/order.csv lists the runs in the order they ran, with their start
time. OUTDIR/runs/ can then be deleted (only the joined CSV and one sidecar are kept).
"""

from __future__ import annotations

import csv
import itertools
import random
import subprocess
import sys
import time
from pathlib import Path

STRATEGIES = ("per-layer", "common-parent", "lowerdir-plus")


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    rounds = int(argv[1]) if len(argv) > 1 else 5
    shapes = list(itertools.product(STRATEGIES, (1, 2, 4), (1, 10, 50)))
    rng = random.Random(11)
    order = []
    for rnd in range(rounds):
        todo = shapes[:]
        rng.shuffle(todo)
        for s, w, layers in todo:
            d = out / "runs" / str(rnd) / f"{s}-{w}w-{layers}L"
            started = time.time()
            subprocess.run(
                ["cohsim", "bench", "mount", "--strategy", s, "--workers", str(w),
                 "--layers", str(layers), "--containers", "100",
                 "--sequences-per-container", "2", "--repeats", "1", "--no-progress",
                 "--out", str(d)],
                check=True, stdout=subprocess.DEVNULL,
            )  # fmt: skip
            order.append((rnd, s, w, layers, f"{started:.0f}"))
        print(f"round {rnd} done", flush=True)
    with open(out / "mount_bench.csv", "w", newline="") as f:
        wr = None
        for rnd, s, w, layers, _ in sorted(order):
            with open(out / "runs" / str(rnd) / f"{s}-{w}w-{layers}L" / "mount_bench.csv") as g:
                rows = list(csv.DictReader(g))
            if wr is None:
                wr = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
                wr.writeheader()
            for row in rows:
                row["repeat"] = str(rnd)
                wr.writerow(row)
    with open(out / "order.csv", "w", newline="") as f:
        wr = csv.writer(f, lineterminator="\n")
        wr.writerow(["round", "strategy", "workers", "layers", "started_unix_s"])
        wr.writerows(order)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
