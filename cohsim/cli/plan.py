"""`cohsim plan`: which instance type for N containers launched at once, ranked.

Parses the flags into one `PlanOptions` (cohsim.plan.api: the question a `Burst`, the kernel
model, fit and pins a `Target`, every default its dataclass's), checks the `--html` path before any
work, calls `plan` (two stages by default: the analytic screen, then the simulation confirms
the top `--confirm` rows; `--engine` one engine for everything), its evaluators one local
cluster for both engines, and prints the table (cohsim.plan.table) or, with `--json`, the same table
as one JSON document; with `--html FILE` it also writes the self-contained report
(cohsim.report). A count or deadline that is not a positive number is a usage error (exit 2,
as in every command: cohsim.cli.args); what needs the catalog or another flag to judge (an
unknown instance, a --max-burst below --containers, an unreachable scheduler) is one error line
and exit 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from cohsim import provenance
from cohsim.cli.args import (
    add_model_files,
    add_pins,
    add_replicates,
    add_runtime,
    add_seed,
    burst_of,
    nonneg_int,
    positive_float,
    positive_int,
    target_of,
    warn_pins,
)
from cohsim.cli.outputs import check_file
from cohsim.errors import CohsimError
from cohsim.plan import SORTS, PlanOptions, plan
from cohsim.plan.api import CONFIRM_ENGINE, TWO_STAGE
from cohsim.plan.candidates import ALL
from cohsim.plan.evaluate import sweep_evaluators
from cohsim.plan.table import render
from cohsim.predict.options import ENGINES
from cohsim.sweep.pointcache import readonly_note
from cohsim.workload.synth import STRATEGIES

_DEFAULTS = PlanOptions()
_BURST = _DEFAULTS.burst  #: the question's defaults (cohsim.predict.question.Burst)


def _names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(","))


def options_of(args: argparse.Namespace) -> PlanOptions:
    """The one options object the flags describe: the question a `Burst`, the kernel model,
    fit and pins a `Target` (with no machine: the candidates are the machines)."""
    every = args.strategy == ALL
    return PlanOptions(
        burst=burst_of(args, _BURST.strategy if every else None),
        target=target_of(args),
        every_strategy=every,
        instances=args.instances,
        family=args.family,
        variants=args.variants,
        engine=args.engine,
        confirm=args.confirm,
        sort=args.sort,
        seed=args.seed,
        replicates=args.replicates,
        max_burst=args.max_burst,
        scheduler=args.scheduler,
        workers=args.workers,
        progress=sys.stderr.isatty() and not args.json,
    )


def _html_path(path: str) -> None:
    if not path.lower().endswith((".html", ".htm")):
        raise CohsimError("the report is an HTML file: name it FILE.html", path)
    check_file(path)


def _plan(args: argparse.Namespace) -> int:
    options = options_of(args)
    warn_pins(options.target.kernel, dict(options.point_target.pins))
    if args.html:
        _html_path(args.html)
    note = readonly_note(options.sweep.cache_dir())
    if note:
        print(f"cohsim: note: {note}", file=sys.stderr)
    try:
        with sweep_evaluators(options.sweep) as engines:  # one cluster for plan and report
            evaluate, confirm = engines(options.screen_engine), engines(CONFIRM_ENGINE)
            result = plan(options, evaluate=evaluate, confirm=confirm)
            if args.html:
                from cohsim.report import gather, write_report  # matplotlib only when reporting

                write_report(args.html, gather(result, evaluate, confirm=confirm))
    except KeyboardInterrupt:  # the workers ignore it (cohsim.plan.evaluate): one line
        where = options.sweep.cache_dir()
        kept = (
            f"finished points are kept in {where}; the same command resumes from them"
            if where
            else "the cache is off: nothing was kept"
        )
        print(f"cohsim: interrupted ({kept})", file=sys.stderr)
        return 130
    if args.json:
        doc = result.to_dict()
        doc["provenance"] = {**doc["provenance"], **provenance.stamp(command="plan")}
        print(provenance.dumps(doc), end="")
    else:
        print(render(result), end="")
        if args.html:
            print(f"report: {args.html}")
    return 0


def register(
    sub: argparse._SubParsersAction, add_json: Callable[[argparse.ArgumentParser], None]
) -> None:
    """Add `plan` to the cohsim parser."""
    d = _DEFAULTS
    p = sub.add_parser(
        "plan",
        help="rank instance types for a burst of containers: launch p50/p99, the chance of "
        "missing the deadline, "
        "the largest burst that meets the deadline",
        description="Which instance type for N containers of an L-layer image, all launched "
        "at once, each up within the deadline? Every candidate is ranked by the largest "
        "burst whose launch p99 meets the deadline (a search over the container count), "
        "per vCPU. There is no price column: the repository has no sourced price table, and "
        "cohsim does not invent prices.",
    )
    _question(p)
    _candidates(p)
    _running(p)
    p.add_argument(
        "--html",
        metavar="FILE",
        help="also write one self-contained HTML report (no network, no other files)",
    )
    add_seed(p, d.seed)
    add_json(p)
    p.set_defaults(func=_plan)


def _question(p: argparse.ArgumentParser) -> None:
    """The flags of the question (a `Burst`) and of what every candidate runs besides its
    machine (a `Target`), each default the dataclass's."""
    b = _BURST
    p.add_argument(
        "--containers",
        type=positive_int,
        default=b.containers,
        help="containers launched at once (default %(default)s)",
    )
    p.add_argument(
        "--layers", type=positive_int, default=b.layers, help="image layers (default %(default)s)"
    )
    p.add_argument(
        "--strategy",
        choices=[*STRATEGIES, ALL],
        default=b.strategy,
        help="containerd's idmap strategy, or all three (default %(default)s)",
    )
    add_runtime(p, b.runtime)
    p.add_argument(
        "--deadline",
        type=positive_float,
        default=b.deadline_s,
        help="seconds each container must be up within (default %(default)g)",
    )
    p.add_argument(
        "--node-mounts",
        type=nonneg_int,
        metavar="N",
        help="mounts on the node before the burst, if known: pins that prior (default: drawn)",
    )
    add_model_files(p, "each machine")
    add_pins(p)


