"""Run-to-run scatter of the 16-vCPU host's bursts against the model's error on them.

    python -m calibration.analysis.burst_scatter.scatter [--seeds N]

The data: calibration/data/devvm-16cpu-intel-xeon-f6m207/scatter/ (10 repeats of each burst
shape, third lease) beside the 3-repeat bursts of the first lease (burst/16-100-workers,
burst/100-200-workers). Per shape and folder: the runs' sequence p50 (mount_bench's own
median over a run's sequences) and worker time per sequence (`MountRun.stride_ns`: the mean
sequence plus the mountinfo sample, the figure the model predicts), each as min / median /
max over the repeats and max / min.

The model: this host's committed fit (calibration/fits/devvm-16cpu-intel-xeon-f6m207.json)
as calibration/reports/many_core.py uses it, level 3 (the simulation: the closed form is not
fitted to mount_bench runs). Its prediction (`predict_run`, the nominal point, the
fit's own seeds averaged) and its error against each folder's median; and, to set beside the
repeats, the simulation's own run-to-run spread: `--seeds` single-seed simulations of the
shape (each seed draws the workers' start offsets and think gaps, as one run), min / median
/ max.

A set of times is called bimodal when the widest gap between its sorted values is more than a
quarter of their median with at least two values on each side (`bimodal`): a convoy that
takes a run from ~5 to ~13 ms shows so, a smooth spread of +/-20 % does not. `--values`
prints each set's sorted values.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cohsim.calibrate import FitResult, MountRun, bench_of, load_bench, load_fit, predict_run
from cohsim.kernel.linecosts import LineCosts
from cohsim.machine.catalog import Catalog
from cohsim.units import NS_PER_MS

HOST = "devvm-16cpu-intel-xeon-f6m207"
REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "calibration" / "data" / HOST
FIT = REPO / "calibration" / "fits" / f"{HOST}.json"
#: the 10-repeat folders (third lease) and the earlier 3-repeat bursts (first lease)
SCATTER = ("lowerdir-plus-32w-10L", "common-parent-50L", "three-strategies-10L")
EARLIER = ("16-100-workers", "100-200-workers")

Shape = tuple[str, int, int]


@dataclass(frozen=True)
class Spread:
    """A set of values (ms): their count, min, median, max."""

    values: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def ratio(self) -> float:
        """max / min."""
        return max(self.values) / min(self.values)

    def text(self, values: bool = False) -> str:
        out = (
            f"{min(self.values):7.2f} {self.median:7.2f} {max(self.values):7.2f}  "
            f"x{self.ratio:4.2f} (n {self.n})"
        )
        if values:
            out += "  [" + " ".join(f"{v:.1f}" for v in sorted(self.values)) + "]"
        return out


#: a gap between sorted times wider than this share of their median splits them in two
GAP_OF_MEDIAN = 0.25


def bimodal(values: Sequence[float]) -> bool:
    """Whether the widest gap between the sorted values, with at least two values on each
    side, is wider than `GAP_OF_MEDIAN` of their median."""
    v = sorted(values)
    if len(v) < 4:
        return False
    gap = max(v[k + 1] - v[k] for k in range(1, len(v) - 2))
    return gap > GAP_OF_MEDIAN * statistics.median(v)


def runs_by_shape(folders: Sequence[Path]) -> dict[Shape, list[MountRun]]:
    """The mount_bench runs in `folders`, by (strategy, workers, layers)."""
    out: dict[Shape, list[MountRun]] = {}
    for r in load_bench(list(folders)).mount:
        out.setdefault(r.key, []).append(r)
    return out


def p50s(runs: Sequence[MountRun]) -> Spread:
    """The runs' sequence p50s (ms)."""
    return Spread(tuple(r.labels["sequence"]["p50_ns"] / NS_PER_MS for r in runs))


def strides(runs: Sequence[MountRun]) -> Spread:
    """The runs' worker times per sequence (ms)."""
    return Spread(tuple(r.stride_ns / NS_PER_MS for r in runs))


def model_seeds(fit: FitResult, shape: Shape, baseline: int, seeds: int) -> Spread:
    """`seeds` single-seed simulations of the shape at the fit's nominal point (ms)."""
    strategy, workers, layers = shape
    machine = Catalog().get(fit.instance)
    costs = LineCosts(machine, seed=fit.seed)
    kernel = fit.host_kernel(fit.kernel_params())
    return Spread(
        tuple(
            bench_of(fit, machine, costs)
            .run(kernel, strategy, workers, layers, baseline, 1, [fit.seed + j])
            .stride_ns
            / NS_PER_MS
            for j in range(seeds)
        )
    )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="burst run-to-run scatter against the model")
    ap.add_argument("--seeds", type=int, default=10, help="single-seed simulations a shape")
    ap.add_argument("--fit", type=Path, default=FIT)
    ap.add_argument("--values", action="store_true", help="print each set's sorted values")
    args = ap.parse_args(argv)
    fit = load_fit(args.fit)
    scatter = {f: runs_by_shape([DATA / "scatter" / f]) for f in SCATTER}
    earlier = runs_by_shape([DATA / "burst" / f for f in EARLIER])
    shapes = sorted({k for by in scatter.values() for k in by})
    print("per shape, ms: min median max over the repeats, max/min (n runs)")
    for shape in shapes:
        s, w, layers = shape
        some = next(by[shape][0] for by in scatter.values() if shape in by)
        p = predict_run(
            fit, s, w, layers, samples=0, containers=1, baseline_mounts=some.baseline_mounts
        )
        value = p["stride_ns"]["value"] / NS_PER_MS
        print(f"{s} {w} x {layers}: model {value:.2f} ms a sequence (nominal)")
        rows = [(f"scatter/{f}", by[shape]) for f, by in scatter.items() if shape in by]
        if shape in earlier:
            rows.append(("burst (first lease)", earlier[shape]))
        for name, runs in rows:
            st = strides(runs)
            flag = "  bimodal" if bimodal(st.values) else ""
            print(
                f"  {name:32s} p50 {p50s(runs).text()}   per sequence {st.text()}  "
                f"model {value / st.median - 1:+.0%}{flag}"
            )
        if args.seeds:
            ms = model_seeds(fit, shape, some.baseline_mounts, args.seeds)
            flag = "  bimodal" if bimodal(ms.values) else ""
            print(
                f"  {'model, one seed a run':32s} {'':35s}   per sequence "
                f"{ms.text(args.values)}{flag}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
