"""Do interrupts explain the slower overlay mounts beside another worker? From traces that
also record the interrupt vectors' entries (`irqs/`, taken with `MOUNT_TRACE_IRQS=1 sh
calibration/bench/mount_trace.sh`).

    python -m calibration.analysis.sleep_stacks.irqs [irqs-*.txt.xz ...]

For each overlay mount that was never switched out: the interrupts its vCPU took during the
call (IPIs: call_function_single, call_function, reschedule; and the local timer,
irq_work), and the share of the call during which another worker ran on the other vCPU
(`corun.py`). Mean wall time (us) and count per bin, and the interrupts per sequence on the
workers' vCPUs.
"""

from __future__ import annotations

import bisect
import sys
from pathlib import Path

from calibration.analysis import TRACES
from calibration.analysis.gp_chain.off_cpu import windows
from calibration.analysis.mount_trace.analyse import calls, records
from calibration.analysis.sleep_stacks.corun import other_worker_share, timelines
from calibration.analysis.sleep_stacks.sleep_stacks import sequences

IRQS = ("call_function_single_entry", "call_function_entry", "reschedule_entry")
IRQS += ("local_timer_entry", "irq_work_entry")


def interrupts(path: str) -> tuple[dict[int, list[float]], dict[int, list[int]], dict[str, int]]:
    """Per CPU: interrupt times; per worker: the CPU of each overlay mount's entry, in order;
    and the count of each vector while a worker ran."""
    per_cpu: dict[int, list[float]] = {}
    mount_cpu: dict[int, list[int]] = {}
    counts: dict[str, int] = {}
    workers = set(windows(path))
    running: dict[int, int] = {}
    for _comm, pid, cpu, _flags, t, ev, rest in records(path):
        if ev in IRQS:
            per_cpu.setdefault(cpu, []).append(t)
            if running.get(cpu) in workers:
                counts[ev] = counts.get(ev, 0) + 1
        elif ev == "sched_switch":
            running[cpu] = int(rest.split("next_pid=")[1].split()[0])
        elif ev == "sys_mount" and "->" not in rest:
            mount_cpu.setdefault(pid, []).append(cpu)
    return per_cpu, mount_cpu, counts


def main(argv: list[str]) -> int:
    paths = [Path(p) for p in argv] or sorted((TRACES / "sleep-stacks/irqs").glob("irqs-*.txt.xz"))
    for path in paths:
        workers = set(windows(str(path)))
        lines = timelines(str(path))
        per_cpu, mount_cpu, counts = interrupts(str(path))
        n = sequences(path)
        bins: dict[tuple[bool, bool], list[float]] = {}
        seen: dict[int, int] = {}
        for c in calls(str(path)):
            if c.kind != "mount_overlay" or c.pid not in workers:
                continue
            i = seen.get(c.pid, 0)
            seen[c.pid] = i + 1
            if c.off > 0:
                continue
            cpu = mount_cpu[c.pid][i]
            ts = per_cpu.get(cpu, [])
            hit = bisect.bisect_left(ts, c.end) - bisect.bisect_left(ts, c.start) > 0
            corun = other_worker_share(lines, workers, c.pid, c.start, c.end) > 0.5
            bins.setdefault((corun, hit), []).append(c.end - c.start)
        print(
            f"{path.name}: interrupts on the workers' vCPUs a sequence: "
            + ", ".join(
                f"{k.removesuffix('_entry')} {v / n:.2f}" for k, v in sorted(counts.items())
            )
        )
        for corun in (False, True):
            cells = []
            for hit in (False, True):
                v = bins.get((corun, hit), [])
                what = "an interrupt" if hit else "no interrupt"
                cells.append(f"{what} {sum(v) / len(v):.1f} (n={len(v)})" if v else f"{what} -")
            where = "co-run > half" if corun else "co-run <= half"
            print(f"  overlay mount, {where}: " + " | ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
