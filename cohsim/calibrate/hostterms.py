"""A host's mount_bench terms, measured not fitted, and how a calibration simulates a run with them.

Two things about a mount_bench run are measured, not fitted, per (strategy, layers) from the
1-worker runs (`measure_bench_terms`): mount_bench's own user-space time between calls
(`think_ns`: the median 1-worker sequence time the kernel model leaves unexplained, spread over
the sequence's calls) and how much each timed op's mean exceeds the model's p50-based total
(`op_extra_ns`, added to the op's own work by `cohsim.calibrate.mountreplay.with_op_extra`).

`BenchSim` holds them with the rest of what a fit's simulation of a run needs (the machine,
its line costs, the containers per worker and the seeds) and runs a shape averaged over a seed
set: every candidate parameter set is simulated with the same seeds (common random numbers).
`bench_of` is a finished fit's (`FitResult`: its measured terms and settings), and
`predict_run` a mount_bench run predicted from the fit, with an interval (the held-out
checks, cohsim.calibrate.heldout).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from cohsim.calibrate.fitjson import round_sig
from cohsim.calibrate.fitresult import FitResult
from cohsim.calibrate.measuredruns import MountRun, group_runs
from cohsim.calibrate.mountreplay import SimRun, bench_kernel, simulate_run, with_op_extra
from cohsim.errors import CohsimError
from cohsim.kernel.costs import KernelParams
from cohsim.kernel.linecosts import LineCosts
from cohsim.machine.catalog import Catalog
from cohsim.machine.model import Machine

#: seed set r simulates with seeds seed + r * this + j (far from the fit's own seed + j)
SEED_SET_STRIDE = 7919

#: strategy -> str(layers) -> mount_bench's own time per call, ns
ThinkNs = Mapping[str, Mapping[str, float]]
#: strategy -> str(layers) -> op -> how much its 1-worker mean exceeds the model's total, ns
OpExtraNs = Mapping[str, Mapping[str, Mapping[str, float]]]


def seed_set(seed: int, seeds: int, workers: int, rep: int = 0) -> list[int]:
    """Seed set `rep`'s seeds for a run with `workers` workers (0: the fit's own): one at 1
    worker, where there is no interleaving to average over, else `seeds`."""
    n = seeds if workers > 1 else 1
    return [seed + SEED_SET_STRIDE * rep + j for j in range(n)]


def fit_bench_kernel(
    kernel: KernelParams, op_extra_ns: OpExtraNs, strategy: str, layers: int
) -> KernelParams:
    """`kernel` as a fit simulates mount_bench with it: no runtime or node daemons
    (`bench_kernel`) and each op's measured 1-worker excess (`op_extra_ns`) added."""
    extra = op_extra_ns.get(strategy, {}).get(str(layers), {})
    return with_op_extra(bench_kernel(kernel), dict(extra), layers)


@dataclass(frozen=True)
class BenchSim:
    """A fit's settings for simulating mount_bench runs on `machine`."""

    machine: Machine
    costs: LineCosts
    think_ns: ThinkNs
    op_extra_ns: OpExtraNs
    containers: int  #: containers per worker, unless a run asks for others
    seed: int  #: the fit's seed: seed set 0 starts there
    seeds: int  #: simulations (common random numbers) averaged per 2+-worker run

    def seed_set(self, workers: int, rep: int = 0) -> list[int]:
        """Seed set `rep` for a run with `workers` workers (`seed_set`)."""
        return seed_set(self.seed, self.seeds, workers, rep)

    def run(
        self,
        kernel: KernelParams,
        strategy: str,
        workers: int,
        layers: int,
        baseline_mounts: int,
        containers: int | None = None,
        seeds: Sequence[int] | None = None,
        mountinfo_sample: bool = True,
    ) -> SimRun:
        """A mount_bench run with the fit's think and op terms, averaged over `seeds` (common
        random numbers: the same seeds for every candidate; one run at 1 worker, where there
        is no interleaving to average over). `mountinfo_sample`: False for a run made with
        `--mountinfo-every 0` (`MountRun.sampled`)."""
        think = self.think_ns[strategy][str(layers)]
        k = fit_bench_kernel(kernel, self.op_extra_ns, strategy, layers)
        if seeds is None:
            seeds = self.seed_set(workers)
        sims = [
            simulate_run(
                self.machine,
                k,
                strategy,
                workers,
                layers,
                containers=containers or self.containers,
                think_ns=think,
                seed=s,
                costs=self.costs,
                baseline_mounts=baseline_mounts,
                jitter=True,
                mountinfo_sample=mountinfo_sample,
            )
            for s in seeds
        ]
        ops = sorted(set.intersection(*(set(x.op_means) for x in sims)))
        return SimRun(
            statistics.fmean(x.stride_ns for x in sims),
            statistics.fmean(x.containers_per_s for x in sims),
            {op: statistics.fmean(x.op_means[op] for x in sims) for op in ops},
            {op: statistics.fmean(x.op_calls[op] for x in sims) for op in ops},
        )


