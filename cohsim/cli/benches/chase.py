"""`cohsim bench chase`: chase_bench's flags, argv and summary (dependent-load latency by
working-set size).

A pointer chase over a random cycle of 64-byte nodes spanning each size, timed per load, for
lines warm in the reader's own caches (``local``) and for lines the writer on the other CPU
modified right before each pass (``remote``) (cohsim.measure.chasebench). The summary gives, per
mode and size, the median ns per load over the repeats with its min and max, and the median in
ticks of the host's clock.
"""

from __future__ import annotations

import argparse
from typing import Any

from cohsim.cli.args import add_seed, positive_int
from cohsim.cli.benches.flags import cpu_pair, flags, list_arg
from cohsim.errors import CohsimError
from cohsim.measure.chasebench import CHASE_DEFAULTS, CHASE_MODES, CHASE_PAGES, parse_sizes
from cohsim.units import NS_PER_S


def _sizes(text: str) -> str:
    """A comma-separated list of sizes, each a whole number of 64-byte nodes (usage error else)."""
    try:
        parse_sizes(text)
    except CohsimError as exc:
        raise argparse.ArgumentTypeError(f"--sizes: {exc}") from exc
    return text


def add(kinds: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """`bench chase`: chase_bench's flags."""
    p = kinds.add_parser(
        "chase",
        help="dependent-load latency by working-set size, own caches and another CPU's writes",
        description="chase_bench: a pointer chase over a random cyclic permutation of 64-byte"
        " nodes spanning each size, ns per dependent load: local (the reader on CPU A builds"
        " and warms the set) and remote (a writer on CPU B writes every node right before each"
        " timed pass). Needs no privileges.",
    )
    p.add_argument(
        "--sizes",
        default=CHASE_DEFAULTS["--sizes"],
        type=_sizes,
        help="working sets, comma-separated: bytes, or a number with K, M or G (binary), each a"
        f" multiple of 64 bytes (default {CHASE_DEFAULTS['--sizes']})",
    )
    list_arg(
        p,
        "--mode",
        CHASE_DEFAULTS["--mode"],
        "local (lines in the reader's own caches), remote (lines the other CPU just wrote),"
        " comma-separated; default local,remote",
        choices=CHASE_MODES,
        unique=True,
    )
    p.add_argument(
        "--repeats", type=positive_int, default=5, help="rounds of every size and mode (default 5)"
    )
    p.add_argument(
        "--cpus",
        default="0,1",
        type=cpu_pair,
        metavar="A,B",
        help="the reader's CPU and the writer's (default 0,1)",
    )
    add_seed(p)
    p.add_argument(
        "--min-ms",
        type=positive_int,
        default=20,
        help="timed chase per measurement at least, ms (default 20; a pass of a large set can"
        " take longer)",
    )
    p.add_argument(
        "--pages",
        choices=CHASE_PAGES,
        default="small",
        help="small: 4 KiB pages (MADV_NOHUGEPAGE: the chase pays TLB misses too); huge:"
        " transparent huge pages (MADV_HUGEPAGE); default small",
    )
    return p


def c_args(a: argparse.Namespace) -> list[str]:
    return flags(a, "--sizes", "--mode", "--repeats", "--cpus", "--seed", "--min-ms", "--pages")


def _size(size: int) -> str:
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if size >= 1 << shift:
            return f"{size / (1 << shift):g}{unit}"
    return str(size)


def show(summary: dict[str, Any]) -> None:
    tick_ghz = (summary["tick_hz"] or 0) / NS_PER_S  # ticks a ns: GHz
    print(
        f"ns per dependent load (timer overhead {summary['timer_overhead_ns']:.0f} ns subtracted);"
        f" median, min and max over the repeats; ticks at the {tick_ghz:.2f} GHz clock"
    )
    print(
        f"{'mode':<7}{'size':>7}{'repeats':>8}{'ns/load':>9}{'min':>9}{'max':>9}{'ticks':>8}"
        f"{'huge_kB':>9}"
    )
    for c in summary["configs"]:
        huge = "-" if c["anon_huge_kb"] is None else f"{c['anon_huge_kb']:.0f}"
        print(
            f"{c['mode']:<7}{_size(c['size_bytes']):>7}{c['repeats']:>8}{c['ns_per_load']:>9.2f}"
            f"{c['ns_per_load_min']:>9.2f}{c['ns_per_load_max']:>9.2f}{c['ticks_per_load']:>8.1f}"
            f"{huge:>9}"
        )
