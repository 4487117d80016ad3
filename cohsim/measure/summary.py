"""Headline figures of every benchmark's rows: `summarize(bench, rows)`, what `cohsim bench`
prints and puts under ``summary`` in its ``--json`` document.

pause_bench's, mount_bench's and wake_bench's summaries are here; the other benchmarks' live
beside their columns (`cohsim.measure.nsbench`, `propbench`, `walkbench`, `chasebench`,
`corunbench`) and this module dispatches to them. Each gives, per configuration, the median
over the repeats of its key metrics.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from cohsim.kernel.waketable import PACE_LOCK
from cohsim.measure.chasebench import summarize_chase
from cohsim.measure.corunbench import summarize_corun
from cohsim.measure.nsbench import summarize_ns
from cohsim.measure.propbench import summarize_prop
from cohsim.measure.walkbench import summarize_walk


def _median(values: list[float]) -> float:
    return float(statistics.median(values))


def summarize(bench: str, rows: Sequence[Mapping[str, str]]) -> dict[str, Any]:
    """Headline figures: the median over repeats of each configuration's key metrics."""
    if bench == "wake":
        return _summarize_wake(rows)
    if bench == "ns":
        return summarize_ns(rows)
    if bench == "prop":
        return summarize_prop(rows)
    if bench == "walk":
        return summarize_walk(rows)
    if bench == "chase":
        return summarize_chase(rows)
    if bench == "corun":
        return summarize_corun(rows)
    groups: dict[tuple[str, ...], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    if bench == "pause":
        for r in rows:
            groups[(r["lock"], r["threads"], r["placement"])][r["metric"]].append(float(r["value"]))
        pause = groups.pop(next((k for k in groups if k[0] == "none"), ("none", "1", "")), {})
        configs = [
            {
                "lock": k[0],
                "threads": int(k[1]),
                "placement": k[2],
                **{
                    m: _median(v)
                    for m, v in sorted(g.items())
                    if m in ("p50_ns", "p99_ns", "mean_ns", "acquisitions_per_s")
                },
            }
            for k, g in sorted(groups.items(), key=lambda kv: (kv[0][0], int(kv[0][1])))
        ]
        return {
            "pause_ns": _median(pause["pause_ns"]) if pause.get("pause_ns") else None,
            "configs": configs,
        }
    per_syscall: dict[tuple[str, ...], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for r in rows:
        key = (r["strategy"], r["workers"], r["layers"])
        if r["syscall"] in ("sequence", "container", "run", "mount_table"):
            groups[key][f"{r['syscall']}.{r['metric']}"].append(float(r["value"]))
        elif r["metric"] == "p50_ns":
            per_syscall[key][r["syscall"]].append(float(r["value"]))
    configs = []
    for cfg in sorted(groups, key=lambda k: (k[0], int(k[1]), int(k[2]))):
        g = groups[cfg]
        configs.append(
            {
                "strategy": cfg[0],
                "workers": int(cfg[1]),
                "layers": int(cfg[2]),
                "sequence_p50_ns": _median(g["sequence.p50_ns"]),
                "container_p50_ns": _median(g["container.p50_ns"]),
                "mount_ops_per_s": _median(g["run.mount_ops_per_s"]),
                "containers_per_s": _median(g["run.containers_per_s"]),
                "mount_table_peak": max(
                    g.get("mount_table.peak_from_calls") or g["mount_table.peak"]
                ),
                "syscall_p50_ns": {s: _median(v) for s, v in sorted(per_syscall[cfg].items())},
            }
        )
    return {"configs": configs}


def _summarize_pace(rows: Sequence[Mapping[str, str]]) -> dict[str, Any]:
    """wake_bench --pace: per sleeper count, the medians over repeats of the waker's time a
    wake-up (step), the sleepers' running one after another (spread) and the first's delay."""
    per: dict[tuple[int, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        per[(int(r["threads"]), r["placement"])][r["metric"]].append(float(r["value"]))
    pace = [
        {
            "sleepers": n,
            "placement": placement,
            **{m: _median(v) for m, v in sorted(metrics.items()) if m != "samples"},
        }
        for (n, placement), metrics in sorted(per.items())
    ]
    return {"pace": pace}


def _summarize_wake(rows: Sequence[Mapping[str, str]]) -> dict[str, Any]:
    """wake_ns and the two round-trip p50s per repeat, and their medians over repeats."""
    if rows and rows[0]["lock"] == PACE_LOCK:
        return _summarize_pace(rows)
    # (placement, metric) -> summary name
    names = {
        ("derived", "wake_ns"): "wake_ns",
        ("same-cpu", "p50_ns"): "same_p50_ns",
        ("cross-cpu", "p50_ns"): "cross_p50_ns",
    }
    per: dict[int, dict[str, float]] = defaultdict(dict)
    for r in rows:
        name = names.get((r["placement"], r["metric"]))
        if name is not None:
            per[int(r["repeat"])][name] = float(r["value"])
    repeats = [{"repeat": k, **v} for k, v in sorted(per.items()) if len(v) == len(names)]
    return {
        **{
            name: _median([r[name] for r in repeats]) if repeats else None
            for name in names.values()
        },
        "repeats": repeats,
    }
