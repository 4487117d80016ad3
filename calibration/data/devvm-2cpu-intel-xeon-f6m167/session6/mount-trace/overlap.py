"""Unmounts at 2+ workers split by whether another worker's unmount (or overlay mount) ran
during them: mean time on the CPU, switched out, and in lock contention per call (us).

    python overlap.py trace-common-parent-2w-1L.txt.xz
"""

from __future__ import annotations

import collections
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyse import calls  # noqa: E402


def main(path: str) -> None:
    every = calls(path)
    for other, label in ((lambda k: k.startswith("umount"), "unmount"),
                         (lambda k: k == "mount_overlay", "overlay mount")):  # fmt: skip
        others = [c for c in every if other(c.kind)]
        print(f"-- overlapping another worker's {label}")
        for k in ("umount", "umount_overlay", "umount_detach"):
            for flag in (True, False):
                xs = [
                    c
                    for c in every
                    if c.kind == k
                    and any(o.pid != c.pid and o.start < c.end and o.end > c.start for o in others)
                    == flag
                ]
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


if __name__ == "__main__":
    main(sys.argv[1])
