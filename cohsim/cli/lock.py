"""`cohsim pause-bench`: the lock hand-off level (level 2) on the command line."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

from cohsim import provenance
from cohsim.cli.args import add_seed, count_list, nonneg_float, positive_int
from cohsim.cli.outputs import check_plot
from cohsim.errors import CohsimError
from cohsim.lock.handoff import sweep
from cohsim.lock.handoffoptions import HandoffOptions
from cohsim.lock.params import LOCKS, MODELS, SCHEMA, HandoffResult
from cohsim.machine.catalog import Catalog
from cohsim.machine.model import Machine
from cohsim.machine.placement import PLACEMENTS, parse_cpu_list, place
from cohsim.units import NS_PER_MS, NS_PER_S


def _placement(text: str) -> str:
    """A named placement or a CPU list's form ("0,48,1,49", "0-7"); whether the machine has
    those CPUs is the machine's to say (exit 1)."""
    if text not in PLACEMENTS:
        try:
            parse_cpu_list(text)
        except CohsimError as exc:
            raise argparse.ArgumentTypeError(exc.what) from None
    return text


def _sweep(args: argparse.Namespace, machine: Machine, threads: list[int]) -> list[HandoffResult]:
    """The sweep the flags ask for, with a progress bar on stderr when it is slow."""
    from tqdm import tqdm

    # a bar only for sweeps long enough to wait for (the simulation at 16+ threads)
    slow = args.model == "des" and sum(threads) * args.acquisitions > 100_000
    with tqdm(
        total=len(threads),
        file=sys.stderr,
        disable=not slow or args.no_progress,
        desc="pause-bench",
        unit="point",
        leave=False,
    ) as bar:
        return sweep(machine, threads, _options(args), progress=bar.update)


def _options(args: argparse.Namespace) -> HandoffOptions:
    """The level-2 options the flags name (each flag's default is the option's)."""
    return HandoffOptions(
        lock=args.lock,
        placement=args.placement,
        smt=args.smt == "on",
        cs_ns=args.cs_ns,
        think_ns=args.think_ns,
        acquisitions=args.acquisitions,
        seed=args.seed,
        model=args.model,
    )


def _json_doc(
    args: argparse.Namespace, machine: Machine, results: list[HandoffResult]
) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "instance": machine.name,
        "lock": args.lock,
        "model": args.model,
        "level": results[0].level,
        "placement": args.placement,
        "smt": args.smt == "on",
        "cs_ns": args.cs_ns,
        "think_ns": args.think_ns,
        "points": [r.to_dict() for r in results],
        "simulated_s": round(simulated_s(results), 9),
        "provenance": provenance.stamp(
            seed=args.seed, inputs=[Catalog().path(args.instance)], command="pause-bench"
        ),
    }


def _print_table(args: argparse.Namespace, machine: Machine, results: list[HandoffResult]) -> None:
    print(
        f"{machine.name}: {args.lock}, placement {args.placement}, SMT {args.smt}, "
        f"cs {args.cs_ns:g} ns, think {args.think_ns:g} ns — {results[0].level}"
    )
    print("  per point: acquisition latency (start acquiring -> acquired) percentiles, its mean,")
    print("  the throughput, the share of time acquiring, the home agent's queue, simulated time")
    cols = ("threads", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns", "mean_ns", "acq/s",
            "spin", "home_q_mean", "home_q_max", "sim_ms")  # fmt: skip
    print("  ".join(f"{c:>11s}" for c in cols))
    for r in results:
        top = "-" if r.max_ns is None else f"{r.max_ns:.1f}"
        print(
            "  ".join(
                [
                    f"{r.threads:11d}",
                    f"{r.p50_ns:11.1f}",
                    f"{r.p90_ns:11.1f}",
                    f"{r.p99_ns:11.1f}",
                    f"{r.p999_ns:11.1f}",
                    f"{top:>11s}",
                    f"{r.mean_ns:11.1f}",
                    f"{r.acquisitions_per_s:11.4g}",
                    f"{r.spin_fraction:11.3f}",
                    f"{r.home_queue_mean:11.2f}",
                    f"{r.home_queue_max:11d}",
                    f"{r.span_ns / NS_PER_MS:11.4g}",
                ]
            )
        )


def simulated_s(results: list[HandoffResult]) -> float:
    """The simulated time of every point's measured window, s."""
    return sum(r.span_ns for r in results) / NS_PER_S


def _pause_bench(args: argparse.Namespace) -> int:
    machine = Catalog().get(args.instance)
    threads = args.threads
    # bad input fails before any bar is drawn
    place(machine, max(threads), args.placement, args.smt == "on")
    check_plot(args.plot)
    t0 = time.perf_counter()
    results = _sweep(args, machine, threads)
    wall = time.perf_counter() - t0
    if args.plot:
        from cohsim.plots.lock import sweep_figure
        from cohsim.plots.save import save_figure

        title = f"{machine.name}: {args.lock}, {args.placement}, SMT {args.smt} ({args.model})"
        save_figure(sweep_figure(results, title), args.plot)
    if args.json:
        print(provenance.dumps(_json_doc(args, machine, results)), end="")
        return 0
    _print_table(args, machine, results)
    print(
        f"  run time: {simulated_s(results) * 1e3:.4g} ms simulated (the measured windows, "
        f"{sum(r.acquisitions for r in results)} acquisitions), {wall:.2f} s wall"
    )
    if args.plot:
        print(f"  plot: {args.plot}")
    return 0


def register(
    sub: argparse._SubParsersAction, add_json: Callable[[argparse.ArgumentParser], None]
) -> None:
    """Add this group's subcommands to the cohsim parser."""
    p = sub.add_parser(
        "pause-bench",
        help="simulated pause_bench: lock latency vs threads",
        description="Simulate pause_bench: N threads contend for one spinlock.",
    )
    p.add_argument("--instance", required=True, help="catalog machine, e.g. m7i.metal-24xl")
    p.add_argument(
        "--threads",
        type=count_list,
        default="1,2,4,8,16,32,48,96",
        help="comma-separated thread counts (default %(default)s)",
    )
    p.add_argument(
        "--placement",
        type=_placement,
        default=HandoffOptions.placement,
        help="compact, scatter, one-socket, or a CPU list such as 0,48,1,49 or 0-7",
    )
    p.add_argument(
        "--smt", choices=("on", "off"), default="on", help="off: one hardware thread per core"
    )
    p.add_argument(
        "--lock", choices=LOCKS, default=HandoffOptions.lock, help="the lock (default %(default)s)"
    )
    p.add_argument(
        "--model",
        choices=MODELS,
        default=HandoffOptions.model,
        help="des: discrete-event simulation; markov: analytic chain",
    )
    p.add_argument(
        "--cs-ns", type=nonneg_float, default=HandoffOptions.cs_ns, help="critical section, ns"
    )
    p.add_argument(
        "--think-ns",
        type=nonneg_float,
        default=HandoffOptions.think_ns,
        help="time between release and the next acquisition, ns",
    )
    p.add_argument(
        "--acquisitions",
        type=positive_int,
        default=HandoffOptions.acquisitions,
        help="acquisitions measured per point (after a warm-up)",
    )
    add_seed(p)
    p.add_argument("--plot", help="write latency and home-queue plots (.png, .svg, .pdf)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_json(p)
    p.set_defaults(func=_pause_bench)
