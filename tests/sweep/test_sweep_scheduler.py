"""`cohsim sweep --scheduler`: the points sent to an existing Dask cluster (a scheduler and two
workers started here, as separate processes) give the bytes of the local run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tinygrid import FLAGS

from cohsim.cli.app import main

#: the dask commands, run by this interpreter (distributed is a dependency: no script to find)
DASK = {
    "scheduler": [sys.executable, "-m", "distributed.cli.dask_scheduler"],
    "worker": [sys.executable, "-m", "distributed.cli.dask_worker"],
}


def _start(folder: Path, command: str, *argv: str) -> subprocess.Popen[bytes]:
    """A dask command run from `folder`: `python -m` puts the working directory first on the
    path, and the repository's source tree lacks the installed data packages (cohsim._catalog)
    its workers import."""
    return subprocess.Popen(
        [*DASK[command], *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        cwd=folder,
    )


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[str]:
    """A dask scheduler on this machine and two one-thread workers; its address."""
    info = tmp_path / "scheduler.json"
    procs = [_start(tmp_path, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                    "--scheduler-file", str(info))]  # fmt: skip
    try:
        for _ in range(2):
            worker = ["--scheduler-file", str(info), "--nthreads", "1", "--no-dashboard"]
            procs.append(_start(tmp_path, "worker", *worker, "--death-timeout", "30"))
        give_up = time.monotonic() + 60
        while not info.exists() or not info.read_text().strip():
            assert time.monotonic() < give_up and procs[0].poll() is None, "no scheduler"
            time.sleep(0.1)
        import json

        yield json.loads(info.read_text())["address"]
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def test_an_existing_cluster_gives_the_local_bytes(cluster, tmp_path, capsys):
    out = {k: [f"--{k}", str(tmp_path / k / f"sweep.{k}")] for k in ("csv", "json")}
    for k in out:
        (tmp_path / k).mkdir()  # no folder is made for an output
    argv = ["sweep", *FLAGS, "--cache", "off", *out["csv"], *out["json"]]
    assert main([*argv[:-4], "--workers", "1", "--csv", str(tmp_path / "local.csv"),
                 "--json", str(tmp_path / "local.json")]) == 0  # fmt: skip
    assert main([*argv, "--scheduler", cluster]) == 0
    assert "4 points: 4 computed, 0 from the cache" in capsys.readouterr().out
    assert (tmp_path / "csv" / "sweep.csv").read_bytes() == (tmp_path / "local.csv").read_bytes()
    assert (tmp_path / "json" / "sweep.json").read_bytes() == (tmp_path / "local.json").read_bytes()
