"""The `cohsim` command line: parses, calls one library function, formats.

Exit codes, the same in every command: 0 success; 1 a model or input error (a CohsimError: one
line on stderr naming the file, line or key and what is wrong, no traceback, no half-written
output file): what the model refuses or needs a file, the catalog or another flag to judge;
2 usage (argparse: the usage and one error line): a flag's value malformed or outside what its
kind admits, a count below 1, a name not among the choices (cohsim.cli.args), or a value
the model finds no argument can take (a UsageError: an unknown prior pinned); 130
interrupted. Every command has `--json`
printing one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

from cohsim import __version__
from cohsim.errors import CohsimError, UsageError

#: each command and the cli module that registers it, in the order `cohsim --help` lists the
#: modules: a command line imports only its own (a prediction need not import the calibration,
#: the sweep's Dask or the plan)
COMMANDS = {
    "machines": "machine",
    "show": "machine",
    "c2c": "machine",
    "pause-bench": "lock",
    "predict": "predict",
    "replay": "predict",
    "plan": "plan",
    "bench": "bench",
    "calibrate": "calibrate",
    "trace": "trace",
    "sweep": "sweep",
    "kernel": "kernel",
}


def _add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"cohsim.cli.{name}")


def _command(argv: Sequence[str]) -> str | None:
    """The command `argv` names: its first argument that is not an option (the top level's
    options, -h and --version, take no value), if it is one."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or with `command` only the module that registers it (the others'
    imports are not paid: the command line parses the same)."""
    parser = argparse.ArgumentParser(
        prog="cohsim",
        description="Cache coherence under lock contention and container launch latency "
        "on server CPUs.",
    )
    parser.add_argument("--version", action="version", version=f"cohsim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    # Each group of commands lives in its own cli module with a register() function.
    names = dict.fromkeys(COMMANDS.values()) if command is None else [COMMANDS[command]]
    for name in names:
        _module(name).register(sub, _add_json)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        # building the parser imports the command's modules (numpy, matplotlib...): a Ctrl-C
        # then is the same one line as later
        args = build_parser(_command(argv)).parse_args(argv)
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"cohsim: error: {exc}", file=sys.stderr)
        return 2
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
