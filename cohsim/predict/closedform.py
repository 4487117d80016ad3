"""The analytic engine's replicate: level 3 answered by the closed-form burst model.

`predict(..., engine="analytic")` runs each replicate through `cohsim.kernel.analytic.burstmodel`'s
`BurstModel` instead of the discrete-event simulation: the same task (machine, the
replicate's kernel parameters with its draw of the priors, the workload), the same kind of
run back (`cohsim.predict.runs.Run`), so the replicates, intervals, failures and report are
made exactly as for the simulation. It answers in milliseconds, for the workload a capacity
planner asks about: a burst of identical containers launched at once (`predict`, not a
replayed trace). docs/analytic.md has its equations and its measured agreement with the
simulation.

What the closed form reports differently, and says so in the prediction's `engine` block:

- the lock-wait fraction is the share of each container's launch spent waiting for the
  others: its launch in the burst less the same container's launch alone (the model run for
  one container), over its launch in the burst. The simulation counts its lock waits; this
  counts every wait the burst adds (for namespace_sem, mount_lock and for a CPU);
- the background readers (systemd's re-reads, probes) are not modelled: no `systemd`
  figures; of the path walkers only the node daemons' spinning (in the profile);
- the launch breakdown has namespace_sem's write holds by mechanism (what the waits waited
  for, and so the dominant holder), not the per-category split of each container's time;
- there is no timeline (`record`) to plot;
- the containers finish in turn, one gap apart (cohsim.kernel.analytic.spread), without the
  simulation's leaders that run ahead of the cohort from the start.
"""

from __future__ import annotations

from collections.abc import Sequence

from cohsim.kernel.analytic.burstmodel import BurstModel
from cohsim.kernel.analytic.estimate import engine_result
from cohsim.kernel.analytic.result import AnalyticResult
from cohsim.predict.breakdown import Breakdown, holds_by_mechanism
from cohsim.predict.runs import ReplicateTask, Run, run_of
from cohsim.units import NS_PER_S

#: what the analytic engine reports differently (the prediction's `engine` block)
NOTES = {
    "lock_wait_fraction": "each container's launch in the burst less its launch alone, over "
    "its launch in the burst (every wait the burst adds: locks and CPUs)",
    "spread": "the containers finish in turn, one gap apart, the gap the largest lock work of "
    "one container in a call the cohort queues at after its last read (cohsim.kernel.analytic."
    "spread); the simulation's leaders, which run ahead of the cohort from the start, are not "
    "modelled",
    "not_modelled": "background readers (systemd, probes); of the path walkers, all but the "
    "node daemons' spinning through mount_lock's write holds (profile); pcpu_alloc_mutex "
    "beyond the cohort's clones taking it one by one; the per-category launch breakdown; the "
    "lock timeline",
}


def analytic_replicates(tasks: Sequence[ReplicateTask]) -> list[Run]:
    """Replicates of one burst answered by the burst model, all at once: their models joined
    (`BurstModel.joined`: each replicate's numbers what its own model gives alone, to the
    bit), or one by one where their plans' calls differ."""
    models = [BurstModel(t.machine, t.kernel, t.trace, layers=t.layers) for t in tasks]
    try:
        joined = BurstModel.joined(models)
    except ValueError:
        return [
            _run(t, m.estimate(), m.alone_launch_ns()) for t, m in zip(tasks, models, strict=True)
        ]
    estimates, alone = joined.estimates(), joined.alone_launches_ns()
    return [_run(*each) for each in zip(tasks, estimates, alone, strict=True)]


def _run(task: ReplicateTask, res: AnalyticResult, alone_ns: float) -> Run:
    """The replicate's Run from its estimate `res` and one container's launch alone."""
    result = engine_result(res, alone_ns, task.machine.vcpus)
    breakdown = None
    if task.breakdown:
        breakdown = Breakdown(
            {},
            {},
            task.kernel.base_launch_ns / NS_PER_S,
            holds_by_mechanism(res.ns_write_by_op),
            attribution="analytic engine: namespace_sem's write holds by mechanism only",
        )
    return run_of(task, result, None, breakdown, res.ring_peak)
