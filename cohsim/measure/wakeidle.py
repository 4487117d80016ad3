"""`cohsim bench wake-idle`: the wake-up latency table by idle duration
(cohsim.kernel.waketable) measured from scheduler traces.

`calibration/bench/wake_trace.sh` records `sched_waking`, `sched_wakeup` and `sched_switch`
while mount_bench runs; `write_table` turns the traces into the table: every wake-up issued
on one CPU for a task whose target CPU was idle at that moment gives one sample (idle
duration = time since that CPU switched to its idle task; wake latency = from
`sched_waking` until the task is switched in). The traces are read with cohsim.measure.tracefs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from cohsim import provenance
from cohsim.errors import CohsimError
from cohsim.kernel.waketable import WakeTable, table_from_samples
from cohsim.measure import hostinfo, programs, tracefs
from cohsim.units import NS_PER_S

_SCHED = ("sched_switch", "sched_waking", "sched_wakeup")


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
    fields = tracefs.fields
    for _comm, _pid, cpu, _flags, t, name, rest, line in tracefs.events(lines):
        if name not in _SCHED:
            continue  # other events (syscalls, locks): not ours
        seen += 1
        if cpus is not None:
            cpus.add(cpu)
        f = fields(rest)
        try:
            if name == "sched_switch":
                nxt = int(f["next_pid"])
                if nxt == 0:
                    idle_since[cpu] = t
                else:
                    idle_since.pop(cpu, None)
                    w = pending.pop(nxt, None)
                    if w is not None and w[2] == cpu:
                        out.append((w[1] * NS_PER_S, (t - w[0]) * NS_PER_S))
            elif name == "sched_waking":
                pid, target = int(f["pid"]), int(f["target_cpu"])
                if target != cpu and target in idle_since:
                    pending[pid] = (t, t - idle_since[target], target)
                else:
                    pending.pop(pid, None)
        except (KeyError, ValueError):
            raise CohsimError(f"malformed {name} event", f"{where}:{line}") from None
    if not seen:
        raise CohsimError(
            "no sched_switch/sched_waking events: not an ftrace dump of the scheduler", where
        )
    return out


def read_trace(path: str, cpus: set[int] | None = None) -> list[tuple[float, float]]:
    """The samples of one trace file (plain text, gzip or xz)."""
    import lzma

    try:
        with tracefs.open_text(path) as f:
            return samples_from_trace(f, path, cpus)
    except (OSError, EOFError, UnicodeDecodeError, lzma.LZMAError) as exc:
        raise CohsimError(f"cannot read the trace: {exc}", path) from None


def write_table(
    traces: Sequence[str], out_dir: str, command: Sequence[str]
) -> tuple[WakeTable, Path]:
    """Build the table from `traces` and write DIR/wake_bench.csv and its sidecar (each file
    complete or absent). Returns the table and the CSV path."""
    samples: list[tuple[float, float]] = []
    seen: set[int] = set()
    for path in traces:
        samples.extend(read_trace(path, seen))
    table = table_from_samples(samples)
    cpus = max(seen) + 1  # the traced machine's CPUs (the `threads` column), not this one's
    cols = programs.WAKE_COLUMNS
    lines = [",".join(cols)] + [",".join(r[c] for c in cols) for r in table.rows(cpus)]
    text = "\n".join(lines) + "\n"
    out = programs.make_out_dir(out_dir)
    csv_path, sidecar_path = out / "wake_bench.csv", out / "wake_bench.json"
    sidecar = {
        "schema": programs.SCHEMA,
        "kind": programs.SIDECAR_KIND,
        "bench": "wake",
        "source": "scheduler tracepoints (cohsim.measure.wakeidle.samples_from_trace)",
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
    provenance.write_atomic(csv_path, text, make_dirs=False)
    provenance.write_atomic(sidecar_path, provenance.dumps(sidecar), make_dirs=False)
    return table, csv_path
