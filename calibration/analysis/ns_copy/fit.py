"""ns_bench's per-N figures and the least-squares line time = a + b*N through them.

    python -m calibration.analysis.ns_copy.fit [NS_BENCH_CSV]

Default: the committed run in calibration/data/devvm-2cpu-amd-epyc-f25m1/ns-copy/ (ns_bench 1;
ns-rslave/ holds an ns_bench 2 run, which adds the rslave step and the shared variant). Per
variant (newns: ``unshare(CLONE_NEWNS)``; userns: with ``CLONE_NEWUSER``; shared: newns with
copies that are peers of the parent's mounts) and N extra mounts: the copy's size (mountinfo
lines in the child), then p50 / mean / min over the repeats of the copy (``unshare``), of
runc's ``mount("", "/", MS_REC|MS_SLAVE)`` of the copy (``rslave``, where the CSV has it), of
the teardown of the copied mounts (newns, shared: ``umount2(scratch, MNT_DETACH)``, the N + 1
mounts of the scratch subtree; userns, where the scratch is locked: runc's detach of the old
root, base + N + 1 mounts) and of the child's exit. Then, per variant and step, the ordinary
least-squares line through every repeat (scipy.stats.linregress): b is the cost per mount,
given with its standard error, in us and in ns.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats

from cohsim.measure.programs import read_bench_csv

REPO = Path(__file__).resolve().parents[3]
CSV = REPO / "calibration/data/devvm-2cpu-amd-epyc-f25m1/ns-copy/ns_bench.csv"
#: the step that tears the copied mounts down, per variant
TEARDOWN = {"newns": "umount_scratch", "userns": "umount_oldroot", "shared": "umount_scratch"}
#: the order the variants are printed in
ORDER = ("newns", "userns", "shared")


def samples(
    path: Path,
) -> tuple[dict[tuple[str, str, int], list[float]], dict[tuple[str, int], int]]:
    """(variant, step, N) -> per-repeat times (us); (variant, N) -> mounts in the child's copy."""
    times: dict[tuple[str, str, int], list[float]] = defaultdict(list)
    copied: dict[tuple[str, int], int] = {}
    for r in read_bench_csv(path, "ns"):
        if r["repeat"] == "all":
            continue
        v, n = r["variant"], int(r["mounts"])
        if r["metric"] == "ns":
            times[(v, r["op"], n)].append(float(r["value"]) / 1e3)
        elif (r["op"], r["metric"]) == ("mount_table", "after_unshare"):
            copied[(v, n)] = int(r["value"])
    return times, copied


def fit(ns: list[int], ys: list[list[float]]) -> tuple[float, float, float, float, float]:
    """a, its standard error, b, its standard error (us and us/mount), and R^2."""
    x = np.concatenate([[n] * len(y) for n, y in zip(ns, ys, strict=True)])
    res = stats.linregress(x, np.concatenate(ys))
    return res.intercept, res.intercept_stderr, res.slope, res.stderr, res.rvalue**2


def steps_of(times: dict[tuple[str, str, int], list[float]], v: str) -> list[str]:
    """The steps shown for variant `v`: the copy, the rslave (ns_bench 2), the teardown, exit."""
    have = {s for vv, s, _ in times if vv == v}
    return [s for s in ("unshare", "rslave", TEARDOWN[v], "exit") if s in have]


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else CSV
    times, copied = samples(path)
    variants = [v for v in ORDER if any(vv == v for vv, _, _ in times)]
    print(f"ns_bench: {path.name}, times in us (p50 / mean / min over the repeats)")
    head = {"unshare": "unshare", "rslave": "rslave", "exit": "exit"}
    for v in variants:
        steps = steps_of(times, v)
        print(
            f"{'variant':<8}{'N':>7}{'copied':>8}  "
            + "  ".join(f"{head.get(s, 'teardown'):>26}" for s in steps)
        )
        for n in sorted({n for vv, _, n in times if vv == v}):
            cells = []
            for step in steps:
                y = times[(v, step, n)]
                cells.append(f"{np.median(y):>8.1f} /{np.mean(y):>8.1f} /{min(y):>8.1f}")
            print(f"{v:<8}{n:>7}{copied[(v, n)]:>8}  " + "  ".join(cells))
    print("least squares over every repeat, time = a + b*N (+- standard error):")
    for v in variants:
        for step in [s for s in steps_of(times, v) if s != "exit"]:
            ns = sorted({n for vv, s, n in times if (vv, s) == (v, step)})
            a, sa, b, sb, r2 = fit(ns, [times[(v, step, n)] for n in ns])
            print(
                f"{v:<8}{step:<16} a = {a:8.1f} +- {sa:6.1f} us   "
                f"b = {b:.3f} +- {sb:.3f} us/mount ({b * 1e3:.1f} +- {sb * 1e3:.1f} ns)"
                f"   R^2 = {r2:.3f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
