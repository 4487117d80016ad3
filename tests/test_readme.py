"""The README's and docs/examples.md's commands run as written.

Every line of their ```sh blocks is a case here (a `\\` continuation joins the next line). Each
runs through bash in its own temporary directory, which holds `.venv` (a link to the venv
running these tests, so `.venv/bin/...` is this interpreter's), and links to the repository's
read-only folders the commands name (`examples/`, `calibration/`, `benchmarks/`): whatever a
command writes (`launch.png`, `results/`, `t.strace`) lands in that directory, never in the
repository. Each must exit 0; where the text shows what a command prints, its key lines must
appear.

A command that takes minutes runs verbatim only under `-m slow`; the default suite runs it with
small counts appended (`--containers 10 --replicates 1`; a later flag overrides the README's).
A quick-start line that installs cohsim into a new `.venv` and then runs a command runs only the
command, in the venv at hand. A command that cannot run here is listed in `SKIPPED` with the
reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO

DOCS = ("README.md", "docs/examples.md")
#: read-only folders the commands name, linked into each command's working directory
LINKED = ("examples", "calibration", "benchmarks")

#: the README's sweep on a Dask cluster it starts (port 8786), by how its lines start
DASK = (
    ".venv/bin/dask scheduler",
    ".venv/bin/dask worker",
    ".venv/bin/cohsim sweep --instances m7a.24xlarge,m7i.metal-24xl",
)
#: commands the docs' prose gives in backquotes (a bracketed option list left out): run too
INLINE = (
    ".venv/bin/python benchmarks/bench_analytic.py",
    ".venv/bin/python benchmarks/bench_predict.py",
    ".venv/bin/python -m calibration.analysis.machine_order.sensitivity",
    ".venv/bin/pytest tests/machine/test_c2c.py",
)
#: an install into a new .venv before a command: the command runs in the venv at hand
INSTALL = re.compile(r"^python3 -m venv \.venv && \.venv/bin/pip install [^&]+&& ")
#: commands not run here, by how they start, and why
SKIPPED: dict[str, str] = {
    "python3 -m venv": "only installs cohsim into a new .venv (minutes): CI's .ci/run does "
    "exactly this",
    ".venv/bin/pytest": "runs (part of) this suite, in which CI runs it",
    ".venv/bin/ruff format .": "rewrites the working tree and runs the whole suite; CI runs "
    "these checks (.ci/run)",
    "sudo ": "needs root: real mounts and namespaces on this host",
    # these three run together, as one script, in test_dask_block (-m slow)
    DASK[0]: "starts a Dask scheduler in the background: test_dask_block runs it",
    DASK[1]: "starts Dask workers in the background: test_dask_block runs them",
    DASK[2]: "needs the scheduler and workers: test_dask_block runs it",
}
#: commands that take minutes (pure Python, 2 cores), by a regular expression matched at the
#: start: verbatim only under -m slow
SLOW: dict[str, str] = {
    r"\.venv/bin/cohsim predict (?!.*--engine analytic)(?!.*common-parent)": "the simulation "
    "of 100 containers, 4 replicates (--explain: 23 more simulations)",
    r"\.venv/bin/cohsim pause-bench": "eight thread counts up to 96 (about 10 s)",
    r"\.venv/bin/cohsim plan": "the whole catalog or a family, both engines",
    r"\.venv/bin/cohsim sweep": "a family x 3 counts x 3 strategies x variants",
    r"\.venv/bin/cohsim bench chase": "compiles and runs chase_bench (about 10 s of real loads)",
    r"\.venv/bin/python benchmarks/bench_analytic": "the simulation at 6 points, then the speed",
    r"\.venv/bin/python benchmarks/bench_predict": "each engine's predictions 5 times as fresh "
    "processes, and the catalog grid (12 min pure Python on 2 busy cores)",
    r"\.venv/bin/python -m calibration.analysis.machine_order": "15 priors at both ends, "
    "bisections, safe-burst searches",
    r"\.venv/bin/cohsim bench corun": "compiles and runs corun_bench (busy CPUs for seconds)",
    r"\.venv/bin/python examples/mesh_vs_chiplet\.py --engine des": "the simulation of three "
    "machines at 10-100 containers (about a minute)",
}
#: appended to a slow command for the default suite's small run (where its flags take them)
SMALL = {
    ".venv/bin/cohsim predict": " --containers 10 --replicates 1",
    ".venv/bin/cohsim pause-bench": " --threads 1,2,8",
    ".venv/bin/python examples/": " --containers 10,20 --replicates 1",
}
#: run first in the command's directory: what the commands before it (some skipped) made
SETUP = {
    ".venv/bin/cohsim replay t.strace": ".venv/bin/cohsim trace synth --strategy per-layer "
    "--containers 2 --layers 3 --out t.strace",
    # stands in for the skipped root-only benches: this host's committed pause_bench run
    ".venv/bin/cohsim calibrate results/": "mkdir -p results && cp calibration/data/"
    "devvm-2cpu-intel-xeon-f6m167/pause/pause_bench.csv results/",
}
#: lines the text shows a command printing (numbers and machines vary with the model)
EXPECTED = {
    "--explain": [r"#\s+prior\s+low \.\. high\s+at low\s+at high\s+swing"],
    "examples/mesh_vs_chiplet.py": [
        r"^At \d+ containers the launch p99 runs from [\d.]+ s on \S+ to [\d.]+ s on \S+:",
        r"^The launch p99 ranks them ",
        r"^Level 2 prices a mount_lock hand-off among all CPUs at \d+ ns on ",
        r"^Yet in the burst namespace_sem was held \d+x to \d+x longer than mount_lock",
    ],
    "examples/common_parent_knee.py": [
        r"^per-layer: [\d.]+ s alone, [\d.]+ s at \d+ containers",
        r"^common-parent: [\d.]+ s alone, [\d.]+ s at \d+ containers",
        r"^One container plans namespace_sem write holds and peer-group walks: per-layer \d+",
    ],
}


@dataclass(frozen=True)
class Command:
    doc: str  #: the file it is in
    line: int  #: its first line there
    text: str  #: as written, continuations joined

    @property
    def id(self) -> str:
        return f"{Path(self.doc).name}:{self.line}"


def commands(doc: str) -> list[Command]:
    """Every command line of the doc's ```sh blocks, then its prose's commands in `INLINE`."""
    text = (REPO / doc).read_text()
    out: list[Command] = [
        Command(doc, text[: text.index(c)].count("\n") + 1, c) for c in INLINE if f"`{c}" in text
    ]
    block, pending, start = False, "", 0
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            block = line.strip() == "```sh"
            continue
        if not block or not (line.strip() or pending):
            continue
        start = start if pending else n
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1].rstrip() + " "
            continue
        out.append(Command(doc, start, pending + line.strip()))
        pending = ""
    return out


def _match(table: dict[str, str], text: str) -> str | None:
    """The value of the first key `text` starts with (SLOW's keys: regular expressions)."""
    for key, value in table.items():
        if re.match(key, text) if table is SLOW else text.startswith(key):
            return value
    return None


def _cases() -> list:
    cases, seen = [], {}
    for doc in DOCS:
        for written in commands(doc):
            cmd = Command(written.doc, written.line, INSTALL.sub("", written.text))
            skip, slow = _match(SKIPPED, cmd.text), _match(SLOW, cmd.text)
            bare = re.sub(r"\s+#.*$", "", cmd.text)
            skip = skip or (bare in seen and f"the same command as {seen[bare]}, run there")
            seen.setdefault(bare, cmd.id)
            if skip:
                cases.append(pytest.param(cmd, "", id=cmd.id, marks=pytest.mark.skip(skip)))
            elif slow:
                cases.append(pytest.param(cmd, "", id=cmd.id, marks=pytest.mark.slow))
                small = _match(SMALL, cmd.text)
                if small:
                    cases.append(pytest.param(cmd, small, id=cmd.id + "-small"))
            else:
                cases.append(pytest.param(cmd, "", id=cmd.id))
    return cases


def workdir(tmp_path: Path) -> Path:
    """A directory where `.venv/bin/...` is this interpreter's venv and the repository's
    read-only folders are links."""
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parent.parent, True)
    for name in LINKED:
        (tmp_path / name).symlink_to(REPO / name, True)
    return tmp_path


