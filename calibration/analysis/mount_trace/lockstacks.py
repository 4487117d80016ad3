"""Which locks mount_bench's workers contend for, and from where in the kernel: the
lock:contention_begin events of a `MOUNT_TRACE_LOCKSTACKS=1 mount_trace.sh` trace, each with
the kernel stack its `stacktrace` trigger recorded.

    python -m calibration.analysis.mount_trace.lockstacks LOCKSTACKS.txt.xz [--top N] [--sites N]

Per lock (the tracepoint's hashed address, the same within one boot) and kind (the event's
flags: SPIN a spinlock, SPIN|MUTEX a mutex's optimistic spin, MUTEX a mutex's sleep, READ /
WRITE an rwsem's slow path): how many times a mount_bench task began to wait for it, and the
call sites it waited from: the stack's first frames below the locking code's own (`LOCKING`),
innermost first, joined by " < ". The stack is what names the lock: `inode_insert5 <
iget5_locked` waits for fs/inode.c's inode_hash_lock, `pcpu_alloc_noprof < alloc_vfsmnt` for
mm/percpu.c's pcpu_alloc_mutex.

Counts only. The `stacktrace` trigger runs inside the wait it records (tens of microseconds a
stack), so the traced waits are longer and more frequent than untraced ones: time them in a
plain trace of the same run (`calibration.analysis.mount_trace.locks`), where the same locks
are told apart by their counts.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from calibration.analysis.mount_trace.locks import BEGIN
from cohsim.measure import tracefs

BENCH = "mount_bench"
#: frames of the tracepoint and of the locking code itself, above every wait's call site
LOCKING = re.compile(
    r"^(trace_event_raw_event_contention_begin|__traceiter_contention_begin"
    r"|__pv_queued_spin_lock_slowpath|native_queued_spin_lock_slowpath|queued_\w+"
    r"|_raw_spin_lock\w*|_raw_read_lock\w*|_raw_write_lock\w*|do_raw_spin_lock"
    r"|__mutex_lock\S*|mutex_lock\w*|mutex_optimistic_spin|osq_lock"
    r"|rwsem_down_\w+|rwsem_optimistic_spin|down_read\w*|down_write\w*"
    r"|lock_mount_hash|read_seqlock_excl\w*|write_seqlock\w*)$"
)


@dataclass
class Lock:
    """One lock's contended waits by the benchmark's tasks: how many, and from where."""

    addr: str
    flags: str
    waits: int = 0
    sites: Counter[str] = field(default_factory=Counter)


def site(frames: list[str], depth: int) -> str:
    """The wait's call site: its first `depth` frames outside the locking code."""
    return " < ".join([f for f in frames if not LOCKING.match(f)][:depth])


def waits(path: Path) -> Iterator[tuple[str, str, list[str]]]:
    """(address, flags, stack innermost first) of every contention_begin of a mount_bench
    task that has its stack. The stack follows its event on the same CPU."""
    begun: dict[int, tuple[str, str]] = {}  # per CPU: a worker's wait whose stack is due
    for e in tracefs.read(str(path), stacks=True):
        if e.name == "stack":
            w = begun.pop(e.cpu, None)
            if w is not None and e.rest:
                yield w[0], w[1], e.rest.split(" < ")
            continue
        begun.pop(e.cpu, None)
        if e.name == "contention_begin" and e.comm == BENCH:
            m = BEGIN.match(e.rest)
            if m:
                begun[e.cpu] = (m.group(1), m.group(2))


def locks(path: Path, depth: int = 4) -> list[Lock]:
    """Every lock the workers waited for, most waits first."""
    by: dict[tuple[str, str], Lock] = {}
    for addr, flags, frames in waits(path):
        lk = by.get((addr, flags))
        if lk is None:
            lk = by[(addr, flags)] = Lock(addr, flags)
        lk.waits += 1
        lk.sites[site(frames, depth)] += 1
    return sorted(by.values(), key=lambda lk: (-lk.waits, lk.addr, lk.flags))


def report(path: Path, top: int, sites: int) -> str:
    """The table: per lock its waits and its `sites` commonest call sites."""
    all_locks = locks(path)
    total = sum(lk.waits for lk in all_locks)
    out = [f"{path.name}: {total} contended waits of {BENCH} tasks with a stack"]
    for lk in all_locks[:top]:
        out.append(f"{lk.addr} {lk.flags:<12} {lk.waits:>7} ({100 * lk.waits / total:.1f} %)")
        for s, n in lk.sites.most_common(sites):
            out.append(f"    {n:>7}  {s}")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="lockstacks", description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+", type=Path)
    ap.add_argument("--top", type=int, default=10, help="locks to show (default 10)")
    ap.add_argument("--sites", type=int, default=5, help="call sites a lock (default 5)")
    a = ap.parse_args(argv)
    for p in a.traces:
        if not p.is_file():
            print(f"lockstacks: {p}: no such file", file=sys.stderr)
            return 1
        print(report(p, a.top, a.sites))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
