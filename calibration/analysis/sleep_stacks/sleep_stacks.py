"""Where mount_bench's workers sleep, named by their kernel stacks, per sequence (us).

    python -m calibration.analysis.sleep_stacks.sleep_stacks [stacks-*.txt.xz ...]

Default: the traces in this folder, taken by stack_trace.sh, which records a stack for
every worker that goes to sleep (sched_switch out of state S or D) and for every wake-up of
a worker (sched_wakeup, in the waker's context). Workers are the threads that call umount2
10 times or more, counted from their first mount or umount2 call to their last return
(session 10's off_cpu.py, as corrected in this session). The traces are read with
`analyse.records`, which puts back the switches out of CPU 1's idle task that this VM never
records (README.md). Sequences come from the run's CSV
beside the trace.

Each span a worker is switched out is split into:
- preempted (switched out runnable) until it runs again;
- asleep, labelled by the sleep's stack (below), until its wake-up; then woken until it
  runs again ("woken, waiting for a CPU").

Sleep sites, from the innermost frames:
- "grace period, own request": `synchronize_rcu_expedited` waiting on the expedited grace
  period's wait queue, after taking `rcu_state.exp_mutex` and queueing the work;
- "grace period, another caller's request": `exp_funnel_lock` waiting on that queue
  because an earlier caller already asked for a grace period that covers this one;
- "exp_mutex": asleep in `__mutex_lock` in `exp_funnel_lock`;
- "namespace_sem write/read (caller)": an rwsem slow path under the caller named;
each with the path that called `synchronize_rcu_expedited`: umount2 (`namespace_unlock`),
the last close of a detached mount (`dissolve_on_fput`, then `namespace_unlock`:
lowerdir-plus's open_tree clones) or the overlay superblock's shutdown (`kern_unmount_array`,
run from task work when the last reference to the overlay mount goes).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from calibration.analysis import TRACES
from calibration.analysis.gp_chain.off_cpu import windows
from calibration.analysis.mount_trace.analyse import records

PREEMPTED = "preempted, waiting for a CPU"
WOKEN = "woken, waiting for a CPU"


def caller(frames: list[str], lock: str) -> str:
    """The frame that called `lock` (down_write, down_read), or "?"."""
    return frames[frames.index(lock) + 1] if lock in frames[:-1] else "?"


def sleep_site(stack: str) -> str:
    """A label for the place a worker went to sleep, from its stack (innermost first)."""
    frames = [f for f in stack.split(" < ") if "sched_switch" not in f]
    frames = [f for f in frames if f not in ("__schedule", "schedule")]
    path = ""
    if "synchronize_rcu_expedited" in frames:
        path = (
            ", close of a detached mount"
            if "dissolve_on_fput" in frames
            else ", umount2"
            if "namespace_unlock" in frames
            else ", overlay shutdown"
            if "kern_unmount_array" in frames
            else ", elsewhere"
        )
    top = frames[0] if frames else "?"
    if "rwsem_down_write_slowpath" in frames:
        return f"namespace_sem write ({caller(frames, 'down_write')})"
    if "rwsem_down_read_slowpath" in frames:
        return f"namespace_sem read ({caller(frames, 'down_read')})"
    if "exp_funnel_lock" in frames and any(f.startswith("__mutex_lock") for f in frames):
        return "exp_mutex" + path
    if top == "exp_funnel_lock":
        return "grace period, another caller's request" + path
    if top == "synchronize_rcu_expedited":
        return "grace period, own request" + path
    return " < ".join(frames[:3])


def run_name(trace: Path) -> str:
    """ "common-parent-2w-1L" from ".../trace-common-parent-2w-1L.txt.xz" (or stacks-, irqs-)."""
    return trace.name.removesuffix(".txt.xz").split("-", 1)[1]


def shape(trace: Path) -> tuple[str, int, int]:
    """("common-parent", 2, 1): the traced run's strategy, workers and layers."""
    strategy, w, layers = run_name(trace).rsplit("-", 2)
    return strategy, int(w.removesuffix("w")), int(layers.removesuffix("L"))


