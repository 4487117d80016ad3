"""Real benchmark data as calibration needs it: the runs of mount_bench, pause_bench and
wake_bench (calibration/bench/README.md), read from their tidy CSVs.

`load_bench(paths)` takes bench output directories or `*_bench.csv` files (pause, mount and/or
wake) and returns `BenchData`: one `MountRun` per (strategy, workers, layers, repeat), one
`PauseRun` per (lock, threads, repeat) and one `WakeRun` per wake_bench repeat, walk_bench's
umount2 beside one mounter (`WalkPoint`, cohsim.calibrate.measured: read only where it has two
or more walker counts, else skipped), plus the sha256 digest of every file read. The other
benches' CSVs (ns, prop, chase, corun: `NOT_FITTED`), as
`cohsim bench` writes them into the same output directory, are not read but listed in
`BenchData.skipped` with the reason. Every value is checked: a missing metric, a non-numeric
value, a file without rows or of an unknown bench fails with one `CohsimError` line naming the
file (and line) and what is wrong.

The simulated counterpart of a mount_bench run is `cohsim.calibrate.mountreplay`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from cohsim.calibrate.measured import (
    WAKE_STEP_LOCK,
    WalkPoint,
    grace_slope,
    wake_steps,
    walk_points,
)
from cohsim.errors import CohsimError
from cohsim.kernel import waketable
from cohsim.kernel.waketable import WakeTable
from cohsim.provenance import file_digest
from cohsim.workload.synth import STRATEGIES

#: the benches `cohsim bench` runs whose data this fit does not read, and why: a directory
#: of `cohsim bench` output holding them is fitted on the rest, each of these skipped with a
#: note (BenchData.skipped), not refused
NOT_FITTED: dict[str, str] = {
    "ns": "ns_bench's namespace copy is priced from its own fit "
    "(calibration/analysis/ns_copy/fit.py), not by cohsim calibrate",
    "prop": "prop_bench's propagation and mountinfo reads are priced from their own fit "
    "(calibration/analysis/prop_read/fit.py), not by cohsim calibrate",
    "chase": "chase_bench's load latencies are not fitted by cohsim calibrate",
    "corun": "corun_bench's co-run slowdown goes into a machine file by hand "
    "(microarch.corun_slowdown), not fitted by cohsim calibrate",
}
_WALK_UNUSED = (
    "walk_bench is read only for the grace period's part per busy CPU, which needs two or more "
    "walker counts from 1 up beside one mounter; this run has not got them"
)
#: mount_bench's per-syscall labels -> the op (`cohsim.kernel.classify`) they time, per strategy
#: (labels left out: close_overlay, the closes of the fsopen/fsmount fds, op "other")
LABEL_OPS: dict[str, dict[str, str]] = {
    "per-layer": {
        "open_tree": "open_tree_clone",
        "mount_setattr": "mount_setattr",
        "move_mount": "move_mount",
        "close": "close_attached",
        "mount": "mount_overlay",
        "umount2": "umount_detach",
        "umount2_overlay": "umount_overlay",
    },
    "common-parent": {
        "open_tree": "open_tree_clone",
        "mount_setattr": "mount_setattr_ro",
        "move_mount": "move_mount",
        "close": "close_attached",
        "mount": "mount_overlay",
        "mountinfo_read": "mountinfo_read",
        "umount2": "umount",
        "umount2_einval": "umount_einval",
        "umount2_overlay": "umount_overlay",
    },
    "lowerdir-plus": {
        "fsopen": "fsopen",
        "open_tree": "open_tree_clone",
        "mount_setattr": "mount_setattr",
        "fsconfig": "fsconfig",
        "fsconfig_create": "fsconfig_create",
        "close": "close_detached",
        "fsmount": "fsmount",
        "move_mount_overlay": "move_mount",
        "umount2_overlay": "umount_overlay",
    },
}
_NOT_CALLS = ("sequence", "container", "run", "mount_table", "mountinfo_sample")


@dataclass(frozen=True)
class MountRun:
    """One mount_bench run: a strategy, K workers, a layer count, one repeat."""

    strategy: str
    workers: int
    layers: int
    repeat: int
    containers: int  #: containers per worker
    sequences_per_container: int
    sequence_mean_ns: float  #: mean wall time of one sequence (without mountinfo_sample)
    sample_ns: float  #: mountinfo_sample time per sequence (mean x calls per sequence)
    containers_per_s: float
    wall_s: float
    baseline_mounts: int
    calls_per_sequence: int  #: syscalls per sequence (without mountinfo_sample)
    labels: dict[str, dict[str, float]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.strategy, self.workers, self.layers)

    @property
    def stride_ns(self) -> float:
        """What a worker spends per sequence: its wall time plus the mountinfo sample."""
        return self.sequence_mean_ns + self.sample_ns

    @property
    def sampled(self) -> bool:
        """Whether mount_bench counted the mount table (`mountinfo_sample`) in this run: not
        with `--mountinfo-every 0`, where its workers made no mountinfo read of their own."""
        return self.labels.get("mountinfo_sample", {}).get("count", 0.0) > 0

    @property
    def op_means(self) -> dict[str, float]:
        """Mean duration (ns) of one call of each op mount_bench timed apart (`LABEL_OPS`)."""
        out = {}
        for label, op in LABEL_OPS[self.strategy].items():
            v = self.labels.get(label, {})
            if v.get("count", 0.0) > 0 and "mean_ns" in v:
                out[op] = v["mean_ns"]
        return out

    @property
    def calls(self) -> dict[str, dict[str, float]]:
        """The labels that are syscalls (not the sequence, container, run or sample timings)."""
        return {k: v for k, v in self.labels.items() if k not in _NOT_CALLS}

    @property
    def user_ns(self) -> float:
        """mount_bench's own time per call: the sequence's wall time minus the time spent in
        its syscalls (every label's mean x calls per sequence), spread over the calls."""
        in_calls = sum(
            v.get("mean_ns", 0.0) * v.get("calls_per_sequence", 0.0) for v in self.calls.values()
        )
        return (self.sequence_mean_ns - in_calls) / max(1, self.calls_per_sequence)


@dataclass(frozen=True)
class PauseRun:
    """One pause_bench run of one lock at one thread count (and that repeat's PAUSE figures)."""

    lock: str
    threads: int
    placement: str
    repeat: int
    p50_ns: float
    mean_ns: float
    acquisitions_per_s: float
    pause_ns: float  #: the repeat's PAUSE latency (lock "none" row)
    timer_overhead_ns: float  #: clock-read pair, included in every latency


@dataclass(frozen=True)
class WakeRun:
    """One wake_bench repeat: futex ping-pong round trips on one CPU and across two."""

    repeat: int
    #: extra latency of one wake-up onto an idle CPU: (cross_p50_ns - same_p50_ns) / 2, >= 0
    wake_ns: float
    same_p50_ns: float  #: round trip, both threads on one CPU (two context switches)
    cross_p50_ns: float  #: round trip, one thread per CPU (two wake-ups onto an idle CPU)


@dataclass(frozen=True)
class BenchData:
    """Everything read from the bench files, with their digests (file path -> sha256)."""

    mount: tuple[MountRun, ...] = ()
    pause: tuple[PauseRun, ...] = ()
    digests: dict[str, str] = field(default_factory=dict)
    wake: tuple[WakeRun, ...] = ()  #: after digests, so BenchData(mount, pause, digests) works
    #: wake-up latency by idle duration, from scheduler traces (cohsim.kernel.waketable)
    wake_idle: WakeTable | None = None
    #: (file, why) for each bench file given or found that this fit does not read (NOT_FITTED)
    skipped: tuple[tuple[str, str], ...] = ()
    #: walk_bench's umount2 beside one mounter (the grace period per busy CPU; measured.py)
    walk: tuple[WalkPoint, ...] = ()
    wake_step: tuple[float, ...] = ()  #: traced bursts' wake-up pace, ns (measured.py)

    def select(
        self, *, workers: Iterable[int] | None = None, repeats: Iterable[int] | None = None
    ) -> BenchData:
        """The mount runs with these worker counts / repeats (pause and wake runs by repeat)."""
        w = set(workers) if workers is not None else None
        r = set(repeats) if repeats is not None else None
        mount = tuple(
            m for m in self.mount if (w is None or m.workers in w) and (r is None or m.repeat in r)
        )
        pause = tuple(p for p in self.pause if r is None or p.repeat in r)
        wake = tuple(k for k in self.wake if r is None or k.repeat in r)
        return replace(self, mount=mount, pause=pause, digests=dict(self.digests), wake=wake)


# --------------------------------------------------------------------------- reading


def bench_files(paths: Sequence[str | Path]) -> list[Path]:
    """The `*_bench.csv` files named or found (one level deep) in the given directories."""
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(path.glob("*_bench.csv"))
            if not found:
                raise CohsimError("no *_bench.csv file in this directory", str(path))
            out.extend(found)
        elif path.is_file():
            out.append(path)
        else:
            raise CohsimError("no such file or directory", str(path))
    return out


def load_bench(paths: Sequence[str | Path]) -> BenchData:
    """Read pause, mount and/or wake bench CSVs (files or output directories)."""
    mount: list[MountRun] = []
    pause: list[PauseRun] = []
    wake: list[WakeRun] = []
    walk: list[WalkPoint] = []
    steps: list[float] = []
    wake_idle: WakeTable | None = None
    digests: dict[str, str] = {}
    skipped: list[tuple[str, str]] = []
    for path in bench_files(paths):
        where = str(path)
        rows = _rows(path)
        bench = rows[0][1]["bench"]
        if bench in NOT_FITTED:
            skipped.append((where, NOT_FITTED[bench]))
            continue
        if bench == "mount":
            mount.extend(_mount_runs(rows, where))
        elif bench == "pause":
            pause.extend(_pause_runs(rows, where))
        elif bench == "wake" and rows[0][1]["lock"] == waketable.LOCK:
            if wake_idle is not None:
                raise CohsimError("a second wake-up latency table (lock sched-trace)", where)
            wake_idle = waketable.table_from_rows(rows, where)
        elif bench == "wake" and rows[0][1]["lock"] == WAKE_STEP_LOCK:
            steps.extend(wake_steps(rows, where))
        elif bench == "wake":
            wake.extend(_wake_runs(rows, where))
        elif bench == "walk":
            points = walk_points(rows, where)
            if grace_slope(points) is None:
                skipped.append((where, _WALK_UNUSED))
                continue
            walk.extend(points)
        else:  # pragma: no cover - read_bench_csv accepts only known headers
            raise CohsimError(f"unknown bench {bench!r}", where)
        digests[where] = file_digest(path)
    if not (mount or pause or wake or walk or steps) and wake_idle is None:
        if skipped:
            raise CohsimError(
                "nothing to fit: no pause_bench, mount_bench, wake_bench or walk_bench data among "
                + ", ".join(w for w, _ in skipped)
            )
        raise CohsimError("no benchmark data given")
    mount.sort(key=lambda m: (STRATEGIES.index(m.strategy), m.workers, m.layers, m.repeat))
    pause.sort(key=lambda p: (p.lock, p.threads, p.repeat))
    wake.sort(key=lambda k: k.repeat)
    done = (tuple(mount), tuple(pause), digests, tuple(wake), wake_idle, tuple(skipped))
    return BenchData(*done, tuple(walk), tuple(steps))


def _rows(path: Path) -> list[tuple[int, dict[str, str]]]:
    from cohsim.measure.programs import read_bench_csv  # programs' subprocess and host probes

    try:
        rows = read_bench_csv(path)
    except UnicodeDecodeError:
        raise CohsimError("not a UTF-8 text file", str(path)) from None
    except CohsimError as exc:
        if "unexpected CSV header" in exc.what:
            raise CohsimError(
                f"{exc.what}: not a CSV of any of cohsim's benches (missing or unknown columns)",
                exc.where,
            ) from None
        raise
    if not rows:
        raise CohsimError("no data rows", str(path))
    out = []
    for i, row in enumerate(rows, start=2):
        if row["bench"] not in ("pause", "mount", "wake", "walk", *NOT_FITTED):
            raise CohsimError(
                f"unknown bench {row['bench']!r} (expected pause, mount, wake or walk)",
                f"{path}:{i}",
            )
        if row["bench"] != rows[0]["bench"]:
            raise CohsimError(f"bench {row['bench']!r} in a {rows[0]['bench']} CSV", f"{path}:{i}")
        out.append((i, row))
    return out


def _num(row: dict[str, str], col: str, where: str, *, integer: bool = False) -> float:
    text = row[col]
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise CohsimError(f"{col} {text!r} is not {kind}", where) from None
    if not math.isfinite(value):
        raise CohsimError(f"{col} {text!r} is not finite", where)
    return value


def _table(
    rows: list[tuple[int, dict[str, str]]], where: str, keys: tuple[str, ...], ints: tuple[str, ...]
) -> dict[tuple, dict[tuple[str, str], float]]:
    """Group rows by run key; within a run, (label, metric) -> value."""
    runs: dict[tuple, dict[tuple[str, str], float]] = {}
    for line, row in rows:
        at = f"{where}:{line}"
        key = tuple(int(_num(row, k, at, integer=True)) if k in ints else row[k] for k in keys)
        label = row.get("syscall", row.get("lock", ""))
        runs.setdefault(key, {})[(label, row["metric"])] = _num(row, "value", at)
    return runs


def _need(
    run: dict[tuple[str, str], float], label: str, metric: str, where: str, key: tuple
) -> float:
    if (label, metric) not in run:
        raise CohsimError(f"run {'/'.join(map(str, key))} has no {label},{metric} row", where)
    return run[(label, metric)]


def _mount_runs(rows: list[tuple[int, dict[str, str]]], where: str) -> list[MountRun]:
    keys = ("strategy", "workers", "layers", "repeat")
    out = []
    for key, run in _table(rows, where, keys, ("workers", "layers", "repeat")).items():
        strategy, workers, layers, repeat = key
        if strategy not in STRATEGIES:
            raise CohsimError(f"unknown strategy {strategy!r}", where)
        containers = _need(run, "run", "containers", where, key)
        sequences = _need(run, "run", "sequences", where, key)
        labels: dict[str, dict[str, float]] = {}
        for (label, metric), value in run.items():
            labels.setdefault(label, {})[metric] = value
        calls = sum(
            v.get("calls_per_sequence", 0.0) for lab, v in labels.items() if lab not in _NOT_CALLS
        )
        sample = labels.get("mountinfo_sample", {})
        out.append(
            MountRun(
                strategy=strategy,
                workers=workers,
                layers=layers,
                repeat=repeat,
                containers=round(containers / workers),
                sequences_per_container=max(1, round(sequences / max(containers, 1))),
                sequence_mean_ns=_need(run, "sequence", "mean_ns", where, key),
                sample_ns=sample.get("mean_ns", 0.0) * sample.get("calls_per_sequence", 0.0),
                containers_per_s=_need(run, "run", "containers_per_s", where, key),
                wall_s=_need(run, "run", "wall_s", where, key),
                baseline_mounts=int(_need(run, "mount_table", "baseline", where, key)),
                calls_per_sequence=round(calls),
                labels=labels,
            )
        )
    return out


def _pause_runs(rows: list[tuple[int, dict[str, str]]], where: str) -> list[PauseRun]:
    keys = ("lock", "threads", "placement", "repeat")
    table = _table(rows, where, keys, ("threads", "repeat"))
    none = {k[3]: v for k, v in table.items() if k[0] == "none"}
    out = []
    for key, run in table.items():
        lock, threads, placement, repeat = key
        if lock == "none":
            continue
        base = none.get(repeat)
        if base is None:
            raise CohsimError(f"repeat {repeat} has no lock=none rows (pause_ns)", where)
        out.append(
            PauseRun(
                lock=lock,
                threads=threads,
                placement=placement,
                repeat=repeat,
                p50_ns=_need(run, lock, "p50_ns", where, key),
                mean_ns=_need(run, lock, "mean_ns", where, key),
                acquisitions_per_s=_need(run, lock, "acquisitions_per_s", where, key),
                pause_ns=_need(base, "none", "pause_ns", where, key),
                timer_overhead_ns=_need(base, "none", "timer_overhead_ns", where, key),
            )
        )
    if not out:
        raise CohsimError("no ttas/ticket runs", where)
    return out


_WAKE_PLACEMENTS = ("same-cpu", "cross-cpu", "derived")


def _wake_runs(rows: list[tuple[int, dict[str, str]]], where: str) -> list[WakeRun]:
    for line, row in rows:
        if row["placement"] not in _WAKE_PLACEMENTS:
            raise CohsimError(
                f"unknown placement {row['placement']!r} (expected same-cpu, cross-cpu or derived)",
                f"{where}:{line}",
            )
    table = _table(rows, where, ("placement", "repeat"), ("repeat",))
    out = []
    for repeat in sorted({k[1] for k in table}):
        runs = {p: table.get((p, repeat), {}) for p in _WAKE_PLACEMENTS}
        out.append(
            WakeRun(
                repeat=repeat,
                wake_ns=_need(runs["derived"], "futex", "wake_ns", where, ("derived", repeat)),
                same_p50_ns=_need(runs["same-cpu"], "futex", "p50_ns", where, ("same-cpu", repeat)),
                cross_p50_ns=_need(
                    runs["cross-cpu"], "futex", "p50_ns", where, ("cross-cpu", repeat)
                ),
            )
        )
    return out


def medians(runs: Iterable[MountRun]) -> dict[tuple[str, int, int], tuple[float, float]]:
    """(strategy, workers, layers) -> median over repeats of (stride_ns, containers_per_s)."""
    return {
        k: (
            statistics.median(r.stride_ns for r in v),
            statistics.median(r.containers_per_s for r in v),
        )
        for k, v in group_runs(runs).items()
    }


def group_runs(runs: Iterable[MountRun]) -> dict[tuple[str, int, int], list[MountRun]]:
    """The runs by shape (strategy, workers, layers), shapes in sorted order, repeats as read."""
    out: dict[tuple[str, int, int], list[MountRun]] = {}
    for r in runs:
        out.setdefault(r.key, []).append(r)
    return dict(sorted(out.items()))
