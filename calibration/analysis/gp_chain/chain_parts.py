"""The expedited grace-period kthread's idle gap before a chained grace period, in its parts
(us), from mount_trace.sh traces.

    python -m calibration.analysis.gp_chain.chain_parts [TRACE.txt.xz ...]

Default: the multi-worker traces of ../gp_ipi/gp_ipi.py. A gap is chained when a
task was inside a MUTEX contention (rcu_state.exp_mutex) as the kthread went to sleep in
state S (its grace period done). Of those callers, the first woken afterwards is the next
starter (woken by the last starter's mutex_unlock). The gap is split into:
- A: the kthread's sleep to that waiter's sched_wakeup (the last starter woken, run and
  unlocking; a remote wake-up's IPI);
- B: the waiter's sched_wakeup to its switch-in (waiting for a CPU);
- C: its switch-in to the kthread's sched_wakeup (it starts the grace period);
- D (after the gap): the kthread's sched_wakeup to its switch-in.
B is also split by how many CPUs ran a task at the waiter's wake-up.
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

from calibration.analysis.gp_ipi.chain_gaps import kthread_done, mutex_wait
from calibration.analysis.gp_ipi.gp_ipi import KTHREAD, default_traces, events


def gaps(path: str) -> list[dict[str, float]]:
    """Each chained gap whose waiter and kthread were traced through: its event times."""
    waiting: set[int] = set()
    running: dict[int, int | None] = {}  # CPU -> pid, None when idle
    gap: dict | None = None
    out: list[dict] = []
    kthread_idle = True
    for _comm, pid, cpu, t, ev, rest in events(path):
        rest += " "
        if mutex_wait(waiting, pid, ev, rest):
            continue
        if ev == "sched_switch":
            nxt = re.search(r"next_comm=(\S+)", rest).group(1)
            nxt_pid = int(re.search(r"next_pid=(\d+)", rest).group(1))
            running[cpu] = None if nxt.startswith("swapper") else nxt_pid
            if kthread_done(rest) and not kthread_idle:
                kthread_idle = True
                gap = {"done": t, "pending": set(waiting)} if waiting else None
            if gap is not None and "waiter_woken" in gap and "waiter_runs" not in gap:
                if nxt_pid == gap["waiter"]:
                    gap["waiter_runs"] = t
            if gap is not None and "kthread_woken" in gap and nxt == KTHREAD:
                gap["kthread_runs"] = t
                if "waiter_runs" in gap:
                    out.append(gap)
                gap = None
        elif ev == "sched_wakeup":
            m = re.search(r"comm=(\S+) pid=(\d+)", rest)
            woken = int(m.group(2))
            if m.group(1) == KTHREAD and kthread_idle:
                kthread_idle = False
                if gap is not None:
                    gap["kthread_woken"] = t
            elif gap is not None and woken in gap["pending"] and "waiter" not in gap:
                gap["waiter"], gap["waiter_woken"] = woken, t
                gap["busy"] = sum(1 for r in running.values() if r is not None)
    return out


def summary(v: list[float]) -> str:
    v = sorted(v)
    if not v:
        return "n=0"
    return (
        f"n={len(v)} median {statistics.median(v):.1f} mean {statistics.fmean(v):.1f} "
        f"p90 {v[int(0.9 * len(v))]:.1f}"
    )


def main(argv: list[str]) -> int:
    for path in argv or default_traces():
        g = gaps(path)
        print(f"{Path(path).name}: {len(g)} chained gaps")
        for name, a, b in (
            ("A kthread done -> waiter woken", "done", "waiter_woken"),
            ("B waiter woken -> running", "waiter_woken", "waiter_runs"),
            ("C waiter running -> kthread woken", "waiter_runs", "kthread_woken"),
            ("D kthread woken -> running", "kthread_woken", "kthread_runs"),
        ):
            print(f"    {name}: {summary([x[b] - x[a] for x in g])}")
        for busy in (1, 2):
            v = [x["waiter_runs"] - x["waiter_woken"] for x in g if x["busy"] == busy]
            print(f"    B with {busy} CPU(s) running a task at the wake-up: {summary(v)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
