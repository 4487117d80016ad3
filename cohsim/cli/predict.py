"""`cohsim predict` and `cohsim replay`: container launch latency on the command line.

The flags become a `Burst` (for `predict`; a replay's burst is its trace), a `Target` and one
`RunOptions`, each default the dataclass's; the prediction is printed as a person reads it
(cohsim.cli.predict_text: the answer first) or, with `--json`, as its JSON document."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

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
)
from cohsim.cli.outputs import check_plot
from cohsim.cli.predict_text import render
from cohsim.errors import CohsimError
from cohsim.machine.catalog import ARCHETYPES
from cohsim.predict import Burst, Prediction, RunOptions, Target, predict, replay
from cohsim.predict.options import ENGINES
from cohsim.predict.validity import Validity
from cohsim.workload.synth import STRATEGIES


def _emit(p: Prediction, args: argparse.Namespace, inputs: list[str]) -> int:
    if args.plot:
        from cohsim.plots.launch import launch_figure
        from cohsim.plots.save import save_figure

        save_figure(launch_figure(p), args.plot)
    if args.explain_plot:
        from cohsim.plots.explain import explain_figure
        from cohsim.plots.save import save_figure

        save_figure(explain_figure(p), args.explain_plot)
    if args.json:
        doc: dict[str, Any] = p.to_dict()
        doc["provenance"] = provenance.stamp(
            seed=p.seed, inputs=inputs, command=getattr(args, "command", "")
        )
        print(provenance.dumps(doc), end="")
    else:
        print(render(p, with_profile=getattr(args, "profile", False)), end="")
        for f in (args.plot, args.explain_plot):
            if f:
                print(f"  plots: {f}")
    return 0


def _run_options(args: argparse.Namespace) -> RunOptions:
    """The one options object the flags describe (the unset ones keep RunOptions' defaults;
    the deadline is the burst's)."""
    return RunOptions(
        seed=args.seed,
        replicates=args.replicates,
        handoff_model=args.handoff,
        background=not args.no_background,
        record=bool(args.plot),
        priors=not args.no_priors,
        explain=bool(args.explain or args.explain_plot),
        engine=args.engine,
    )


def _fit_input(args: argparse.Namespace) -> list[str]:
    return [args.calibration] if args.calibration not in (None, "none") else []


def _target(args: argparse.Namespace) -> Target:
    """The target the flags name (the output files checked first, before any work)."""
    check_plot(args.plot)
    check_plot(args.explain_plot)
    if args.plot and args.engine == "analytic":
        raise CohsimError("--plot draws the simulation's timeline: use it with --engine des")
    return replace(
        target_of(args),
        arch=args.arch,
        instance=args.instance,
        smt=args.smt == "on",
        sockets=args.sockets,
    )


def _warn_outside(validity: Validity) -> None:
    """One line on stderr, before the work, when an input is outside the checked range."""
    if not validity.inside:
        print(f"cohsim: warning: {validity.warning()}", file=sys.stderr)


def _predict(args: argparse.Namespace) -> int:
    if args.arch is None and args.instance is None:
        raise CohsimError("say which machine: --arch mesh|chiplet|cmn or --instance NAME")
    target = _target(args)
    p = predict(burst_of(args), target, options=_run_options(args), on_validity=_warn_outside)
    return _emit(p, args, _fit_input(args))


def _replay(args: argparse.Namespace) -> int:
    target = _target(args)
    p = replay(
        args.trace,
        target,
        layers=args.layers,
        node_mounts=args.node_mounts,
        deadline_s=args.deadline,
        format=args.format,
        lenient=args.lenient,
        by_process_tree=args.by_process_tree,
        options=replace(_run_options(args), progress=not args.no_progress),
        on_validity=_warn_outside,
    )
    return _emit(p, args, [args.trace, *_fit_input(args)])


#: the defaults of the question, its target and the run, which the flags show and keep when
#: they are not given (each written once, in its dataclass)
_BURST = Burst()
_TARGET = Target()
_DEFAULTS = RunOptions()


def _choice(
    p: argparse.ArgumentParser, flag: str, choices: Sequence[str], default: str, help: str
) -> None:
    """A flag taking one of `choices`, `default` when not given (and the help says so)."""
    p.add_argument(flag, choices=choices, default=default, help=f"{help} (default {default})")


def _unknowns(p: argparse.ArgumentParser) -> None:
    """The flags about the kernel model's priors: pin one, pin all, rank them."""
    p.add_argument(
        "--node-mounts",
        type=nonneg_int,
        metavar="N",
        help="mounts on the node before the burst (wc -l /proc/self/mountinfo), if known: "
        "pins that prior (default: drawn from its range)",
    )
    add_pins(p)
    p.add_argument(
        "--no-priors",
        action="store_true",
        help="keep every prior of the kernel model at its nominal value (the interval then "
        "covers the fit and the simulation's noise only)",
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="rank the unknowns: each prior at its low and high end, 2 more simulations "
        "each, by how much it moves the launch p99, with the measurement that would pin it",
    )
    p.add_argument(
        "--explain-plot",
        metavar="FILE",
        help="with the ranking (implies --explain): the launch breakdown and a tornado chart "
        "of the unknowns (PNG/SVG/PDF)",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="print where the CPUs' time went, by kernel site (path_init spin, lock spins, "
        "per-CPU loops, peer walks, ...) and the share on contested lines (always in --json)",
    )


def _common(
    p: argparse.ArgumentParser, add_json: Callable[[argparse.ArgumentParser], None]
) -> None:
    p.add_argument(
        "--arch",
        choices=ARCHETYPES,
        help="use the catalog's representative of this interconnect kind",
    )
    p.add_argument("--instance", help="catalog name (see `cohsim machines`) or a machine TOML")
    _choice(
        p,
        "--smt",
        ["on", "off"],
        "on" if _TARGET.smt else "off",
        "off: one hardware thread per core",
    )
    p.add_argument(
        "--sockets", type=positive_int, help="use only the first N sockets (default: all)"
    )
    p.add_argument(
        "--deadline",
        type=positive_float,
        default=_BURST.deadline_s,
        help="seconds; containers slower than this count as failures and in the chance of "
        "missing it (default %(default)g)",
    )
    add_model_files(p)
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default=_DEFAULTS.engine,
        help="what answers level 3: des, the discrete-event simulation (the reference), or "
        "analytic, the closed-form burst model (milliseconds; a burst of identical containers "
        "only; docs/analytic.md has its agreement with the simulation) (default %(default)s)",
    )
    p.add_argument(
        "--handoff",
        choices=["des", "markov"],
        default=_DEFAULTS.handoff_model,
        help="which level-2 model prices line transfers (default %(default)s)",
    )
    add_replicates(
        p,
        "runs of the engine: the first with the nominal (fitted) parameters, the others with "
        "parameters drawn from the fit's covariance and the kernel model's priors, and their "
        "own seeds; from 3 on, the interval is a 90%% prediction interval from the draws "
        "(Student's t at the draws less one degrees of freedom), narrower the more there are",
        {"des": ": two rounds on a 2-CPU machine", "analytic": ": milliseconds each"},
    )
    _unknowns(p)
    add_seed(p, _DEFAULTS.seed)
    p.add_argument(
        "--no-background",
        action="store_true",
        help="leave out systemd, probes and background path walkers",
    )
    p.add_argument(
        "--plot",
        metavar="FILE",
        help="latency CDF, lock ownership timeline, mount table (PNG/SVG/PDF)",
    )
    add_json(p)


