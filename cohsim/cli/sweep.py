"""`cohsim sweep`: predictions over a grid, on Dask, kept on disk, written as CSV, JSON and a plot.

Thin layer over cohsim.sweep: the flags name the grid (instances or a family, container and
layer counts, strategies, variants) and the run (engine, seed, replicates, deadline), and
where it runs (`--scheduler`, `--workers`) and is kept (`--cache`). Everything that can be
wrong with the request (an unknown instance or family, an output path that cannot be written,
an unreachable scheduler) is one error line and exit 1 before any output file exists; a count
that is not a positive integer or an unknown strategy is a usage error (exit 2, as in every
command: cohsim.cli.args); the outputs are written atomically at the end.
Ctrl-C leaves every finished point in the cache (the same command resumes) and exits 130.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from cohsim import provenance
from cohsim.cli.args import (
    add_model_files,
    add_pins,
    add_replicates,
    add_runtime,
    add_seed,
    count_list,
    name_list,
    positive_float,
    positive_int,
    target_of,
    warn_pins,
)
from cohsim.cli.outputs import check_cache_dir, check_file, check_plot, writing
from cohsim.machine.catalog import Catalog
from cohsim.predict.options import ENGINES, RunOptions
from cohsim.predict.question import Burst
from cohsim.sweep import (
    Row,
    SweepOptions,
    SweepPoint,
    csv_text,
    grid,
    json_text,
    run_sweep,
    select_instances,
)
from cohsim.sweep.pointcache import readonly_note
from cohsim.workload.synth import STRATEGIES

_RUN = RunOptions()  #: the run options' defaults, which the flags show
_BURST = Burst()  #: the question's defaults (a sweep's grid varies its counts and strategy)


def points_of(args: argparse.Namespace, catalog: Catalog) -> list[SweepPoint]:
    """The grid the flags name (an unknown instance or family, or a bad count, is a
    CohsimError)."""
    names = None if args.instances in (None, "all") else args.instances.split(",")
    return grid(
        catalog,
        select_instances(catalog, [n.strip() for n in names] if names else None, args.family),
        args.containers,
        args.layers,
        args.strategy,
        variants=args.variants,
    )


def _check_outputs(args: argparse.Namespace) -> None:
    for path in (args.csv, args.json):
        if path not in (None, "-"):
            check_file(path)
    check_plot(args.plot)
    if args.cache is not None and args.cache.lower() != "off":
        check_cache_dir(args.cache)  # a read-only one is used read-only


def _print(rows: list[Row]) -> None:
    print(
        f"{'instance':<18s} {'variant':<8s} {'strategy':<14s} {'cont':>5s} {'lay':>4s} "
        f"{'p50 s':>8s} {'p99 s':>8s} {'[p99 interval]':>20s} {'miss % [interval]':>22s}  "
        "dominant"
    )
    for r in rows:
        iv = f"[{r.launch_p99_lo_s:.3f}, {r.launch_p99_hi_s:.3f}]"
        miss = (
            f"{100 * r.miss_chance:.3g} [{100 * r.miss_chance_lo:.3g}, "
            f"{100 * r.miss_chance_hi:.3g}]"
        )
        print(
            f"{r.instance:<18s} {r.variant:<8s} {r.strategy:<14s} {r.containers:>5d} "
            f"{r.layers:>4d} {r.launch_p50_s:8.3f} {r.launch_p99_s:8.3f} {iv:>20s} "
            f"{miss:>22s}  {r.dominant}"
        )


def _sweep(args: argparse.Namespace) -> int:
    _check_outputs(args)
    catalog = Catalog()
    points = points_of(args, catalog)
    options = SweepOptions(
        run=RunOptions(
            seed=args.seed,
            replicates=args.replicates,
            deadline_s=args.deadline,
            engine=args.engine,
        ),
        cache=args.cache,
        scheduler=args.scheduler,
        workers=args.workers,
        progress=not args.no_progress,
        target=target_of(args),
        runtime=args.runtime,
    )
    warn_pins(options.target.kernel, dict(options.target.pins))
    note = readonly_note(options.cache_dir())
    if note:
        print(f"cohsim: note: {note}", file=sys.stderr)
    try:
        sweep = run_sweep(points, options)
    except KeyboardInterrupt:
        where = options.cache_dir()
        kept = (
            f"finished points are kept in {where}; the same command resumes"
            if where
            else ("the cache is off: nothing was kept")
        )
        print(f"cohsim: interrupted ({kept})", file=sys.stderr)
        return 130
    written = []
    for path, text in (
        (args.csv, csv_text(sweep.rows)),
        (args.json, json_text(sweep.rows, options)),
    ):
        if path not in (None, "-"):
            with writing(path):
                provenance.write_atomic(path, text, make_dirs=False)
            written.append(path)
    if args.plot:
        from cohsim.plots.save import save_figure
        from cohsim.sweep.plot import sweep_figure

        save_figure(sweep_figure(sweep.rows), args.plot)
        written.append(args.plot)
    if args.json == "-":
        print(json_text(sweep.rows, options), end="")
        return 0
    if not written:  # the table on the terminal only when no file holds it
        _print(sweep.rows)
    print(
        f"{len(sweep.rows)} points: {sweep.computed} computed, {sweep.cached} from the cache"
        + (f"; wrote {', '.join(written)}" if written else "")
    )
    return 0


def register(sub: argparse._SubParsersAction, _add_json: Callable[..., Any]) -> None:
    """Add `sweep` to the cohsim parser. Every cli module's register takes the shared --json
    flag (cohsim.cli.app); sweep's own takes a file, or prints on stdout (`_output_flags`)."""
    p = sub.add_parser(
        "sweep",
        help="predictions over a grid of instances, counts and strategies (Dask, cached)",
        description="Predict every point of instances x variants x strategies x layers x "
        "containers; points run on Dask and are kept on disk by the digest of their inputs, so "
        "re-running or extending a sweep computes only new points.",
    )
    add_grid_flags(p)
    _run_flags(p)
    _output_flags(p)
    p.set_defaults(func=_sweep)


