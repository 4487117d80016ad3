"""prop_bench's ring phase (``--ring``): mounts and unmounts under a shared mount whose peer
group holds R + 1 mounts, per R, and the least-squares line time = a + b*R per op.

    python -m calibration.analysis.prop_read.ring [PROP_BENCH_CSV ...]

Default: the two committed runs in calibration/data/devvm-2cpu-amd-epyc-f25m1/prop-ring/
(``prop_bench.csv``: the R binds are children of the shared scratch as well as its peers, as
containerd's per-layer binds are of ``/``; ``apart/prop_bench.csv``: the binds live under a
private tmpfs, peers of the scratch but not its children). Per file: the ring's size and the
scratch's children per R; p50 / mean / min per op and R (us); per op, the ordinary
least-squares line time = a + b*R (b in ns per peer) through the per-R medians (the line the
README quotes: the unmounts have outliers of milliseconds on this shared VM that a line through
every repeat follows) and through every repeat, standard errors from the residual variance;
per op, the cost of each added peer between two consecutive R (the difference of their
medians over the difference of R, ns a peer): where a line does not fit, how the cost bends;
and those of the clone's children walk and the attach's peer walk over the kernel model's
line, as a machine file's [walks] bands (cohsim.machine.parts.Walks).
With both default runs, the difference of the two median slopes per op: what the R children of
the source mount (not the ring) add.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from calibration.analysis.prop_read.fit import ols
from cohsim.kernel.costs import load_kernel
from cohsim.measure.programs import read_bench_csv
from cohsim.measure.propbench import PROP_RING_OPS

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "calibration/data/devvm-2cpu-amd-epyc-f25m1/prop-ring"
CSVS = (DATA / "prop_bench.csv", DATA / "apart/prop_bench.csv")


def samples(path: Path) -> tuple[dict[tuple[str, int], list[float]], dict[int, dict[str, int]]]:
    """(op, R) -> per-repeat times (ns); R -> the ring rows (mounts, group_mounts, children)."""
    times: dict[tuple[str, int], list[float]] = defaultdict(list)
    info: dict[int, dict[str, int]] = defaultdict(dict)
    for r in read_bench_csv(path, "prop"):
        n = int(r["mounts"])
        if r["op"] == "ring":
            info[n][r["metric"]] = int(r["value"])
        elif r["op"] in PROP_RING_OPS and r["repeat"] != "all" and r["metric"] == "ns":
            times[(r["op"], n)].append(float(r["value"]))
    return times, info


def fit(times: dict[tuple[str, int], list[float]], op: str) -> dict[str, float]:
    """a (us) + b (ns per peer) * R through every repeat, with standard errors and R^2; am,
    bm: the same through the per-R medians."""
    rs = sorted(n for o, n in times if o == op)
    x = np.concatenate([[n] * len(times[(op, n)]) for n in rs]).astype(float)
    y = np.concatenate([times[(op, n)] for n in rs])
    (a, b), (sa, sb), r2 = ols([x], y)
    (am, bm), (sam, sbm), r2m = ols(
        [np.array(rs, float)], np.array([np.median(times[(op, n)]) for n in rs])
    )
    return {
        "a": a / 1e3,
        "sa": sa / 1e3,
        "b": b,
        "sb": sb,
        "r2": r2,
        "am": am / 1e3,
        "sam": sam / 1e3,
        "bm": bm,
        "sbm": sbm,
        "r2m": r2m,
    }


def medians(times: dict[tuple[str, int], list[float]], op: str) -> dict[int, float]:
    """R -> the median over the repeats of `op` at R (ns)."""
    return {n: float(np.median(times[(op, n)])) for n in sorted(n for o, n in times if o == op)}


def increments(times: dict[tuple[str, int], list[float]], op: str) -> list[tuple[int, int, float]]:
    """(R1, R2, ns a peer) for each pair of consecutive R: the medians' difference over R2 - R1."""
    m = medians(times, op)
    rs = list(m)
    return [(r1, r2, (m[r2] - m[r1]) / (r2 - r1)) for r1, r2 in zip(rs, rs[1:], strict=False)]


