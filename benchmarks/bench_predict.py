"""Speed of `cohsim predict` (issue 5 targets: the default mesh prediction in at most 5 s wall
including start-up and under 1 GB; 1,000 containers of 50 layers in at most 60 s).

Run:  python benchmarks/bench_predict.py [--repeat N]
Runs each command N times (default 5; the 1,000-container one once unless --repeat-long) as a
fresh process and prints its wall time (min, median, max: a shared VM's speed varies by half
from minute to minute, so one run says little) and its peak memory (the largest RSS of the
process or any of its worker processes, from rusage). Level 2's tables go to a fresh cache
directory (cohsim.kernel.linecache): the first run of a machine fills it ("cold", printed
apart), the others read it, as a user's second run does.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

SHORT = [
    ["predict", "--arch", "mesh", "--layers", "50", "--json"],
    ["predict", "--arch", "chiplet", "--layers", "50", "--json"],
]
LONG = [
    ["predict", "--arch", "mesh", "--layers", "50", "--containers", "1000", "--json"]
    + ["--replicates", "1"],
]


def run(argv: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) and status of one `cohsim` run in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "cohsim.cli", *argv], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    peak = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before) / 1024
    status = "ok" if r.returncode == 0 else f"exit {r.returncode}: {r.stderr.strip()}"
    return wall, peak, status


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=5, help="runs of each short case (default 5)")
    p.add_argument("--repeat-long", type=int, default=1, help="runs of the 1,000-container case")
    args = p.parse_args()
    cases = [(a, args.repeat) for a in SHORT] + [(a, args.repeat_long) for a in LONG]
    os.environ["COHSIM_CACHE"] = tempfile.mkdtemp(prefix="cohsim-bench-cache-")
    for argv, n in cases:
        results = [run(argv) for _ in range(n)]
        print(f"  (first run, level 2's table {'cold' if n > 1 else 'as left'}: "
              f"{results[0][0]:5.2f} s)", flush=True)  # fmt: skip
        results = results[1:] or results
        walls = sorted(w for w, _, _ in results)
        bad = [s for _, _, s in results if s != "ok"]
        print(
            f"cohsim {' '.join(argv)}\n  wall min {walls[0]:5.2f}  median "
            f"{statistics.median(walls):5.2f}  max {walls[-1]:5.2f} s over {len(walls)} runs"
            "   peak RSS "
            f"{max(p for _, p, _ in results):5.0f} MB   {bad[0] if bad else 'ok'}",
            flush=True,
        )


if __name__ == "__main__":
    main()
