"""An interrupted sweep resumes: the points finished before Ctrl-C or a kill stay in the cache,
no output file is half-written, and running the same command again computes only the missing
points and writes the same bytes as a sweep never interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tinygrid import MACHINES

from cohsim.cli.app import main

#: 2 machines x 2 layer counts x 3 container counts: 12 points of 0.1-0.3 s each
GRID = ["--instances", ",".join(MACHINES), "--containers", "2,4,6", "--layers", "2,4",
        "--replicates", "2", "--seed", "5", "--no-progress"]  # fmt: skip
POINTS = 12


def _default_sigint() -> None:
    """In the child before it runs cohsim: SIGINT's default action (Python then raises
    KeyboardInterrupt on it), whatever this process inherited."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _outputs(folder: Path) -> list[str]:
    return ["--csv", str(folder / "s.csv"), "--json", str(folder / "s.json")]


def _read(folder: Path) -> tuple[bytes, bytes]:
    return (folder / "s.csv").read_bytes(), (folder / "s.json").read_bytes()


def _check_resumed(tmp_path: Path, capsys, kept: int) -> None:
    """Run the same sweep again: it computes only the missing points and writes the bytes of a
    sweep run through without a cache (run after it, as the same code)."""
    capsys.readouterr()
    code = main(["sweep", *GRID, "--workers", "1", "--cache", str(tmp_path / "cache"),
                 *_outputs(tmp_path)])  # fmt: skip
    out = capsys.readouterr().out
    ref = tmp_path / "reference"
    ref.mkdir()  # no folder is made for an output
    assert main(["sweep", *GRID, "--workers", "1", "--cache", "off", *_outputs(ref)]) == 0
    assert code == 0
    assert f"{POINTS} points: {POINTS - kept} computed, {kept} from the cache" in out, out
    assert _read(tmp_path) == _read(ref)


def _start(tmp_path: Path, workers: str) -> subprocess.Popen[str]:
    """The sweep started as a user would, in a process group of its own (its Dask cluster too),
    keeping its points in tmp_path/cache."""
    cmd = [sys.executable, "-m", "cohsim.cli", "sweep", *GRID, "--workers", workers,
           "--cache", str(tmp_path / "cache"), *_outputs(tmp_path)]  # fmt: skip
    # cwd: `python -m` puts the working directory first on the path, and the source tree
    # lacks the installed package's data packages (cohsim._catalog); preexec_fn: Ctrl-C's
    # default, which a shell's background job (SIGINT ignored) would otherwise pass down
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=tmp_path,
                            preexec_fn=_default_sigint)  # fmt: skip


def _interrupt(tmp_path: Path, workers: str, how: signal.Signals, after: int) -> tuple[int, str]:
    """Start the sweep as a user would, stop it with `how` once `after` points are kept; its
    exit status and stderr."""
    cache = tmp_path / "cache"
    proc = _start(tmp_path, workers)
    try:
        give_up = time.monotonic() + 120
        while len(list(cache.glob("*.json"))) < after:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < give_up, "no points kept in 120 s"
            time.sleep(0.02)
        os.killpg(proc.pid, how)  # as a terminal does: the process and its Dask workers
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, err


@pytest.mark.parametrize("workers", ["1", pytest.param("2", marks=pytest.mark.slow, id="dask")])
def test_ctrl_c_keeps_the_finished_points(tmp_path, capsys, workers):
    """Ctrl-C (SIGINT to the process group, as a terminal sends it): one line, exit 130."""
    code, err = _interrupt(tmp_path, workers, signal.SIGINT, after=3)
    assert code == 130
    assert err.strip().splitlines() == [
        f"cohsim: interrupted (finished points are kept in {tmp_path / 'cache'}; the same "
        "command resumes)"
    ]
    assert not (tmp_path / "s.csv").exists() and not (tmp_path / "s.json").exists()
    kept = len(list((tmp_path / "cache").glob("*.json")))
    assert 3 <= kept < POINTS
    _check_resumed(tmp_path, capsys, kept)


@pytest.mark.parametrize("workers", ["1", pytest.param("2", marks=pytest.mark.slow, id="dask")])
def test_a_killed_sweep_resumes(tmp_path, capsys, workers):
    """SIGKILL to the sweep's process group (with 2 workers, its Dask cluster too)."""
    code, _ = _interrupt(tmp_path, workers, signal.SIGKILL, after=3)
    assert code == -signal.SIGKILL
    assert not (tmp_path / "s.csv").exists() and not (tmp_path / "s.json").exists()
    kept = len(list((tmp_path / "cache").glob("*.json")))
    assert 3 <= kept < POINTS
    _check_resumed(tmp_path, capsys, kept)


@pytest.mark.slow
def test_a_killed_dask_worker_loses_nothing(tmp_path, capsys):
    """SIGKILL to one of the local cluster's workers mid-sweep: Dask runs its task again on a
    new worker, and the sweep finishes with every point, once, in the uninterrupted bytes."""
    import psutil

    cache = tmp_path / "cache"
    proc = _start(tmp_path, "2")
    try:
        give_up = time.monotonic() + 120
        while len(list(cache.glob("*.json"))) < 2:
            assert proc.poll() is None and time.monotonic() < give_up, proc.communicate()
            time.sleep(0.02)
        workers = [
            c for c in psutil.Process(proc.pid).children() if "spawn_main" in " ".join(c.cmdline())
        ]
        assert len(workers) == 2
        workers[0].send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    ref = tmp_path / "reference"
    ref.mkdir()  # no folder is made for an output
    assert main(["sweep", *GRID, "--workers", "1", "--cache", "off", *_outputs(ref)]) == 0
    assert proc.returncode == 0, err
    assert f"{POINTS} points: {POINTS} computed, 0 from the cache" in out
    assert len(list(cache.glob("*.json"))) == POINTS
    assert _read(tmp_path) == _read(ref)
