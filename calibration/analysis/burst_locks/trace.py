"""Which lock a burst's workers wait on, and inside which call, from a mount_trace.sh trace.

    python -m calibration.analysis.burst_locks.trace TRACE.txt.xz [--names STACKS.txt.xz]

Every lock:contention_begin..end span of a mount_bench task, summed per sequence (sequences
from the run's CSV beside the trace, as calibration.analysis.mount_trace.locks reads them), by
lock and by where the task was: inside a traced mount(2) (`mount`: common-parent's overlay
mount, with its per-layer clone_private_mount() reads) or umount2(2) (`umount`), or between
them (`other`: every untraced call - open_tree, mount_setattr, move_mount, fsconfig, close,
the read() calls of /proc/self/mountinfo - and the task work run on the way out of a
syscall). A span is contention_begin to contention_end: for a sleeping lock it includes the
wait for a CPU after the wake-up. Then the workers' waits for a CPU: switched out runnable
(preempted) and from a wake-up to running (woken), per sequence, from the scheduler events
(the switches this VM does not record put back: calibration.analysis.mount_trace.analyse).

Locks are named by address (the kernel's hashed pointer, the same within one boot): the
rwsem with READ spans is namespace_sem (fs/namespace.c), as mount_trace.locks names it; with
`--names`, a stack trace of the same boot (MOUNT_TRACE_STACKS=1) names every other lock a
worker slept on by the stack of that sleep (calibration.analysis.sleep_stacks.sleep_stacks'
labels, and for a mutex the function that called mutex_lock).
"""

from __future__ import annotations

import argparse
import bisect
import collections
import csv
import itertools
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from calibration.analysis.mount_trace.analyse import records
from calibration.analysis.mount_trace.locks import sequence_stats
from calibration.analysis.sleep_stacks.sleep_stacks import sleep_site
from cohsim.calibrate.measured import WAKE_STEP_LOCK as PACE_LOCK

BENCH = "mount_bench"
#: a span is summed under (lock name, the kernel's flags, where the task was)
Key = tuple[str, str, str]


@dataclass
class Tally:
    """A trace's contention spans and CPU waits, summed over the workers (us)."""

    spans: dict[Key, list[float]] = field(default_factory=lambda: collections.defaultdict(list))
    preempted_us: float = 0.0  #: switched out runnable, until it ran again
    woken_us: float = 0.0  #: from a wake-up to running
    wakeups: int = 0
    #: namespace_sem's read waits (READ spans): (when each ended, its length), us
    read_waits: list[tuple[float, float]] = field(default_factory=list)
    #: the read waits the task slept through: (its last wake-up in the span, the span's end)
    read_woken: list[tuple[float, float]] = field(default_factory=list)
    #: every wake-up of a task inside a read wait: (when, the waker's pid)
    read_wakers: list[tuple[float, int]] = field(default_factory=list)
    #: each lock's sleeping waits (MUTEX spans) by address: when each ended, us
    mutex_ends: dict[str, list[float]] = field(
        default_factory=lambda: collections.defaultdict(list)
    )


#: read waits that end within this many us of the previous one belong to one batch
BATCH_GAP_US = 100.0


@dataclass(frozen=True)
class Batches:
    """namespace_sem's read waits grouped into the batches the lock was granted in: the
    waits that end (their task running with the lock) within `BATCH_GAP_US` of each other.
    rwsem_mark_wake() grants every queued reader at once (kernel/locking/rwsem.c); how long
    its readers take to run is the batch's spread, and what comes between batches (the
    writers queued behind it) the gap."""

    batches: int
    mean_size: float
    spread_us: float  #: mean, from a batch's first reader running to its last
    gap_us: float  #: mean, from a batch's last reader to the next batch's first
    cycle_us: float  #: the span over the batches

    @classmethod
    def of(cls, waits: Sequence[tuple[float, float]], gap_us: float = BATCH_GAP_US) -> Batches:
        groups = _groups([t for t, _d in waits], gap_us)
        ends = [t for g in groups for t in g]
        gaps = [b[0] - a[-1] for a, b in itertools.pairwise(groups)] or [0.0]
        return cls(
            len(groups),
            len(ends) / len(groups),
            statistics.fmean(g[-1] - g[0] for g in groups),
            statistics.fmean(gaps),
            (ends[-1] - ends[0]) / len(groups),
        )

    def text(self) -> str:
        return (
            f"{self.batches} batches of {self.mean_size:.0f} readers (mean), each running over "
            f"{self.spread_us:.0f} us, {self.gap_us:.0f} us to the next: one every "
            f"{self.cycle_us:.0f} us"
        )


