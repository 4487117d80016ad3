"""How long the expedited grace periods' worker runs, from mount_trace.sh traces.

    python -m calibration.analysis.mount_trace.gp_spans TRACE.txt.xz ...

synchronize_rcu_expedited() hands each grace period to the `rcu_exp_gp_kthr` kthread. Per
trace: one span per grace period, from the kthread's wake-up (after it last slept in state
S, idle) to its next sleep in state S (done). A span includes the kthread's wait for a CPU,
its work (selecting CPUs and IPIing the busy ones) and its sleeps in state D while it waits
for busy CPUs to report a quiescent state. Printed: count, median, mean and p90 of the spans
(us), the share of spans with a D sleep, and the mean span with and without one. Then, for
the grace periods a sleeping mount_bench caller waits through alone (caller asleep, kthread
woken, kthread done, caller woken, caller running, with nothing else in between: in practice
the 1-worker traces), the median and mean of each of those four steps.
"""

from __future__ import annotations

import itertools
import statistics
import sys

from calibration.analysis.mount_trace.analyse import events


def spans(path: str) -> list[tuple[float, int]]:
    """(span in us, D sleeps in it) per grace period, in trace order."""
    out, idle, woke, d_sleeps = [], True, 0.0, 0
    for _comm, _pid, _cpu, t, ev, rest in events(path):
        if ev == "sched_wakeup" and "comm=rcu_exp_gp_kthr " in rest and idle:
            woke, idle, d_sleeps = t, False, 0
        elif ev == "sched_switch" and "prev_comm=rcu_exp_gp_kthr " in rest and not idle:
            if "prev_state=S " in rest:
                out.append((t - woke, d_sleeps))
                idle = True
            elif "prev_state=D " in rest:
                d_sleeps += 1
    return out


PHASES = ("kthread woken", "kthread work", "caller woken", "caller running")


def caller_phases(path: str) -> dict[str, list[float]]:
    """Per phase, its length (us) in every grace period a caller waits through alone."""
    out: dict[str, list[float]] = {p: [] for p in PHASES}
    st: dict[str, float] | None = None
    pid = ""
    for _comm, _pid, _cpu, t, ev, rest in events(path):
        rest += " "
        if st is None:
            if ev == "sched_switch" and "prev_comm=mount_bench " in rest:
                if "prev_state=D " in rest:
                    st, pid = {"asleep": t}, rest.split("prev_pid=")[1].split()[0]
            continue
        if ev == "sched_wakeup" and "comm=rcu_exp_gp_kthr " in rest and len(st) == 1:
            st["kthread woken"] = t
        elif ev == "sched_switch" and "prev_comm=rcu_exp_gp_kthr " in rest and len(st) == 2:
            st["kthread work"] = t if "prev_state=S " in rest else -1.0
        elif ev == "sched_wakeup" and f" pid={pid} " in rest and len(st) == 3:
            st["caller woken"] = t
        elif ev == "sched_switch" and f"next_pid={pid} " in rest:
            if len(st) == 4 and st["kthread work"] > 0:
                st["caller running"] = t
                times = list(st.values())
                for p, (a, b) in zip(PHASES, itertools.pairwise(times), strict=True):
                    out[p].append(b - a)
            st = None
    return out


def main(paths: list[str]) -> int:
    for path in paths:
        s = spans(path)
        if not s:
            print(f"{path}: no grace period")
            continue
        v = sorted(x for x, _ in s)
        with_d = [x for x, d in s if d]
        without = [x for x, d in s if not d]
        print(
            f"{path}: {len(v)} grace periods, span median {statistics.median(v):.1f} mean "
            f"{statistics.fmean(v):.1f} p90 {v[int(0.9 * len(v))]:.1f} us; "
            f"{len(with_d) / len(v):.0%} with a D sleep (mean "
            f"{statistics.fmean(with_d) if with_d else 0:.1f} us), without one mean "
            f"{statistics.fmean(without) if without else 0:.1f} us"
        )
        phases = caller_phases(path)
        if phases[PHASES[0]]:
            print(
                f"  {len(phases[PHASES[0]])} waited through alone: "
                + ", ".join(
                    f"{p} {statistics.median(v):.1f} / {statistics.fmean(v):.1f}"
                    for p, v in phases.items()
                )
                + " us (median / mean)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
