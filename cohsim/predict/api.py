"""Container launch prediction (the product's headline): `predict` and `replay`.

`predict` synthesises containerd's mount sequences for a strategy (cohsim.workload.synth) and
gives the same sequence to every container, all launched at once (`burst_workload`); `replay`
parses a real strace/perf trace instead. Both run their workload on a target (machine, kernel,
calibration: `cohsim.predict.target`) as replicates (`cohsim.predict.replicates`) and report a
`Prediction` whose statistics carry intervals (`cohsim.predict.intervals`). How the replicates
run is one `RunOptions` (`cohsim.predict.options`), passed whole or as keywords.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Unpack

from cohsim.errors import CohsimError
from cohsim.machine.catalog import Catalog
from cohsim.predict.options import RunOptions, RunOverrides, check_seed, resolve_options
from cohsim.predict.pins import merge
from cohsim.predict.results import Prediction
from cohsim.predict.target import Target
from cohsim.predict.validity import Validity, refuse_absurd
from cohsim.units import NS_PER_S, NS_PER_S_INT, S_PER_HOUR
from cohsim.workload.parse import parse_trace
from cohsim.workload.synth import STRATEGIES, synthesize
from cohsim.workload.trace import ThreadTrace, Trace, longest_stretch
from cohsim.workload.trees import by_process_tree as by_process_tree_of

#: The longest trace `replay` simulates: one hour. A launch burst, what replay models, lasts
#: seconds to minutes (an hour is 120 times the default deadline of 30 s). The simulation's
#: background (systemd, the probes, the path walkers) runs for the whole span, so a replay's
#: work grows with it, and with the priors a replicate draws: 0.04 to 9 ms per simulated
#: second on a shared 2-CPU VM (a 1-hour trace: 0.1 to 31 s a replicate), so a day could take
#: 12 minutes a replicate, and the 2.5e9 s that one bad -ttt timestamp makes, centuries. A
#: longer trace is a clock step or traces joined, not one burst: it is refused, naming the
#: call where the clock steps, rather than cut short in silence (leaving out a gap would
#: change the launch times, which include it).
MAX_REPLAY_SPAN_NS = S_PER_HOUR * NS_PER_S_INT


def predict(
    *,
    arch: str | None = None,
    instance: str | None = None,
    containers: int = 100,
    layers: int = 50,
    strategy: str = "per-layer",
    smt: bool = True,
    sockets: int | None = None,
    kernel: str | None = None,
    calibration: str | None = None,
    catalog: Catalog | None = None,
    node_mounts: int | None = None,
    pins: Mapping[str, float] | None = None,
    runtime: str = "runc",
    options: RunOptions | None = None,
    on_validity: Callable[[Validity], None] | None = None,
    **run: Unpack[RunOverrides],
) -> Prediction:
    """How long `containers` containers of an L-layer image take to start, launched at once.

    `runtime`: the container runtime's own mount calls after containerd's ("runc":
    cohsim.workload.runtime; "none": containerd's only).

    `node_mounts`: the mounts on the node before the burst, if known (it pins that prior of
    the kernel model; by default it is drawn from its range). `pins`: any of the kernel
    model's priors set to given values ({"propagation.service_namespaces": 12}; not drawn;
    an unknown name or an impossible value is a UsageError, a value outside the prior's range
    is said in `validity`: cohsim.predict.pins). `options` says how the
    replicates run (default `RunOptions()`); keywords naming its fields (seed, replicates,
    deadline_s, handoff_model, background, record, jobs, priors, explain) replace them.

    Inputs beyond a real node (more than 100,000 containers, 500 layers, 100,000 node mounts,
    or a machine of more than 4,096 CPUs) are a CohsimError before any work; the prediction's
    `validity` says whether they lie inside the ranges the model was checked on
    (cohsim.predict.validity), and `on_validity`, if given, is called with it before the
    simulation starts."""
    opts = resolve_options(options, run)
    if strategy not in STRATEGIES:
        raise CohsimError(f"unknown strategy {strategy!r} (expected {', '.join(STRATEGIES)})")
    if containers < 1 or layers < 1:
        raise CohsimError("containers and layers must be at least 1")
    pinned = _pins(node_mounts, pins)
    refuse_absurd(containers=containers, layers=layers, node_mounts=node_mounts)
    trace = burst_workload(strategy, containers, layers, seed=opts.seed, runtime=runtime)
    target = Target(arch, instance, smt, sockets, kernel, calibration, catalog, pinned, on_validity)
    workload = {"strategy": strategy, "arrival": "all at once", "runtime": runtime}
    return target.simulate(trace, layers=layers, workload=workload, options=opts)


def replay(
    path: str,
    *,
    arch: str | None = None,
    instance: str | None = None,
    smt: bool = True,
    sockets: int | None = None,
    kernel: str | None = None,
    calibration: str | None = None,
    catalog: Catalog | None = None,
    format: str = "auto",
    lenient: bool = False,
    by_process_tree: bool = False,
    layers: int | None = None,
    node_mounts: int | None = None,
    pins: Mapping[str, float] | None = None,
    options: RunOptions | None = None,
    on_validity: Callable[[Validity], None] | None = None,
    **run: Unpack[RunOverrides],
) -> Prediction:
    """A real strace/perf trace replayed on a machine model: every traced thread issues its
    syscalls, with its own think times; with `by_process_tree`, every process tree is one
    container (cohsim.workload.trees: a traced runtime's processes in sequence). A trace that
    spans more than `MAX_REPLAY_SPAN_NS` is refused (`check_span`), with `lenient` too: a
    malformed line is skipped, a clock step is not a line.
    `node_mounts`, `pins`, `options`, `on_validity` and `run` as for `predict`."""
    opts = resolve_options(options, run)
    pinned = _pins(node_mounts, pins)
    refuse_absurd(layers=layers, node_mounts=node_mounts)
    trace = parse_trace(path, format=format, lenient=lenient)
    check_span(trace, path)
    if by_process_tree:
        trace = by_process_tree_of(trace)
    if not trace.threads:
        raise CohsimError("the trace has no mount-related syscalls to replay", path)
    workload = {
        "trace": Path(path).name,
        "format": trace.format,
        "unknown_skipped": trace.unknown_skipped,
        "malformed_skipped": trace.malformed_skipped,
        "containers_by": "process tree" if by_process_tree else "thread",
    }
    target = Target(arch, instance, smt, sockets, kernel, calibration, catalog, pinned, on_validity)
    return target.simulate(trace, layers=layers, workload=workload, options=opts)


def check_span(trace: Trace, path: str) -> None:
    """A CohsimError naming the call where `trace`'s clock steps (the longest gap or call),
    if it spans more than `MAX_REPLAY_SPAN_NS`."""
    if trace.span_ns <= MAX_REPLAY_SPAN_NS:
        return
    s = longest_stretch(trace)
    assert s is not None  # a span means calls
    e = s.event
    what = f"starts {_s(s.ns)} after the calls before it ended" if s.gap else f"lasts {_s(s.ns)}"
    raise CohsimError(
        f"the trace spans {_s(trace.span_ns)}, more than the hour replay simulates: {e.name} "
        f"(thread {e.tid}) {what} (a clock step, or traces joined? cut the trace there)",
        f"{path}:{e.line}" if e.line else path,
    )


def _s(ns: int) -> str:
    return f"{ns / NS_PER_S:.4g} s"


def _pins(node_mounts: int | None, pins: Mapping[str, float] | None) -> dict[str, float]:
    """The priors the caller's arguments pin: the node's mount table, if given, and `pins`
    (the two agreeing where both name the mount table)."""
    if node_mounts is None:
        return dict(pins or {})
    if isinstance(node_mounts, bool) or not isinstance(node_mounts, int) or node_mounts < 0:
        raise CohsimError(f"node_mounts must be a non-negative integer, not {node_mounts!r}")
    return merge({"background.node_mounts": float(node_mounts)}, pins or {})


def burst_workload(
    strategy: str, containers: int, layers: int, *, seed: int = 0, runtime: str = "runc"
) -> Trace:
    """`containers` containers launched at once: containerd's sequence for one container (and
    its runtime's), synthesised once and given to every container's thread. Same syscalls,
    flags and counts as `synthesize(strategy, containers, layers, runtime=runtime)`; only the
    (cost-free) path names repeat, which keeps a 1,000-container prediction from spending
    seconds writing paths."""
    one = _one_container(strategy, layers, check_seed(seed), runtime)
    events = one.threads[0].events
    first = one.threads[0].tid
    threads = tuple(ThreadTrace(first + k, events) for k in range(containers))
    return Trace(
        threads=threads,
        source=f"synth:{strategy}:{containers}x{layers}",
        format="synth",
        meta=one.meta,
    )


@functools.lru_cache(maxsize=64)
def _one_container(strategy: str, layers: int, seed: int, runtime: str) -> Trace:
    """One container's synthesised sequence, made once per process for each set of inputs
    (a Trace is frozen: every burst of it shares it)."""
    return synthesize(strategy, 1, layers, seed=seed, runtime=runtime)
