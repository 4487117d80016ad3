"""The examples run and say what their docstrings promise.

The teaching examples (mesh_vs_chiplet, common_parent_knee, smt_and_sockets) run with small
bursts and one replicate, write their figure, and print findings computed from the model: the
tests check the figure is a PNG and that the findings point the way the model does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from cohsim.machine.catalog import Catalog

PNG = b"\x89PNG\r\n\x1a\n"
SMALL = ("--containers", "10,20", "--replicates", "1")  #: a few seconds per example


def run_example(name: str, *args: str) -> str:
    r = subprocess.run(
        [sys.executable, str(REPO / "examples" / name), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return r.stdout


def run_teaching(name: str, tmp_path: Path, *args: str) -> str:
    """A teaching example with small counts; its figure must be a non-empty PNG."""
    fig = tmp_path / "figure.png"
    out = run_example(name, *args, "--out", str(fig))
    data = fig.read_bytes()
    assert data.startswith(PNG) and len(data) > 10_000
    assert f"Figure: {fig}" in out
    assert "engine" in out.splitlines()[0]  # which engine answered comes first
    return out


def test_remote_home_example():
    out = run_example("remote_home.py")
    amd, intel = out.split("c6i.metal")
    remote = float(re.search(r"remote_home: model\s+([\d.]+)", amd).group(1))
    cross_llc = float(re.search(r"cross_llc: model\s+([\d.]+)", amd).group(1))
    assert remote > 1.7 * cross_llc
    assert "remote_home" not in intel


def test_mesh_vs_chiplet_example(tmp_path):
    out = run_teaching("mesh_vs_chiplet.py", tmp_path, *SMALL)
    catalog = Catalog()
    names = {catalog.archetype(k).instance for k in ("mesh", "chiplet", "cmn")}
    m = re.search(
        r"At 20 containers the launch p99 runs from ([\d.]+) s on (\S+) to ([\d.]+) s on (\S+):",
        out,
    )
    fast, slow = float(m.group(1)), float(m.group(3))
    assert fast <= slow and {m.group(2), m.group(4)} <= names and m.group(2) != m.group(4)
    handoffs = dict((k, float(v)) for v, k in re.findall(r"(\d+) ns on ([\w.-]+)", out))
    assert set(handoffs) == names and all(v > 0 for v in handoffs.values())
    # the burst queues on namespace_sem, not on mount_lock's line: held longer on every machine
    held = re.search(r"namespace_sem was held (\d+)x to (\d+)x longer than mount_lock", out)
    assert 1 < int(held.group(1)) <= int(held.group(2))
    assert "The launch p99 ranks them" in out


def test_common_parent_knee_example(tmp_path):
    out = run_teaching(
        "common_parent_knee.py", tmp_path, "--containers", "10,50,100", "--replicates", "1"
    )
    launch = {
        s: float(t)
        for s, t in re.findall(r"^([\w-]+): [\d.]+ s alone, ([\d.]+) s at 100", out, re.M)
    }
    assert set(launch) == {"per-layer", "common-parent", "lowerdir-plus"}
    assert launch["per-layer"] > 1.5 * launch["common-parent"]
    # the walks cost L2 loads below the ring's knee (cohsim.kernel.walk.cache_bands): per-layer
    # doubles a container's launch alone past 50 containers on the mesh representative
    assert re.search(r"^per-layer: .*; knee at 100,", out, re.M)
    assert re.search(r"^common-parent: .*; no knee up to 100,", out, re.M)
    plans = dict((s, (int(w), int(g))) for s, w, g in re.findall(r"([\w-]+) (\d+) and (\d+)", out))
    assert plans["per-layer"][0] > plans["common-parent"][0]
    assert plans["per-layer"][1] > plans["common-parent"][1]
    assert "moves the knee from 100 containers to beyond 100" in out


def test_smt_and_sockets_example(tmp_path):
    out = run_teaching("smt_and_sockets.py", tmp_path, *SMALL)
    for choice in (
        "SMT off on m7i.metal-24xl (96 -> 48 CPUs)",
        "One socket of r5.metal (96 -> 48 CPUs)",
    ):
        assert choice in out
    # fewer CPUs: shorter per-CPU sums under mount_lock in both choices
    held = re.findall(r"mount_lock held ([\d.]+) -> ([\d.]+) s", out)
    assert len(held) == 2 and all(float(b) < float(a) for a, b in held)
    assert (
        len(re.findall(r"launch p99: 10: [\d.]+ -> [\d.]+ s; 20: [\d.]+ -> [\d.]+ s\.", out)) == 2
    )


@pytest.mark.slow
def test_mesh_vs_chiplet_example_on_the_simulation(tmp_path):
    out = run_teaching("mesh_vs_chiplet.py", tmp_path, *SMALL, "--engine", "des")
    assert "level 3 answered by the des engine, 1 replicate(s) a point, seed 0" in out
    assert "leaves level 2's hand-off out" not in out  # the simulation prices it in
    held = re.search(r"namespace_sem was held (\d+)x to (\d+)x longer than mount_lock", out)
    assert 1 < int(held.group(1)) <= int(held.group(2))


def test_the_readmes_commands_use_the_venvs_python():
    """The README installs into .venv and runs .venv/bin/cohsim: its python commands (the
    examples, the benchmarks, the analyses) must be the venv's python too, not whichever
    `python` is first on PATH (it may lack cohsim, or be another version). Only the venv's own
    creation (`python3 -m venv`) runs a bare python."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    bare = [m.group(0) for m in re.finditer(r"(?<![\w/.-])python3? (?!-m venv\b)\S+", readme)]
    assert bare == []
    assert ".venv/bin/python examples/mesh_vs_chiplet.py" in readme


#: run in a fresh python with examples/ on PYTHONPATH: an example's main(), its figure's
#: panels measured where it would be saved (their titles' boxes, in pixels, after drawing)
_TITLES = """
import json, sys
import {name} as ex

def measure(fig, out):
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    boxes = [list(ax.title.get_window_extent(r).bounds) for ax in fig.axes]
    frames = [list(ax.get_window_extent(r).bounds) for ax in fig.axes]
    print("BOXES " + json.dumps([boxes, frames, list(fig.bbox.bounds)]))

ex.save_figure = measure
sys.argv = [ex.__file__, *sys.argv[1:]]
ex.main()
"""


@pytest.mark.parametrize("name", ["mesh_vs_chiplet", "common_parent_knee", "smt_and_sockets"])
def test_the_teaching_figures_titles_do_not_overlap(name):
    """Issue 30, item 3: common_parent_knee's two titles ran into each other (12-point titles
    wider than their panels). Each title lies within the figure, over its own panel's width,
    and no two titles share a pixel."""
    r = subprocess.run(
        [sys.executable, "-c", _TITLES.format(name=name), *SMALL],
        capture_output=True, text=True, timeout=120, check=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "examples")},
    )  # fmt: skip
    boxes, frames, (_, _, width, _) = json.loads(r.stdout.split("BOXES ", 1)[1].splitlines()[0])
    for (x, _, w, _), (fx, _, fw, _) in zip(boxes, frames, strict=True):
        assert 0 <= x and x + w <= width
        assert x + w <= fx + fw + 0.25 * fw and x >= fx - 0.25 * fw  # over its own panel
    for i, (x1, y1, w1, h1) in enumerate(boxes):
        for x2, y2, w2, h2 in boxes[i + 1 :]:
            assert x1 + w1 <= x2 or x2 + w2 <= x1 or y1 + h1 <= y2 or y2 + h2 <= y1
