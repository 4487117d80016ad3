"""Where mount_bench's tasks go to sleep, counted by the innermost frames of the sleep's kernel
stack, and who takes a mutex they sleep on: for any stack_trace.sh trace, bursts of
one-container workers included (`sleep_stacks` names the sleeps of workers that call umount2
10 times or more; a burst's workers call it 4 times).

    python -m calibration.analysis.sleep_stacks.sites STACKS.txt.xz [--top N]

Counts every sched_switch of a mount_bench task out of state S or D (it slept) by its stack's
first four frames below the scheduler's own (`__schedule`, `schedule`, ...), largest first;
then, for the sleeps in a mutex's slow path, the frames that called the mutex (the lock's
user: which kernel path holds or wants it). Counts only: the trace's sleeps are not timed
here (`sleep_stacks` times a worker's).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from cohsim.measure import tracefs

BENCH = "mount_bench"
#: the scheduler's and the tracepoint's own frames, above every sleep's site
SCHEDULER = {
    "trace_event_raw_event_sched_switch",
    "__traceiter_sched_switch",
    "__schedule",
    "schedule",
    "schedule_preempt_disabled",
    "schedule_timeout",
}
MUTEX = "__mutex_lock"


def sleep_stacks(path: Path) -> Iterator[list[str]]:
    """The stack (innermost first, the scheduler's frames left out) of every sleep of a
    mount_bench task in the trace. A stack may come after other CPUs' events: it belongs to
    the last event of its own CPU (`tracefs` reads the stacks as events with their CPU)."""
    last_sleep: dict[int, bool] = {}  # per CPU: was its last event a worker's sleep
    for e in tracefs.read(str(path), stacks=True):
        if e.name == "stack":
            if last_sleep.pop(e.cpu, False) and e.rest:
                yield [x for x in e.rest.split(" < ") if x not in SCHEDULER]
            continue
        last_sleep[e.cpu] = (
            e.name == "sched_switch"
            and e.rest.startswith(f"prev_comm={BENCH} ")
            and ("prev_state=S " in e.rest or "prev_state=D " in e.rest)
        )


def sites(path: Path) -> tuple[Counter[str], Counter[str]]:
    """Sleeps by site (the four innermost frames), and the mutex sleeps by their caller (the
    frames after the mutex's own)."""
    by_site: Counter[str] = Counter()
    mutex_by_caller: Counter[str] = Counter()
    for stack in sleep_stacks(path):
        by_site[" < ".join(stack[:4])] += 1
        if stack and stack[0].startswith(MUTEX):
            callers = [x for x in stack if "mutex" not in x]
            mutex_by_caller[" < ".join(callers[:5])] += 1
    return by_site, mutex_by_caller


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="+", type=Path)
    ap.add_argument("--top", type=int, default=15, help="sites shown (default 15)")
    args = ap.parse_args(argv)
    for path in args.traces:
        by_site, mutexes = sites(path)
        print(f"{path.name}: {sum(by_site.values())} sleeps of {BENCH} tasks")
        for site, n in by_site.most_common(args.top):
            print(f"  {n:6d}  {site}")
        print(f"  mutex sleeps by caller ({sum(mutexes.values())}):")
        for caller, n in mutexes.most_common(args.top):
            print(f"  {n:6d}  {caller}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
