"""`cohsim calibrate`: fit kernel and lock parameters to real bench data (thin CLI)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

from cohsim import provenance
from cohsim.calibrate import Calibration, load_bench
from cohsim.cli.args import add_seed
from cohsim.cli.outputs import check_file, writing
from cohsim.errors import CohsimError
from cohsim.kernel.costs import DEFAULT_KERNEL


def _calibrate(args: argparse.Namespace) -> int:
    if not args.out.endswith(".json"):
        raise CohsimError(f"--out {args.out!r} must name a .json file")
    check_file(args.out)
    data = load_bench(args.data)  # every input error surfaces before any work or output
    for where, why in data.skipped:
        print(f"cohsim: skipped {where}: {why}", file=sys.stderr)
    t0 = time.perf_counter()
    fit = Calibration(
        args.instance, kernel=args.kernel, seed=args.seed, progress=not args.no_progress
    ).fit(data)
    wall = time.perf_counter() - t0
    with writing(args.out):
        fit.save(args.out)
    doc = fit.to_dict()
    if args.json:
        summary: dict[str, Any] = {
            "schema": doc["schema"],
            "kind": doc["kind"],
            "instance": doc["instance"],
            "out": args.out,
            "parameters": doc["parameters"],
            "fixed": doc["fixed"],
            "optimizer": doc["optimizer"],
            "data_digests": doc["data_digests"],
            "skipped": [{"file": where, "why": why} for where, why in data.skipped],
            "provenance": provenance.stamp(seed=args.seed, command="calibrate"),
        }
        print(provenance.dumps(summary), end="")
        return 0
    print(
        f"{doc['instance']}: {doc['kind']} fit ({len(data.mount)} mount runs, "
        f"{len(data.pause)} pause runs) -> {args.out}"
    )
    if doc["parameters"] or doc["fixed"]:
        print(fit.report())
    print(f"({wall:.1f} s)", file=sys.stderr)
    return 0


def register(
    sub: argparse._SubParsersAction, add_json: Callable[[argparse.ArgumentParser], None]
) -> None:
    """Add this group's subcommands to the cohsim parser."""
    p = sub.add_parser(
        "calibrate",
        help="fit kernel and lock parameters to real bench data",
        description="Fit the kernel's critical sections and RCU wait to "
        "mount_bench data and the lock line's transfer to "
        "pause_bench data, with standard errors.",
    )
    p.add_argument(
        "data",
        nargs="+",
        metavar="DATA",
        help="bench output directories or *_bench.csv files: pause, mount and wake data are "
        "fitted; the other benches' files (ns, prop, walk, chase, corun) are skipped with a note",
    )
    p.add_argument("--instance", help="catalog machine the data was measured on")
    p.add_argument(
        "--kernel",
        default=DEFAULT_KERNEL,
        help="kernel model name or TOML file (default %(default)s)",
    )
    p.add_argument("--out", required=True, help="fit JSON to write")
    add_seed(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_json(p)
    p.set_defaults(func=_calibrate)