def register(
    sub: argparse._SubParsersAction, add_json: Callable[[argparse.ArgumentParser], None]
) -> None:
    """Add `predict` and `replay` to the cohsim parser."""
    p = sub.add_parser("predict", help="container launch latency for a synthesised workload")
    _common(p, add_json)
    p.add_argument(
        "--containers",
        type=positive_int,
        default=_BURST.containers,
        help="containers launched at once (default %(default)s)",
    )
    p.add_argument(
        "--layers",
        type=positive_int,
        default=_BURST.layers,
        help="image layers (default %(default)s)",
    )
    _choice(p, "--strategy", STRATEGIES, _BURST.strategy, "containerd's idmap strategy")
    add_runtime(p, _BURST.runtime)
    p.set_defaults(func=_predict)

    p = sub.add_parser("replay", help="replay a strace/perf trace on a machine model")
    p.add_argument("trace", help="strace -f -tt|-ttt|-r [-T] or perf trace output")
    _common(p, add_json)
    p.add_argument("--format", choices=["auto", "strace", "perf"], default="auto")
    p.add_argument(
        "--lenient",
        action="store_true",
        help="skip (and count) malformed lines instead of stopping",
    )
    p.add_argument(
        "--layers",
        type=positive_int,
        help="image layers, if the trace does not show them (default: inferred)",
    )
    p.add_argument(
        "--by-process-tree",
        action="store_true",
        help="one container per process tree (a traced runtime's processes and threads), "
        "not per thread",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar on stderr (shown on a terminal when the simulations take more "
        "than a second: a trace may span up to an hour)",
    )
    p.set_defaults(func=_replay)
