"""The simulation compiled with mypyc (setup.py) and as pure Python (cohsim._pure): the same
bytes, and the tests that reach into the simulation's objects run on the sources.

Where cohsim is pure Python (a run from the tree, an install without a C compiler) there is
nothing to compare and these tests say so.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA

from cohsim import _pure
from cohsim.kernel.simulation import clock

#: is the simulation compiled here (its clock a compiled module)?
COMPILED = not (clock.__file__ or "").endswith(".py")
needs_compiled = pytest.mark.skipif(
    not COMPILED, reason="cohsim.kernel is pure Python here (`pip install .` compiles it)"
)

#: a full-precision digest of a small launch, every call of it, its lock tallies
DIGEST = """
import dataclasses
import hashlib
from cohsim.kernel.costs import load_kernel
from cohsim.kernel.simulation.launch import LaunchSim
from cohsim.kernel.linecosts import LineCosts
from cohsim.machine.catalog import Catalog
from cohsim.predict import burst_workload
m = Catalog().get("m7i.metal-24xl")
costs = LineCosts(m, seed=3)
costs.prefill()
calls = []
sim = LaunchSim(m, load_kernel(), burst_workload("per-layer", 12, 5, seed=3), costs=costs,
                seed=3, layers=5, record=True, calls=calls)
res = sim.run()
h = hashlib.sha256()
h.update(repr([dataclasses.astuple(r) for r in res]).encode())
h.update(repr({k: dataclasses.asdict(v) for k, v in sim.stats.items()}).encode())
h.update(repr(calls).encode())
h.update(repr(dataclasses.asdict(sim.record)).encode())
h.update(repr((float(sim.ml.bg_spin_ns), sim.ml.legitimize, sim.rcu.count, sim.env.now,
               sim.readers.rereads, sim.readers.max_lag_ns)).encode())
print(h.hexdigest())
"""


def _run(args: list[str], tmp_path: Path, pure: bool) -> str:
    """stdout of `python args` in a folder of its own (not the tree's root, whose cohsim/ has
    no compiled modules), compiled or pure Python; the provenance's time stamp left out."""
    env = {k: v for k, v in os.environ.items() if k != _pure.ENV}
    if pure:
        env[_pure.ENV] = "1"
    out = subprocess.run(
        [sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    ).stdout
    return "\n".join(line for line in out.splitlines() if '"generated' not in line)


@needs_compiled
def test_compiled_and_pure_python_simulations_give_the_same_bytes(tmp_path):
    runs = {}
    for pure in (False, True):
        loaded = _run(
            ["-c", "from cohsim.kernel.simulation import clock; print(clock.__file__)"],
            tmp_path,
            pure,
        )
        assert loaded.endswith(".py") == pure
        runs[pure] = [
            _run(["-c", DIGEST], tmp_path, pure),
            _run(
                ["-m", "cohsim.cli", "predict", "--arch", "chiplet", "--containers", "30",
                 "--layers", "8", "--json"],
                tmp_path, pure,
            ),
            _run(
                ["-m", "cohsim.cli", "replay", "--instance", "m7g.metal", "--json",
                 str(DATA / "reference" / "trace-format-examples"
                     / "strace_f_tt_T_containerd_like_per_layer_3layers.txt")],
                tmp_path, pure,
            ),
        ]  # fmt: skip
    assert runs[False] == runs[True]


@needs_compiled
def test_the_tests_that_reach_into_the_simulation_pass_on_the_sources(tmp_path):
    """Tests marked `pure_python` (they replace a method or subclass the clock, which compiled
    classes refuse) are skipped in a compiled run; here they run on the sources."""
    tests = Path(__file__).resolve().parents[2]  # all of tests/, not only tests/kernel/
    env = {**os.environ, _pure.ENV: "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
         "-m", "pure_python", str(tests)],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout.splitlines()[-1]
