"""Does a mount call run slower while another worker runs on the other vCPU? From
mount_trace.sh traces (plain, no stacks).

    python -m calibration.analysis.sleep_stacks.corun [TRACE.txt.xz ...]

For each call that was never switched out (so its wall time is all on the CPU), the share
of its wall time during which another worker ran on another vCPU (from sched_switch, with
the switches this VM does not record put back by `analyse.records`). Calls are binned by
that share; per call kind, the mean wall time in each bin (us) and the count.
"""

from __future__ import annotations

import bisect
import sys
from pathlib import Path

from calibration.analysis.gp_chain.off_cpu import default_traces, windows
from calibration.analysis.mount_trace.analyse import calls, records


def timelines(path: str) -> dict[int, tuple[list[float], list[int]]]:
    """Per CPU: switch times and the pid running from each."""
    out: dict[int, tuple[list[float], list[int]]] = {}
    for _comm, _pid, cpu, _flags, t, ev, rest in records(path):
        if ev == "sched_switch":
            nxt = int(rest.split("next_pid=")[1].split()[0])
            ts, who = out.setdefault(cpu, ([], []))
            ts.append(t)
            who.append(nxt)
    return out


def other_worker_share(
    lines: dict[int, tuple[list[float], list[int]]], workers: set[int], pid: int, a: float, b: float
) -> float:
    """Share of [a, b] during which a worker other than `pid` ran on some CPU."""
    busy = 0.0
    for ts, who in lines.values():
        i = max(bisect.bisect_right(ts, a) - 1, 0)
        while i < len(ts) and ts[i] < b:
            lo, hi = max(ts[i], a), min(ts[i + 1] if i + 1 < len(ts) else b, b)
            if who[i] != pid and who[i] in workers and hi > lo:
                busy += hi - lo
            i += 1
    return min(busy / (b - a), 1.0) if b > a else 0.0


def label(share: float) -> str:
    if share == 0.0:
        return "alone"
    if share == 1.0:
        return "all co-run"
    return "co-run <= half" if share <= 0.5 else "co-run > half"


def main(argv: list[str]) -> int:
    paths = [Path(p) for p in argv or default_traces()]
    order = ("alone", "co-run <= half", "co-run > half", "all co-run")
    for path in paths:
        workers = set(windows(str(path)))
        lines = timelines(str(path))
        sums: dict[tuple[str, str], list[float]] = {}
        for c in calls(str(path)):
            if c.off > 0 or c.pid not in workers:
                continue
            share = other_worker_share(lines, workers, c.pid, c.start, c.end)
            sums.setdefault((c.kind, label(share)), []).append(c.end - c.start)
        print(path.name)
        for kind in sorted({k for k, _ in sums}):
            cells = []
            for b in order:
                v = sums.get((kind, b), [])
                cells.append(f"{b} {sum(v) / len(v):.1f} (n={len(v)})" if v else f"{b} -")
            print(f"  {kind:15s} " + " | ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