def _groups(times: Sequence[float], gap_us: float = BATCH_GAP_US) -> list[list[float]]:
    """`times` sorted and cut wherever two follow each other by more than `gap_us`."""
    ts = sorted(times)
    groups: list[list[float]] = [[ts[0]]]
    for t in ts[1:]:
        if t - groups[-1][-1] > gap_us:
            groups.append([t])
        else:
            groups[-1].append(t)
    return groups


def batches_with(
    waits: Sequence[tuple[float, float]], times: Sequence[float]
) -> tuple[int, float, int, float]:
    """The read batches (`Batches`) with one of `times` (e.g. a mutex sleep's end) between
    their first reader running and the next batch's: how many, their mean running time (us),
    and the same for the others."""
    groups = _groups([t for t, _d in waits])
    starts = [g[0] for g in groups]
    hit = [False] * len(groups)
    for t in times:
        i = bisect.bisect_right(starts, t) - 1
        if i >= 0:
            hit[i] = True
    spread = [(g[-1] - g[0], h) for g, h in zip(groups, hit, strict=True)]
    yes = [x for x, h in spread if h] or [0.0]
    no = [x for x, h in spread if not h] or [0.0]
    return sum(hit), statistics.fmean(yes), len(groups) - sum(hit), statistics.fmean(no)


def waker_pace(wakeups: Sequence[tuple[float, int]]) -> tuple[float, float]:
    """Over the batches of wake-ups (`_groups`) of 10 or more: the mean share made by the
    batch's busiest waker, and the median us between one waker's successive wake-ups in a
    batch (where it made 10 or more: `waker_steps`)."""
    shares, pace = _waker_batches(wakeups)
    return statistics.fmean(shares or [0.0]), statistics.median(pace or [0.0])


def waker_steps(wakeups: Sequence[tuple[float, int]]) -> list[float]:
    """Per waker and batch where it made 10 or more wake-ups: the mean us between them (the
    releaser's wake_up_q() walking the readers rwsem_mark_wake() granted)."""
    return _waker_batches(wakeups)[1]


def _waker_batches(wakeups: Sequence[tuple[float, int]]) -> tuple[list[float], list[float]]:
    ts = sorted(wakeups)
    if not ts:
        return [], []
    batches: list[list[tuple[float, int]]] = [[ts[0]]]
    for w in ts[1:]:
        if w[0] - batches[-1][-1][0] > BATCH_GAP_US:
            batches.append([w])
        else:
            batches[-1].append(w)
    shares, pace = [], []
    for b in batches:
        if len(b) < 10:
            continue
        by: dict[int, list[float]] = collections.defaultdict(list)
        for t, waker in b:
            by[waker].append(t)
        shares.append(max(len(v) for v in by.values()) / len(b))
        pace += [(v[-1] - v[0]) / (len(v) - 1) for v in by.values() if len(v) >= 10]
    return shares, pace


def pace_rows(path: Path) -> list[dict[str, str]]:
    """The trace's wake-up pace as wake_bench-format rows (lock `wake-q`, placement the run's
    name, threads its workers): how many waker-batch paces, and their median in ns, what
    cohsim.calibrate reads as the host's `wake_step_ns`."""
    steps = sorted(waker_steps(tally(path).read_wakers))
    name = run_csv(path).parent.name.removeprefix("run-")
    workers = int(name.rsplit("-", 2)[-2].removesuffix("w"))
    base = {"bench": "wake", "lock": PACE_LOCK, "threads": str(workers), "placement": name}
    p50 = round(statistics.median(steps) * 1000.0) if steps else 0
    return [
        {**base, "metric": "samples", "value": str(len(steps)), "unit": "count", "repeat": "0"},
        {**base, "metric": "step_p50", "value": str(p50), "unit": "ns", "repeat": "0"},
    ]


