"""How a plan's points are evaluated by default: the sweep engine, or predictions one by one.

`sweep_evaluator` hands each round's points to cohsim.sweep.run_points, which caches them on
disk by the digest of every input and gives them back in order. A plan asks for its points
in rounds (cohsim.plan.burst), a dozen calls where a sweep makes one; so that the rounds do not
each start a cluster, the evaluator starts one local Dask cluster, the first time a round has
more points than the sweep computes in-process, and sends every later round to it, closing it
when the plan is done. With `scheduler`, every round goes to that cluster instead; with
`workers=1`, every point runs in this process.

`sweep_evaluators` gives one such evaluator for each engine, on the same cluster: the
two-stage plan's screen (analytic) and confirmation (the simulation).

`predict_evaluator` runs `cohsim.predict.predict` on each point in turn, in this process:
what a direct prediction gives, with nothing in between (the tests compare the two).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import replace

from cohsim.machine.catalog import Catalog
from cohsim.plan.outcome import Evaluate, Outcome, Probe, from_prediction, from_row
from cohsim.predict import Prediction, RunOptions
from cohsim.predict.question import Burst, Target
from cohsim.sweep import SweepOptions, SweepPoint, run_points
from cohsim.sweep.runner import local_cluster
from cohsim.sweep.sweepoptions import SERIAL_POINTS


def predict_probe(
    probe: Probe,
    run: RunOptions,
    catalog: Catalog,
    *,
    target: Target | None = None,
    runtime: str = Burst.runtime,
) -> Prediction:
    """The direct prediction of one point, with `run`'s options, on `target` (the kernel
    model, calibration and pins; default `Target()`) with the point's machine."""
    return points_of([probe])[0].predict(catalog, run, target=target, runtime=runtime)


def predict_evaluator(
    run: RunOptions,
    catalog: Catalog | None = None,
    *,
    target: Target | None = None,
    runtime: str = Burst.runtime,
) -> Evaluate:
    """Each point a direct prediction with `run`'s options, one after another (the catalog
    read once); `target` and `runtime` as for `predict_probe`."""
    known = catalog or Catalog()

    def evaluate(probes: Sequence[Probe]) -> list[Outcome]:
        return [
            from_prediction(predict_probe(p, run, known, target=target, runtime=runtime))
            for p in probes
        ]

    return evaluate


def points_of(probes: Sequence[Probe]) -> list[SweepPoint]:
    """The sweep's point of each probe (its candidate's machine, variant and strategy)."""
    return [
        SweepPoint(
            p.candidate.instance,
            p.containers,
            p.layers,
            strategy=p.candidate.strategy,
            smt=p.candidate.smt,
            sockets=p.candidate.sockets,
        )
        for p in probes
    ]


#: an engine's name -> the evaluator of its points (`sweep_evaluators`)
Engines = Callable[[str], Evaluate]


@contextmanager
def sweep_evaluators(sweep: SweepOptions) -> Iterator[Engines]:
    """An evaluator for each engine (`sweep`'s other options), every round's points through
    the sweep engine, all the engines' rounds on one cluster for the whole plan."""
    with ExitStack() as stack:
        state = {"sweep": sweep}

        def evaluator(engine: str) -> Evaluate:
            def evaluate(probes: Sequence[Probe]) -> list[Outcome]:
                current = state["sweep"]
                if (
                    current.scheduler is None
                    and current.local_workers() > 1
                    and len(probes) > SERIAL_POINTS
                ):
                    address = stack.enter_context(_local_cluster(current.local_workers()))
                    current = state["sweep"] = replace(current, scheduler=address)
                run = replace(current, run=replace(current.run, engine=engine))
                return [from_row(r.to_dict()) for r in run_points(points_of(probes), run)]

            return evaluate

        yield evaluator


@contextmanager
def sweep_evaluator(sweep: SweepOptions) -> Iterator[Evaluate]:
    """Each round's points through the sweep engine with `sweep`'s engine, on one cluster."""
    with sweep_evaluators(sweep) as engines:
        yield engines(sweep.run.engine)


@contextmanager
def _local_cluster(workers: int) -> Iterator[str]:
    """A local Dask cluster of `workers` processes, one thread each: its scheduler's address.
    The sweep's (cohsim.sweep.runner.local_cluster): its workers ignore Ctrl-C, which a
    terminal sends to the whole process group, so that an interrupted plan says so in one line
    instead of every worker's traceback; this process closes them on its way out."""
    with local_cluster(workers) as cluster:
        yield str(cluster.scheduler_address)
