"""Where a burst's workers sleep, by the kernel stack of each sleep, timed, per sequence.

    python -m calibration.analysis.burst_locks.sleeps STACKS.txt.xz ...

calibration.analysis.sleep_stacks.sleep_stacks times the sleeps of workers that call umount2
ten times or more; a burst's one-container workers call it a few times (lowerdir-plus: twice),
so here every mount_bench task is a worker from its first event in the trace to its last. Each
span switched out is split as sleep_stacks splits it: preempted; asleep, by the sleep's site
(`sleep_site`: namespace_sem read or write by caller, the expedited grace period by its path,
exp_mutex; other sites by their innermost frames) until the wake-up; then woken, waiting for a
CPU. The parent's own waits (do_wait for its children) and the workers' start gate
(anon_pipe_read) are sites of their own, outside any sequence. Sequences come from the run's
CSV beside the trace.
"""

from __future__ import annotations

import sys
from pathlib import Path

from calibration.analysis.burst_locks.trace import BENCH, run_csv
from calibration.analysis.mount_trace.analyse import records
from calibration.analysis.mount_trace.locks import sequence_stats
from calibration.analysis.sleep_stacks.sleep_stacks import sleeps

#: sites that are not a sequence's: the parent waiting for its workers, the start gate
OUTSIDE = ("do_wait", "anon_pipe_read")


def bench_spans(path: Path) -> dict[int, tuple[float, float]]:
    """Every mount_bench task's span (us): its first event to its last."""
    out: dict[int, tuple[float, float]] = {}
    for comm, pid, _cpu, _flags, t, _ev, _rest in records(str(path)):
        if comm == BENCH:
            out[pid] = (out.get(pid, (t, t))[0], t)
    return out


def report(path: Path, floor_us: float = 5.0) -> str:
    seqs, wall = sequence_stats(run_csv(path))
    out, count = sleeps(str(path), bench_spans(path))
    inside = {k: v for k, v in out.items() if not k.startswith(OUTSIDE)}
    lines = [
        f"{path.name}: {seqs} sequences, sequence wall {wall:.0f} us, "
        f"{sum(inside.values()) / seqs:.0f} us a sequence off the CPU (gate and parent apart)"
    ]
    for label, v in sorted(out.items(), key=lambda kv: -kv[1]):
        if v / seqs >= floor_us:
            c = count.get(label)
            each = f"  ({c / seqs:.2f} a sequence, {v / c:.1f} us each)" if c else ""
            mark = " (outside the sequences)" if label.startswith(OUTSIDE) else ""
            lines.append(f"  {label}: {v / seqs:.1f} us/seq{each}{mark}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    for p in argv:
        print(report(Path(p)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
