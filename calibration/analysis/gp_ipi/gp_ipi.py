"""How much longer an expedited grace period takes when another CPU is busy, from
mount_trace.sh traces (sessions 6 and 8).

    python -m calibration.analysis.gp_ipi.gp_ipi [TRACE.txt.xz ...]

Default: every multi-worker trace in calibration/data/devvm-2cpu-intel-xeon-f6m167/mount-trace/
unmount-breakdown, per-layer-2-4-workers and gp-ipi.

An expedited grace period skips idle CPUs (they are in an extended quiescent state) and sends
every busy one an IPI, then waits for its report (kernel/rcu/tree_exp.h). Per grace period:
the `rcu_exp_gp_kthr` kthread's time from its first switch-in after its wake-up to its next
sleep in state S (done), split by whether another CPU was running a task (not its idle task)
at that switch-in. Printed per trace: count, median and mean of each class (us) and the
differences of the medians and of the means; then the median over the traces of each. The
median difference is the IPI's round trip, which branch try/gp-ipi put into the model as the
machine file's `microarch.ipi_ns` (not kept: README.md); the means add tails (a busy CPU that
reports late) that are not an IPI's cost.
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

from calibration.analysis import TRACES
from calibration.analysis.mount_trace.analyse import events

KTHREAD = "rcu_exp_gp_kthr"


def work_by_context(path: str) -> dict[str, list[float]]:
    """Per grace period, the kthread's time from switch-in to done (us), keyed by what the
    other CPUs ran at the switch-in: "idle", "mount_bench in mount", "mount_bench in umount",
    "mount_bench elsewhere" (user mode or an untraced syscall) or "another task"."""
    running: dict[int, tuple[str, int] | None] = {}  # CPU -> (comm, pid), None when idle
    syscall: dict[int, str] = {}  # pid -> the traced syscall it is in
    out: dict[str, list[float]] = {}
    woken = False
    start: tuple[float, str] | None = None
    for _comm, pid, cpu, t, ev, rest in events(path):
        rest += " "
        if ev in ("sys_mount", "sys_umount"):
            if "->" in rest:
                syscall.pop(pid, None)
            else:
                syscall[pid] = ev[4:]
        elif ev == "sched_wakeup" and f"comm={KTHREAD} " in rest and start is None:
            woken = True
        elif ev == "sched_switch":
            nxt = re.search(r"next_comm=(\S+)", rest).group(1)
            nxt_pid = int(re.search(r"next_pid=(\d+)", rest).group(1))
            running[cpu] = None if nxt.startswith("swapper") else (nxt, nxt_pid)
            if nxt == KTHREAD and woken and start is None:
                busy = [r for c, r in running.items() if c != cpu and r is not None]
                if not busy:
                    what = "idle"
                elif busy[0][0] != "mount_bench":
                    what = "another task"
                else:
                    what = f"mount_bench in {syscall.get(busy[0][1], 'elsewhere')}"
                    what = what.replace("in elsewhere", "elsewhere")
                start = (t, what)
            elif f"prev_comm={KTHREAD} " in rest and "prev_state=S " in rest and start:
                out.setdefault(start[1], []).append(t - start[0])
                woken, start = False, None
    return out


def by_busy(ctx: dict[str, list[float]]) -> dict[bool, list[float]]:
    """`work_by_context`'s spans keyed by whether another CPU was busy."""
    return {False: ctx.get("idle", []), True: [x for w, v in ctx.items() if w != "idle" for x in v]}


def default_traces() -> list[str]:
    """The multi-worker traces of sessions 6, 8 and 9."""
    return sorted(
        str(p)
        for d in ("unmount-breakdown", "per-layer-2-4-workers", "gp-ipi")
        for p in (TRACES / d).glob("trace-*.txt.xz")
        if "-1w-" not in p.name
    )


def main(argv: list[str]) -> int:
    paths = argv or default_traces()
    diffs: dict[str, list[float]] = {"medians": [], "means": []}
    for path in paths:
        ctx = work_by_context(path)
        by = by_busy(ctx)
        line = [f"{Path(path).parent.parent.name}/{Path(path).parent.name}/{Path(path).name}:"]
        for busy in (False, True):
            v = by[busy]
            name = "other CPU busy" if busy else "other CPUs idle"
            line.append(
                f"{name} n={len(v)} median {statistics.median(v):.1f} mean "
                f"{statistics.fmean(v):.1f}"
                if v
                else f"{name} n=0"
            )
        if by[False] and by[True]:
            for name, f in (("medians", statistics.median), ("means", statistics.fmean)):
                d = f(by[True]) - f(by[False])
                diffs[name].append(d)
                line.append(f"difference of {name} {d:+.1f} us")
        print(" | ".join(line))
        print(
            "    median by what the other CPU ran: "
            + ", ".join(
                f"{w} {statistics.median(v):.1f} (n={len(v)})"
                for w, v in sorted(ctx.items(), key=lambda kv: -len(kv[1]))
            )
        )
    for name, d in diffs.items():
        if d:
            print(
                f"difference of the {name}, median over {len(d)} traces: "
                f"{statistics.median(d):.1f} us (range {min(d):.1f} to {max(d):.1f})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
