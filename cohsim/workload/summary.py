"""A trace summarised for people and for JSON (`cohsim trace parse`, `cohsim trace synth`)."""

from __future__ import annotations

from cohsim.workload.trace import Trace


def summarize(trace: Trace) -> dict[str, object]:
    """A JSON-ready summary: threads, syscalls per name, mount_ops, skips, span, durations.

    Duration statistics (per syscall name, ns; only for calls with a recorded duration) use
    order statistics so they are integers taken from the data: p50 is the lower median.
    """
    durations: dict[str, list[int]] = {}
    for e in trace.events:
        if e.duration_ns is not None:
            durations.setdefault(e.name, []).append(e.duration_ns)
    stats = {}
    for name in sorted(durations):
        d = sorted(durations[name])
        stats[name] = {
            "count": len(d),
            "min_ns": d[0],
            "p50_ns": d[(len(d) - 1) // 2],
            "p95_ns": d[min(len(d) - 1, (95 * len(d) - 1) // 100)],
            "mean_ns": sum(d) // len(d),
            "max_ns": d[-1],
            "total_ns": sum(d),
        }
    think = sorted(g for t in trace.threads for g in t.think_times_ns())
    return {
        "source": trace.source,
        "format": trace.format,
        "threads": len(trace.threads),
        "syscalls": trace.syscalls,
        "syscalls_by_name": trace.counts_by_name(),
        "mount_ops": trace.mount_ops,
        "unknown_skipped": trace.unknown_skipped,
        "malformed_skipped": trace.malformed_skipped,
        "span_ns": trace.span_ns,
        "duration_stats": stats,
        "think_ns_total": sum(think),
    }
