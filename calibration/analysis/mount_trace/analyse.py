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
from collections.abc import Iterator
from dataclasses import dataclass, field

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+): (\w+):? ?(.*)$")


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


STACK = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+): <stack trace>$")

#: us from a wake-up aimed at an idle CPU to the CPU's switch to the woken task: the median
#: of CPU 0's recorded ones in the session-6, 8 and 9 traces (1-2 us; see IDLE_EXITS below)
IDLE_EXIT_US = 1.0


def _lines(path: str, stacks: bool) -> Iterator[tuple]:
    open_ = lzma.open if path.endswith(".xz") else open
    pending: tuple | None = None
    with open_(path, "rt") as f:
        for line in f:
            if pending is not None:
                if line.startswith(" => "):
                    pending[1].append(line[4:].strip())
                    continue
                head, frames = pending
                pending = None
                yield *head, "stack", " < ".join(frames)
            m = LINE.match(line)
            if m:
                comm, pid, cpu, flags, ts, ev, rest = m.groups()
                yield comm, int(pid), int(cpu), flags, float(ts) * 1e6, ev, rest
            elif stacks and (m := STACK.match(line)):
                comm, pid, cpu, flags, ts = m.groups()
                pending = ((comm, int(pid), int(cpu), flags, float(ts) * 1e6), [])
    if pending is not None:
        head, frames = pending
        yield *head, "stack", " < ".join(frames)


Record = tuple[str, int, int, str, float, str, str]


def records(path: str, stacks: bool = False) -> Iterator[Record]:
    """Every tracepoint line of a trace: (comm, pid, CPU, the context flags, time in us,
    event, the rest). The flags are ftrace's irqs-off / need-resched / hardirq-softirq /
    preempt-depth / migrate-disable columns, e.g. "dNh2.".

    IDLE_EXITS: the devvm never records a `sched_switch` out of CPU 1's idle task (none in
    any trace taken here, sessions 6-11; CPU 0's are all there). So when a task's record
    (not a stack) shows up on a CPU whose last recorded switch went to the idle task, the
    switch to it is put back, just before that record: at its wake-up aimed at that CPU
    plus IDLE_EXIT_US, or at the record itself if no such wake-up came first. The inserted
    switch carries `inferred=1` at the end of its rest.

    With `stacks`, a `stacktrace` trigger's output (a "<stack trace>" line, then a " => f"
    line a frame, innermost first) is one more record, event "stack", its rest the frames
    joined by " < "."""
    idle: dict[int, bool] = {}  # CPU -> its last recorded switch went to the idle task
    woken: dict[int, dict[int, float]] = {}  # idle CPU -> {pid: wake-up aimed at it}
    for rec in _lines(path, stacks):
        comm, pid, cpu, flags, t, ev, rest = rec
        if idle.get(cpu) and pid != 0 and ev != "stack":
            t_in = min(woken[cpu].get(pid, t) + IDLE_EXIT_US, t)
            yield (
                "<idle>", 0, cpu, flags, t_in, "sched_switch",
                f"prev_comm=swapper/{cpu} prev_pid=0 prev_prio=120 prev_state=R ==> "
                f"next_comm={comm} next_pid={pid} next_prio=120 inferred=1",
            )  # fmt: skip
            idle[cpu] = False
        if ev == "sched_wakeup":
            m = re.search(r" pid=(\d+) .*target_cpu=(\d+)", rest)
            if m and idle.get(int(m.group(2))):
                woken[int(m.group(2))][int(m.group(1))] = t
        elif ev == "sched_switch":
            idle[cpu] = " next_pid=0 " in rest
            woken[cpu] = {}
        yield rec


def events(path: str) -> Iterator[tuple[str, int, int, float, str, str]]:
    """Every tracepoint line of a trace, without its flags: (comm, pid, CPU, time in us,
    event, the rest)."""
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
