"""`chase_bench`: load-to-use latency of dependent loads against the working set's size.

The kernel's peer-group walk (fs/pnode.c ``propagate_mnt()``, ``next_peer()``) follows a linked
list through every ``struct mount`` of a peer group: each step's address comes from the load
before it, so a step costs about (dependent loads per step) x (the latency of the cache level the
walk's working set fits in). chase_bench (calibration/bench/chase_bench.c, its CSV documented in
calibration/bench/README.md) measures that latency on a host: a pointer chase over a random
cyclic permutation of 64-byte nodes spanning S bytes, ns per load, for lines warm in the reading
core's own caches (``local``) and for lines another CPU wrote right before each pass
(``remote``).

This module names its columns, parses its sizes as the program does (``16K``, ``1.5M``), counts
its runs (for the progress bar) and summarises its rows: per (mode, size) the median, min and max
of ns per load over the repeats.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from cohsim.errors import CohsimError
from cohsim.units import NS_PER_S

CHASE_COLUMNS = ("bench", "mode", "size_bytes", "metric", "value", "unit", "repeat")
#: The last row of every measurement (progress is counted on it).
CHASE_DONE_METRIC = "ns_per_load"
CHASE_MODES = ("local", "remote")
#: What ``--pages`` may ask for: 4 KiB pages (MADV_NOHUGEPAGE) or transparent huge pages.
CHASE_PAGES = ("small", "huge")
#: The program's defaults for the flags that shape its runs.
CHASE_DEFAULTS = {
    "--sizes": "16K,32K,64K,128K,256K,512K,1M,1.5M,2M,3M,4M,6M,8M,16M,32M,64M,128M,256M",
    "--mode": "local,remote",
}
NODE_BYTES = 64  #: one node per cache line
MIN_SIZE_BYTES = 2 * NODE_BYTES  #: the smallest cycle: two nodes
MAX_SIZE_BYTES = 64 << 30  #: 2^30 nodes (the program's indices are 32-bit)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)([KMG]?)", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``"1.5M"`` -> 1572864: bytes, or a number with K, M or G (binary); a whole number of
    64-byte nodes from 128 bytes to 64 GiB. A CohsimError otherwise."""
    match = _SIZE.fullmatch(text)
    if not match:
        raise CohsimError(f"{text!r} is not a size (bytes, or a number with K, M or G: 16K, 1.5M)")
    value = Fraction(match.group(1)) * _UNITS[match.group(2).upper()]
    if (
        value.denominator != 1
        or value % NODE_BYTES
        or not (MIN_SIZE_BYTES <= value <= MAX_SIZE_BYTES)
    ):
        raise CohsimError(
            f"{text!r} is not a whole number of {NODE_BYTES}-byte nodes from {MIN_SIZE_BYTES}"
            f" bytes to {MAX_SIZE_BYTES >> 30} GiB"
        )
    return int(value)


def parse_sizes(text: str) -> list[int]:
    """``"16K,1M"`` -> [16384, 1048576]; a size given twice is a CohsimError too."""
    sizes = [parse_size(v) for v in text.split(",")]
    twice = sorted({s for s in sizes if sizes.count(s) > 1})
    if twice:
        raise CohsimError(f"{', '.join(str(s) for s in twice)} bytes given twice")
    return sizes


def chase_expected_runs(args: Sequence[str], repeats: int) -> int:
    """Measurements (rows of `CHASE_DONE_METRIC`): every mode of every size once per repeat."""

    def value(flag: str) -> str:
        return args[args.index(flag) + 1] if flag in args else CHASE_DEFAULTS[flag]

    return repeats * len(value("--sizes").split(",")) * len(value("--mode").split(","))


def _median(values: Sequence[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def summarize_chase(rows: Sequence[Mapping[str, str]]) -> dict[str, Any]:
    """Per (mode, size), in the program's order: ns per load over the repeats (median, min,
    max), the median in ticks of the host's clock (TSC cycles on x86), the loads a measurement
    chased (median) and the set's transparent huge pages (the most any repeat got)."""
    clock: dict[str, float] = {}
    ns: dict[tuple[str, int], list[float]] = defaultdict(list)
    loads: dict[tuple[str, int], list[float]] = defaultdict(list)
    huge_kb: dict[int, float] = {}
    for r in rows:
        size = int(r["size_bytes"])
        if r["mode"] == "clock":
            clock[r["metric"]] = float(r["value"])
        elif r["mode"] == "set" and r["metric"] == "anon_huge_kb":
            huge_kb[size] = max(huge_kb.get(size, 0.0), float(r["value"]))
        elif r["metric"] == CHASE_DONE_METRIC:
            ns[(r["mode"], size)].append(float(r["value"]))
        elif r["metric"] == "loads":
            loads[(r["mode"], size)].append(float(r["value"]))
    tick_hz = clock.get("tick_hz")
    configs = []
    for (mode, size), values in ns.items():  # the program's order (its first repeat)
        median = _median(values)
        configs.append(
            {
                "mode": mode,
                "size_bytes": size,
                "repeats": len(values),
                "ns_per_load": median,
                "ns_per_load_min": min(values),
                "ns_per_load_max": max(values),
                "ticks_per_load": median * tick_hz / NS_PER_S if median and tick_hz else None,
                "loads": _median(loads.get((mode, size), [])),
                "anon_huge_kb": huge_kb.get(size),
            }
        )
    return {
        "tick_hz": tick_hz,
        "timer_overhead_ns": clock.get("timer_overhead_ns"),
        "configs": configs,
    }
