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
walkers (K = 0), and the walk against the same (walk, K) without mounters (M = 0).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
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


def _median(values: list[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def summarize_walk(rows: Sequence[Mapping[str, str]]) -> dict[str, Any]:
    """Per (walk, K, M, L): the walk's percentiles and calls/s, each mount op's count and
    percentiles (medians over repeats), the op's p50 and mean over the K = 0 run with the same
    M and L, and the walk's p50 and mean over the M = 0 run with the same walk and K."""
    per: dict[Key, dict[tuple[str, str], list[float]]] = defaultdict(lambda: defaultdict(list))
    repeats: dict[Key, set[str]] = defaultdict(set)
    clock: dict[str, float] = {}
    for r in rows:
        if r["role"] == "clock":
            clock[r["metric"]] = float(r["value"])
            continue
        key = (r["walk"], int(r["walkers"]), int(r["mounters"]), int(r["layers"]))
        op = "walk" if r["role"] == "walker" else r["op"]
        per[key][(op, r["metric"])].append(float(r["value"]))
        repeats[key].add(r["repeat"])
    med = {key: {name: _median(v) for name, v in g.items()} for key, g in per.items()}
    configs = []
    for key in med:  # the program's order (its first repeat)
        walk, k, m, layers = key
        g = med[key]
        cfg: dict[str, Any] = {
            "walk": walk,
            "walkers": k,
            "mounters": m,
            "layers": layers,
            "repeats": len(repeats[key]),
        }
        alone = med.get((walk, k, 0, 0), {}) if m else {}
        for s in _WALK_METRICS:  # None without walkers
            cfg[f"walk_{s}"] = g.get(("walk", s))
        for s in ("p50_ns", "mean_ns"):  # None without mounters
            cfg[f"walk_{s[:-3]}_vs_alone"] = _ratio(g.get(("walk", s)), alone.get(("walk", s)))
        base = med.get(("none", 0, m, layers), {})
        ops = {}
        for op in (*WALK_OPS, "sequence") if m else ():
            o: dict[str, float | None] = {s: g.get((op, s)) for s in _OP_METRICS}
            for s in ("p50_ns", "mean_ns"):
                o[f"{s[:-3]}_vs_k0"] = _ratio(g.get((op, s)), base.get((op, s)))
            ops[op] = o
        cfg["ops"] = ops
        cfg["sequences_per_s"] = g.get(("run", "sequences_per_s"))
        cfg["mount_ops_per_s"] = g.get(("run", "mount_ops_per_s"))
        configs.append(cfg)
    return {
        "tick_hz": clock.get("tick_hz"),
        "timer_overhead_ns": clock.get("timer_overhead_ns"),
        "configs": configs,
    }
