"""Speed of `cohsim predict` for each engine (issue 20's targets, on 2 cores: the DES's default
mesh prediction <= 1.0 s wall including start-up and 1,000 containers <= 10 s, under 500 MB;
the analytic engine's prediction with its interval <= 20 ms after start-up and the whole
catalog grid, 29 instance types x 8 loads x 3 strategies, <= 30 s).

Run:  python benchmarks/bench_predict.py [--engine des|analytic|both] [--repeat N] [--des-grid]

For each engine:
- the default mesh and chiplet predictions and 1,000 containers, each run N times (default 5;
  the 1,000-container one `--repeat-long` times) as a fresh process: wall time (min, median,
  max: a shared VM's speed varies by half from minute to minute) and peak memory (the largest
  RSS of the process or any of its worker processes, from rusage). Level 2's tables go to a
  fresh cache directory (cohsim.kernel.linecache): the first run of a machine fills it
  ("cold", printed apart), the others read it, as a user's second run does;
- one prediction with its interval in a warm process (the library call, start-up excluded,
  one worker): the median of 20 (of 3 for the DES);
- the whole catalog grid through `cohsim.sweep.run_points` (no sweep cache, a local Dask
  cluster of one worker per CPU), as a fresh process. For the DES that takes about an hour on
  2 cores; without `--des-grid` it is not run and the time is estimated from one point per
  instance at 100 containers (said so where printed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

LOADS = (10, 25, 50, 100, 150, 200, 300, 400)  #: the grid's container counts
STRATEGIES = ("per-layer", "common-parent", "lowerdir-plus")
LAYERS = 50


def cases(engine: str) -> tuple[list[list[str]], list[list[str]]]:
    """The short and the long command lines for one engine."""
    e = ["--engine", engine]
    short = [
        ["predict", "--arch", "mesh", "--layers", "50", "--json", *e],
        ["predict", "--arch", "chiplet", "--layers", "50", "--json", *e],
    ]
    long = [["predict", "--arch", "mesh", "--layers", "50", "--containers", "1000", "--json", *e]]
    if engine == "des":
        long[0] += ["--replicates", "1"]
    return short, long


def run(argv: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) and status of one run of `argv` in a fresh process."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        # this child's own rusage: the largest RSS of it and of the workers it waited for
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = err.read().decode(errors="replace").strip()[-300:]
    return wall, usage.ru_maxrss / 1024, "ok" if code == 0 else f"exit {code}: {tail}"


def report(label: str, results: list[tuple[float, float, str]]) -> None:
    walls = sorted(w for w, _, _ in results)
    bad = [s for _, _, s in results if s != "ok"]
    print(
        f"{label}\n  wall min {walls[0]:6.2f}  median {statistics.median(walls):6.2f}  max "
        f"{walls[-1]:6.2f} s over {len(walls)} runs   peak RSS "
        f"{max(p for _, p, _ in results):5.0f} MB   {bad[0] if bad else 'ok'}",
        flush=True,
    )


def warm_prediction_ms(engine: str, n: int = 20) -> float:
    """The median wall time (ms) of one default mesh prediction, interval included, in a
    warm process (a first call fills the caches and is not counted)."""
    from cohsim.machine.catalog import Catalog
    from cohsim.predict import predict

    catalog = Catalog()
    predict(arch="mesh", layers=LAYERS, engine=engine, catalog=catalog, jobs=1)
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        predict(arch="mesh", layers=LAYERS, engine=engine, catalog=catalog, jobs=1)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def grid_points(sample: bool) -> list:
    """The catalog grid's points (or one per instance at 100 containers, per-layer)."""
    from cohsim.machine.catalog import Catalog
    from cohsim.sweep import grid, select_instances

    catalog = Catalog()
    names = select_instances(catalog, "all")
    if sample:
        return grid(catalog, names, [100], [LAYERS], ["per-layer"])
    return grid(catalog, names, list(LOADS), [LAYERS], list(STRATEGIES))


def grid_child(engine: str, sample: bool) -> None:
    """Run the grid (in this process and its Dask workers) and print how many points."""
    from cohsim.predict import RunOptions
    from cohsim.sweep import SweepOptions, run_points

    points = grid_points(sample)
    rows = run_points(points, SweepOptions(run=RunOptions(engine=engine), cache="off"))
    print(len(rows))


def catalog_grid(engine: str, sample: bool) -> tuple[float, float, str, int]:
    """Wall, peak RSS, status and points of the grid run as a fresh process."""
    argv = [sys.executable, __file__, "--grid-child", engine] + (["--sample"] if sample else [])
    wall, peak, status = run(argv)
    return wall, peak, status, len(grid_points(sample))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--engine", choices=["des", "analytic", "both"], default="both")
    p.add_argument("--repeat", type=int, default=5, help="runs of each short case (default 5)")
    p.add_argument("--repeat-long", type=int, default=1, help="runs of the 1,000-container case")
    p.add_argument("--des-grid", action="store_true", help="run the DES's whole grid (~1 h)")
    p.add_argument("--grid-child", help=argparse.SUPPRESS)
    p.add_argument("--sample", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.grid_child:
        grid_child(args.grid_child, args.sample)
        return
    os.environ["COHSIM_CACHE"] = tempfile.mkdtemp(prefix="cohsim-bench-cache-")
    engines = ["des", "analytic"] if args.engine == "both" else [args.engine]
    cohsim = [sys.executable, "-m", "cohsim.cli"]
    for engine in engines:
        print(f"== engine {engine}", flush=True)
        short, long = cases(engine)
        for argv, n in [(a, args.repeat) for a in short] + [(a, args.repeat_long) for a in long]:
            results = [run(cohsim + argv) for _ in range(n)]
            print(f"  (first run, level 2's table {'cold' if n > 1 else 'as left'}: "
                  f"{results[0][0]:5.2f} s)", flush=True)  # fmt: skip
            report(f"cohsim {' '.join(argv)}", results[1:] or results)
        n = 20 if engine == "analytic" else 3
        print(f"one prediction with its interval, warm process: "
              f"{warm_prediction_ms(engine, n):.1f} ms (median of {n})", flush=True)  # fmt: skip
        sample = engine == "des" and not args.des_grid
        wall, peak, status, n = catalog_grid(engine, sample)
        full = len(grid_points(False))
        if sample:
            print(f"catalog grid ({full} points): NOT RUN; estimated {wall * full / n / 60:.0f} "
                  f"min from {n} points (one per instance, 100 containers) in {wall:.1f} s, "
                  f"peak RSS {peak:.0f} MB   {status}", flush=True)  # fmt: skip
        else:
            print(f"catalog grid ({n} points): wall {wall:.1f} s, peak RSS {peak:.0f} MB   "
                  f"{status}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
