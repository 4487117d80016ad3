"""Does the level-3 model predict 8-16-way contention and 100-200-worker bursts on the 16-vCPU
host? (the figures in calibration/data/devvm-16cpu-intel-xeon-f6m207/README.md, "What the model
predicts here").

    python -m calibration.reports.many_core [--fit PATH | --refit OUT] [--transfer] [--ops]
        [--groups mount,burst,no-reads|none] [--samples N] [--containers N] [--cpus]

Within the host: a fit of this host's own 1-2 worker mount_bench runs (all three sittings),
pause, wake and wake-idle data (`--refit OUT` makes it anew, about 7 min on 2 CPUs, and writes
it; by default the committed calibration/fits/devvm-16cpu-intel-xeon-f6m207.json) predicts the
runs it never saw: the 4, 8 and 16-worker shapes of the sittings (`mount`), the bursts of 16 to
200 one-container workers (`burst`), and the same bursts without mount_bench's mountinfo count
(`no-reads`), each simulated as it was run (`cohsim.calibrate.check_runs`). `--transfer`: the
same with the committed 2-vCPU fit's kernel parameters on this host's machine, bench terms and
wake-up latency (`cohsim.calibrate.transfer_kernel`).

Per shape: the measured median worker time per sequence over the runs, the prediction,
predicted / measured - 1, how many runs the 90 % interval covers, and the containers/s error
(about 8 min a fit for the three groups on 2 CPUs). `--ops`: each op's mean call time at the
traced shape (16 workers x 10 layers, mount-trace/run-*), measured and simulated, first.
`--cpus`: the bursts run with `taskset -c 0-(N-1)` (burst/cpus/N-cpus, N = 2, 4, 8, 16), each
simulated as it was run on the host's machine confined to N CPUs (`Machine.with_cores`), and
the time at 2 CPUs over the time at 16, measured and predicted (about 2 min a fit on 2 CPUs
at --samples 6).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from cohsim.calibrate import (
    BenchData,
    Calibration,
    Checked,
    FitResult,
    MountRun,
    check_runs,
    fit_bench_kernel,
    load_bench,
    load_fit,
    simulate_run,
    transfer_kernel,
)
from cohsim.kernel.linecosts import LineCosts
from cohsim.machine.catalog import Catalog
from cohsim.workload.synth import STRATEGIES

HOST = "devvm-16cpu-intel-xeon-f6m207"
REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "calibration" / "data" / HOST
FITS = REPO / "calibration" / "fits"
COMMITTED = FITS / f"{HOST}.json"
TWO_CPU = FITS / "devvm-2cpu-intel-xeon-f6m167.json"
SITTINGS = [DATA / "mount" / f"sitting-{i}" for i in (1, 2, 3)]
#: the runs each group predicts: (folders, worker counts kept)
GROUPS: dict[str, tuple[list[Path], tuple[int, ...] | None]] = {
    "mount": (SITTINGS, (4, 8, 16)),
    "burst": ([DATA / "burst" / "16-100-workers", DATA / "burst" / "100-200-workers"], None),
    "no-reads": ([DATA / "burst" / "no-mountinfo-reads"], None),
}
#: the CPUs the burst/cpus runs were confined to (taskset -c 0-(N-1); folder N-cpus)
CPUS = (2, 4, 8, 16)


def fit_data() -> BenchData:
    """What the within-host fit sees: the 1-2 worker runs of the three sittings, with the
    host's pause_bench, wake_bench, wake-up table, walk_bench beside one mounter (the grace
    period's part per busy CPU) and its wake-up pace (a unit cost: how far apart one releaser
    wakes the readers it granted namespace_sem, not a burst's time), measured untraced onto
    idle and onto busy vCPUs (`wake-pace/`, `wake-pace/busy/`; a burst's readers find both, 38 %
    busy in a traced one): the traced bursts' 6.0 us (`mount-trace/wake-pace/`) carries the
    tracepoints' own cost, an upper bound (the data's README)."""
    walk = [DATA / "walk" / run for run in ("m1", "m1-second-sitting")]
    pace = [DATA / "wake-pace", DATA / "wake-pace" / "busy"]
    data = load_bench([*SITTINGS, DATA / "pause", DATA / "wake", DATA / "wake-idle", *walk, *pace])
    return data.select(workers=(1, 2))


def refit(out: Path) -> FitResult:
    """Fit this host's 1-2 worker data (default settings, seed 0) and write the fit. Its kernel
    part applies to this host only: seen at 1-2 workers, it is a held-out test's fit, and the
    catalog's instances keep the committed 2-vCPU fit (`choose_fit` takes a fit whose kernel
    part names "*" for every instance)."""
    fit = host_only(Calibration(HOST).fit(fit_data()))
    fit.save(out)
    return fit


def host_only(fit: FitResult) -> FitResult:
    """`fit` with its kernel part applying to this host only (`refit`)."""
    applies = dict(fit.applies_to)
    applies["kernel"] = {
        "instances": [HOST],
        "kernel": fit.kernel_name,
        "caveat": f"measured on {HOST} (16 vCPUs) at 1-2 workers only, to test the model's "
        "prediction of 4-200 workers on the same host (calibration/reports/many_core.py); "
        "not for other instances",
    }
    return dataclasses.replace(fit, applies_to=applies)


def runs_of(group: str) -> list[MountRun]:
    folders, workers = GROUPS[group]
    runs = load_bench(folders).mount
    return [r for r in runs if workers is None or r.workers in workers]


def table(title: str, checked: Sequence[Checked]) -> str:
    lines = [
        title,
        f"  {'strategy':13s} {'W':>3s} {'L':>2s} {'C/W':>3s} reads  n  {'measured':>9s} "
        f"{'predicted':>9s}  {'error':>7s}  covered  {'c/s error':>9s}",
    ]
    for c in checked:
        s, w, layers = c.key
        lines.append(
            f"  {s:13s} {w:3d} {layers:2d} {c.containers:3d} {'yes' if c.sampled else 'no ':5s}"
            f"{c.runs:2d}  {c.measured['stride_ns'] / 1e3:9.0f} "
            f"{c.predicted['stride_ns']['value'] / 1e3:9.0f}  {c.error():+7.1%}  "
            f"{c.covered['stride_ns']:3d}/{c.runs:<3d}  {c.error('containers_per_s'):+9.1%}"
        )
    lines.append("  " + summary(checked))
    return "\n".join(lines)


def summary(checked: Sequence[Checked]) -> str:
    errs = [c.error() for c in checked]
    cps = [c.error("containers_per_s") for c in checked]
    covered = sum(c.covered["stride_ns"] for c in checked)
    runs = sum(c.runs for c in checked)
    worst = max(errs, key=abs)
    return (
        f"{len(checked)} shapes: median |error| {statistics.median(map(abs, errs)):.1%}, "
        f"worst {worst:+.1%}, within 15 %: {sum(abs(e) < 0.15 for e in errs)}; "
        f"containers/s median |error| {statistics.median(map(abs, cps)):.1%}; "
        f"interval coverage {covered}/{runs} runs ({covered / runs:.0%})"
    )


def report(
    fit: FitResult, name: str, groups: Sequence[str], samples: int, containers: int | None
) -> None:
    for group in groups:
        t0 = time.perf_counter()
        checked = check_runs(fit, runs_of(group), samples=samples, containers=containers)
        print(table(f"{name}, {group} ({time.perf_counter() - t0:.0f} s)", checked), flush=True)


def cpus_runs(n: int) -> list[MountRun]:
    """The bursts run on `n` CPUs (`taskset -c 0-(n-1)`; their sidecars still say 16 online)."""
    return load_bench([DATA / "burst" / "cpus" / f"{n}-cpus"]).mount


def check_cpus(
    fit: FitResult, cpus: Sequence[int] = CPUS, samples: int = 6, containers: int | None = None
) -> dict[int, list[Checked]]:
    """Per CPU count: `fit`'s predictions of the bursts run on that many CPUs, each simulated
    as it was run on the fitted host's machine with only those CPUs (`Machine.with_cores`)."""
    host = Catalog().get(fit.instance)
    return {
        n: check_runs(
            fit, cpus_runs(n), samples=samples, containers=containers, machine=host.with_cores(n)
        )
        for n in cpus
    }


