"""`walk_bench`: path walkers against containerd's mount sequence, on the real kernel.

Every path lookup starts in ``path_init()``, which reads mount_lock's sequence counter and spins
while a writer holds mount_lock (``lock_mount_hash()``: every attach, detach and idmap change);
a walk that saw the counter move falls back (``__legitimize_mnt`` takes the lock, or the walk is
redone with references). cohsim's level 3 models how long walkers stall behind containerd's
mounts and how much the mounts' own lock holds grow with the walkers hammering the lock's line.
walk_bench (calibration/bench/walk_bench.c, its CSV documented in calibration/bench/README.md)
runs K pinned walker threads (``fstatat``, or ``openat`` + ``close``, of one path that crosses
two mounts; ``fstat`` of an open fd as the control without a walk) beside M pinned mounter
threads running mount_bench's per-layer idmapped sequence for L layers, every call timed.

This module names its columns, enumerates its runs as the program does (for the progress bar)
and summarises its rows: per (walk, K, M, L) the medians over repeats of the walk's and each
mount op's figures, and the ratios a reader wants -- each op against the same (M, L) without
walkers (K = 0), and the walk against the same (walk, K) without mounters (M = 0), each the
median of the ratios within a repeat (the program runs every configuration once per repeat, a
round seconds long, so a slow drift of a shared host cancels in them).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

WALK_COLUMNS = (
    "bench",
    "walk",
    "role",
    "walkers",
    "mounters",
    "layers",
    "op",
    "metric",
    "value",
    "unit",
    "repeat",
)
#: The last row of every run (progress is counted on it).
WALK_DONE_METRIC = "final"
#: What a walker calls: fstatat, openat + close, and the control fstat (no path walk).
WALK_KINDS = ("stat", "openat", "fstat")
#: A mounter's timed calls, in the order of its sequence (mount_bench's labels).
WALK_OPS = (
    "open_tree",
    "mount_setattr",
    "move_mount",
    "close",
    "mount",
    "umount2",
    "umount2_overlay",
)
#: The program's defaults for the flags that shape its runs.
WALK_DEFAULTS = {"--walkers": "0,1", "--mounters": "0,1", "--layers": "1,10", "--walk": "stat"}
#: The walkers' figures kept per configuration (medians over repeats).
_WALK_METRICS = (
    "p50_ns",
    "p90_ns",
    "p99_ns",
    "p999_ns",
    "mean_ns",
    "max_ns",
    "calls_per_s",
    "calls_per_s_per_walker",
)
_OP_METRICS = ("count", "p50_ns", "p90_ns", "p99_ns", "mean_ns")

Key = tuple[str, int, int, int]  #: (walk, walkers, mounters, layers)


def walk_configs(args: Sequence[str]) -> list[Key]:
    """The (walk, K, M, L) the program runs for `args`, in its order: K = 0 runs once with walk
    ``none``, M = 0 once with layers 0, and K = M = 0 not at all."""

    def ints(flag: str) -> list[int]:
        text = args[args.index(flag) + 1] if flag in args else WALK_DEFAULTS[flag]
        return [int(v) for v in text.split(",")]

    walks = (args[args.index("--walk") + 1] if "--walk" in args else "stat").split(",")
    out = []
    for k in ints("--walkers"):
        for walk in walks if k else ["none"]:
            for m in ints("--mounters"):
                if k or m:
                    out += [(walk, k, m, layers) for layers in (ints("--layers") if m else [0])]
    return out


def walk_expected_runs(args: Sequence[str], repeats: int) -> int:
    """Runs (rows of `WALK_DONE_METRIC`): every configuration once per repeat."""
    return len(walk_configs(args)) * repeats


def _median(values: Iterable[float]) -> float | None:
    values = list(values)
    return float(statistics.median(values)) if values else None


def _paired(a: Mapping[str, float] | None, b: Mapping[str, float] | None) -> float | None:
    """The median over the repeats both have of a's value over b's: the runs of one repeat are a
    round of every configuration seconds apart, so a drift of the host cancels in the ratio."""
    if not a or not b:
        return None
    return _median(a[r] / b[r] for r in sorted(set(a) & set(b)) if b[r])


def summarize_walk(
    rows: Sequence[Mapping[str, str]], repeats: Collection[str] | None = None
) -> dict[str, Any]:
    """Per (walk, K, M, L): the walk's percentiles and calls/s, each mount op's count and
    percentiles (medians over repeats); each op's p50 and mean against the K = 0 run with the
    same M and L, and the walk's against the M = 0 run with the same walk and K (medians of the
    per-repeat ratios, `_paired`). `repeats`: only those rounds (the `repeat` column's values),
    e.g. the rounds a shared host left alone (calibration/bench/README.md, walk_bench)."""
    Series = dict[tuple[str, str], dict[str, float]]  # (op, metric) -> repeat -> value
    per: dict[Key, Series] = defaultdict(lambda: defaultdict(dict))
    clock: dict[str, float] = {}
    for r in rows:
        if r["role"] == "clock":
            clock[r["metric"]] = float(r["value"])
            continue
        if repeats is not None and r["repeat"] not in repeats:
            continue
        key = (r["walk"], int(r["walkers"]), int(r["mounters"]), int(r["layers"]))
        op = "walk" if r["role"] == "walker" else r["op"]
        per[key][(op, r["metric"])][r["repeat"]] = float(r["value"])
    configs = []
    for key, g in per.items():  # the program's order (its first repeat)
        walk, k, m, layers = key
        cfg: dict[str, Any] = {
            "walk": walk,
            "walkers": k,
            "mounters": m,
            "layers": layers,
            "repeats": len(set().union(*g.values())),
        }
        alone = per.get((walk, k, 0, 0), {}) if m else {}
        for s in _WALK_METRICS:  # None without walkers
            cfg[f"walk_{s}"] = _median(g.get(("walk", s), {}).values())
        for s in ("p50_ns", "mean_ns"):  # None without mounters
            cfg[f"walk_{s[:-3]}_vs_alone"] = _paired(g.get(("walk", s)), alone.get(("walk", s)))
        base = per.get(("none", 0, m, layers), {})
        ops = {}
        for op in (*WALK_OPS, "sequence") if m else ():
            o = {s: _median(g.get((op, s), {}).values()) for s in _OP_METRICS}
            for s in ("p50_ns", "mean_ns"):
                o[f"{s[:-3]}_vs_k0"] = _paired(g.get((op, s)), base.get((op, s)))
            ops[op] = o
        cfg["ops"] = ops
        for role in ("walker", "mounter"):  # the op "sched" of each role (walker: op "walk")
            op = "walk" if role == "walker" else "sched"
            for s in ("runnable_wait_ms", "involuntary_switches"):
                cfg[f"{role}_{s}"] = _median(g.get((op, s), {}).values())
        cfg["sequences_per_s"] = _median(g.get(("run", "sequences_per_s"), {}).values())
        cfg["mount_ops_per_s"] = _median(g.get(("run", "mount_ops_per_s"), {}).values())
        configs.append(cfg)
    return {
        "tick_hz": clock.get("tick_hz"),
        "timer_overhead_ns": clock.get("timer_overhead_ns"),
        "configs": configs,
    }