def sequences(trace: Path) -> int:
    """Sequences the traced run made, from its CSV (run-NAME/mount_bench.csv)."""
    with open(trace.parent / f"run-{run_name(trace)}" / "mount_bench.csv", newline="") as f:
        for row in csv.DictReader(f):
            if row["syscall"] == "sequence" and row["metric"] == "count":
                return int(row["value"])
    raise ValueError(f"{trace}: no sequence count in the run's CSV")


def sleeps(
    path: str, span: dict[int, tuple[float, float]] | None = None
) -> tuple[dict[str, float], dict[str, int]]:
    """The workers' off-CPU time by label, summed (us), and how many sleeps each site had.
    `span`: each worker's pid and time span (us; default `windows`: the tasks that call
    umount2 10 times or more)."""
    span = windows(path) if span is None else span
    out: dict[str, float] = {}
    count: dict[str, int] = {}
    off: dict[int, list] = {}  # pid -> [switched out, state, sleep site]
    woke: dict[int, float] = {}  # pid -> woken
    last: dict[int, tuple[str, int]] = {}  # CPU -> (event, pid) for the next stack there
    for _comm, _pid, cpu, _flags, t, ev, rest in records(path, stacks=True):
        if ev == "stack":
            e, who = last.pop(cpu, ("", 0))
            if e == "sched_switch" and who in off and off[who][2] is None:
                off[who][2] = sleep_site(rest)
        elif ev == "sched_switch":
            fields = dict(kv.split("=", 1) for kv in rest.split() if "=" in kv)
            prev, nxt = int(fields["prev_pid"]), int(fields["next_pid"])
            if prev in span and span[prev][0] <= t <= span[prev][1]:
                state = fields["prev_state"]
                off[prev] = [t, state, "" if state.startswith("R") else None]
                last[cpu] = ("sched_switch", prev)
            if nxt in off:
                t0, state, site = off.pop(nxt)
                if state.startswith("R"):
                    out[PREEMPTED] = out.get(PREEMPTED, 0.0) + t - t0
                elif nxt in woke:
                    tw = woke.pop(nxt)
                    site = site or "no stack"
                    out[site] = out.get(site, 0.0) + tw - t0
                    count[site] = count.get(site, 0) + 1
                    out[WOKEN] = out.get(WOKEN, 0.0) + t - tw
        elif ev == "sched_wakeup":
            fields = dict(kv.split("=", 1) for kv in rest.split() if "=" in kv)
            woken = int(fields["pid"])
            if woken in off:
                woke[woken] = t
    return out, count


GROUPS = (
    ("waiting for a CPU", (PREEMPTED, WOKEN)),
    ("grace periods", ("grace period",)),
    ("exp_mutex", ("exp_mutex",)),
    ("namespace_sem", ("namespace_sem",)),
)


def group(label: str) -> str:
    for name, prefixes in GROUPS:
        if label.startswith(prefixes):
            return name
    return "other"


def main(argv: list[str]) -> int:
    paths = [Path(p) for p in argv] or sorted((TRACES / "sleep-stacks").glob("stacks-*.txt.xz"))
    for path in paths:
        n = sequences(path)
        out, count = sleeps(str(path))
        print(f"{path.name}: {n} sequences, {sum(out.values()) / n:.1f} us a sequence off the CPU")
        sums: dict[str, float] = {}
        for label, v in out.items():
            sums[group(label)] = sums.get(group(label), 0.0) + v
        print(
            "  "
            + ", ".join(f"{g} {sums.get(g, 0.0) / n:.1f}" for g, _ in GROUPS + (("other", ()),))
        )
        for label, v in sorted(out.items(), key=lambda kv: -kv[1]):
            if v / n >= 0.5:
                c = count.get(label)
                each = f"  ({c / n:.2f} a sequence, {v / c:.1f} us each)" if c else ""
                print(f"    {label}: {v / n:.1f}{each}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
