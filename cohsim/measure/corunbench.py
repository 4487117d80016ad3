"""`corun_bench`: how much slower CPU work runs while the machine's other CPUs work too.

On bare metal with SMT off independent loops on separate cores slow down by a few per cent at
most; with SMT on, a hardware thread whose sibling works shares the core's pipelines; on a VM
the vCPUs may be SMT siblings or share oversubscribed host cores, which the guest's topology
does not show. cohsim's machine files carry the measured ratio as `microarch.corun_slowdown`
(cohsim.machine.model) and the kernel model's prior `cpu.smt_slowdown` names this benchmark as
the measurement that pins it (models/kernel/linux-6.18.toml).

corun_bench (calibration/bench/corun_bench.c, its CSV documented in
calibration/bench/README.md) runs three loops (`alu`: independent multiply-add chains;
`chase`: a dependent walk over a 16 MiB random cycle; `sys`: `fstat()` of a private file) for a
fixed time on one CPU alone, then on N CPUs at once (default every CPU this process may run
on), alternating which goes first. This module names its columns, counts its runs and
summarises its rows: per loop the ratio together/alone of each repeat and their median, and the
median of every ratio, the figure a machine file carries.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

#: corun_bench writes pause_bench's columns (lock "none", placement "compact").
CORUN_COLUMNS = ("bench", "lock", "threads", "placement", "metric", "value", "unit", "repeat")
#: The last loop of each pass (progress is counted on it: twice a repeat, alone and together).
CORUN_DONE_METRIC = "sys_ns_per_iter"
#: The loops, in the program's order.
CORUN_LOOPS = ("alu", "chase", "sys")


def corun_expected_runs(repeats: int) -> int:
    """Rows of `CORUN_DONE_METRIC`: one alone and one together per repeat."""
    return 2 * repeats


def summarize_corun(rows: Sequence[Mapping[str, str]]) -> dict[str, Any]:
    """Per loop, ns per iteration alone and together (medians over the repeats) and the ratio
    together/alone of each repeat with its median; `corun_slowdown` is the median of every
    loop's every ratio (None without a complete repeat)."""
    ns: dict[tuple[str, int, bool], float] = {}
    together_threads = 0
    for r in rows:
        loop = r["metric"].removesuffix("_ns_per_iter")
        threads = int(r["threads"])
        ns[(loop, int(r["repeat"]), threads > 1)] = float(r["value"])
        together_threads = max(together_threads, threads)
    loops: dict[str, dict[str, Any]] = {}
    all_ratios: list[float] = []
    per: dict[str, list[int]] = defaultdict(list)
    for loop, repeat, _ in ns:
        if repeat not in per[loop]:
            per[loop].append(repeat)
    for loop in (lp for lp in CORUN_LOOPS if lp in per):
        reps = [k for k in sorted(per[loop]) if (loop, k, False) in ns and (loop, k, True) in ns]
        ratios = [ns[(loop, k, True)] / ns[(loop, k, False)] for k in reps]
        all_ratios += ratios
        loops[loop] = {
            "alone_ns_per_iter": _median([ns[(loop, k, False)] for k in reps]),
            "together_ns_per_iter": _median([ns[(loop, k, True)] for k in reps]),
            "ratios": [round(x, 4) for x in ratios],
            "ratio": _median(ratios),
        }
    return {
        "threads": together_threads,
        "corun_slowdown": _median(all_ratios),
        "loops": loops,
    }


def _median(values: Sequence[float]) -> float | None:
    return float(statistics.median(values)) if values else None
