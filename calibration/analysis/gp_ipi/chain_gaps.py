"""How long the expedited grace-period kthread stays idle between two work spans, from
mount_trace.sh traces, split by whether a caller was waiting on a mutex when it went idle.

    python -m calibration.analysis.gp_ipi.chain_gaps [TRACE.txt.xz ...]

Default: the same traces as gp_ipi.py. A caller that finds a grace period under way sleeps
on `rcu_state.exp_mutex` (a stack-trace trigger on lock:contention_begin put 417 of 417 mutex
waits of a per-layer 2-worker run under exp_funnel_lock) and starts the next one once the
last starter has run again and released it. Per trace: the kthread's idle gaps (its sleep in
state S to its next wake-up, us) when some task was inside a MUTEX contention at that sleep
(a chained grace period) and when none was. The kthread may sleep in S more than once per
grace period, so the counts are of work spans, not of grace periods.
"""

from __future__ import annotations

import statistics
import sys

from calibration.analysis.gp_ipi.gp_ipi import KTHREAD, default_traces, events


def mutex_wait(waiting: set[int], pid: int, ev: str, rest: str) -> bool:
    """Keep `waiting` (the tasks inside a MUTEX contention) up to date with one event; True if
    the event was a contention event."""
    if ev == "contention_begin":
        if "MUTEX" in rest:
            waiting.add(pid)
        return True
    if ev == "contention_end":
        waiting.discard(pid)
        return True
    return False


def kthread_done(rest: str) -> bool:
    """Whether a sched_switch (its rest, with a trailing space) puts the kthread to sleep in
    state S: its grace period is done."""
    return f"prev_comm={KTHREAD} " in rest and "prev_state=S " in rest


def gaps(path: str) -> dict[bool, list[float]]:
    """The kthread's idle gaps (us), keyed by whether a mutex waiter was pending."""
    waiting: set[int] = set()
    out: dict[bool, list[float]] = {False: [], True: []}
    idle, end, chained = True, None, False
    for _comm, pid, _cpu, t, ev, rest in events(path):
        rest += " "
        if mutex_wait(waiting, pid, ev, rest):
            continue
        if ev == "sched_switch" and kthread_done(rest) and not idle:
            idle, end, chained = True, t, bool(waiting)
        elif ev == "sched_wakeup" and f"comm={KTHREAD} " in rest and idle:
            idle = False
            if end is not None:
                out[chained].append(t - end)
            end = None
    return out


def main(argv: list[str]) -> int:
    for path in argv or default_traces():
        line = [path.rsplit("/", 1)[-1] + ":"]
        for chained, v in sorted(gaps(path).items(), reverse=True):
            v = sorted(v)
            name = "a mutex waiter pending" if chained else "none pending"
            line.append(
                f"{name}: n={len(v)} median {statistics.median(v):.1f} mean "
                f"{statistics.fmean(v):.1f} p90 {v[int(0.9 * len(v))]:.1f}"
                if v
                else f"{name}: n=0"
            )
        print(" | ".join(line))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
