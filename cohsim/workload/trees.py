"""One container per process tree: a traced runtime's processes and threads as one sequence.

`cohsim replay` takes each traced thread for a container, which is right for a trace of many
containers' mount calls made by one thread each (a synthesised workload, a containerd strace
per container). A real `runc run` traced with `strace -f` starts one container through four
processes and their threads (`runc run`, `runc init` twice over, the container's init:
calibration/data/devvm-2cpu-amd-epyc-f25m1/runc-strace/README.md), which one after the other
make the mount calls of that one container. `by_process_tree` joins every thread the trace
saw created (clone, clone3, fork or vfork returning its id: `Trace.parents`) to the tree of the
thread that created it, and each tree whose threads made mount-relevant calls becomes one
thread of the new trace: its events in the order they started (ties by thread, then issue
order), under the tree root's id. The processes of one runtime run in sequence (each waits
for the next), so their calls are one sequence; the gaps between them stay the think times.
A tree whose threads really ran mount calls at the same time (a daemon serving many
containers) would be serialised: this grouping is for traces of one runtime start each.
"""

from __future__ import annotations

from cohsim.workload.trace import ThreadTrace, Trace


def roots(parents: tuple[tuple[int, int], ...]) -> dict[int, int]:
    """Each created thread's topmost ancestor in the trace (child -> root)."""
    parent = dict(parents)
    out: dict[int, int] = {}
    for child in parent:
        seen = {child}
        node = child
        while node in parent and parent[node] not in seen:  # a reused id cannot loop
            node = parent[node]
            seen.add(node)
        out[child] = node
    return out


def by_process_tree(trace: Trace) -> Trace:
    """`trace` with the threads of each process tree joined into one (see the module)."""
    top = roots(trace.parents)
    groups: dict[int, list[tuple[int, int, int]]] = {}  # root -> (start, tid, index)
    events = {t.tid: t.events for t in trace.threads}
    for t in trace.threads:
        root = top.get(t.tid, t.tid)
        groups.setdefault(root, []).extend((e.start_ns, t.tid, i) for i, e in enumerate(t.events))
    threads = tuple(
        ThreadTrace(root, tuple(events[tid][i] for _, tid, i in sorted(keys)))
        for root, keys in sorted(groups.items())
    )
    meta = (*trace.meta, ("containers_by", "process tree"))
    return Trace(threads, trace.source, trace.format, trace.unknown_skipped,
                 trace.malformed_skipped, meta, trace.parents)  # fmt: skip
