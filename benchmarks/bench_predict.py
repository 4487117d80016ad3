"""Speed of `cohsim predict` (issue 5 targets: the default mesh prediction in at most 5 s wall
including start-up and under 1 GB; 1,000 containers of 50 layers in at most 60 s).

Run:  python benchmarks/bench_predict.py
Prints wall time and peak memory (RSS, from the child process's rusage) of each command.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time

CASES = [
    ["predict", "--arch", "mesh", "--layers", "50", "--json"],
    ["predict", "--arch", "chiplet", "--layers", "50", "--json"],
    [
        "predict",
        "--arch",
        "mesh",
        "--layers",
        "50",
        "--containers",
        "1000",
        "--json",
        "--replicates",
        "1",
    ],
]


def main() -> None:
    for argv in CASES:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t0 = time.perf_counter()
        r = subprocess.run(
            [sys.executable, "-m", "cohsim.cli", *argv], capture_output=True, text=True
        )
        wall = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        status = "ok" if r.returncode == 0 else f"exit {r.returncode}: {r.stderr.strip()}"
        print(
            f"cohsim {' '.join(argv)}\n  wall {wall:6.2f} s   peak RSS "
            f"{max(peak, before) / 1024:6.0f} MB   {status}"
        )


if __name__ == "__main__":
    main()
