"""Which lock mount_bench's workers wait on, per sequence, from a mount_trace.sh trace.

    python -m calibration.analysis.mount_trace.locks TRACE.txt.xz ...

Sums every lock:contention_begin..end span of the mount_bench tasks, whatever call it fell in,
by lock (the tracepoint's address) and the kernel's flags (READ / WRITE: an rwsem's slow path;
MUTEX: a sleeping mutex wait; SPIN|MUTEX: a mutex's optimistic spin; SPIN: a spinlock), and
divides by the run's sequences, read from the run's CSV beside the trace (`run-NAME/` for
`trace-NAME.txt.xz`, as mount_trace.sh writes them): how much of a sequence's wall time each
lock holds its workers. The one rwsem the workers meet is namespace_sem (`fs/namespace.c`; its
read side is clone_private_mount() in an overlay mount's set-up and the mountinfo reader's
m_start, its write side every attach and detach), so an address with READ or WRITE spans is
named so. A lock's address is the kernel's hashed pointer: the same within one boot.
"""

from __future__ import annotations

import collections
import re
import sys
from pathlib import Path

from cohsim.measure import tracefs
from cohsim.measure.programs import read_bench_csv

#: a lock:contention_begin event's text: the lock's hashed address and the kernel's flags
BEGIN = re.compile(r"(\w+) \(flags=(\S+)\)")


def run_csv(trace: Path) -> Path:
    """The mount_bench CSV of the run a trace recorded (mount_trace.sh's layout)."""
    name = trace.name.removesuffix(".xz").removesuffix(".txt").removeprefix("trace-")
    return trace.parent / f"run-{name}" / "mount_bench.csv"


def sequence_stats(csv: Path) -> tuple[int, float]:
    """The run's sequence count and mean sequence wall time (us)."""
    rows = {(r["syscall"], r["metric"]): float(r["value"]) for r in read_bench_csv(csv)}
    return int(rows[("sequence", "count")]), rows[("sequence", "mean_ns")] / 1e3


def contention(path: Path) -> dict[tuple[str, str], tuple[int, float]]:
    """(lock address, flags) -> (spans, total us) over the mount_bench tasks."""
    begun: dict[int, tuple[float, str, str]] = {}
    out: dict[tuple[str, str], list[float]] = collections.defaultdict(lambda: [0, 0.0])
    for e in tracefs.read(str(path)):
        if e.name == "contention_begin":
            m = BEGIN.match(e.rest)
            if m:
                begun[e.pid] = (e.t_us, m.group(1), m.group(2))
        elif e.name == "contention_end" and e.pid in begun:
            t0, addr, flags = begun.pop(e.pid)
            if e.comm == "mount_bench":
                out[(addr, flags)][0] += 1
                out[(addr, flags)][1] += e.t_us - t0
    return {k: (int(v[0]), v[1]) for k, v in out.items()}


def main(paths: list[str]) -> None:
    for p in paths:
        trace = Path(p)
        seqs, wall = sequence_stats(run_csv(trace))
        spans = contention(trace)
        rwsems = {a for a, f in spans if f in ("READ", "WRITE")}
        print(f"{trace}: {seqs} sequences, sequence wall {wall:.0f} us")
        total = 0.0
        for (addr, flags), (n, us) in sorted(spans.items(), key=lambda kv: -kv[1][1]):
            per = us / seqs
            total += per
            if per < 1.0:
                continue
            name = "namespace_sem" if addr in rwsems else addr
            print(
                f"  {name:16s} {flags:10s} {n / seqs:6.1f} waits/seq  {per:7.1f} us/seq "
                f"({per / wall:5.1%} of the sequence)  mean {us / n:6.1f} us"
            )
        print(f"  all locks: {total:.0f} us/seq ({total / wall:.1%} of the sequence)")


if __name__ == "__main__":
    main(sys.argv[1:])
