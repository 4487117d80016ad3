"""How busy the two vCPUs are while mount_bench's workers run, and the workers' CPU time a
sequence (us), from mount_trace.sh traces.

    python -m calibration.analysis.sleep_stacks.cpu_use [TRACE.txt.xz ...]

Default: the plain traces (no stacks) of sessions 6, 8 and 9. Over the span from the first
worker's first mount or umount2 call to the last worker's last return, each vCPU's time is
split by what it ran (from sched_switch, with the switches this VM does not record put back
by `analyse.records`): the workers, the grace-period kthread, other tasks, or the idle task.
Sequences come from the run's CSV beside the trace.
"""

from __future__ import annotations

import sys
from pathlib import Path

from calibration.analysis import TRACES
from calibration.analysis.gp_chain.off_cpu import KTHREAD, windows
from calibration.analysis.gp_chain.off_cpu import default_traces as off_cpu_traces
from calibration.analysis.mount_trace.analyse import records
from calibration.analysis.sleep_stacks.sleep_stacks import sequences


def default_traces() -> list[str]:
    """off_cpu.py's traces and session 9's lowerdir-plus one (sequences from its CSV)."""
    return off_cpu_traces() + [str(TRACES / "gp-ipi/trace-lowerdir-plus-2w-10L.txt.xz")]


def cpu_use(path: str) -> tuple[float, dict[str, float]]:
    """The workers' span (us) and the vCPUs' time in it by what they ran (us, both summed)."""
    span = windows(path)
    t0 = min(a for a, _ in span.values())
    t1 = max(b for _, b in span.values())
    cur: dict[int, tuple[str, float]] = {}  # CPU -> (what it runs, since)
    out: dict[str, float] = {}
    for _comm, _pid, cpu, _flags, t, ev, rest in records(path):
        if ev != "sched_switch":
            continue
        fields = dict(kv.split("=", 1) for kv in rest.split() if "=" in kv)
        if cpu in cur:
            what, since = cur[cpu]
            busy = min(t, t1) - max(since, t0)
            if busy > 0:
                out[what] = out.get(what, 0.0) + busy
        nxt, name = int(fields["next_pid"]), fields["next_comm"]
        what = (
            "workers"
            if nxt in span
            else "idle"
            if nxt == 0
            else "grace-period kthread"
            if name == KTHREAD
            else "other tasks"
        )
        cur[cpu] = (what, t)
    for what, since in cur.values():  # to the end of the span
        if since < t1:
            out[what] = out.get(what, 0.0) + t1 - max(since, t0)
    return t1 - t0, out


def main(argv: list[str]) -> int:
    paths = [Path(p) for p in argv or default_traces()]
    for path in paths:
        wall, out = cpu_use(str(path))
        n = sequences(path)
        share = ", ".join(
            f"{k} {100 * out.get(k, 0.0) / (2 * wall):.0f} %"
            for k in ("workers", "idle", "grace-period kthread", "other tasks")
        )
        print(
            f"{path.name}: {wall / 1000:.1f} ms, vCPU time: {share}; "
            f"worker CPU time {out.get('workers', 0.0) / n:.0f} us a sequence"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
