"""`prop_bench`: what every live container mount namespace adds to a host mount, and what a
full read of the mount table costs in the host and in a container's (slave) namespace.

A container's copy of a host mount is a slave of it (runc makes the container's mounts
rslave), so every mount and unmount under a shared host mount is propagated into every live
container namespace (``propagate_mnt()`` and umount propagation, under ``namespace_sem`` and
``mount_lock``). And every reader of ``/proc/self/mountinfo`` in a slave namespace makes the
kernel's ``show_mountinfo()`` call ``get_dominating_id()`` for each slave line, which walks the
master's peer ring: a cost that grows with lines x peer-group size. And (``--ring``) a mount
or unmount under a shared mount whose peer group holds R + 1 mounts walks all R + 1 peers
(``propagate_mnt()``, umount propagation) even with no slave namespace alive (``--ring-cpus``:
with the ring's binds made in turn on several CPUs, so that ring neighbours come from different
CPUs' slabs; the CSV's ``bind_cpus`` and ``bind_cpu_changes`` rows say where they were made,
either way). prop_bench
(calibration/bench/prop_bench.c, its CSV documented in calibration/bench/README.md) times all
three; this module names its columns and summarises its rows (the p50/mean/min the program
itself reports, rows with repeat ``all``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

PROP_COLUMNS = (
    "bench",
    "op",
    "ns",
    "slaves",
    "peers",
    "mounts",
    "metric",
    "value",
    "unit",
    "repeat",
)
#: Every timed call ends with a row of this metric (two per propagation repeat: the bind
#: mount and its umount; two per read repeat: the host read and the slave read).
PROP_DONE_METRIC = "ns"
#: The program's defaults for the flags that multiply the number of runs.
PROP_RUN_KEYS = (("--slaves", "0,10,50,100,200"), ("--mounts", "0,1000,5000"))
PROP_STATS = ("p50_ns", "mean_ns", "min_ns")
#: The ring phase's timed calls, in the order of one repeat (``--ring``): mount(MS_BIND) and
#: umount2(0); mount(MS_BIND) and umount2(MNT_DETACH); open_tree(OPEN_TREE_CLONE),
#: move_mount(), close() and umount2(MNT_DETACH).
PROP_RING_OPS = (
    "ring_bind",
    "ring_umount",
    "ring_bind2",
    "ring_detach",
    "ring_open_tree",
    "ring_move_mount",
    "ring_close",
    "ring_detach2",
)


def _int_or_none(value: float | None) -> int | None:
    return None if value is None else int(value)


def prop_expected_runs(args: Sequence[str], repeats: int) -> int:
    """Timed calls (rows of `PROP_DONE_METRIC`): 2 per repeat per K and per N, and one per
    ring op per repeat per R (``--ring``; on a kernel without open_tree there are fewer)."""

    def value(flag: str, default: str) -> str:
        return args[args.index(flag) + 1] if flag in args else default

    lists = [len(value(flag, default).split(",")) for flag, default in PROP_RUN_KEYS]
    rings = len(value("--ring", "").split(",")) if "--ring" in args else 0
    return 2 * repeats * sum(lists) + len(PROP_RING_OPS) * repeats * rings


def summarize_prop(rows: Sequence[Mapping[str, str]]) -> dict[str, Any]:
    """Per K: bind mount and umount p50/mean/min and the propagation check; per (N, ns): the
    read's p50/mean/min, read() calls, bytes and the mount lines (slave: master lines); per R
    (``ring``): the peer group's size, the scratch's children, how many CPUs made its binds and
    how many neighbours on the ring were made on different CPUs (None in a CSV from before
    prop_bench 2), and each ring op's p50/mean/min."""
    prop: dict[int, dict[str, float]] = defaultdict(dict)
    read: dict[tuple[int, int, str], dict[str, float]] = defaultdict(dict)
    ring: dict[int, dict[str, float]] = defaultdict(dict)
    for r in rows:
        if r["op"] == "ring" or r["op"] in PROP_RING_OPS:
            if r["repeat"] == "all":
                ring[int(r["mounts"])][f"{r['op']}_{r['metric']}"] = float(r["value"])
            continue
        if r["op"] in ("bind_mount", "umount", "propagation"):
            if r["repeat"] == "all":
                prop[int(r["slaves"])][f"{r['op']}_{r['metric']}"] = float(r["value"])
            continue
        key = (int(r["mounts"]), int(r["peers"]), r["ns"])
        if r["repeat"] == "all":
            read[key][f"{r['op']}.{r['metric']}"] = float(r["value"])
        elif r["repeat"] == "0" and r["metric"] in ("reads", "bytes", "lines"):
            read[key][r["metric"]] = float(r["value"])
    slaves = []
    for k, g in sorted(prop.items()):
        cfg: dict[str, Any] = {"slaves": k, "seen_in_slave": int(g.get("propagation_seen", 0))}
        for op in ("bind_mount", "umount"):
            for stat in PROP_STATS:
                cfg[f"{op}_{stat}"] = g.get(f"{op}_{stat}")
        slaves.append(cfg)
    reads = []
    for (n, peers, ns), g in sorted(read.items(), key=lambda kv: (kv[0][0], kv[0][2])):
        cfg = {
            "mounts": n,
            "peers": peers,
            "ns": ns,
            "lines": int(g.get("lines", 0)),
            "reads": int(g.get("reads", 0)),
            "bytes": int(g.get("bytes", 0)),
            "master_lines": int(g.get("mount_table.master_lines", 0)),
        }
        for stat in PROP_STATS:
            cfg[f"read_{stat}"] = g.get(f"read_mountinfo.{stat}")
        reads.append(cfg)
    rings = []
    for n, g in sorted(ring.items()):
        cfg = {
            "ring": n,
            "group_mounts": int(g.get("ring_group_mounts", 0)),
            "children": int(g.get("ring_children", 0)),
            "bind_cpus": _int_or_none(g.get("ring_bind_cpus")),
            "bind_cpu_changes": _int_or_none(g.get("ring_bind_cpu_changes")),
        }
        for op in PROP_RING_OPS:
            for stat in PROP_STATS:
                cfg[f"{op}_{stat}"] = g.get(f"{op}_{stat}")
        rings.append(cfg)
    return {"slaves": slaves, "reads": reads, "ring": rings}
