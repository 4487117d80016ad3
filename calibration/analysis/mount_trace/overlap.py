"""Unmounts at 2+ workers split by whether another worker's unmount (or overlay mount) ran
during them: mean time on the CPU, switched out, and in lock contention per call (us). Then
how the two busiest workers' phases relate: for each bind (or MNT_DETACH) unmount of one,
how far the nearest start of the same call by the other is; with independent phases that
distance would be uniform between 0 and half the worker's period.

    python -m calibration.analysis.mount_trace.overlap TRACE.txt.xz
"""

from __future__ import annotations

import bisect
import collections
import statistics
import sys

from calibration.analysis.mount_trace.analyse import Call, calls


def meets(c: Call, others: list[Call]) -> bool:
    """Did another worker's call among `others` run during `c`?"""
    return any(o.pid != c.pid and o.start < c.end and o.end > c.start for o in others)


def main(path: str) -> None:
    every = calls(path)
    for other, label in ((lambda k: k.startswith("umount"), "unmount"),
                         (lambda k: k == "mount_overlay", "overlay mount")):  # fmt: skip
        others = [c for c in every if other(c.kind)]
        print(f"-- overlapping another worker's {label}")
        for k in ("umount", "umount_overlay", "umount_detach"):
            for flag in (True, False):
                xs = [c for c in every if c.kind == k and meets(c, others) == flag]
                if len(xs) < 5:
                    continue
                locks: collections.Counter = collections.Counter()
                for c in xs:
                    locks.update(c.locks)
                lk = ", ".join(f"{a} {b / len(xs):.1f}" for a, b in locks.most_common())
                on = statistics.fmean(c.end - c.start - c.off for c in xs)
                off = statistics.fmean(c.off for c in xs)
                print(
                    f"  {k:15s} {'yes' if flag else 'no ':3s} n={len(xs):4d} on-CPU {on:5.1f} "
                    f"switched out {off:5.1f} wall {on + off:5.1f} | {lk or '-'}"
                )

    phase(every)


def phase(every: list[Call]) -> None:
    """How far apart the two busiest workers' bind (or MNT_DETACH) unmounts start."""
    for k in ("umount", "umount_detach"):
        xs = [c for c in every if c.kind == k]
        pids = [p for p, _ in collections.Counter(c.pid for c in xs).most_common(2)]
        if len(pids) < 2:
            continue
        a = sorted(c.start for c in xs if c.pid == pids[0])
        b = sorted(c.start for c in xs if c.pid == pids[1])
        if len(a) < 5 or len(b) < 5:
            continue
        d = []
        for t in a:
            i = bisect.bisect(b, t)
            d.append(min(abs(t - b[j]) for j in (i - 1, i) if 0 <= j < len(b)))
        half = (a[-1] - a[0]) / (len(a) - 1) / 2
        near = sum(x < 30 for x in d) / len(d)
        print(
            f"-- phase of {k}: median distance to the other worker's {statistics.median(d):.1f}"
            f" us (independent phases: {half / 2:.1f}), within 30 us {near:.0%}"
            f" (independent: {min(30 / half, 1):.0%}); period {2 * half:.1f} us"
        )


if __name__ == "__main__":
    main(sys.argv[1])
