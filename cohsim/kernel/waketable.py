"""How long a task woken onto an idle CPU waits before it runs, as a function of how long that
CPU had been idle: measured from the kernel's scheduler tracepoints, not from a ping-pong.

Why a table and not one number: on a VM an idle vCPU has executed HLT; the hypervisor polls
for a while (KVM's halt polling) and then puts the vCPU thread to sleep, so a wake-up IPI to a
vCPU that idled briefly costs a few microseconds and one to a vCPU idle for long costs the host
scheduler's latency, tens of microseconds at the median with a tail into milliseconds. On bare
metal the same shape comes from C-state exit latencies. wake_bench's futex ping-pong keeps both
CPUs nearly busy, so it sees only the short-idle end (cohsim.measure.programs, `wake_ns`).

Measuring it: `calibration/bench/wake_trace.sh` records the scheduler tracepoints while
mount_bench runs, and `cohsim bench wake-idle TRACE... --out DIR` (cohsim.measure.wakeidle) turns
the traces into (idle_ns, wake_ns) samples and this table (`table_from_samples`). This module
only holds the table: building it from samples, drawing from it, and its CSV and JSON forms.

The table is stored as wake_bench rows (the tidy CSV): lock `sched-trace`, placement
`idle-LO-HI` (idle duration bin in ns, HI `inf` for the last), metric `qP` (the P quantile of
the wake latency in the bin, P in [0, 1]) or `samples`.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cohsim.errors import CohsimError

LOCK = "sched-trace"  #: the `lock` column of the table's rows
#: the `lock` column of wake-up pace rows: wake_bench --pace's, and those taken from a burst's
#: trace (one task waking the readers it granted namespace_sem; cohsim.calibrate.measured)
PACE_LOCK = "wake-q"
#: idle-duration bin edges (ns): halt polling ends after tens to hundreds of microseconds
EDGES_NS = (0, 10_000, 25_000, 50_000, 100_000, 200_000, 400_000, 1_000_000)
#: quantiles kept per bin: every percent, plus the tail
QUANTILES = tuple(i / 100 for i in range(100)) + (0.995, 0.999, 1.0)
MIN_SAMPLES = 5  #: a bin with fewer samples borrows the next lower populated bin's


@dataclass(frozen=True)
class WakeTable:
    """Per idle-duration bin (lower edges `edges_ns`), the wake latency's quantile function."""

    edges_ns: tuple[int, ...]
    quantiles: tuple[float, ...]
    values_ns: tuple[tuple[float, ...], ...]  #: per bin, one value per quantile
    samples: tuple[int, ...]  #: per bin, how many wake-ups were measured

    def _bin(self, idle_ns: float) -> int:
        return max(0, bisect.bisect_right(self.edges_ns, idle_ns) - 1)

    def draw(self, idle_ns: float, u: float) -> float:
        """The wake latency at quantile `u` (0 <= u < 1; linear between stored quantiles) for
        a CPU idle for `idle_ns`."""
        vals = self.values_ns[self._bin(idle_ns)]
        q = self.quantiles
        i = min(max(bisect.bisect_right(q, u) - 1, 0), len(q) - 2)
        f = (u - q[i]) / (q[i + 1] - q[i])
        return vals[i] + f * (vals[i + 1] - vals[i])

    def mean(self, idle_ns: float) -> float:
        """The mean of `draw` over u (trapezoids over the stored quantiles)."""
        vals, q = self.values_ns[self._bin(idle_ns)], self.quantiles
        return sum((q[i + 1] - q[i]) * (vals[i] + vals[i + 1]) / 2 for i in range(len(q) - 1))

    def to_doc(self) -> dict[str, Any]:
        """The table as JSON-able lists (a calibration fit's `wake_table` block)."""
        return {
            "edges_ns": list(self.edges_ns),
            "quantiles": list(self.quantiles),
            "values_ns": [list(v) for v in self.values_ns],
            "samples": list(self.samples),
        }

    @classmethod
    def from_doc(cls, doc: Any, where: str) -> WakeTable:
        """Read `to_doc`'s form back; a malformed block is a CohsimError naming `where`."""
        try:
            t = cls(
                tuple(int(e) for e in doc["edges_ns"]),
                tuple(float(q) for q in doc["quantiles"]),
                tuple(tuple(float(v) for v in vals) for vals in doc["values_ns"]),
                tuple(int(n) for n in doc["samples"]),
            )
        except (KeyError, TypeError, ValueError):
            raise CohsimError("wake_table is malformed", where) from None
        n, q = len(t.edges_ns), len(t.quantiles)
        if len(t.values_ns) != n or len(t.samples) != n or any(len(v) != q for v in t.values_ns):
            raise CohsimError("wake_table: bins and quantiles do not line up", where)
        return t

    def rows(self, cpus: int) -> list[dict[str, str]]:
        """The table as wake_bench CSV rows."""
        out = []
        for b, lo in enumerate(self.edges_ns):
            hi = self.edges_ns[b + 1] if b + 1 < len(self.edges_ns) else "inf"
            place = f"idle-{lo}-{hi}"
            base = {"bench": "wake", "lock": LOCK, "threads": str(cpus), "placement": place}
            out.append({**base, "metric": "samples", "value": str(self.samples[b]),
                        "unit": "count", "repeat": "0"})  # fmt: skip
            for q, v in zip(self.quantiles, self.values_ns[b], strict=True):
                out.append({**base, "metric": f"q{q:g}", "value": f"{v:.0f}", "unit": "ns",
                            "repeat": "0"})  # fmt: skip
        return out


