"""Where the mount calls' time goes, from a mount_trace.sh trace (tracefs text, .xz or plain).

    python analyse.py trace-*.txt.xz

Per call kind (overlay mount, bind umount, overlay umount, MNT_DETACH umount): count, mean
wall time, mean time switched out (and the runnable part of it: the run queue), mean time on
the CPU (wall - switched out), and the mean time per call inside lock contention tracepoints
(lock:contention_begin..end) by the kernel's flags: MUTEX (a sleeping mutex wait), SPIN|MUTEX
(a mutex's optimistic spin), WRITE / READ (an rwsem's slow path), SPIN (a spinlock).
Calls that fail (umount2 EINVAL) are left out.
"""

from __future__ import annotations

import collections
import lzma
import re
import statistics
import sys

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+):? ?(.*)$")


def kind(ev: str, rest: str, overlay_dir: dict[int, str], pid: int) -> str:
    if ev == "sys_mount":
        flags = re.search(r"flags: (0x[0-9a-f]+|0)", rest).group(1)
        if "type: 0x" in rest and flags == "0":
            overlay_dir[pid] = re.search(r"dir_name: (0x[0-9a-f]+)", rest).group(1)
            return "mount_overlay"
        return "mount_other"
    flags = re.search(r"flags: (\w+)\)", rest).group(1)
    if flags == "2":
        return "umount_detach"
    name = re.search(r"name: (0x[0-9a-f]+)", rest).group(1)
    return "umount_overlay" if overlay_dir.get(pid) == name else "umount"


def analyse(path: str) -> dict[str, list[tuple[float, float, float, collections.Counter]]]:
    calls: dict[str, list] = collections.defaultdict(list)
    open_ = lzma.open if path.endswith(".xz") else open
    st: dict[int, dict] = {}
    overlay_dir: dict[int, str] = {}
    contention: dict[int, tuple[float, str]] = {}
    with open_(path, "rt") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            _comm, pid_s, _cpu, ts, ev, rest = m.groups()
            pid, t = int(pid_s), float(ts) * 1e6
            if ev in ("sys_mount", "sys_umount"):
                if "->" not in rest:
                    st[pid] = {
                        "kind": kind(ev, rest, overlay_dir, pid),
                        "t0": t,
                        "off": 0.0,
                        "runq": 0.0,
                        "off_since": None,
                        "runnable": False,
                        "locks": collections.Counter(),
                    }
                else:
                    s = st.pop(pid, None)
                    if s is None or rest.split("->")[1].strip().startswith("0xffff"):
                        continue
                    calls[s["kind"]].append((t - s["t0"], s["off"], s["runq"], s["locks"]))
            elif ev == "sched_switch":
                prev = int(re.search(r"prev_pid=(\d+)", rest).group(1))
                state = re.search(r"prev_state=(\S+)", rest).group(1)
                nxt = int(re.search(r"next_pid=(\d+)", rest).group(1))
                if prev in st:
                    st[prev]["off_since"], st[prev]["runnable"] = t, state.startswith("R")
                if nxt in st and st[nxt]["off_since"] is not None:
                    d = t - st[nxt]["off_since"]
                    st[nxt]["off"] += d
                    st[nxt]["runq"] += d if st[nxt]["runnable"] else 0.0
                    st[nxt]["off_since"] = None
            elif ev == "contention_begin" and pid in st:
                contention[pid] = (t, re.search(r"flags=(\S+)\)", rest).group(1))
            elif ev == "contention_end" and pid in contention:
                t0, flags = contention.pop(pid)
                if pid in st:
                    st[pid]["locks"][flags] += t - t0
    return calls


def main(paths: list[str]) -> None:
    for path in paths:
        print(path)
        for name, xs in sorted(analyse(path).items()):
            if len(xs) < 20:
                continue
            n = len(xs)
            wall = statistics.fmean(x[0] for x in xs)
            off = statistics.fmean(x[1] for x in xs)
            runq = statistics.fmean(x[2] for x in xs)
            locks: collections.Counter = collections.Counter()
            for x in xs:
                locks.update(x[3])
            lk = ", ".join(f"{k} {v / n:.1f}" for k, v in locks.most_common() if v / n >= 0.05)
            print(
                f"  {name:15s} n={n:4d} wall {wall:6.1f} us  on-CPU {wall - off:6.1f}  "
                f"switched out {off:5.1f} (runnable {runq:4.1f})  contention/call: {lk or '-'}"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
