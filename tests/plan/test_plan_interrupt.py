"""`cohsim plan` stopped as a user stops it, and pointed at a scheduler address that is not
one: one line each, no Dask worker's traceback (a Ctrl-C printed 71-81 lines of them; a bad
address took 10 s, then a traceback)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cohsim.cli.app import main

#: three candidates, so that the first round has more points than run in-process and goes to
#: a local Dask cluster; the simulation, so that the plan is far from done when stopped
PLAN = ["plan", "--instances", "r5.metal,m7a.24xlarge,c6a.metal", "--containers", "20",
        "--layers", "5", "--engine", "des", "--replicates", "1", "--workers", "2"]  # fmt: skip


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # what a shell's background job may ignore


def test_ctrl_c_is_one_line(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {**os.environ, "COHSIM_CACHE": str(cache)}
    proc = subprocess.Popen([sys.executable, "-m", "cohsim.cli", *PLAN], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            cwd=tmp_path, env=env, preexec_fn=_default_sigint)  # fmt: skip
    try:
        give_up = time.monotonic() + 120
        while len(list((cache / "sweep").glob("*.json"))) < 3:  # the workers are computing
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < give_up, "no points kept in 120 s"
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the plan and its workers
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130 and out == ""
    assert err.splitlines() == [
        f"cohsim: interrupted (finished points are kept in {cache / 'sweep'}; the same "
        "command resumes from them)"
    ]


@pytest.mark.parametrize("command", ["plan", "sweep"])
@pytest.mark.parametrize("address", ["notanaddress", "tcp://host", "http://host:8786", "h:0"])
def test_a_scheduler_address_that_is_not_one_is_refused_at_once(capsys, command, address):
    t0 = time.monotonic()
    assert main([command, "--instances", "r5.metal", "--scheduler", address]) == 1
    out, err = capsys.readouterr()
    assert time.monotonic() - t0 < 3  # not a connection attempt's timeout
    assert out == "" and err == (
        f"cohsim: error: --scheduler {address!r} is not a Dask scheduler address "
        "([tcp://]HOST:PORT, e.g. tcp://10.0.0.5:8786)\n"
    )