def _shape_terms(
    machine: Machine,
    kernel: KernelParams,
    costs: LineCosts,
    group: Sequence[MountRun],
    containers: int,
    seed: int,
) -> tuple[float, dict[str, float]]:
    """One 1-worker shape's think time per call and op excesses (`measure_bench_terms`)."""
    strategy, layers = group[0].strategy, group[0].layers
    think = max(0.0, statistics.median(r.user_ns for r in group))

    def one(k: KernelParams) -> SimRun:
        return simulate_run(
            machine,
            k,
            strategy,
            1,
            layers,
            containers=containers,
            think_ns=think,
            seed=seed,
            costs=costs,
            baseline_mounts=group[0].baseline_mounts,
        )

    sim = one(kernel)
    extra = {
        op: statistics.median(r.op_means[op] for r in group) - sim.op_means[op]
        for op in sorted(group[0].op_means)
        if op in sim.op_means and all(op in r.op_means for r in group)
    }
    sim = one(with_op_extra(kernel, extra, layers))
    opens = sim.op_calls.get("mountinfo_open", 0.0)
    if opens:
        measured = statistics.median(r.stride_ns for r in group)
        extra["mountinfo_open"] = (measured - sim.stride_ns) / opens
    return think, extra


def measure_bench_terms(
    machine: Machine,
    base: KernelParams,
    costs: LineCosts,
    runs: Sequence[MountRun],
    containers: int,
    seed: int,
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, dict[str, float]]]]:
    """Per (strategy, layers), from the 1-worker runs: mount_bench's own time per call
    (`think_ns`, measured directly: sequence wall time minus the timed calls) and how much
    each timed op's mean exceeds the model's p50-based total (`op_extra_ns`); the mountinfo
    sample (timed as a whole) puts its difference on its one untimed call, the open. Both
    rounded as the fit JSON keeps them."""
    k0 = bench_kernel(base)
    think_ns: dict[str, dict[str, float]] = {}
    op_extra_ns: dict[str, dict[str, dict[str, float]]] = {}
    for (strategy, workers, layers), group in group_runs(runs).items():
        if workers != 1:
            continue
        think, extra = _shape_terms(machine, k0, costs, group, containers, seed)
        think_ns.setdefault(strategy, {})[str(layers)] = round_sig(think)
        op_extra_ns.setdefault(strategy, {})[str(layers)] = {
            op: round_sig(v) for op, v in sorted(extra.items())
        }
    for r in runs:
        if str(r.layers) not in think_ns.get(r.strategy, {}):
            raise CohsimError(
                f"no 1-worker run of {r.strategy} at {r.layers} layers: "
                f"mount_bench's own time per call cannot be measured"
            )
    return think_ns, op_extra_ns


def bench_of(fit: FitResult, machine: Machine, costs: LineCosts | None = None) -> BenchSim:
    """How `fit` simulates mount_bench runs on `machine`: with the terms it measured on its
    host and its settings' containers per worker and seeds (`costs`: the machine's line
    costs at the fit's seed, made if not given)."""
    s = fit.settings
    costs = costs or LineCosts(machine, seed=s.seed)
    return BenchSim(machine, costs, fit.think_ns, fit.op_extra_ns, s.containers, s.seed, s.seeds)


def predict_run(
    fit: FitResult,
    strategy: str,
    workers: int,
    layers: int,
    *,
    samples: int = 8,
    containers: int | None = None,
    level: float = 0.9,
    seed: int = 0,
    baseline_mounts: int = 21,
    mountinfo_sample: bool = True,
    machine: Machine | None = None,
) -> dict[str, dict[str, float]]:
    """A mount_bench run predicted from `fit`: worker time per sequence (ns) and
    containers/s, each {value, low, high} (`mountinfo_sample`: False for a
    `--mountinfo-every 0` run). `machine`: simulate there, not on the fitted instance (e.g.
    it confined to fewer CPUs). value: at the fitted parameters (the fit's seeds averaged).
    The interval is for one run (central `level` fraction, lognormal): the spread of
    `samples` parameter draws (each with its own seed) and the fit's residual scatter of
    that metric (log residuals' root mean square), added in quadrature."""
    if str(layers) not in fit.think_ns.get(strategy, {}):
        raise CohsimError(
            f"no measured think time for {strategy} at {layers} layers "
            f"(the fit saw no 1-worker run of it)"
        )
    bench = bench_of(fit, machine or Catalog().get(fit.instance))
    base = fit.base_kernel()

    def run(kernel: KernelParams, seeds: list[int] | None = None) -> SimRun:
        shape = (strategy, workers, layers, baseline_mounts, containers, seeds)
        return bench.run(kernel, *shape, mountinfo_sample=mountinfo_sample)

    point = run(fit.host_kernel(fit.kernel_params(base)))
    draws = [
        run(k, seeds=[seed + 1000 + j])
        for j, k in enumerate(fit.host_kernel(d) for d in fit.sample_kernels(base, samples, seed))
    ]
    z = float(statistics.NormalDist().inv_cdf(0.5 + level / 2))
    out = {}
    for name in ("stride_ns", "containers_per_s"):
        v = float(getattr(point, name))
        logs = np.log([getattr(d, name) / v for d in draws])
        spread = float(np.sqrt(np.mean(logs**2))) if len(logs) else 0.0
        half = z * math.hypot(spread, fit.misfit_sd(name))
        out[name] = {"value": v, "low": v * math.exp(-half), "high": v * math.exp(half)}
    return out
