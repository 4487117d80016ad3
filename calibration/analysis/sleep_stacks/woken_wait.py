"""Why a woken worker waits for a CPU: where its wake-up put it, and who ran there first.

    python -m calibration.analysis.sleep_stacks.woken_wait [TRACE.txt.xz ...]

Default: the plain traces `cpu_use.py` reads. For each wake-up of a worker (sched_wakeup
and its target_cpu), read with `analyse.records` (the switches this VM does not record put
back):
- whether the target vCPU and the other one were idle at the wake-up; and
- for a wake-up onto an idle vCPU, whether another task ran there before the woken worker
  did (another worker woken onto the same vCPU: a grace period wakes all its waiters at
  once).
Per group: count, mean and median wait from the wake-up to the switch in (us), and the
total a sequence.
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

from calibration.analysis.gp_chain.off_cpu import windows
from calibration.analysis.mount_trace.analyse import records
from calibration.analysis.sleep_stacks.cpu_use import default_traces
from calibration.analysis.sleep_stacks.sleep_stacks import sequences

WAKEUP = re.compile(r" pid=(\d+) .*target_cpu=(\d+)")


def woken_waits(path: str) -> dict[str, list[float]]:
    """Each worker wake-up's wait (us) for its CPU, by group."""
    workers = set(windows(path))
    running: dict[int, int] = {}  # CPU -> pid (0: idle)
    pending: dict[int, tuple[float, int, str, list[int]]] = {}  # pid -> (woken, CPU, group, ran)
    out: dict[str, list[float]] = {}
    for _comm, _pid, cpu, _flags, t, ev, rest in records(path):
        if ev == "sched_wakeup":
            m = WAKEUP.search(rest)
            pid, target = int(m.group(1)), int(m.group(2))
            if pid not in workers:
                continue
            if running.get(target, 0) == 0:
                group = "onto an idle vCPU"
            else:
                other_idle = any(p == 0 for c, p in running.items() if c != target)
                group = "onto a busy vCPU, " + (
                    "the other idle" if other_idle else "the other busy"
                )
            pending[pid] = (t, target, group, [])
        elif ev == "sched_switch":
            nxt = int(rest.split("next_pid=")[1].split()[0])
            running[cpu] = nxt
            for pid, (_t, target, _g, ran) in pending.items():
                if target == cpu and pid != nxt and nxt != 0:
                    ran.append(nxt)
            if nxt in pending:
                tw, _target, group, ran = pending.pop(nxt)
                if group == "onto an idle vCPU":
                    group += (
                        ", another worker ran there first"
                        if any(p in workers for p in ran)
                        else ", another task ran there first"
                        if ran
                        else ", ran first"
                    )
                out.setdefault(group, []).append(t - tw)
    return out


def main(argv: list[str]) -> int:
    for path in [Path(p) for p in argv or default_traces()]:
        if "-1w-" in path.name:
            continue
        n = sequences(path)
        print(path.name)
        for group, v in sorted(woken_waits(str(path)).items(), key=lambda kv: -sum(kv[1])):
            print(
                f"  {group}: n={len(v)} mean {statistics.fmean(v):.1f} "
                f"median {statistics.median(v):.1f}, {sum(v) / n:.1f} a sequence"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
