"""Command-line commands for the lock hand-off level (registered by cohsim.cli)."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def register(sub: argparse._SubParsersAction, add_json: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add this group's subcommands to the cohsim parser."""
