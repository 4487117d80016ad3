"""Unmounts at 2+ workers split by whether another worker's unmount (or overlay mount) ran
during them: mean time on the CPU, switched out, and in lock contention per call (us).

    python overlap.py trace-common-parent-2w-1L.txt.xz
"""

from __future__ import annotations

import collections
import lzma
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyse import LINE, kind  # noqa: E402


def calls_of(path: str) -> list[tuple[int, str, float, float, float, collections.Counter]]:
    """(pid, kind, start, end, switched out, contention by flags) of every successful call."""
    calls, st, overlay_dir, cb = [], {}, {}, {}
    with lzma.open(path, "rt") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            _c, pid_s, _cpu, ts, ev, rest = m.groups()
            pid, t = int(pid_s), float(ts) * 1e6
            if ev in ("sys_mount", "sys_umount"):
                if "->" not in rest:
                    st[pid] = [kind(ev, rest, overlay_dir, pid), t, 0.0, None, collections.Counter()]
                else:
                    s = st.pop(pid, None)
                    if s and not rest.split("->")[1].strip().startswith("0xffff"):
                        calls.append((pid, s[0], s[1], t, s[2], s[4]))
            elif ev == "sched_switch":
                prev = int(re.search(r"prev_pid=(\d+)", rest).group(1))
                nxt = int(re.search(r"next_pid=(\d+)", rest).group(1))
                if prev in st:
                    st[prev][3] = t
                if nxt in st and st[nxt][3] is not None:
                    st[nxt][2] += t - st[nxt][3]
                    st[nxt][3] = None
            elif ev == "contention_begin" and pid in st:
                cb[pid] = (t, re.search(r"flags=(\S+)\)", rest).group(1))
            elif ev == "contention_end" and pid in cb:
                t0, flags = cb.pop(pid)
                if pid in st:
                    st[pid][4][flags] += t - t0
    return calls


def main(path: str) -> None:
    calls = calls_of(path)
    for other, label in ((lambda k: k.startswith("umount"), "unmount"),
                         (lambda k: k == "mount_overlay", "overlay mount")):  # fmt: skip
        others = [c for c in calls if other(c[1])]
        print(f"-- overlapping another worker's {label}")
        for k in ("umount", "umount_overlay", "umount_detach"):
            for flag in (True, False):
                xs = [
                    c
                    for c in calls
                    if c[1] == k
                    and any(o[0] != c[0] and o[2] < c[3] and o[3] > c[2] for o in others) == flag
                ]
                if len(xs) < 5:
                    continue
                locks: collections.Counter = collections.Counter()
                for c in xs:
                    locks.update(c[5])
                lk = ", ".join(f"{a} {b / len(xs):.1f}" for a, b in locks.most_common())
                on = statistics.fmean(c[3] - c[2] - c[4] for c in xs)
                off = statistics.fmean(c[4] for c in xs)
                print(
                    f"  {k:15s} {'yes' if flag else 'no ':3s} n={len(xs):4d} on-CPU {on:5.1f} "
                    f"switched out {off:5.1f} wall {on + off:5.1f} | {lk or '-'}"
                )


if __name__ == "__main__":
    main(sys.argv[1])
