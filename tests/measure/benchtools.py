"""Helpers the benchmark tests share: running a built benchmark, running it as an ordinary user,
the mount table's size, and interrupting a run with SIGTERM."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

IS_ROOT = os.geteuid() == 0
#: the mount benchmarks create mount namespaces and mounts
needs_root = pytest.mark.skipif(not IS_ROOT, reason="needs root (mount namespaces and mounts)")

Argv = Sequence[str | os.PathLike[str]]


def run(argv: Argv, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=60, **kw)  # type: ignore[call-overload]


def as_nobody(argv: Argv) -> list[str | os.PathLike[str]]:
    """`argv` run as an ordinary user: as it is when not root, else through setpriv (skipped
    where setpriv is missing)."""
    if not IS_ROOT:
        return list(argv)
    setpriv = shutil.which("setpriv")
    if not setpriv:
        pytest.skip("running as root and no setpriv to drop privileges")
    return [setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups", *argv]


def mountinfo_lines() -> int:
    return len(Path("/proc/self/mountinfo").read_text().splitlines())


def interrupt(argv: Argv, ready: Callable[[subprocess.Popen[str]], bool], settle_s: float):
    """Start `argv`, wait (10 s at most) until `ready(proc)`, let it run `settle_s` more, send
    SIGTERM; returns (the process, its exit code, its stderr)."""
    proc = subprocess.Popen(
        [str(a) for a in argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 10
    while not ready(proc) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(settle_s)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    return proc, proc.returncode, err
