"""Where mount_bench's workers are off the CPU, per sequence (us), from mount_trace.sh traces.

    python -m calibration.analysis.gp_chain.off_cpu [TRACE.txt.xz ...]

Default: the common-parent and per-layer traces of sessions 6, 8 and 9 (lowerdir-plus mounts
through fsmount, which these traces do not record, so its sequences cannot be counted; a
sequence is one `sys_mount` call, the overlay's). Only the workers count (the tasks that
call umount2 10 times or more: the parent process mounts the scratch tmpfs and makes /
private before the run and unmounts a few mounts after it), and only from their first mount
or umount2 call to their last return. Session 10's version also counted the parent's wait
for the workers, one sleep as long as the run, and read the traces without the switches
this VM never records (`analyse.records`); both corrected in session 11, see
calibration/data/devvm-2cpu-intel-xeon-f6m167/mount-trace/sleep-stacks/README.md.
Each span a worker is switched out is split into:
- preempted (switched out runnable) until it runs again;
- asleep until its sched_wakeup, then woken until it runs again ("woken, waiting for a
  CPU"; also split by whether some CPU was idle at the wake-up: the idle vCPU's own wake-up
  on this VM).

The sleep is labelled by who recorded the wake-up and whether it was recorded in a hardirq
(the `h`/`H` flag): a wake-up delivered through another CPU's wake list is recorded there in
the IPI's handler, under the name of whatever that CPU was running, so the waker is unknown.
It is also labelled by the lock contention open when the worker went to sleep
(lock:contention_begin flags: MUTEX is rcu_state.exp_mutex here, READ and WRITE
namespace_sem), or "none".
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from calibration.analysis import TRACES
from calibration.analysis.gp_ipi.gp_ipi import KTHREAD
from calibration.analysis.mount_trace.analyse import records


def default_traces() -> list[str]:
    return [
        str(TRACES / p)
        for p in (
            "unmount-breakdown/trace-common-parent-1w-1L.txt.xz",
            "unmount-breakdown/trace-common-parent-2w-1L.txt.xz",
            "unmount-breakdown/trace-common-parent-4w-1L.txt.xz",
            "gp-ipi/trace-common-parent-4w-10L.txt.xz",
            "unmount-breakdown/trace-per-layer-1w-1L.txt.xz",
            "per-layer-2-4-workers/trace-per-layer-2w-1L.txt.xz",
            "per-layer-2-4-workers/trace-per-layer-4w-1L.txt.xz",
        )
    ]


def waker(comm: str, flags: str) -> str:
    if flags[2:3] in ("h", "H"):
        return "in an interrupt"
    if comm == KTHREAD:
        return "by the grace-period kthread"
    if comm == "mount_bench":
        return "by another worker"
    return "by the idle task" if comm.startswith("<idle>") else "by another task"


def windows(path: str) -> dict[int, tuple[float, float]]:
    """Each worker's span (us): from its first mount or umount2 call to its last return."""
    out: dict[int, tuple[float, float]] = {}
    umounts: dict[int, int] = {}
    for _comm, pid, _cpu, _flags, t, ev, rest in records(path):
        if ev in ("sys_mount", "sys_umount"):
            t0, _ = out.get(pid, (t, t))
            out[pid] = (t0, t)
            if ev == "sys_umount" and "->" not in rest:
                umounts[pid] = umounts.get(pid, 0) + 1
    return {pid: w for pid, w in out.items() if umounts.get(pid, 0) >= 10}


def off_cpu(path: str) -> tuple[int, dict[str, float]]:
    """Sequences in the trace and the workers' off-CPU time by label, summed (us)."""
    span = windows(path)
    out: dict[str, float] = {}
    off: dict[int, tuple[float, str, str]] = {}  # pid -> (switched out, state, open lock)
    woke: dict[int, tuple[float, str, bool]] = {}  # pid -> (woken, label, a CPU idle then)
    lock: dict[int, str] = {}
    running: dict[int, bool] = {}  # CPU -> running a task
    sequences = 0
    for comm, pid, cpu, flags, t, ev, rest in records(path):
        if ev == "contention_begin":
            lock[pid] = rest.split("flags=")[1].split(")")[0]
        elif ev == "contention_end":
            lock.pop(pid, None)
        elif ev == "sys_mount" and "->" not in rest:
            sequences += 1
        elif ev == "sched_switch":
            fields = dict(re.findall(r"(\w+)=(\S+)", rest))
            running[cpu] = not fields["next_comm"].startswith("swapper")
            prev = int(fields["prev_pid"])
            if prev in span and span[prev][0] <= t <= span[prev][1]:
                off[prev] = (t, fields["prev_state"], lock.get(pid, ""))
            nxt = int(fields["next_pid"])
            if fields["next_comm"] == "mount_bench" and nxt in off:
                t0, state, held = off.pop(nxt)
                if state.startswith("R"):
                    label = "preempted, waiting for a CPU"
                    out[label] = out.get(label, 0.0) + t - t0
                elif nxt in woke:
                    tw, label, idle = woke.pop(nxt)
                    label = f"asleep ({held or 'none'}), woken {label}"
                    out[label] = out.get(label, 0.0) + tw - t0
                    label = "woken, waiting for a CPU" + (" (a CPU idle)" if idle else "")
                    out[label] = out.get(label, 0.0) + t - tw
        elif ev == "sched_wakeup":
            fields = dict(re.findall(r"(\w+)=(\S+)", rest))
            if fields.get("comm") == "mount_bench":
                idle = len(running) < 2 or not all(running.values())
                woke[int(fields["pid"])] = (t, waker(comm, flags), idle)
    return sequences, out


def main(argv: list[str]) -> int:
    for path in argv or default_traces():
        n, out = off_cpu(path)
        print(f"{Path(path).name}: {n} sequences, {sum(out.values()) / n:.1f} us a sequence")
        for label, v in sorted(out.items(), key=lambda kv: -kv[1]):
            if v / n >= 0.5:
                print(f"    {label}: {v / n:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
