"""Container launch prediction (the product's headline): `predict` and `replay`.

`predict` synthesises containerd's mount sequences for a strategy (cohsim.workload.synth) and
gives the same sequence to every container, all launched at once (`burst_workload`); `replay`
parses a real strace/perf trace instead. The question is a `Burst` and what it runs on a
`Target` (cohsim.predict.question: every default of the question written there once); how
the replicates run is one `RunOptions` (cohsim.predict.options). Each is passed whole or as
keywords naming its fields. Both entry points run their workload on the target
(`cohsim.predict.target`) as replicates (`cohsim.predict.replicates`) and report a
`Prediction` whose statistics carry intervals (`cohsim.predict.intervals`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Unpack, cast

from cohsim.errors import CohsimError
from cohsim.machine.catalog import Catalog
from cohsim.predict.options import RunOptions, RunOverrides, check_seed, resolve_options
from cohsim.predict.pins import merge
from cohsim.predict.question import (
    Burst,
    BurstFields,
    Pins,
    Target,
    TargetFields,
    check_deadline,
    check_node_mounts,
    split,
)
from cohsim.predict.results import Prediction
from cohsim.predict.target import simulate
from cohsim.predict.validity import Validity, refuse_absurd
from cohsim.units import NS_PER_S, NS_PER_S_INT, S_PER_HOUR
from cohsim.workload.parse import parse_trace
from cohsim.workload.synth import synthesize
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


class PredictKeywords(BurstFields, TargetFields, RunOverrides, total=False):
    """`predict`'s keywords: fields of `Burst`, `Target` and `RunOptions`."""


class ReplayKeywords(TargetFields, RunOverrides, total=False):
    """`replay`'s keywords: fields of `Target` and `RunOptions`."""


def predict(
    burst: Burst | None = None,
    target: Target | None = None,
    *,
    options: RunOptions | None = None,
    catalog: Catalog | None = None,
    on_validity: Callable[[Validity], None] | None = None,
    **fields: Unpack[PredictKeywords],
) -> Prediction:
    """How long the burst's containers of an L-layer image take to start, launched at once,
    on the target (cohsim.predict.question: `Burst`, `Target`, every default written there).

    Keywords naming a field of the burst (containers, layers, strategy, runtime, node_mounts,
    deadline_s), of the target (instance, arch, smt, sockets, kernel, calibration, pins) or of
    the run options (seed, replicates, handoff_model, background, record, jobs, priors,
    explain, engine, progress) replace that field: `predict(arch="mesh", containers=20)` is
    `predict(Burst(containers=20), Target(arch="mesh"))`. `options` says how the replicates run
    (default `RunOptions()`).

    The burst's `node_mounts` and the target's `pins` set priors of the kernel model to given
    values (not drawn; an unknown name or an impossible value is a UsageError, a value
    outside the prior's range is said in `validity`: cohsim.predict.pins).

    Inputs beyond a real node (more than 100,000 containers, 500 layers, 100,000 node mounts,
    or a machine of more than 4,096 CPUs) are a CohsimError before any work; the prediction's
    `validity` says whether they lie inside the ranges the model was checked on
    (cohsim.predict.validity), and `on_validity`, if given, is called with it before the
    simulation starts. `catalog`: the machines (default the installed catalog)."""
    b_kw, t_kw, run = split(fields)
    b = replace(burst, **b_kw) if burst is not None else Burst(**b_kw)
    t = _target(target, t_kw)
    opts = resolve_options(options, cast(RunOverrides, run), b.deadline_s)
    if not t.machine_named:
        raise CohsimError(
            "say which machine: give exactly one of arch and instance (--arch, --instance)"
        )
    pins = pinned(b.node_mounts, t.pins)
    trace = burst_workload(b.strategy, b.containers, b.layers, seed=opts.seed, runtime=b.runtime)
    return simulate(
        t,
        trace,
        layers=b.layers,
        workload=b.workload(),
        options=opts,
        pins=pins,
        catalog=catalog,
        on_validity=on_validity,
    )


def replay(
    path: str,
    target: Target | None = None,
    *,
    layers: int | None = None,
    node_mounts: int | None = None,
    deadline_s: float | None = None,
    format: str = "auto",
    lenient: bool = False,
    by_process_tree: bool = False,
    options: RunOptions | None = None,
    catalog: Catalog | None = None,
    on_validity: Callable[[Validity], None] | None = None,
    **fields: Unpack[ReplayKeywords],
) -> Prediction:
    """A real strace/perf trace replayed on the target: every traced thread issues its
    syscalls, with its own think times; with `by_process_tree`, every process tree is one
    container (cohsim.workload.trees: a traced runtime's processes in sequence). The trace is
    the burst; of a `Burst`'s fields, the ones a trace does not show are given here: `layers`
    (None: inferred), `node_mounts`, `deadline_s` (None: `Burst`'s default). A trace that
    spans more than `MAX_REPLAY_SPAN_NS` is refused (`check_span`), with `lenient` too: a
    malformed line is skipped, a clock step is not a line.
    `options`, `catalog`, `on_validity` and the keywords (the target's and the run options'
    fields) as for `predict`."""
    _, t_kw, run = split(fields)
    t = _target(target, t_kw)
    deadline = Burst.deadline_s if deadline_s is None else deadline_s
    check_deadline(deadline)
    check_node_mounts(node_mounts)
    opts = resolve_options(options, cast(RunOverrides, run), deadline)
    pins = pinned(node_mounts, t.pins)
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
    return simulate(
        t,
        trace,
        layers=layers,
        workload=workload,
        options=opts,
        pins=pins,
        catalog=catalog,
        on_validity=on_validity,
    )


def _target(target: Target | None, keywords: dict[str, Any]) -> Target:
    """`target` (default `Target()`) with the fields named in `keywords` replaced."""
    if target is None:
        return Target(**keywords)
    return replace(target, **keywords) if keywords else target


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


def pinned(node_mounts: int | None, pins: Pins) -> dict[str, float]:
    """The priors the question pins: the node's mount table, if given, and the target's
    `pins` (the two agreeing where both name the mount table)."""
    if node_mounts is None:
        return dict(pins)
    return merge({"background.node_mounts": float(node_mounts)}, dict(pins))


def burst_workload(
    strategy: str, containers: int, layers: int, *, seed: int = 0, runtime: str = Burst.runtime
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
