"""Where the mount calls' time goes, from a mount_trace.sh trace (tracefs text, .xz or plain).

    python -m calibration.analysis.mount_trace.analyse TRACE.txt.xz ...

Per call kind (overlay mount, bind umount, overlay umount, MNT_DETACH umount): count, mean
wall time, mean time switched out (and the runnable part of it: the run queue), mean time on
the CPU (wall - switched out), and the mean time per call inside lock contention tracepoints
(lock:contention_begin..end) by the kernel's flags: MUTEX (a sleeping mutex wait), SPIN|MUTEX
(a mutex's optimistic spin), WRITE / READ (an rwsem's slow path), SPIN (a spinlock).
Calls that fail (umount2 EINVAL) are left out.
"""

from __future__ import annotations

import collections
import re
import statistics
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field

from cohsim.measure import tracefs


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


Record = tuple[str, int, int, str, float, str, str]


@dataclass
class Call:
    """One successful mount or umount2 call of one task (us)."""

    pid: int
    kind: str
    start: float
    end: float = 0.0
    off: float = 0.0  #: switched out
    runq: float = 0.0  #: ... of which runnable (waiting for a CPU)
    locks: collections.Counter = field(default_factory=collections.Counter)  #: flags -> us
    _off_since: float | None = None
    _runnable: bool = False


def records(path: str, stacks: bool = False) -> Iterator[Record]:
    """Every event of a trace as cohsim.measure.tracefs reads it, with the switches out of the
    idle task that the devvm never records put back (`idle_exits`): (comm, pid, CPU, the
    context flags, time in us, event, the rest). With `stacks`, a stack trace is one more
    record, event "stack", its rest the frames joined by " < "."""
    for e in tracefs.read(str(path), stacks=stacks, idle_exits=True):
        yield e.comm, e.pid, e.cpu, e.flags, e.t_us, e.name, e.rest


def events(path: str) -> Iterator[tuple[str, int, int, float, str, str]]:
    """`records` without the flags: (comm, pid, CPU, time in us, event, the rest)."""
    for comm, pid, cpu, _flags, t, ev, rest in records(path):
        yield comm, pid, cpu, t, ev, rest


def calls(path: str) -> list[Call]:
    """Every successful call in a trace, in the order they returned."""
    out: list[Call] = []
    st: dict[int, Call] = {}
    overlay_dir: dict[int, str] = {}
    contention: dict[int, tuple[float, str]] = {}
    for _comm, pid, _cpu, t, ev, rest in events(path):
        if ev in ("sys_mount", "sys_umount"):
            if "->" not in rest:
                st[pid] = Call(pid, kind(ev, rest, overlay_dir, pid), t)
            else:
                c = st.pop(pid, None)
                if c is not None and not rest.split("->")[1].strip().startswith("0xffff"):
                    c.end = t
                    out.append(c)
        elif ev == "sched_switch":
            prev = int(re.search(r"prev_pid=(\d+)", rest).group(1))
            state = re.search(r"prev_state=(\S+)", rest).group(1)
            nxt = int(re.search(r"next_pid=(\d+)", rest).group(1))
            if prev in st:
                st[prev]._off_since, st[prev]._runnable = t, state.startswith("R")
            c = st.get(nxt)
            if c is not None and c._off_since is not None:
                d = t - c._off_since
                c.off += d
                c.runq += d if c._runnable else 0.0
                c._off_since = None
        elif ev == "contention_begin" and pid in st:
            contention[pid] = (t, re.search(r"flags=(\S+)\)", rest).group(1))
        elif ev == "contention_end" and pid in contention:
            t0, flags = contention.pop(pid)
            if pid in st:
                st[pid].locks[flags] += t - t0
    return out


def by_kind(path: str) -> dict[str, list[Call]]:
    out: dict[str, list[Call]] = collections.defaultdict(list)
    for c in calls(path):
        out[c.kind].append(c)
    return out


def main(paths: list[str]) -> None:
    for path in paths:
        print(path)
        for name, xs in sorted(by_kind(path).items()):
            if len(xs) < 20:
                continue
            n = len(xs)
            wall = statistics.fmean(c.end - c.start for c in xs)
            off = statistics.fmean(c.off for c in xs)
            runq = statistics.fmean(c.runq for c in xs)
            locks: collections.Counter = collections.Counter()
            for c in xs:
                locks.update(c.locks)
            lk = ", ".join(f"{k} {v / n:.1f}" for k, v in locks.most_common() if v / n >= 0.05)
            print(
                f"  {name:15s} n={n:4d} wall {wall:6.1f} us  on-CPU {wall - off:6.1f}  "
                f"switched out {off:5.1f} (runnable {runq:4.1f})  contention/call: {lk or '-'}"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