def run_csv(trace: Path) -> Path:
    """The mount_bench CSV of the run a trace (trace-NAME or stacks-NAME) recorded."""
    name = trace.name.removesuffix(".xz").removesuffix(".txt")
    name = name.removeprefix("trace-").removeprefix("stacks-")
    return trace.parent / f"run-{name}" / "mount_bench.csv"


def _mutex_caller(stack: str) -> str:
    """For a sleep in a mutex's slow path: the function that called mutex_lock."""
    frames = stack.split(" < ")
    for i, f in enumerate(frames[:-1]):
        if f.startswith("mutex_lock"):
            return frames[i + 1]
    return "?"


def lock_names(stacks: Path) -> dict[str, str]:
    """Lock address -> a name, from a stack trace of the same boot: each address a worker
    slept on (its open contention_begin at a sleep with a stack), named by that sleep's site;
    a mutex by its caller (`mutex: CALLER`). The most frequent name of an address wins."""
    open_lock: dict[int, str] = {}
    sleeping: dict[int, int] = {}  # CPU -> pid whose switch out waits for its stack
    seen: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for comm, pid, cpu, _flags, _t, ev, rest in records(str(stacks), stacks=True):
        if ev == "contention_begin" and comm == BENCH:
            open_lock[pid] = rest.split()[0]
        elif ev == "contention_end" and comm == BENCH:
            open_lock.pop(pid, None)
        elif ev == "sched_switch" and "prev_comm=mount_bench" in rest:
            prev = int(rest.split("prev_pid=")[1].split()[0])
            if not rest.split("prev_state=")[1].startswith("R") and prev in open_lock:
                sleeping[cpu] = prev
        elif ev == "stack" and cpu in sleeping:
            addr = open_lock.get(sleeping.pop(cpu))
            if addr is not None:
                site = sleep_site(rest)
                if "__mutex_lock" in rest:
                    site = f"mutex: {_mutex_caller(rest)}"
                seen[addr][site] += 1
    return {a: c.most_common(1)[0][0] for a, c in seen.items()}


def tally(path: Path) -> Tally:
    """Every contention span of the mount_bench tasks, by lock address, flags and call; and
    their waits for a CPU."""
    out = Tally()
    inside: dict[int, str] = {}  # pid -> "mount" / "umount" while in the traced call
    begun: dict[int, tuple[float, str, str, str]] = {}
    span_woke: dict[int, float] = {}  # pid -> its last wake-up inside an open span
    off: dict[int, tuple[float, bool]] = {}  # pid -> (switched out, runnable)
    woke: dict[int, float] = {}
    bench: set[int] = set()
    for comm, pid, _cpu, _flags, t, ev, rest in records(str(path)):
        if comm == BENCH:
            bench.add(pid)
        if ev in ("sys_mount", "sys_umount") and comm == BENCH:
            if "->" in rest:
                inside.pop(pid, None)
            else:
                inside[pid] = ev.removeprefix("sys_")
        elif ev == "contention_begin" and comm == BENCH:
            addr, flags = rest.split()[0], rest.split("flags=")[1].rstrip(")")
            begun[pid] = (t, addr, flags, inside.get(pid, "other"))
            span_woke.pop(pid, None)
        elif ev == "contention_end" and pid in begun:
            t0, addr, flags, where = begun.pop(pid)
            out.spans[(addr, flags, where)].append(t - t0)
            woken = span_woke.pop(pid, None)
            if flags == "READ":
                out.read_waits.append((t, t - t0))
                if woken is not None:
                    out.read_woken.append((woken, t))
            elif flags == "MUTEX":
                out.mutex_ends[addr].append(t)
        elif ev == "sched_switch":
            prev = int(rest.split("prev_pid=")[1].split()[0])
            nxt = int(rest.split("next_pid=")[1].split()[0])
            if prev in bench:
                off[prev] = (t, rest.split("prev_state=")[1].startswith("R"))
            if nxt in off:
                t0, runnable = off.pop(nxt)
                if runnable:
                    out.preempted_us += t - t0
                elif nxt in woke:
                    out.woken_us += t - woke.pop(nxt)
                    out.wakeups += 1
        elif ev == "sched_wakeup":
            who = int(rest.split(" pid=")[1].split()[0])
            if who in off:
                woke[who] = t
            if who in begun:
                span_woke[who] = t
                if begun[who][2] == "READ":
                    out.read_wakers.append((t, pid))
    return out


