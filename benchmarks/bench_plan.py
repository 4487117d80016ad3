"""Wall time of the two-stage `cohsim plan` over the whole catalog (issue 30's target: 100
containers x 50 layers, about two minutes cold on 2 cores).

Run:  python benchmarks/bench_plan.py [--containers N] [--layers L] [--confirm K] [--html]

Runs `cohsim plan --containers N --layers L --confirm K --json` as a fresh process twice:
cold (the sweep cache, $COHSIM_CACHE, a fresh empty folder: every point computed) and cached
(the same folder again: every point read back), and prints each wall time and the plan's
points, rounds and confirmed rows. The two documents must be the same bytes but for the
provenance's wall times and dates (checked: the rows). With `--html`, then the same plan with
its report (`--html FILE`) twice on that cache: the report's own cost, its points (the top
rows' fixes, searched by the screen and answered by the simulation at N, and the curves) first
computed, then read back.

Measured (27 Nov 2026, 19:02-19:06 UTC, the 2-core shared VM with another engineer's tests
and a CI run beside it: load average 7-9; 29 instance types, per-layer, seed 0, 4 replicates):
  --confirm 5 (the default)  cold 128.4 s  cached 11.5 s  (457 points in 11 rounds: the
                             screen's 452 in 10, then the simulation's 5 at 100 containers)
  --confirm 0 (screen only)  cold  39.0 s  cached  7.8 s  (452 points in 10 rounds)
The simulation's points cost 15-50 s each at these sizes (c6gd.metal 100 x 50: 16 s, 330
containers: 51 s, one process), so the confirmation is about 90 s of the cold run on 2
workers; on a quiet machine the screen alone took 26 s.

Measured again (28 Nov 2026, 01:36-01:43 UTC, the same VM, load average 1-6), after the
analytic screen got its own default of 17 replicates a point (the confirmation keeps the
simulation's 4), alternated with the state before (4 everywhere):
  --confirm 5  cold 54.5 / 69.1 s  cached 2.8 / 3.5 s  (361 points in 6 rounds)
               before: cold 72.4 s, cached 7.9 s       (437 points in 8 rounds)
  --confirm 0  cold 18.4 / 21.9 s  cached 2.6 / 3.0 s  (356 points in 5 rounds)
               before: cold 23.6 s, cached 6.8 s       (432 points in 7 rounds)
The narrower intervals bracket each safe burst in fewer rounds, which pays for the screen's
four times as many replicates a point.

Measured again (28 Nov 2026, 09:31-09:51 UTC, the same VM shared with three engineers' tests:
load average 3-8; the last run beside this branch's full suite), after the intervals' ends
were bounded by the priors' corners (two more runs a point: cohsim.predict.priors.corner),
`--html`:
  --confirm 5  cold 111.5 s  cached 6.5 s  (375 points in 7 rounds, 5 confirmed)
  with --html  its own points cold 511.9 s, "cached" 549.9 s
The report is most of the cost and its cache does not hold it: its fixes' draw-by-draw p99s
and its per-row details are full predictions outside the sweep cache (cohsim.report.content:
`_fixes`' `draws`, `_details`; the first detail also ranks the 18 priors, 36 more runs of the
simulation at 100 x 50), made again on every run.

Measured again (28 Nov 2026, 10:13-10:35 UTC, the same VM, load average 2-5; one after the
other, the state before first, its first minutes beside a small test run at nice 19), after
the report's full predictions went into the sweep cache (cohsim.plan.pointdetail: the top
rows' and their fixes' predictions and the ranked priors, read back on the next run; each
prediction also leaves its point's sweep row, which the fixes' confirmation then reads):
  before (b7f47e0)  cold 82.9 s  cached 4.9 s  with --html, its own points cold 241.9 s,
                    cached 234.5 s
  after (ec6a62d)   cold 59.6 s  cached 3.7 s  with --html 194.9 s, cached 7.5 s
  after (284e505)   cold 92.5 s  cached 5.9 s  with --html 188.8 s, cached 7.5 s
(375 points in 7 rounds, 5 confirmed, in each.) A smaller question, `--containers 30
--layers 10` (340 points in 8 rounds): before, with --html 34.8 s and 28.0 s again (the plan
alone cached 8.2 s); after (ec6a62d), 26.2 s and 5.7 s (5.1 s). The report's first run is
still the simulation of the top 3 rows and their fixes at N (4 replicates each) and the
ranking of the 18 priors for the first row (36 runs: about 40 % of its runs).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(argv: list[str], cache: Path) -> tuple[float, dict]:
    """Wall seconds and the JSON document of one `cohsim` run with `cache`."""
    env = {**os.environ, "COHSIM_CACHE": str(cache)}
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, json.loads(proc.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--containers", type=int, default=100)
    ap.add_argument("--layers", type=int, default=50)
    ap.add_argument("--confirm", type=int, default=5)
    ap.add_argument("--html", action="store_true", help="also time the plan with its report")
    args = ap.parse_args()
    argv = [sys.executable, "-m", "cohsim.cli", "plan", "--containers", str(args.containers),
            "--layers", str(args.layers), "--confirm", str(args.confirm), "--json"]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-plan-") as tmp:
        cache = Path(tmp)
        cold_s, cold = run(argv, cache)
        cached_s, cached = run(argv, cache)
        report = Path(tmp) / "report.html"
        html = [run([*argv, "--html", str(report)], cache)[0] for _ in range(2 if args.html else 0)]
    if cold["rows"] != cached["rows"]:
        print("the cached plan's rows differ from the cold plan's", file=sys.stderr)
        return 1
    print(f"plan {args.containers} x {args.layers}, confirm {args.confirm}: "
          f"{cold['candidates']} candidates, {cold['points']} points in {cold['rounds']} rounds, "
          f"{cold['engine']['confirmed']} confirmed")  # fmt: skip
    print(f"cold    {cold_s:7.1f} s")
    print(f"cached  {cached_s:7.1f} s")
    if html:
        print(f"with --html, its own points cold  {html[0]:7.1f} s")
        print(f"with --html, cached               {html[1]:7.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
