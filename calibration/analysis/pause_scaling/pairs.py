"""The 16-vCPU VM's 120-pair hand-off matrix against level 1, and what it says of the topology.

    python -m calibration.analysis.pause_scaling.pairs [--out MATRIX.csv]

Data: calibration/data/devvm-16cpu-intel-xeon-f6m207/pairs/pairs_bench.csv (its README):
pause_bench ttas, 2 threads pinned to each CPU pair (`placement` cpus=I;J), 100 ms each.

The matrix: per pair, the acquisition p50 less that run's clock-read pair (the figure the
machine file's same_llc_ns is the median of), in the lower-triangle form `cohsim c2c --vs`
reads (`--out` writes it there; nothing is written into the data folder). It is compared with
the machine file by cohsim.machine.c2c.compare (one pair class: one mesh LLC domain, no SMT).

What it is not: the core-to-core benchmarks' one-way CAS ping-pong. A 2-thread ttas p50 is
mostly the releaser taking the lock back after the other core's read pulled its line away
(fairness below 1), so it prices a line's snoop and return, contested, not a clean hand-off.

Then the topology questions: is there a distance pattern (correlation with |i - j|, same
parity, same half), a per-vCPU effect (an additive model in log p50 per CPU, R^2), and pairs
in another regime: those whose 2 threads alternate strictly (fairness > 0.99) at a
throughput above the one-thread loop's, which is what a pair sharing a core (hidden SMT
siblings) does: the waiter sees the release in the shared L1 before the releaser is back.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from cohsim.machine.c2c import compare
from cohsim.machine.catalog import Catalog
from cohsim.measure.programs import read_bench_csv

REPO = Path(__file__).resolve().parents[3]
HOST = "devvm-16cpu-intel-xeon-f6m207"
CSV = REPO / "calibration/data" / HOST / "pairs/pairs_bench.csv"
ONE_THREAD = REPO / "calibration/data" / HOST / "pause/pause_bench.csv"
CPUS = 16
#: strict alternation: the slower thread has at least this share of the faster one's acquisitions
ALTERNATES = 0.99
Pair = tuple[int, int]


def pairs(path: Path = CSV) -> dict[Pair, dict[str, float]]:
    """(i, j) with i < j -> metric -> value (ttas rows, plus that run's timer_overhead_ns)."""
    out: dict[Pair, dict[str, float]] = {}
    for r in read_bench_csv(path, "pause"):
        i, j = sorted(int(c) for c in r["placement"].removeprefix("cpus=").split(";"))
        if r["lock"] == "ttas" or r["metric"] == "timer_overhead_ns":
            out.setdefault((i, j), {})[r["metric"]] = float(r["value"])
    return out


def matrix(data: dict[Pair, dict[str, float]]) -> np.ndarray:
    """Symmetric matrix of p50 less the clock-read pair (ns), NaN on the diagonal."""
    m = np.full((CPUS, CPUS), np.nan)
    for (i, j), v in data.items():
        m[i, j] = m[j, i] = v["p50_ns"] - v["timer_overhead_ns"]
    return m


def lower_triangle_csv(m: np.ndarray) -> str:
    """The headerless lower-triangle CSV of calibration/data/core-to-core-latency/."""
    n = len(m)
    rows = [",".join(f"{m[i, j]:.3f}" if j < i else "" for j in range(n)) for i in range(n)]
    return "\n".join(rows) + "\n"


def one_thread_rate() -> float:
    """The one-thread ttas loop's acquisitions/s (median over pause/'s repeats)."""
    v = [
        float(r["value"])
        for r in read_bench_csv(ONE_THREAD, "pause")
        if (r["lock"], r["threads"], r["metric"]) == ("ttas", "1", "acquisitions_per_s")
    ]
    return float(np.median(v))


def per_cpu_r2(data: dict[Pair, dict[str, float]], keys: list[Pair]) -> tuple[float, np.ndarray]:
    """R^2 of log p50 = e_i + e_j over `keys`, and exp(e) relative to their mean."""
    x = np.zeros((len(keys), CPUS))
    for row, (i, j) in enumerate(keys):
        x[row, i] = x[row, j] = 1.0
    y = np.log([data[k]["p50_ns"] for k in keys])
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    r2 = 1 - float(((y - x @ coef) ** 2).sum() / ((y - y.mean()) ** 2).sum())
    return r2, np.exp(coef - coef.mean())


def main(argv: list[str]) -> int:
    data = pairs()
    m = matrix(data)
    machine = Catalog().get(HOST)
    if argv[:1] == ["--out"] and len(argv) == 2:
        Path(argv[1]).write_text(lower_triangle_csv(m))
    elif argv:
        print("usage: pairs [--out MATRIX.csv]", file=sys.stderr)
        return 2
    cmp = compare(machine, m, None, "pairs_bench.csv (p50 - clock pair)")
    for c in cmp.classes:
        print(
            f"class {c.pair_class}: {c.pairs} pairs, model {c.model_ns:.1f} ns, measured median "
            f"{c.measured_median_ns:.1f} ns ({c.pct_error:+.1f} %)"
        )
    print(f"per-pair median |model - measured| / measured: {cmp.median_abs_pct_error:.1f} %")
    keys = sorted(data)
    v = np.array([m[k] for k in keys])
    q = np.quantile(v, [0, 0.1, 0.25, 0.5, 0.75, 0.9, 1])
    print("measured quantiles (min 10 25 50 75 90 max): " + " ".join(f"{x:.1f}" for x in q))
    rate1 = one_thread_rate()
    other = [
        k
        for k in keys
        if data[k]["fairness_min_over_max"] > ALTERNATES and data[k]["acquisitions_per_s"] > rate1
    ]
    usual = [k for k in keys if k not in other]
    print(f"\none-thread ttas loop: {rate1 / 1e6:.2f} M acquisitions/s")
    for k in other:
        d = data[k]
        print(
            f"alternating pair {k[0]},{k[1]}: p50 {d['p50_ns']:.0f} ns, mean {d['mean_ns']:.0f}, "
            f"{d['acquisitions_per_s'] / 1e6:.2f} M/s, fairness {d['fairness_min_over_max']:.3f}"
        )

    def med(metric: str) -> float:
        return float(np.median([data[k][metric] for k in usual]))

    fair = [data[k]["fairness_min_over_max"] for k in usual]
    print(
        f"the other {len(usual)} pairs: p50 median {med('p50_ns'):.1f} ns, mean "
        f"{med('mean_ns'):.0f}, {med('acquisitions_per_s') / 1e6:.2f} M/s, fairness median "
        f"{np.median(fair):.3f} (range {min(fair):.3f}-{max(fair):.3f})"
    )
    p50 = np.array([data[k]["p50_ns"] for k in usual])
    dist = np.array([k[1] - k[0] for k in usual])
    print(f"\ncorrelation of p50 with |i - j|: {np.corrcoef(p50, dist)[0, 1]:+.2f}")
    for name, same in (
        ("parity", lambda i, j: i % 2 == j % 2),
        ("half", lambda i, j: i // 8 == j // 8),
    ):
        a = [data[k]["p50_ns"] for k in usual if same(*k)]
        b = [data[k]["p50_ns"] for k in usual if not same(*k)]
        print(
            f"same {name}: p50 median {np.median(a):.1f} ns ({len(a)}), "
            f"other {np.median(b):.1f} ({len(b)})"
        )
    r2, eff = per_cpu_r2(data, usual)
    print(
        f"per-vCPU additive model of log p50: R^2 {r2:.2f}, vCPU factors "
        f"{eff.min():.2f}-{eff.max():.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