#: the kernel model's op and line each walk of a machine file's [walks] is measured by: the
#: clone's walk of the source mount's children, the attach's walk of the destination's peers
WALK_LINES = {
    "children": ("ring_open_tree", "open_tree_clone", "per_child_ns"),
    "peers": ("ring_move_mount", "move_mount", "per_peer_ns"),
}


def bands(times: dict[tuple[str, int], list[float]]) -> dict[str, list[tuple[int, float]]]:
    """A machine file's [walks] bands (cohsim.machine.parts.Walks) from one ring run: per walk,
    (R1, its ns a peer from R1 to the next R over the kernel model's line), from R = 0."""
    kernel = load_kernel()
    out = {}
    for walk, (op, kop, field) in WALK_LINES.items():
        if not any(o == op for o, _ in times):
            continue
        line = getattr(kernel.op(kop), field)
        out[walk] = [(r1, round(d / line, 2)) for r1, _, d in increments(times, op)]
    return out


def report(path: Path) -> dict[str, dict[str, float]]:
    times, info = samples(path)
    print(f"prop_bench ring: {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
    ops = [op for op in PROP_RING_OPS if any(o == op for o, _ in times)]
    rs = sorted(info)
    print(f"{'R':>6} {'group':>6} {'children':>8} {'mounts':>7} {'cpus':>4} {'changes':>7}")
    for n in rs:
        i = info[n]  # bind_cpus, bind_cpu_changes: prop_bench 2 on
        cpus, changes = (i.get(k, "-") for k in ("bind_cpus", "bind_cpu_changes"))
        print(
            f"{n:>6} {i['group_mounts']:>6} {i['children']:>8} {i['mounts']:>7} {cpus:>4}"
            f" {changes:>7}"
        )
    print("us, p50 / mean / min over the repeats:")
    for op in ops:
        print(f"  {op}")
        for n in rs:
            y = np.array(times[(op, n)]) / 1e3
            print(f"{n:>8}  {np.median(y):>9.1f} /{y.mean():>9.1f} /{y.min():>9.1f}")
    fits = {}
    for op in ops:
        f = fits[op] = fit(times, op)
        print(
            f"  {op:<16} medians: time = a + b*R   a = {f['am']:6.1f} +- {f['sam']:4.1f} us   "
            f"b = {f['bm']:.1f} +- {f['sbm']:.1f} ns/peer   R^2 = {f['r2m']:.4f}"
        )
        print(
            f"  {'':<16} every repeat: a = {f['a']:6.1f} +- {f['sa']:5.1f} us   "
            f"b = {f['b']:.1f} +- {f['sb']:.1f} ns/peer   R^2 = {f['r2']:.3f}"
        )
    print("ns a peer between consecutive R (medians):")
    for op in ops:
        steps = " / ".join(f"{r1}-{r2} {d:.1f}" for r1, r2, d in increments(times, op))
        print(f"  {op:<16} {steps}")
    print("as a machine file's [walks] (each band's ns a peer over the kernel model's line):")
    for walk, b in bands(times).items():
        print(f"  {walk}_from = {[r for r, _ in b]}")
        print(f"  {walk}_scale = {[x for _, x in b]}")
    return fits


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or list(CSVS)
    fits = [report(p) for p in paths]
    if not argv and len(fits) == 2:
        both, apart = fits
        print("what R children of the source mount add (run minus apart, medians), ns per child:")
        for op in both:
            if op in apart:
                d = both[op]["bm"] - apart[op]["bm"]
                sd = float(np.hypot(both[op]["sbm"], apart[op]["sbm"]))
                print(f"  {op:<16} {d:7.1f} +- {sd:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
