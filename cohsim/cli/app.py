"""The `cohsim` command line: parses, calls one library function, formats.

Exit codes: 0 success; 1 a model or input error (a CohsimError: one line on stderr naming the
file, line or key and what is wrong, no traceback, no half-written output file); 2 usage
(argparse: the usage and one error line); 130 interrupted. Every command has `--json` printing
one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from cohsim import __version__
from cohsim.cli import bench as cli_bench
from cohsim.cli import calibrate as cli_calibrate
from cohsim.cli import lock as cli_lock
from cohsim.cli import machine as cli_machine
from cohsim.cli import plan as cli_plan
from cohsim.cli import predict as cli_predict
from cohsim.cli import sweep as cli_sweep
from cohsim.cli import trace as cli_trace
from cohsim.errors import CohsimError


def _add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cohsim",
        description="Cache coherence under lock contention and container launch latency "
        "on server CPUs.",
    )
    parser.add_argument("--version", action="version", version=f"cohsim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    # Each group of commands lives in its own cli_* module with a register() function.
    for module in (
        cli_machine,
        cli_lock,
        cli_predict,
        cli_plan,
        cli_bench,
        cli_calibrate,
        cli_trace,
        cli_sweep,
    ):
        module.register(sub, _add_json)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CohsimError as exc:
        print(f"cohsim: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("cohsim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