def ratio(checked: dict[int, list[Checked]], key: tuple[str, int, int]) -> tuple[float, float]:
    """Worker time per sequence at the fewest CPUs over the time at the most: measured (the
    runs' medians) and predicted."""
    lo, hi = (next(c for c in checked[n] if c.key == key) for n in (min(checked), max(checked)))
    return (
        lo.measured["stride_ns"] / hi.measured["stride_ns"],
        lo.predicted["stride_ns"]["value"] / hi.predicted["stride_ns"]["value"],
    )


def cpus_table(title: str, checked: dict[int, list[Checked]]) -> str:
    """Per shape: each CPU count's measured and predicted worker time per sequence (ms) and
    predicted / measured - 1, then the fewest-over-most-CPUs ratio, measured and predicted."""
    ns = sorted(checked)
    lines = [
        title,
        f"  {'strategy':13s} {'W':>3s} {'L':>2s}  "
        + "  ".join(f"{f'{n} CPUs: meas pred err':>26s}" for n in ns)
        + f"  {f'{ns[0]}/{ns[-1]} meas pred':>15s}",
    ]
    for key in sorted(c.key for c in checked[ns[0]]):
        s, w, layers = key
        cells = []
        for n in ns:
            c = next(c for c in checked[n] if c.key == key)
            cells.append(
                f"{c.measured['stride_ns'] / 1e6:8.1f} "
                f"{c.predicted['stride_ns']['value'] / 1e6:7.1f} "
                f"{c.error():+7.1%} {c.covered['stride_ns']}/{c.runs}"
            )
        m, p = ratio(checked, key)
        lines.append(f"  {s:13s} {w:3d} {layers:2d}  " + "  ".join(cells) + f"  {m:7.2f} {p:5.2f}")
    every = [c for n in ns for c in checked[n]]
    lines.append("  " + summary(every))
    for n in ns:
        lines.append(f"  {n:2d} CPUs: " + summary(checked[n]))
    return "\n".join(lines)


