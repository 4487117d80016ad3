"""`cohsim trace parse` and `cohsim trace synth`: syscall traces on the command line.

Thin layer over `cohsim.workload.parse` (parse_trace), `cohsim.workload.trace` (summarize) and
`cohsim.workload.synth` (synthesize, write_strace).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from cohsim import provenance
from cohsim.cli.args import add_runtime, add_seed, nonneg_int, positive_float, positive_int
from cohsim.cli.outputs import check_file, writing
from cohsim.predict.question import Burst
from cohsim.predict.validity import refuse_absurd
from cohsim.units import NS_PER_MS, NS_PER_US
from cohsim.workload.parse import parse_trace
from cohsim.workload.summary import summarize
from cohsim.workload.synth import STRATEGIES, STYLES, synthesize, write_strace

_BURST = Burst()  #: the question's defaults (cohsim.predict.question)


def _arrival(text: str) -> str:
    """``burst``, ``stagger:NS`` (an integer >= 0) or ``poisson:RATE`` (per second, > 0)."""
    kind, sep, value = text.partition(":")
    try:
        if kind == "burst" and not sep:
            return text
        if kind == "stagger" and sep:
            nonneg_int(value)
            return text
        if kind == "poisson" and sep:
            positive_float(value)
            return text
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None
    raise argparse.ArgumentTypeError(f"{text!r} is not burst, stagger:NS or poisson:RATE_PER_S")


def register(
    sub: argparse._SubParsersAction, add_json: Callable[[argparse.ArgumentParser], None]
) -> None:
    """Add this group's subcommands to the cohsim parser."""
    group = sub.add_parser(
        "trace", help="parse a syscall trace or synthesise a containerd workload"
    )
    tsub = group.add_subparsers(dest="trace_command", required=True, metavar="SUBCOMMAND")

    p = tsub.add_parser("parse", help="summarise an strace -f -tt/-ttt/-r [-T] or perf trace log")
    p.add_argument("file", help="trace file")
    p.add_argument("--format", choices=("auto", "strace", "perf"), default="auto")
    p.add_argument("--lenient", action="store_true", help="skip (and count) malformed lines")
    add_json(p)
    p.set_defaults(func=_parse)

    s = tsub.add_parser("synth", help="write containerd's mount syscalls as strace text")
    s.add_argument("--strategy", choices=STRATEGIES, required=True)
    add_runtime(s, _BURST.runtime)
    s.add_argument("--containers", type=positive_int, default=_BURST.containers,
                   help="containers (default %(default)s)")  # fmt: skip
    s.add_argument("--layers", type=positive_int, default=_BURST.layers,
                   help="image layers (default %(default)s)")  # fmt: skip
    add_seed(s)
    s.add_argument(
        "--arrival", type=_arrival, default="burst", help="burst, stagger:NS or poisson:RATE_PER_S"
    )
    s.add_argument(
        "--think-ns", type=nonneg_int, default=None, help="mean think time (default none)"
    )
    s.add_argument(
        "--duration-ns", type=nonneg_int, default=None, help="mean duration (default none)"
    )
    s.add_argument("--style", choices=STYLES, default="tt", help="strace timestamp style")
    s.add_argument("--out", required=True, help="output file (written atomically)")
    add_json(s)
    s.set_defaults(func=_synth)


def _parse(args: argparse.Namespace) -> int:
    trace = parse_trace(args.file, format=args.format, lenient=args.lenient)
    summary = summarize(trace)
    if args.json:
        doc = {"schema": 1, "trace": summary,
               "provenance": provenance.stamp(inputs=[args.file], format=args.format,
                                              lenient=args.lenient)}  # fmt: skip
        print(provenance.dumps(doc), end="")
    else:
        print(_human(summary))
    return 0


def _synth(args: argparse.Namespace) -> int:
    refuse_absurd(containers=args.containers, layers=args.layers)  # cohsim.predict.validity
    check_file(args.out)
    trace = synthesize(args.strategy, args.containers, args.layers, seed=args.seed,
                       arrival=args.arrival, think_ns=args.think_ns,
                       duration_ns=args.duration_ns, runtime=args.runtime)  # fmt: skip
    text = write_strace(trace, args.style)
    with writing(args.out):
        provenance.write_atomic(args.out, text, make_dirs=False)
    summary = summarize(trace)
    if args.json:
        doc = {"schema": 1, "out": args.out, "digest": provenance.text_digest(text),
               "trace": summary,
               "provenance": provenance.stamp(seed=args.seed, strategy=args.strategy,
                                              containers=args.containers, layers=args.layers,
                                              arrival=args.arrival, think_ns=args.think_ns,
                                              duration_ns=args.duration_ns,
                                              runtime=args.runtime,
                                              style=args.style)}  # fmt: skip
        print(provenance.dumps(doc), end="")
    else:
        print(f"wrote {args.out} ({len(text.splitlines())} lines, {provenance.text_digest(text)})")
        print(_human(summary))
    return 0


def _human(s: dict[str, Any]) -> str:
    lines = [
        f"source      {s['source']} ({s['format']})",
        f"threads     {s['threads']}",
        f"syscalls    {s['syscalls']} mount-relevant, mount_ops {s['mount_ops']}",
        f"skipped     {s['unknown_skipped']} unknown syscalls, "
        f"{s['malformed_skipped']} malformed lines",
        f"span        {s['span_ns'] / NS_PER_MS:.3f} ms",
        "",
        f"{'syscall':<14}{'count':>8}{'p50_us':>10}{'p95_us':>10}{'max_us':>10}",
    ]
    stats = s["duration_stats"]
    for name, count in s["syscalls_by_name"].items():
        d = stats.get(name)
        cols = (
            [f"{d[k] / NS_PER_US:10.1f}" for k in ("p50_ns", "p95_ns", "max_ns")]
            if d
            else ["-".rjust(10)] * 3
        )
        lines.append(f"{name:<14}{count:>8}" + "".join(cols))
    return "\n".join(lines)
