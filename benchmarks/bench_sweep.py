"""Speed of `cohsim sweep`: a small grid on 1 worker (in-process) and on a local Dask cluster of
2, and the same sweep again from its cache; and whether all three write the same bytes.

Run:  python benchmarks/bench_sweep.py [--engine des|analytic] [--instances A,B,...]
          [--containers 10,25,50] [--layers 10] [--replicates 2] [--workers 2]

Each run is a fresh process (`cohsim sweep ... --csv --json`), as a user runs it, so the wall
time includes start-up (and, with 2 workers, starting the Dask cluster). Level 2's tables
(cohsim.kernel.linecache) are filled first by a warm-up run without the sweep cache, so the
timed runs compare the sweep's own work; each timed run but the last starts with an empty
sweep cache, and the last re-runs the 2-worker sweep on its cache (every point a hit).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def sweep(argv: list[str], env: dict[str, str]) -> tuple[float, str, str]:
    """Wall seconds, the summary line and status of one `cohsim sweep` in a fresh process."""
    cmd = [sys.executable, "-m", "cohsim.cli", "sweep", "--no-progress", *argv]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    lines = r.stdout.strip().splitlines()
    summary = lines[-1].split(";")[0] if lines else ""
    status = "ok" if r.returncode == 0 else f"exit {r.returncode}: {r.stderr.strip()[-300:]}"
    return wall, summary, status


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", default="des", choices=["des", "analytic"])
    ap.add_argument("--instances", default="m7a.24xlarge,m7i.metal-24xl,m7g.metal")
    ap.add_argument("--containers", default="10,25,50")
    ap.add_argument("--layers", default="10")
    ap.add_argument("--replicates", default="2")
    ap.add_argument("--workers", default="2", help="the Dask run's workers (default 2)")
    args = ap.parse_args()
    grid = ["--instances", args.instances, "--containers", args.containers, "--layers",
            args.layers, "--replicates", args.replicates, "--engine", args.engine]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        root = Path(tmp)
        env = {**os.environ, "COHSIM_CACHE": str(root / "cache")}
        wall, summary, status = sweep([*grid, "--workers", "1", "--cache", "off"], env)
        print(f"warm-up (fills level 2's tables): {wall:.2f} s, {summary} [{status}]")
        runs = [
            (
                "1 worker (in-process)",
                ["--workers", "1", "--cache", str(root / "one")],
                root / "one-out",
            ),
            (
                f"{args.workers} workers (local Dask)",
                ["--workers", args.workers, "--cache", str(root / "two")],
                root / "two-out",
            ),
            (
                f"{args.workers} workers, cached re-run",
                ["--workers", args.workers, "--cache", str(root / "two")],
                root / "again-out",
            ),
        ]
        print(f"{'run':<32s} {'wall s':>8s}  points")
        outputs = []
        for name, extra, out in runs:
            files = ["--csv", str(out / "s.csv"), "--json", str(out / "s.json")]
            wall, summary, status = sweep([*grid, *extra, *files], env)
            print(f"{name:<32s} {wall:8.2f}  {summary} [{status}]")
            if status == "ok":
                outputs.append((out / "s.csv").read_bytes() + (out / "s.json").read_bytes())
        same = len(outputs) == len(runs) and len(set(outputs)) == 1
        print(f"CSV and JSON byte-identical across the three runs: {'yes' if same else 'NO'}")
        return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
