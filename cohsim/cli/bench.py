"""`cohsim bench pause|mount|wake|ns|prop|walk|chase|corun|wake-idle`: run the real benchmarks
on this host (registered by cohsim.cli.app); `wake-idle` reads scheduler traces instead
(cohsim.measure.wakeidle).

The flags mirror the C programs' own (calibration/bench/README.md); each benchmark's flags, the
C program's argv made from them and its human summary live in a module of cohsim.cli.benches.
This module registers them, hands the argv to `cohsim.measure.programs.run_bench` and prints.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cohsim import provenance
from cohsim.cli.benches import chase, corun, mount, ns, pause, prop, wake, walk
from cohsim.cli.outputs import check_dir, check_file
from cohsim.measure import programs
from cohsim.units import NS_PER_US

#: each benchmark's cli module, in the order `cohsim bench --help` lists them
_KINDS = {
    "pause": pause,
    "mount": mount,
    "wake": wake,
    "ns": ns,
    "prop": prop,
    "walk": walk,
    "chase": chase,
    "corun": corun,
}


def _print_human(kind: str, summary: dict[str, Any], run: programs.BenchRun) -> None:
    _KINDS[kind].show(summary)
    wrote = [run.csv_path, run.sidecar_path] + ([run.strace_path] if run.strace_path else [])
    print("wrote " + ", ".join(str(p) for p in wrote) + f" ({run.sidecar['wall_s']:.1f} s)")


def _run(args: argparse.Namespace) -> int:
    kind = args.bench
    c_args = _KINDS[kind].c_args(args)
    check_dir(args.out)
    strace = getattr(args, "strace", None)
    if strace and not programs.same_dir(Path(strace).parent, args.out):  # else made with --out
        check_file(strace)
    run = programs.run_bench(
        kind,
        c_args,
        args.out,
        strace=getattr(args, "strace", None),
        progress=not args.no_progress,
        command_line=["cohsim", *sys.argv[1:]],
    )
    summary = programs.summarize(kind, run.rows)
    if args.json:
        doc = {
            "schema": programs.SCHEMA,
            "bench": kind,
            "summary": summary,
            "files": {
                "csv": str(run.csv_path),
                "sidecar": str(run.sidecar_path),
                "strace": str(run.strace_path) if run.strace_path else None,
            },
            "host": run.sidecar["host"],
            "wall_s": run.sidecar["wall_s"],
            "provenance": run.sidecar["provenance"],
        }
        print(provenance.dumps(doc), end="")
    else:
        _print_human(kind, summary, run)
    return 0


def _wake_idle(args: argparse.Namespace) -> int:
    from cohsim.measure import wakeidle

    check_dir(args.out)
    table, csv_path = wakeidle.write_table(args.traces, args.out, ["cohsim", *sys.argv[1:]])
    bins = [
        {
            "idle_from_ns": lo,
            "samples": table.samples[b],
            "p50_ns": round(table.draw(lo, 0.5)),
            "p90_ns": round(table.draw(lo, 0.9)),
            "mean_ns": round(table.mean(lo)),
        }
        for b, lo in enumerate(table.edges_ns)
    ]
    if args.json:
        doc = {"schema": programs.SCHEMA, "bench": "wake-idle", "bins": bins, "csv": str(csv_path)}
        print(provenance.dumps(doc), end="")
        return 0
    print(f"{'idle from':>10}{'samples':>9}{'p50_ns':>9}{'p90_ns':>9}{'mean_ns':>10}")
    for b in bins:
        print(
            f"{b['idle_from_ns'] / NS_PER_US:>8.0f}us{b['samples']:>9}{b['p50_ns']:>9}"
            f"{b['p90_ns']:>9}{b['mean_ns']:>10}"
        )
    print(f"wrote {csv_path} and its sidecar")
    return 0


def _add_wake_idle(
    kinds: argparse._SubParsersAction, add_json: Callable[[argparse.ArgumentParser], None]
) -> argparse.ArgumentParser:
    """`bench wake-idle`: scheduler traces in, a wake_bench table out."""
    pi = kinds.add_parser(
        "wake-idle",
        help="wake-up latency by how long the CPU was idle, from scheduler traces",
        description="Read ftrace dumps (plain, gzip or xz) recorded with sched_switch, sched_waking"
        " and sched_wakeup on (calibration/bench/wake_trace.sh records them while mount_bench"
        " runs) and write the wake-up latency quantiles per idle-duration bin as wake_bench"
        " rows (lock sched-trace).",
    )
    pi.add_argument("traces", nargs="+", metavar="TRACE", help="ftrace text dumps")
    pi.add_argument("--out", required=True, metavar="DIR", help="directory for CSV and sidecar")
    add_json(pi)
    pi.set_defaults(func=_wake_idle)
    return pi


def register(
    sub: argparse._SubParsersAction, add_json: Callable[[argparse.ArgumentParser], None]
) -> None:
    """Add this group's subcommands to the cohsim parser."""
    p = sub.add_parser(
        "bench",
        help="run the real benchmarks (pause_bench, mount_bench, wake_bench, ns_bench, prop_bench,"
        " walk_bench, chase_bench, corun_bench)",
        description="Build the C benchmarks with the system compiler ($CC, default cc),"
        " run them and write <bench>_bench.csv and a JSON sidecar of host facts.",
    )
    kinds = p.add_subparsers(dest="bench", required=True, metavar="BENCH")

    runs = [module.add(kinds) for module in _KINDS.values()]
    _add_wake_idle(kinds, add_json)

    for q in runs:
        q.add_argument("--out", required=True, metavar="DIR", help="directory for CSV and sidecar")
        q.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
        add_json(q)
        q.set_defaults(func=_run)
