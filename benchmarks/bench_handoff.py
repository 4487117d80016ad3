"""Speed of level 2 (prints; not a timed test).

Budget: the sweep 1, 2, 4, 8, 16, 32, 48, 96 threads on m7i.metal-24xl, 2,000 acquisitions per
point, at most 20 s on one core and 500 MB peak; the Markov chain at most 50 ms per curve.

    python benchmarks/bench_handoff.py [--lock ttas] [--instance m7i.metal-24xl]
"""

from __future__ import annotations

import argparse
import resource
import time

from cohsim.lock.handoff import sweep
from cohsim.machine.catalog import Catalog

THREADS = (1, 2, 4, 8, 16, 32, 48, 96)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instance", default="m7i.metal-24xl")
    ap.add_argument("--lock", default="all", help="ttas, ticket, qspinlock or all")
    ap.add_argument("--acquisitions", type=int, default=2000)
    args = ap.parse_args()
    m = Catalog().get(args.instance)
    locks = ("ttas", "ticket", "qspinlock") if args.lock == "all" else (args.lock,)
    for lock in locks:
        t0 = time.perf_counter()
        res = sweep(m, THREADS, lock=lock, acquisitions=args.acquisitions)
        wall = time.perf_counter() - t0
        acq = sum(r.acquisitions for r in res)
        req = sum(r.requests for r in res)
        t1 = time.perf_counter()
        reps = 20
        for _ in range(reps):
            sweep(m, THREADS, lock=lock, model="markov")
        mk_ms = (time.perf_counter() - t1) / reps * 1e3
        print(
            f"{m.name} {lock:9s} DES sweep {wall:6.2f} s  {acq / wall:9.0f} acq/s  "
            f"{req / wall:9.0f} home-agent requests/s  | Markov curve {mk_ms:5.1f} ms"
        )
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
