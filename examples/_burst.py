"""What the teaching examples share: their command line, the burst they predict, and the
launch-vs-containers panel. Not an example itself: mesh_vs_chiplet.py, common_parent_knee.py
and smt_and_sockets.py import it (Python puts a script's own folder on the import path).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from matplotlib.axes import Axes

import cohsim.plots  # noqa: F401  (files only: selects matplotlib's Agg backend first)
from cohsim.lock.handoff import sweep
from cohsim.machine.catalog import ARCHETYPES, Catalog
from cohsim.machine.model import Machine
from cohsim.predict import Prediction, predict
from cohsim.predict.options import ENGINES
from cohsim.units import per_s_to_gap_ns


def parser(doc: str | None, out: str) -> argparse.ArgumentParser:
    """The flags every example takes; `out` is the default figure file."""
    ap = argparse.ArgumentParser(
        description=(doc or "").split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    ap.add_argument("--containers", default="10,25,50,100", help="burst sizes, e.g. 10,50,100")
    ap.add_argument("--layers", type=int, default=50, help="layers of the image (default 50)")
    ap.add_argument(
        "--engine",
        choices=ENGINES,
        default="analytic",
        help="level 3's engine: the closed-form burst model (fast, the default) or the "
        "discrete-event simulation (the reference, seconds per point)",
    )
    ap.add_argument(
        "--replicates",
        type=int,
        default=8,
        help="replicates per point (default 8: with fewer draws the intervals are very wide)",
    )
    ap.add_argument("--seed", type=int, default=0, help="the one seed (default 0)")
    ap.add_argument("--out", default=out, help=f"figure file, .png/.svg/.pdf (default {out})")
    return ap


def header(args: argparse.Namespace) -> None:
    """Say which engine answered and how (the findings below are the model's, not a host's)."""
    print(
        f"{args.layers}-layer image; level 3 answered by the {args.engine} engine, "
        f"{args.replicates} replicate(s) a point, seed {args.seed}."
    )


def counts(ap: argparse.ArgumentParser, text: str) -> list[int]:
    """The burst sizes in `text` ("10,50,100"), ascending; a bad list is the parser's error."""
    try:
        ns = sorted({int(x) for x in text.split(",")})
    except ValueError:
        ap.error(f"--containers must be whole numbers separated by commas, not {text!r}")
    if ns[0] < 1:
        ap.error("--containers must be at least 1")
    return ns


def machine(catalog: Catalog, name: str) -> Machine:
    """An instance type by name, or the catalog's representative of an interconnect kind."""
    return catalog.get(catalog.archetype(name).instance if name in ARCHETYPES else name)


def burst(args: argparse.Namespace, ns: Sequence[int], **target: Any) -> list[Prediction]:
    """One prediction per burst size on the machine and strategy `target` names."""
    return [
        predict(
            containers=n,
            layers=args.layers,
            engine=args.engine,
            replicates=args.replicates,
            seed=args.seed,
            **target,
        )
        for n in ns
    ]


def plot_launch(ax: Axes, preds: Sequence[Prediction], label: str, color: str) -> None:
    """Launch p50 (solid) and p99 (dashed, its interval as error bars) against containers."""
    xs = [p.containers for p in preds]
    p99 = [p.launch_s["p99"] for p in preds]
    ax.plot(xs, [p.launch_s["p50"].value for p in preds], "o-", color=color, label=f"{label} p50")
    err = [[i.value - i.low for i in p99], [i.high - i.value for i in p99]]
    ax.errorbar(
        xs,
        [i.value for i in p99],
        yerr=err,
        fmt="--",
        capsize=3,
        color=color,
        alpha=0.6,
        label=f"{label} p99 (interval)",
    )
    ax.set_xlabel("containers launched at once")
    ax.set_ylabel("launch latency (s)")
    ax.legend(fontsize=7)


def handoff_ns(m: Machine, threads: list[int], seed: int, repeats: int = 4) -> list[float]:
    """Level 2 (pause_bench in simulation): a mount_lock (qspinlock) hand-off when `threads`
    scattered CPUs of `m` all want it, ns: the time between acquisitions less the section.
    Each the mean of `repeats` seeds: the order the queue settles in decides whether a
    two-socket machine's hand-offs cross the socket link (r5.metal: 90 to 225 ns by seed)."""
    asked = [n for n in threads for _ in range(repeats)]
    runs = sweep(m, asked, lock="qspinlock", placement="scatter", acquisitions=300, seed=seed)
    gaps = [per_s_to_gap_ns(r.acquisitions_per_s) - r.cs_ns for r in runs]
    return [sum(gaps[i : i + repeats]) / repeats for i in range(0, len(gaps), repeats)]


def pct(a: float, b: float) -> float:
    """How much larger `a` is than `b`, in per cent."""
    return 100.0 * (a / b - 1.0)
