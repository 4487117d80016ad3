"""The one error type cohsim raises for bad input or an impossible model.

Every user-facing failure (a malformed TOML, a ragged matrix, an unknown instance) is a
`CohsimError` whose message is one line naming *where* (file, line, key) and *what* is wrong.
The CLI prints it on stderr and exits 1; no traceback ever reaches a user.
"""

from __future__ import annotations


class CohsimError(Exception):
    """Bad input or an impossible model, described in one line.

    `where` is the file (optionally with ``:line`` or ``[key]``) the problem was found in,
    or empty when the problem is not tied to a file.
    """

    def __init__(self, what: str, where: str = "") -> None:
        self.what = what
        self.where = where
        super().__init__(f"{where}: {what}" if where else what)


class UsageError(CohsimError):
    """A value an argument can never take (an unknown name, an impossible number), caught
    where the model first sees it: the CLI prints the one line and exits 2, as for argparse's
    own usage errors."""
