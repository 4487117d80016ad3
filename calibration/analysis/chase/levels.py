"""chase_bench's load latency by cache level on the Emerald Rapids VMs, and the peer walk's
cost in loads of it.

    python -m calibration.analysis.chase.levels [CHASE_BENCH_CSV ...]

Default (`RUNS`): the 16-vCPU VM's run (``devvm-16cpu-intel-xeon-f6m207/chase/``: reader CPU 0,
writer CPU 15, 3 repeats) and the 2-vCPU VM's three (``devvm-2cpu-intel-xeon-f6m207/chase/``:
the run, its repeat and the huge-page run; reader CPU 0, writer CPU 1, 7 repeats). Printed:

1. per size, ns per load (median over the repeats, cohsim.measure.chasebench.summarize_chase),
   local and remote, per run;
2. per band of sizes (`BANDS`, against both VMs' 48 KiB L1d and 2 MiB L2 per vCPU), the
   range of those medians per run and mode;
3. with the default runs: move_mount's cost of each added peer on each VM's one-CPU ring
   (calibration.analysis.prop_read.hosts' runs; ns a peer between consecutive R) over that
   VM's local L2 latency (the median of its first run's 64-256 KiB medians): the walk's cost
   in L2 loads a peer.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from calibration.analysis.prop_read.hosts import RUNS as RINGS
from calibration.analysis.prop_read.ring import increments, samples
from cohsim.measure.chasebench import summarize_chase
from cohsim.measure.programs import read_bench_csv

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "calibration/data"
EMR2 = DATA / "devvm-2cpu-intel-xeon-f6m207/chase"
#: label -> CSV, in the order printed
RUNS = {
    "emr-16": DATA / "devvm-16cpu-intel-xeon-f6m207/chase/chase_bench.csv",
    "emr-2": EMR2 / "chase_bench.csv",
    "emr-2 repeat": EMR2 / "repeat/chase_bench.csv",
    "emr-2 huge": EMR2 / "huge/chase_bench.csv",
}
#: the chase run and the one-CPU ring of each VM (part 3)
WALKS = (
    ("emr-16", "emr-16 one CPU"),
    ("emr-2", "emr-2 one CPU"),
    ("emr-2", "emr-2 one CPU, repeat"),
)
KIB, MIB = 1 << 10, 1 << 20
#: band -> (smallest, largest) working set in it, bytes
BANDS = {
    "L1d": (16 * KIB, 32 * KIB),
    "L2": (64 * KIB, 256 * KIB),
    "L2, half full": (512 * KIB, 1 * MIB),
    "L2 edge": (3 * MIB // 2, 2 * MIB),
    "past L2": (3 * MIB, 8 * MIB),
    "memory": (16 * MIB, 256 * MIB),
}


def latencies(path: Path) -> dict[tuple[str, int], float]:
    """(mode, size in bytes) -> ns per load, the median over the repeats."""
    summary = summarize_chase(read_bench_csv(path, "chase"))
    return {(c["mode"], c["size_bytes"]): c["ns_per_load"] for c in summary["configs"]}


def band_range(lat: dict[tuple[str, int], float], mode: str, band: str) -> tuple[float, float]:
    """The lowest and highest median of `mode` over the sizes of `band`."""
    lo, hi = BANDS[band]
    values = [v for (m, s), v in lat.items() if m == mode and lo <= s <= hi]
    return min(values), max(values)


def size_label(size: int) -> str:
    return f"{size / MIB:g}M" if size >= MIB else f"{size // KIB}K"


def main(argv: list[str]) -> int:
    runs = {Path(a).parent.name: Path(a) for a in argv} if argv else RUNS
    lat = {label: latencies(path) for label, path in runs.items()}
    sizes = sorted({s for one in lat.values() for _, s in one})
    print("1. ns per load, median over the repeats: local | remote")
    print(f"{'size':>6}  " + "  ".join(f"{label:>17}" for label in lat))
    for s in sizes:
        cells = [
            f"{one.get(('local', s), np.nan):7.1f} | {one.get(('remote', s), np.nan):7.1f}"
            for one in lat.values()
        ]
        print(f"{size_label(s):>6}  " + "  ".join(f"{c:>17}" for c in cells))
    print("2. per band, the range of the medians (ns per load)")
    for band, (lo, hi) in BANDS.items():
        print(f"  {band} ({size_label(lo)}-{size_label(hi)})")
        for label, one in lat.items():
            (a, b), (c, d) = band_range(one, "local", band), band_range(one, "remote", band)
            print(f"    {label:<14} local {a:6.1f}-{b:6.1f}   remote {c:6.1f}-{d:6.1f}")
    if argv:
        return 0
    print("3. move_mount's ns a peer between consecutive R, in local L2 loads")
    for chase, ring in WALKS:
        l2 = float(
            np.median(
                [
                    v
                    for (m, s), v in lat[chase].items()
                    if m == "local" and 64 * KIB <= s <= 256 * KIB
                ]
            )
        )
        times = samples(RINGS[ring])[0]
        steps = " / ".join(
            f"{r1}-{r2} {d:.0f} = {d / l2:.1f}"
            for r1, r2, d in increments(times, "ring_move_mount")
        )
        print(f"  {ring} (L2 {l2:.2f} ns): {steps}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