def add_grid_flags(p: argparse.ArgumentParser) -> None:
    """--instances/--family, --containers, --layers, --strategy, --variants."""
    p.add_argument(
        "--instances",
        metavar="LIST|all",
        help="comma-separated catalog names, or all (default: every instance type)",
    )
    p.add_argument("--family", help="every instance type of one family (e.g. genoa)")
    p.add_argument(
        "--containers",
        type=count_list,
        default=[10, 50, 100],
        metavar="N,N,...",
        help="container counts (default 10,50,100)",
    )
    p.add_argument(
        "--layers",
        type=count_list,
        default=[_BURST.layers],
        metavar="N,N,...",
        help=f"image layer counts (default {_BURST.layers})",
    )
    p.add_argument(
        "--strategy",
        type=name_list(STRATEGIES, all_=True),
        default=[_BURST.strategy],
        metavar="S|all",
        help=f"{', '.join(STRATEGIES)}, a comma-separated list, or all (default {_BURST.strategy})",
    )
    p.add_argument(
        "--variants",
        action="store_true",
        help="also SMT off and one socket where the hardware has them",
    )


def _run_flags(p: argparse.ArgumentParser) -> None:
    """How each point runs, and where the sweep runs and keeps its points."""
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default=_RUN.engine,
        help="level 3's engine (default %(default)s)",
    )
    add_seed(p, _RUN.seed)
    add_replicates(p, "runs of the engine per point")
    p.add_argument(
        "--deadline",
        type=positive_float,
        default=_BURST.deadline_s,
        help="seconds; slower containers count as failures and in the chance of missing it "
        "(default %(default)g)",
    )
    add_model_files(p, "each machine")
    add_pins(p)
    add_runtime(p, _BURST.runtime)
    p.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="an existing Dask scheduler (tcp://host:8786); default a local cluster",
    )
    p.add_argument(
        "--workers",
        type=positive_int,
        help="the local cluster's worker processes (default: the CPUs this process "
        "may use; 1 runs every point in this process)",
    )
    p.add_argument(
        "--cache",
        metavar="DIR|off",
        help="where finished points are kept (default $COHSIM_CACHE/sweep or "
        "~/.cache/cohsim/sweep); off: nowhere",
    )


def _output_flags(p: argparse.ArgumentParser) -> None:
    """--csv, --json [FILE], --plot, --no-progress."""
    p.add_argument("--csv", metavar="FILE", help="tidy CSV, one row per point")
    p.add_argument(
        "--json",
        nargs="?",
        const="-",
        metavar="FILE",
        help="the rows and provenance as JSON in FILE (no FILE: on stdout)",
    )
    p.add_argument(
        "--plot",
        metavar="FILE",
        help="launch p99 and p50 vs containers per instance, with intervals (PNG/SVG/PDF)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