def _candidates(p: argparse.ArgumentParser) -> None:
    """The flags that say which machines and strategies compete, and how they are ranked."""
    d = _DEFAULTS
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--instances",
        type=_names,
        metavar="LIST",
        help="comma-separated catalog names (default, or 'all': every instance type of the "
        "catalog)",
    )
    which.add_argument(
        "--family",
        metavar="F",
        help="the instance types of one catalog family ('genoa', 'sapphirerapids')",
    )
    p.add_argument(
        "--variants",
        action="store_true",
        help="also each machine with SMT off and with one socket, where the hardware allows",
    )
    p.add_argument(
        "--sort",
        choices=list(SORTS),
        default=d.sort,
        help="the column to rank by (default %(default)s)",
    )


def _running(p: argparse.ArgumentParser) -> None:
    """The flags that say how the points are computed."""
    d = _DEFAULTS
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default=d.engine,
        help="one engine for every point: analytic (the closed-form burst model, fast) or des "
        "(the simulation, the reference: seconds to minutes a point, so name a few "
        f"--instances) (default: {TWO_STAGE}, every candidate screened with analytic, the "
        "top --confirm confirmed with des)",
    )
    p.add_argument(
        "--confirm",
        type=nonneg_int,
        default=d.confirm,
        metavar="K",
        help="in the two-stage plan, the top K rows of the screen confirmed with the "
        "simulation at --containers (0: screen only; ignored with --engine) "
        "(default %(default)s)",
    )
    add_replicates(
        p,
        "runs of the engine per point, for both engines of the two-stage plan when given",
        {"des": " and the two-stage plan's confirmation", "analytic": " and its screen"},
    )
    p.add_argument(
        "--max-burst",
        type=positive_int,
        default=d.max_burst,
        help="the largest burst the search tries (default %(default)s)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="a Dask scheduler to run the points on (default: a local cluster)",
    )
    p.add_argument(
        "--workers",
        type=positive_int,
        help="local worker processes (default: the CPUs this process may use; 1: none, "
        "every point in this process)",
    )
