"""The examples run and say what their docstrings promise."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import REPO


def run_example(name: str) -> str:
    r = subprocess.run(
        [sys.executable, str(REPO / "examples" / name)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return r.stdout


def test_remote_home_example():
    out = run_example("remote_home.py")
    amd, intel = out.split("c6i.metal")
    remote = float(re.search(r"remote_home: model\s+([\d.]+)", amd).group(1))
    cross_llc = float(re.search(r"cross_llc: model\s+([\d.]+)", amd).group(1))
    assert remote > 1.7 * cross_llc
    assert "remote_home" not in intel