def table_from_samples(samples: Iterable[tuple[float, float]]) -> WakeTable:
    """(idle_ns, wake_ns) samples -> the table. A bin with fewer than MIN_SAMPLES borrows the
    nearest lower populated bin's quantiles (its own count is still reported)."""
    bins: list[list[float]] = [[] for _ in EDGES_NS]
    for idle, wake in samples:
        bins[max(0, bisect.bisect_right(EDGES_NS, idle) - 1)].append(wake)
    if not any(len(b) >= MIN_SAMPLES for b in bins):
        raise CohsimError(f"fewer than {MIN_SAMPLES} wake-ups onto an idle CPU in the traces")
    values: list[tuple[float, ...]] = []
    for b in bins:
        if len(b) >= MIN_SAMPLES:
            values.append(tuple(float(v) for v in np.quantile(b, QUANTILES)))
        else:
            values.append(values[-1] if values else ())
    first = next(v for v in values if v)
    values = [v or first for v in values]
    return WakeTable(EDGES_NS, QUANTILES, tuple(values), tuple(len(b) for b in bins))


def table_from_rows(rows: Sequence[tuple[int, dict[str, str]]], where: str) -> WakeTable:
    """Read the table back from (line, row) pairs of a wake_bench CSV (lock `sched-trace`)."""
    bins: dict[int, dict[str, float]] = {}
    for line, row in rows:
        m = re.fullmatch(r"idle-(\d+)-(\d+|inf)", row["placement"])
        if not m:
            raise CohsimError(
                f"placement {row['placement']!r} is not idle-LO-HI", f"{where}:{line}"
            )
        metric = row["metric"]
        if metric != "samples" and not re.fullmatch(r"q(0|1|0?\.\d+)", metric):
            raise CohsimError(f"unknown metric {metric!r} (qP or samples)", f"{where}:{line}")
        try:
            value = float(row["value"])
        except ValueError:
            raise CohsimError(
                f"value {row['value']!r} is not a number", f"{where}:{line}"
            ) from None
        if not math.isfinite(value) or value < 0:
            raise CohsimError(f"value {row['value']!r} must be >= 0", f"{where}:{line}")
        bins.setdefault(int(m.group(1)), {})[metric] = value
    edges = tuple(sorted(bins))
    if not edges or edges[0] != 0:
        raise CohsimError("the idle-duration bins must start at 0", where)
    qkeys = sorted((k for k in bins[edges[0]] if k != "samples"), key=lambda k: float(k[1:]))
    quantiles = tuple(float(k[1:]) for k in qkeys)
    if len(quantiles) < 2 or quantiles[0] != 0 or quantiles[-1] != 1:
        raise CohsimError("each bin needs quantiles from q0 to q1", where)
    values = []
    for lo in edges:
        b = bins[lo]
        if sorted(k for k in b if k != "samples") != sorted(qkeys):
            raise CohsimError(f"bin idle-{lo} has different quantiles than the first", where)
        vals = tuple(b[k] for k in qkeys)
        if any(y < x for x, y in zip(vals, vals[1:], strict=False)):
            raise CohsimError(f"bin idle-{lo}: quantiles are not increasing", where)
        values.append(vals)
    samples = tuple(int(bins[lo].get("samples", 0)) for lo in edges)
    return WakeTable(edges, quantiles, tuple(values), samples)
