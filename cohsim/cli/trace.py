"""`cohsim trace parse` and `cohsim trace synth`: syscall traces on the command line.

Thin layer over `cohsim.workload.parse` (parse_trace), `cohsim.workload.trace` (summarize),
`cohsim.workload.synth` (synthesize, write_strace) and `cohsim.workload.storm` (unshare_storm:
`--pattern unshare`, a storm of bare `unshare -m`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from cohsim import provenance
from cohsim.cli.args import add_runtime, add_seed, nonneg_int, positive_float, positive_int
from cohsim.cli.outputs import check_file, writing
from cohsim.errors import UsageError
from cohsim.predict.question import Burst
from cohsim.predict.validity import refuse_absurd
from cohsim.units import NS_PER_MS, NS_PER_US
from cohsim.workload.parse import parse_trace
from cohsim.workload.storm import PROPAGATIONS, unshare_storm
from cohsim.workload.summary import summarize
from cohsim.workload.synth import STRATEGIES, STYLES, synthesize, write_strace
from cohsim.workload.trace import Trace

_BURST = Burst()  #: the question's defaults (cohsim.predict.question)
_PROCESSES = 100  #: `trace synth --pattern unshare`'s processes when not given
PATTERNS = ("containerd", "unshare")
#: each pattern's own flags (None when not given): given with the other pattern, a usage error
_PATTERN_FLAGS = {
    "containerd": ("strategy", "runtime", "containers", "layers"),
    "unshare": ("processes", "propagation", "mountinfo"),
}
_OTHER = {"containerd": "unshare", "unshare": "containerd"}


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
        "trace", help="parse a syscall trace, or synthesise a containerd workload or unshare storm"
    )
    tsub = group.add_subparsers(dest="trace_command", required=True, metavar="SUBCOMMAND")

    p = tsub.add_parser("parse", help="summarise an strace -f -tt/-ttt/-r [-T] or perf trace log")
    p.add_argument("file", help="trace file")
    p.add_argument("--format", choices=("auto", "strace", "perf"), default="auto")
    p.add_argument("--lenient", action="store_true", help="skip (and count) malformed lines")
    add_json(p)
    p.set_defaults(func=_parse)

    s = tsub.add_parser(
        "synth",
        help="write containerd's mount syscalls, or a storm of bare unshare -m, as strace text",
    )
    s.add_argument("--pattern", choices=PATTERNS, default="containerd",
                   help="containerd: its idmap sequences per container, then the runtime's; "
                        "unshare: bare `unshare -m` processes, each a copy of the host's "
                        "mount table (default %(default)s)")  # fmt: skip
    g = s.add_argument_group("--pattern containerd")
    g.add_argument("--strategy", choices=STRATEGIES, help="containerd's idmap strategy (required)")
    add_runtime(g, _BURST.runtime, unset=True)
    g.add_argument("--containers", type=positive_int,
                   help=f"containers (default {_BURST.containers})")  # fmt: skip
    g.add_argument("--layers", type=positive_int,
                   help=f"image layers (default {_BURST.layers})")  # fmt: skip
    u = s.add_argument_group("--pattern unshare")
    u.add_argument("--processes", type=positive_int,
                   help=f"unshare -m processes (default {_PROCESSES})")  # fmt: skip
    u.add_argument("--propagation", choices=tuple(PROPAGATIONS),
                   help="what unshare(1) sets on the copy's / (default private, as "
                        "util-linux's)")  # fmt: skip
    u.add_argument("--mountinfo", action="store_true", default=None,
                   help="each process reads its own mountinfo once before it exits")  # fmt: skip
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
    trace, stamp = _synthesised(args)
    text = write_strace(trace, args.style)
    with writing(args.out):
        provenance.write_atomic(args.out, text, make_dirs=False)
    summary = summarize(trace)
    if args.json:
        doc = {"schema": 1, "out": args.out, "digest": provenance.text_digest(text),
               "trace": summary, "provenance": provenance.stamp(**stamp)}  # fmt: skip
        print(provenance.dumps(doc), end="")
    else:
        print(f"wrote {args.out} ({len(text.splitlines())} lines, {provenance.text_digest(text)})")
        print(_human(summary))
    return 0


def _synthesised(args: argparse.Namespace) -> tuple[Trace, dict[str, Any]]:
    """The pattern's trace, and what its provenance records; a flag of the other pattern is
    a usage error (exit 2), a count beyond a real node an input error (exit 1), both before
    the output file is touched."""
    other = _OTHER[args.pattern]
    given = [f"--{f}" for f in _PATTERN_FLAGS[other] if getattr(args, f) is not None]
    if given:
        raise UsageError(f"{', '.join(given)}: not a flag of --pattern {args.pattern}")
    times = {"arrival": args.arrival, "think_ns": args.think_ns, "duration_ns": args.duration_ns}
    if args.pattern == "unshare":
        n, prop = args.processes or _PROCESSES, args.propagation or "private"
        mountinfo = bool(args.mountinfo)
        trace = unshare_storm(n, seed=args.seed, propagation=prop, mountinfo=mountinfo, **times)
        check_file(args.out)
        return trace, {"seed": args.seed, "pattern": "unshare", "processes": n,
                       "propagation": prop, "mountinfo": mountinfo, **times,
                       "style": args.style}  # fmt: skip
    if args.strategy is None:
        raise UsageError("--pattern containerd needs --strategy " + "|".join(STRATEGIES))
    c, layers = args.containers or _BURST.containers, args.layers or _BURST.layers
    runtime = args.runtime or _BURST.runtime
    refuse_absurd(containers=c, layers=layers)  # cohsim.predict.validity
    check_file(args.out)
    trace = synthesize(args.strategy, c, layers, seed=args.seed, runtime=runtime, **times)
    return trace, {"seed": args.seed, "strategy": args.strategy, "containers": c,
                   "layers": layers, **times, "runtime": runtime,
                   "style": args.style}  # fmt: skip


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
