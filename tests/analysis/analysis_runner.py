"""Run one calibration/analysis script as its README says: `python -m` from the repository
root, so the scripts import cohsim and each other as they do there."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "calibration/data/devvm-2cpu-intel-xeon-f6m167/mount-trace"
#: the smallest multi-worker trace the scripts share (common-parent, 2 workers, 1 layer)
CP2 = TRACES / "unmount-breakdown/trace-common-parent-2w-1L.txt.xz"


def run(module: str, *args: Path | str) -> str:
    """The script's stdout; a failure shows its stderr."""
    cmd = [sys.executable, "-m", f"calibration.analysis.{module}", *map(str, args)]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def number(pattern: str, text: str) -> float:
    """The first group of `pattern` in `text`, as a number."""
    m = re.search(pattern, text)
    assert m, f"{pattern!r} not in:\n{text}"
    return float(m.group(1))