def run(text: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    # no bytecode written through the links into the repository
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg"}
    return subprocess.run(
        ["bash", "-c", "set -euo pipefail; " + text],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize(("cmd", "small"), _cases())
def test_doc_command_runs(cmd: Command, small: str, tmp_path: Path) -> None:
    if not (Path(sys.executable).parent / "cohsim").exists():
        pytest.skip(f"no cohsim script beside {sys.executable}: not a venv with cohsim installed")
    if "bench chase" in cmd.text or "bench corun" in cmd.text:
        if not (shutil.which("cc") or shutil.which("gcc")):
            pytest.skip("no C compiler to build the benchmark")
    cwd = workdir(tmp_path)
    setup = _match(SETUP, cmd.text)
    if setup:
        assert run(setup, cwd, 120).returncode == 0
    text = re.sub(r"\s+#.*$", "", cmd.text) + small  # small counts go before a comment
    r = run(text, cwd, 1800 if not small and _match(SLOW, cmd.text) else 300)
    assert r.returncode == 0, f"{cmd.id}: {text}\n{r.stderr[-3000:]}"
    for key, lines in EXPECTED.items():
        if key in cmd.text:
            for pattern in lines:
                assert re.search(pattern, r.stdout, re.M), f"{cmd.id}: no {pattern!r}\n{r.stdout}"


@pytest.mark.slow
def test_dask_block(tmp_path: Path) -> None:
    """The scheduler and workers the README starts in the background, then the sweep on them;
    the background processes are stopped when the script ends."""
    lines = [c.text for c in commands("README.md") if c.text.startswith(DASK)]
    assert len(lines) == len(DASK)
    script = "trap 'kill $(jobs -p) 2>/dev/null; wait' EXIT\n" + "\n".join(lines)
    r = run(script, workdir(tmp_path), 600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert len((tmp_path / "sweep.csv").read_text().splitlines()) == 1 + 2 * 3  # header, points


def test_every_doc_command_is_classified() -> None:
    """The docs have commands, and every one the tables name still exists in them."""
    texts = [INSTALL.sub("", c.text) for doc in DOCS for c in commands(doc)]
    assert len(texts) > 30
    assert all(any(c in t for t in texts) for c in INLINE)
    for table in (SKIPPED, SLOW, SMALL, SETUP):
        for key in table:
            found = (re.match(key, t) if table is SLOW else t.startswith(key) for t in texts)
            assert any(found), key


def test_expected_output_matches_the_docs() -> None:
    """The key lines checked above are the shape of what the docs show the commands print."""
    shown = (REPO / "docs/examples.md").read_text() + (REPO / "README.md").read_text()
    for key, lines in EXPECTED.items():
        for pattern in lines:
            assert re.search(pattern, shown, re.M), (key, pattern)
