"""prop_bench's per-K and per-N figures and least-squares fits through every repeat.

    python -m calibration.analysis.prop_read.fit [PROP_BENCH_CSV ...]

Default: the two committed runs in calibration/data/devvm-2cpu-amd-epyc-f25m1/prop-and-read/
(``prop_bench.csv``: no peer namespaces; ``peers2/prop_bench.csv``: 2 peer namespaces alive
during the reads). Per file:

- propagation, per K live slave namespaces: p50 / mean / min of the host's bind mount under the
  shared scratch and of its umount2; the line time = a + b*K (b: the cost per live slave
  namespace, with its standard error);
- reads, per N extra mounts (one peer group of N + 1 mounts) and namespace: read() calls, bytes,
  p50 / mean / min of one full read of /proc/self/mountinfo; the host's line time = a + b*N;
  and for the slave namespace time = a + b*N + c*W, W = master lines x mounts on the master's
  peer ring that get_dominating_id() walks = (N + 1) x (N + 1)(P + 1), c in ns per step.

Ordinary least squares (numpy), standard errors from the residual variance.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from cohsim.measure.programs import read_bench_csv

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "calibration/data/devvm-2cpu-amd-epyc-f25m1/prop-and-read"
CSVS = (DATA / "prop_bench.csv", DATA / "peers2/prop_bench.csv")


def ols(columns: list[np.ndarray], y: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Coefficients of y = X beta (X: a column of ones, then `columns`), their standard
    errors and R^2."""
    x = np.column_stack([np.ones_like(y), *columns])
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ beta
    dof = len(y) - x.shape[1]
    s2 = float(resid @ resid) / dof
    se = np.sqrt(np.diag(s2 * np.linalg.inv(x.T @ x)))
    r2 = 1 - float(resid @ resid) / float(((y - y.mean()) ** 2).sum())
    return beta, se, r2


def samples(path: Path) -> tuple[dict[tuple[str, int], list[float]], dict[tuple[str, int], dict]]:
    """(op, K) or (read-ns, N) -> per-repeat times (us); (ns, N) -> reads/bytes/master lines
    and the peers P."""
    times: dict[tuple[str, int], list[float]] = defaultdict(list)
    info: dict[tuple[str, int], dict] = defaultdict(dict)
    for r in read_bench_csv(path, "prop"):
        op, ns, metric = r["op"], r["ns"], r["metric"]
        if op in ("bind_mount", "umount"):
            if r["repeat"] != "all" and metric == "ns":
                times[(op, int(r["slaves"]))].append(float(r["value"]) / 1e3)
            continue
        key = (ns, int(r["mounts"]))
        info[key]["peers"] = int(r["peers"])
        if op == "read_mountinfo" and r["repeat"] != "all":
            if metric == "ns":
                times[(f"read_{ns}", int(r["mounts"]))].append(float(r["value"]) / 1e3)
            elif r["repeat"] == "0":
                info[key][metric] = int(r["value"])
        elif op == "mount_table" and metric == "master_lines":
            info[key]["master_lines"] = int(r["value"])
    return times, info


def _x_y(times: dict[tuple[str, int], list[float]], op: str) -> tuple[np.ndarray, np.ndarray]:
    xs = sorted(k for o, k in times if o == op)
    x = np.concatenate([[k] * len(times[(op, k)]) for k in xs]).astype(float)
    return x, np.concatenate([times[(op, k)] for k in xs])


def _cells(y: list[float]) -> str:
    return f"{np.median(y):>9.1f} /{np.mean(y):>9.1f} /{min(y):>9.1f}"


def report(path: Path) -> None:
    times, info = samples(path)
    print(f"prop_bench: {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
    ks = sorted(k for o, k in times if o == "bind_mount")
    if len(ks) > 1:
        print("propagation, us (p50 / mean / min):")
        print(f"{'K':>5}  {'bind_mount':>29}  {'umount':>29}")
        for k in ks:
            print(f"{k:>5}  {_cells(times[('bind_mount', k)])}  {_cells(times[('umount', k)])}")
        for op in ("bind_mount", "umount"):
            x, y = _x_y(times, op)
            (a, b), (sa, sb), r2 = ols([x], y)
            print(
                f"  {op:<10} time = a + b*K   a = {a:7.1f} +- {sa:5.1f} us   "
                f"b = {b:.3f} +- {sb:.3f} us/slave   R^2 = {r2:.3f}"
            )
    ns_ = sorted(n for o, n in times if o == "read_host")
    peers = info[("host", ns_[0])]["peers"]
    print(f"full read of /proc/self/mountinfo (4096-byte read()s), peers P = {peers}, us:")
    print(
        f"{'N':>6} {'ns':>6} {'lines':>6} {'reads':>6} {'bytes':>8} {'master':>7}  p50 / mean / min"
    )
    for n in ns_:
        for ns in ("host", "slave"):
            i = info[(ns, n)]
            print(
                f"{n:>6} {ns:>6} {i['lines']:>6} {i['reads']:>6} {i['bytes']:>8} "
                f"{i.get('master_lines', 0):>7}  {_cells(times[(f'read_{ns}', n)])}"
            )
    x, y = _x_y(times, "read_host")
    (a, b), (sa, sb), r2 = ols([x], y)
    print(
        f"  host  time = a + b*N   a = {a:8.1f} +- {sa:6.1f} us   "
        f"b = {b:.3f} +- {sb:.3f} us/mount   R^2 = {r2:.3f}"
    )
    x, y = _x_y(times, "read_slave")
    walk = (x + 1) * (x + 1) * (peers + 1)
    (a, b, c), (sa, sb, sc), r2 = ols([x, walk], y * 1e3)
    print(
        f"  slave time = a + b*N + c*W   a = {a / 1e3:.1f} +- {sa / 1e3:.1f} us   "
        f"b = {b / 1e3:.3f} +- {sb / 1e3:.3f} us/mount   "
        f"c = {c:.2f} +- {sc:.2f} ns/step   R^2 = {r2:.3f}"
    )


def main(argv: list[str]) -> int:
    for path in [Path(a) for a in argv] or list(CSVS):
        report(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