def named(t: Tally, names: dict[str, str]) -> dict[Key, list[float]]:
    """The spans with each address named: namespace_sem (the rwsem with READ spans), a name
    from `names`, or the address itself."""
    rwsem = {a for a, f, _w in t.spans if f == "READ"}
    out: dict[Key, list[float]] = collections.defaultdict(list)
    for (addr, flags, where), v in t.spans.items():
        name = "namespace_sem" if addr in rwsem else names.get(addr, addr)
        out[(name, flags, where)].extend(v)
    return out


def report(path: Path, names: dict[str, str], floor_us: float = 10.0) -> str:
    seqs, wall = sequence_stats(run_csv(path))
    t = tally(path)
    lines = [f"{path.name}: {seqs} sequences, sequence wall {wall:.0f} us"]
    total = 0.0
    for (name, flags, where), v in sorted(named(t, names).items(), key=lambda kv: -sum(kv[1])):
        per = sum(v) / seqs
        total += per
        if per >= floor_us:
            lines.append(
                f"  {name:40.40s} {flags:10s} {where:6s} {len(v) / seqs:6.1f} waits/seq "
                f"{per:9.1f} us/seq ({per / wall:5.1%})  mean {sum(v) / len(v):7.1f} us"
            )
    lines.append(f"  every lock: {total:.0f} us/seq ({total / wall:.1%} of the sequence)")
    lines.append(
        f"  waiting for a CPU: preempted {t.preempted_us / seqs:.0f} us/seq, woken "
        f"{t.woken_us / seqs:.0f} us/seq ({t.wakeups / seqs:.1f} wake-ups/seq, mean "
        f"{t.woken_us / max(1, t.wakeups):.1f} us)"
    )
    lines.append(f"  namespace_sem read grants: {Batches.of(t.read_waits).text()}")
    if t.read_woken:
        asleep = [d for _t, d in t.read_waits]
        run = sorted(e - w for w, e in t.read_woken)
        wakes = Batches.of([(w, 0.0) for w, _e in t.read_woken])
        lines.append(
            f"  namespace_sem read waits: {statistics.fmean(asleep):.0f} us (mean), of which "
            f"woken to running {statistics.fmean(run):.0f} us (p50 {run[len(run) // 2]:.0f}, "
            f"p90 {run[int(0.9 * len(run))]:.0f}; {len(run)} woken); a batch's wake-ups "
            f"spread over {wakes.spread_us:.0f} us (mean of {wakes.batches})"
        )
        share, pace = waker_pace(t.read_wakers)
        lines.append(
            f"  a batch's busiest waker makes {share:.0%} of its wake-ups (mean), one every "
            f"{pace:.1f} us (median)"
        )
    for addr, name in names.items():
        if name == "mutex: pcpu_alloc_noprof" and t.mutex_ends.get(addr):
            n, spread, m, other = batches_with(t.read_waits, t.mutex_ends[addr])
            lines.append(
                f"  read batches with a pcpu_alloc_mutex sleep ending in them: {n} running over "
                f"{spread:.0f} us (mean), the other {m} {other:.0f} us"
            )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="a burst trace's lock waits by call")
    ap.add_argument("traces", nargs="+", type=Path)
    ap.add_argument("--names", type=Path, help="a stack trace of the same boot")
    ap.add_argument("--floor", type=float, default=10.0, help="hide locks under this us/seq")
    ap.add_argument("--pace-csv", type=Path, help="write the traces' wake-up pace here instead")
    args = ap.parse_args(argv)
    if args.pace_csv:
        rows = [r for p in args.traces for r in pace_rows(p)]
        with args.pace_csv.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        return 0
    names = lock_names(args.names) if args.names else {}
    for a, n in sorted(names.items(), key=lambda kv: kv[1]):
        print(f"  {a} = {n}")
    for p in args.traces:
        print(report(p, names, args.floor))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
