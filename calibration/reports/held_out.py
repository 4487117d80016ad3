"""Print the held-out errors of the devvm calibration (the figures in calibration/fits/README.md).

    python -m calibration.reports.held_out [--mount PATH] [workers|repeats ...]

Each split refits the kernel parameters (a few minutes on 2 CPUs) on part of
calibration/data/devvm-2cpu-intel-xeon-f6m167/mount-wake-long/{mount,wake,wake-idle} and predicts
the other part. `--mount` takes the mount_bench runs from PATH (a directory or a CSV) instead of
mount-wake-long/mount, e.g. the interleaved rounds in mount-interleaved-rounds/.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from cohsim.calibrate import BOUND, SPLITS, held_out, load_bench

HOST = "devvm-2cpu-intel-xeon-f6m167"
DATA = Path(__file__).resolve().parents[2] / "calibration" / "data" / HOST / "mount-wake-long"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="held-out errors of the devvm calibration")
    ap.add_argument("--mount", default=DATA / "mount", help="mount_bench runs (dir or CSV)")
    ap.add_argument("splits", nargs="*", help=f"{' and/or '.join(SPLITS)} (default: both)")
    args = ap.parse_args(argv)
    for split in args.splits:
        if split not in SPLITS:
            ap.error(f"unknown split {split!r} ({', '.join(SPLITS)})")
    data = load_bench([args.mount, DATA / "wake", DATA / "wake-idle"])
    for split in args.splits or SPLITS:
        t0 = time.perf_counter()
        h = held_out(data, HOST, split)
        median = statistics.median(abs(e) for e in h.errors.values())
        print(
            f"split {split}: {h.runs} held-out runs, interval coverage {h.coverage:.0%}, "
            f"worst |error| {h.worst:.1%}, median {median:.1%}"
            + (
                f", worst where the host repeats itself within {BOUND:.0%} "
                f"{h.worst_reproducible:.1%} ({len(h.drifted)} shapes drifted)"
                if h.host
                else ""
            )
            + f" ({time.perf_counter() - t0:.0f} s)"
        )
        for key, e in sorted(h.errors.items()):
            s, w, layers = key
            line = f"  {s:13s} {w} workers {layers:2d} layers  {e:+7.1%}"
            if key in h.host:
                line += f"   host {h.host[key]:+7.1%}" + ("  drifted" if key in h.drifted else "")
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
