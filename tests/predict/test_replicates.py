"""Running the replicates: real traces on every interconnect, records, the same result
whichever way the options arrive."""

from __future__ import annotations

import pickle
import sys

from conftest import DATA

from cohsim.kernel.costs import load_kernel
from cohsim.kernel.linecosts import LineCosts
from cohsim.predict import RunOptions, burst_workload, resolve_machine, run_workload
from cohsim.predict.replicates import _one
from cohsim.predict.runs import ReplicateTask
from cohsim.units import NS_PER_S
from cohsim.workload.parse import parse_trace


def test_replay_of_a_real_mount_bench_trace(catalog):
    trace = parse_trace(
        DATA / "devvm-2cpu-intel-xeon-f6m167" / "strace" / "per-layer-2workers-3layers.strace"
    )
    machine, _ = resolve_machine(catalog, arch=None, instance="c5.metal")
    p = run_workload(machine, trace, kernel=load_kernel(), replicates=1, jobs=1)
    assert p.containers == len(trace.threads) and p.mount_ops == trace.mount_ops
    assert p.launch_s["max"].value > load_kernel().base_launch_ns / NS_PER_S


def test_reference_traces_replay_on_every_interconnect(catalog):
    ref = DATA / "reference" / "trace-format-examples"
    for f in sorted(ref.glob("*.txt")):
        trace = parse_trace(f)
        for name in ("m7i.metal-24xl", "m7a.24xlarge", "m7g.metal"):
            p = run_workload(catalog.get(name), trace, kernel=load_kernel(), replicates=1, jobs=1)
            assert p.syscalls == trace.syscalls


def test_only_replicate_zero_keeps_a_record_and_a_task_travels_to_a_worker(catalog):
    machine = catalog.get("m7a.24xlarge")
    trace = burst_workload("per-layer", 4, 2)
    options = RunOptions(replicates=2, jobs=1, record=True)
    p = run_workload(machine, trace, kernel=load_kernel(), options=options, layers=2)
    assert p.record is not None and p.replicates == 2
    costs = LineCosts(machine, model="des", seed=0)
    costs.prefill()
    task = ReplicateTask(machine, load_kernel(), trace, costs, 7, 2, True, False, 30.0)
    run = _one(pickle.loads(pickle.dumps(task)))
    assert run.record is None and len(run.launch_s) == 4


def test_progress_is_a_bar_on_stderr_over_the_simulations(catalog, monkeypatch):
    """A long replay shows its progress (issue 30): with `progress`, a tqdm bar on stderr, shown
    only on a terminal (disable=None) and after a second (short runs stay quiet)."""
    bars: list[dict[str, object]] = []

    class Bar:
        def __init__(self, runs, **kw):
            self.runs = runs
            bars.append(kw)

        def __iter__(self):
            return iter(self.runs)

    monkeypatch.setattr("tqdm.tqdm", Bar)
    machine = catalog.get("m7a.24xlarge")
    trace = burst_workload("per-layer", 2, 2)
    for progress in (False, True):
        run_workload(machine, trace, kernel=load_kernel(), replicates=2, jobs=1, progress=progress)
    assert len(bars) == 1
    assert {k: bars[0][k] for k in ("total", "file", "disable", "delay")} == {
        "total": 2, "file": sys.stderr, "disable": None, "delay": 1.0,
    }  # fmt: skip
