"""The `cohsim` command line: one module per command group, `app` the dispatcher."""

from cohsim.cli.app import main

__all__ = ["main"]
