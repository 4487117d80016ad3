"""How long a task woken onto an idle CPU waits before it runs, as a function of how long that
CPU had been idle: measured from the kernel's scheduler tracepoints, not from a ping-pong.

Why a table and not one number: on a VM an idle vCPU has executed HLT; the hypervisor polls
for a while (KVM's halt polling) and then puts the vCPU thread to sleep, so a wake-up IPI to a
vCPU that idled briefly costs a few microseconds and one to a vCPU idle for long costs the host
scheduler's latency, tens of microseconds at the median with a tail into milliseconds. On bare
metal the same shape comes from C-state exit latencies. wake_bench's futex ping-pong keeps both
CPUs nearly busy, so it sees only the short-idle end (cohsim.bench.runner, `wake_ns`).

Measuring it: `calibration/bench/wake_trace.sh` records `sched_waking`, `sched_wakeup` and
`sched_switch` while mount_bench runs; `cohsim bench wake-idle TRACE... --out DIR` turns the
traces into this table (`samples_from_trace`): every wake-up issued on one CPU for a task whose
target CPU was idle at that moment gives one sample (idle duration = time since that CPU
switched to its idle task; wake latency = from `sched_waking` until the task is switched in).

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


# ------------------------------------------------------------------------ ftrace text

_EVENT = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+\.\d+):\s+(\w+):\s*(.*)$")
_FIELD = re.compile(r"(\w+)=(\S+)")


def samples_from_trace(
    lines: Iterable[str], where: str, cpus: set[int] | None = None
) -> list[tuple[float, float]]:
    """(idle_ns, wake_ns) of every wake-up onto an idle CPU in an ftrace text dump (the
    `trace` file) with sched_switch, sched_waking and sched_wakeup enabled; the CPU numbers
    seen are added to `cpus` when given."""
    idle_since: dict[int, float] = {}  # cpu -> when it switched to its idle task
    pending: dict[int, tuple[float, float, int]] = {}  # pid -> (waking time, idle, target)
    out: list[tuple[float, float]] = []
    seen = 0
    for n, line in enumerate(lines, start=1):
        if line.startswith("#") or not line.strip():
            continue
        m = _EVENT.match(line)
        if not m:
            continue  # other events (syscalls) have another layout: not ours
        cpu, t, name, rest = int(m.group(3)), float(m.group(4)), m.group(5), m.group(6)
        if name not in ("sched_switch", "sched_waking", "sched_wakeup"):
            continue
        seen += 1
        if cpus is not None:
            cpus.add(cpu)
        f = dict(_FIELD.findall(rest))
        try:
            if name == "sched_switch":
                nxt = int(f["next_pid"])
                if nxt == 0:
                    idle_since[cpu] = t
                else:
                    idle_since.pop(cpu, None)
                    w = pending.pop(nxt, None)
                    if w is not None and w[2] == cpu:
                        out.append((w[1] * 1e9, (t - w[0]) * 1e9))
            elif name == "sched_waking":
                pid, target = int(f["pid"]), int(f["target_cpu"])
                if target != cpu and target in idle_since:
                    pending[pid] = (t, t - idle_since[target], target)
                else:
                    pending.pop(pid, None)
        except (KeyError, ValueError):
            raise CohsimError(f"malformed {name} event", f"{where}:{n}") from None
    if not seen:
        raise CohsimError(
            "no sched_switch/sched_waking events: not an ftrace dump of the scheduler", where
        )
    return out


# ------------------------------------------------------------------------ the command


def read_trace(path: str, cpus: set[int] | None = None) -> list[tuple[float, float]]:
    """The samples of one trace file (plain text, gzip or xz)."""
    import gzip
    import lzma

    try:
        with open(path, "rb") as f:
            magic = f.read(6)
        opener: Any = open
        if magic[:2] == b"\x1f\x8b":
            opener = gzip.open
        elif magic == b"\xfd7zXZ\x00":
            opener = lzma.open
        with opener(path, "rt", encoding="utf-8") as f:
            return samples_from_trace(f, path, cpus)
    except FileNotFoundError:
        raise CohsimError("no such file", path) from None
    except (OSError, EOFError, UnicodeDecodeError, lzma.LZMAError) as exc:
        raise CohsimError(f"cannot read the trace: {exc}", path) from None


def write_table(
    traces: Sequence[str], out_dir: str, command: Sequence[str]
) -> tuple[WakeTable, Any]:
    """Build the table from `traces` and write DIR/wake_bench.csv and its sidecar (each file
    complete or absent). Returns the table and the CSV path."""
    from pathlib import Path

    from cohsim import provenance
    from cohsim.bench import hostinfo
    from cohsim.bench import runner as bench
    samples: list[tuple[float, float]] = []
    seen: set[int] = set()
    for path in traces:
        samples.extend(read_trace(path, seen))
    table = table_from_samples(samples)
    cpus = max(seen) + 1  # the traced machine's CPUs (the `threads` column), not this one's
    cols = bench.WAKE_COLUMNS
    lines = [",".join(cols)] + [",".join(r[c] for c in cols) for r in table.rows(cpus)]
    text = "\n".join(lines) + "\n"
    out = Path(out_dir)
    csv_path, sidecar_path = out / "wake_bench.csv", out / "wake_bench.json"
    sidecar = {
        "schema": bench.SCHEMA,
        "kind": "cohsim.bench.runner",
        "bench": "wake",
        "source": "scheduler tracepoints (cohsim.kernel.waketable.samples_from_trace)",
        "cohsim_command": list(command),
        "traces": {Path(p).name: provenance.file_digest(p) for p in traces},
        "samples": len(samples),
        "host": hostinfo.collect().to_json(),
        "csv": {
            "file": csv_path.name,
            "digest": provenance.text_digest(text),
            "rows": len(lines) - 1,
            "columns": list(cols),
        },  # fmt: skip
        "provenance": provenance.stamp(),
    }
    provenance.write_atomic(csv_path, text)
    provenance.write_atomic(sidecar_path, provenance.dumps(sidecar))
    return table, csv_path
