"""How long mount_bench's woken workers wait for a CPU, from a mount_trace.sh trace.

    python -m calibration.analysis.mount_trace.wakeups TRACE.txt.xz ...

For every sched_wakeup of a mount_bench task, whether it went to an idle CPU, and if not, the
time until a sched_switch puts the task on its CPU (the wait behind the task running there);
for every sched_switch away from one, why it left (`prev_state`: D or S, it slept; R or R+, it
was preempted while runnable; Z and X, it exited); and how long each stay on a CPU lasted.
A burst of 100 one-container workers on 16 vCPUs is the case that matters: the level-3 model
puts a woken task on any free CPU at once, or first in line for the next one
(cohsim.kernel.simulation.cpus), and the comparison with the simulation is in the data's README
(calibration/data/devvm-16cpu-intel-xeon-f6m207/README.md, "Woken workers wait for a CPU").
"""

from __future__ import annotations

import statistics
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from cohsim.measure import tracefs

BENCH = "mount_bench"


@dataclass
class Wakeups:
    """One trace's figures for the mount_bench tasks (us)."""

    #: wake-up to run where the CPU was busy: the trace recorded the switch to the task
    wake_to_run: list[float] = field(default_factory=list)
    onto_idle: int = 0  #: wake-ups onto an idle CPU (the VM records no switch out of idle)
    runs: list[float] = field(default_factory=list)  #: each stay on a CPU
    left: Counter[str] = field(default_factory=Counter)  #: sched_switch prev_state counts

    @property
    def preempted(self) -> int:
        """Switches away from a runnable task (R, R+): the scheduler preempted it."""
        return self.left["R"] + self.left["R+"]

    @property
    def slept(self) -> int:
        """Switches away from a task that blocked (D, S)."""
        return self.left["D"] + self.left["S"]


def measure(path: Path) -> Wakeups:
    """Wake-to-run latencies, stays on a CPU and switch-out states of a trace's mount_bench
    tasks. This VM records no switch out of an idle CPU's idle task: a wake-up onto an idle
    CPU is counted (`onto_idle`, the switch `tracefs`'s idle_exits puts back), not timed;
    the ones timed found their CPU running another task. A wake-up whose switch-in never
    shows is dropped (the task's next wake-up replaces it)."""
    out = Wakeups()
    woken: dict[int, float] = {}
    on_cpu: dict[int, float] = {}
    for e in tracefs.read(str(path), idle_exits=True):
        if e.name == "sched_wakeup":
            if e.rest.startswith(f"comm={BENCH} "):
                woken[int(tracefs.fields(e.rest)["pid"])] = e.t_us
        elif e.name == "sched_switch":
            f = tracefs.fields(e.rest)
            prev, nxt = int(f["prev_pid"]), int(f["next_pid"])
            if f["prev_comm"] == BENCH:
                out.left[f["prev_state"]] += 1
                if prev in on_cpu:
                    out.runs.append(e.t_us - on_cpu.pop(prev))
            if f["next_comm"] == BENCH:
                on_cpu[nxt] = e.t_us
                if nxt in woken:
                    t = woken.pop(nxt)
                    if e.rest.endswith("inferred=1"):
                        out.onto_idle += 1
                    else:
                        out.wake_to_run.append(e.t_us - t)
    return out


def percentiles(values: list[float]) -> str:
    """p50 / p90 / p99 / max and the mean, us."""
    q = statistics.quantiles(values, n=100, method="inclusive")
    return (
        f"p50 {q[49]:.0f}, p90 {q[89]:.0f}, p99 {q[98]:.0f}, max {max(values):.0f}, "
        f"mean {statistics.fmean(values):.0f} us"
    )


def main(paths: list[str]) -> None:
    for p in paths:
        w = measure(Path(p))
        print(f"{p}:")
        busy = len(w.wake_to_run)
        share = busy / (busy + w.onto_idle)
        print(f"  wake-ups onto an idle CPU: {w.onto_idle}; onto a busy one: {busy} ({share:.0%})")
        print(f"  wake-up to run on a busy CPU: {percentiles(w.wake_to_run)}")
        print(f"  stays on a CPU ({len(w.runs)}): {percentiles(w.runs)}")
        print(
            f"  left the CPU: slept {w.slept}, preempted {w.preempted}, "
            f"exited {w.left['Z'] + w.left['X']}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