def op_table(fit: FitResult, name: str, seeds: int = 2) -> None:
    """Per-op mean call times at the traced shape (16 workers x 10 layers x 10 containers, no
    mountinfo sample: mount-trace/run-*), measured and simulated with `fit` (`seeds` seeds):
    which call the model gets wrong at 16-way contention."""
    machine = Catalog().get(fit.instance)
    costs = LineCosts(machine, seed=fit.seed)
    print(f"{name}: per-op mean call time at 16 workers x 10 layers (traced runs), us")
    for strategy in STRATEGIES:
        (run,) = load_bench([DATA / "mount-trace" / f"run-{strategy}-16w-10L"]).mount
        kernel = fit_bench_kernel(
            fit.host_kernel(fit.kernel_params()), fit.op_extra_ns, strategy, 10
        )
        sims = [
            simulate_run(
                machine,
                kernel,
                strategy,
                16,
                10,
                containers=run.containers,
                think_ns=fit.think_ns[strategy]["10"],
                seed=fit.seed + i,
                costs=costs,
                baseline_mounts=run.baseline_mounts,
                jitter=True,
                mountinfo_sample=run.sampled,
            )
            for i in range(seeds)
        ]
        sim = statistics.fmean(x.stride_ns for x in sims)
        print(
            f"  {strategy}: sequence measured {run.stride_ns / 1e3:.0f}, simulated "
            f"{sim / 1e3:.0f} ({sim / run.stride_ns - 1:+.0%})"
        )
        for op, measured in sorted(run.op_means.items()):
            v = statistics.fmean(x.op_means.get(op, math.nan) for x in sims)
            calls = sims[0].op_calls.get(op, 0.0)
            print(
                f"    {op:16s} x{calls:4.1f}  measured {measured / 1e3:7.1f}  simulated "
                f"{v / 1e3:7.1f}  ({v / measured - 1:+6.0%})  excess x calls "
                f"{(v - measured) * calls / 1e3:+7.0f}"
            )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="the model against the 16-vCPU host's runs")
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--fit", type=Path, default=COMMITTED, help="this host's fit JSON")
    src.add_argument("--refit", type=Path, metavar="OUT", help="fit anew and write it here")
    ap.add_argument("--transfer", action="store_true", help="also the 2-vCPU fit's kernel")
    ap.add_argument(
        "--groups", default=",".join(GROUPS), help="of " + ",".join(GROUPS) + " (none: no runs)"
    )
    ap.add_argument("--samples", type=int, default=6, help="parameter draws per interval")
    ap.add_argument("--containers", type=int, help="containers per worker (default: as run)")
    ap.add_argument("--ops", action="store_true", help="per-op means at the traced shape")
    ap.add_argument("--cpus", action="store_true", help="the bursts on 2, 4, 8, 16 CPUs")
    args = ap.parse_args(argv)
    groups = [g for g in args.groups.split(",") if g and g != "none"]
    if unknown := [g for g in groups if g not in GROUPS]:
        ap.error(f"unknown group(s) {', '.join(unknown)} (of {', '.join(GROUPS)})")
    if args.refit:
        t0 = time.perf_counter()
        fit = refit(args.refit)
        print(f"fitted in {time.perf_counter() - t0:.0f} s, written to {args.refit}")
    else:
        fit = load_fit(args.fit)
    kernel = {n: f"{p.value:.4g} +/- {p.stderr:.2g}" for n, p in fit.parameters.items()}
    print(f"{HOST} fit: {kernel}")
    fits = [("within the host (fit: 1-2 workers)", fit)]
    if args.transfer:
        fits.append(("the 2-vCPU fit's kernel", transfer_kernel(fit, load_fit(TWO_CPU))))
    for name, f in fits:
        if args.ops:
            op_table(f, name)
        report(f, name, groups, args.samples, args.containers)
        if args.cpus:
            t0 = time.perf_counter()
            checked = check_cpus(f, samples=args.samples, containers=args.containers)
            took = time.perf_counter() - t0
            print(cpus_table(f"{name}, bursts on 2-16 CPUs ({took:.0f} s)", checked), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
