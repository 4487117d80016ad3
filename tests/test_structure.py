"""The tree shows the architecture: levels as folders, imports only downwards, small modules,
data folders holding data, a repository that stands alone.

The import graph is read from the source (ast), not from what happens to be imported at run
time, so a deferred import inside a function counts like one at the top of the module.
"""

from __future__ import annotations

import ast
import fnmatch
import os
import re
import warnings
from pathlib import Path

import networkx as nx
import pytest
from conftest import REPO

PACKAGE = REPO / "cohsim"

#: a module may import its own level or a lower one, never a higher one
#: (docs/architecture.md, "Levels"); calibrate and measure sit beside predict, below the faces
RANK = {
    "cohsim": 0,
    "cohsim.errors": 0,
    "cohsim.io": 0,
    "cohsim.units": 0,
    "cohsim.provenance": 0,
    "cohsim.cache": 0,
    "cohsim._pure": 0,
    "cohsim._lazy": 0,
    "cohsim._entry": 0,
    "cohsim.machine": 1,
    "cohsim.lock": 2,
    "cohsim.workload": 2,
    "cohsim.kernel": 3,
    "cohsim.measure": 4,
    "cohsim.calibrate": 4,
    "cohsim.predict": 5,
    "cohsim.plots": 6,
    "cohsim.sweep": 6,
    "cohsim.plan": 7,
    "cohsim.report": 8,
    "cohsim.cli": 9,
}
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
#: where a module or function should be split before it reaches the cap: a warning, not a failure
WARN_MODULE_LINES = 400
WARN_FUNCTION_LINES = 60


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _level(module: str) -> str:
    parts = module.split(".")
    top = ".".join(parts[:2])
    return top if top in RANK else "cohsim"


def _imports(path: Path, module: str, known: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    here = module.split(".") if is_package else module.split(".")[:-1]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "cohsim"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(here[: len(here) - node.level + 1] + [node.module or ""])
                base = base.rstrip(".")
            else:
                base = node.module or ""
            if base.split(".")[0] != "cohsim":
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else base)
    return {m for m in found if m in known and m != module}


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    modules = _modules()
    g = nx.DiGraph()
    g.add_nodes_from(modules)
    for module, path in modules.items():
        for target in _imports(path, module, set(modules)):
            g.add_edge(module, target)
    return g


def test_the_graph_is_read():
    """The reader sees what it should: cli imports predict, kernel imports machine."""
    modules = _modules()
    assert "cohsim.cli.app" in modules and "cohsim.kernel" in modules
    g = nx.DiGraph()
    for module, path in modules.items():
        g.add_edges_from((module, t) for t in _imports(path, module, set(modules)))
    launch = "cohsim.kernel.simulation.launch"
    assert any(t.startswith("cohsim.machine") for t in g.successors(launch))
    assert any(t.startswith("cohsim.predict") for t in g.successors("cohsim.cli.predict"))


def test_no_import_circles(graph):
    cycles = list(nx.simple_cycles(graph))
    assert cycles == [], f"import circles: {cycles[:5]}"


def test_no_upward_imports(graph):
    upward = [
        (a, b)
        for a, b in graph.edges
        if RANK[_level(b)] > RANK[_level(a)]
        and not (a == "cohsim" or _level(a) == _level(b))  # a package may import its own parts
    ]
    assert upward == [], "a lower level imports a higher one: " + ", ".join(
        f"{a} -> {b}" for a, b in upward
    )


def test_every_level_is_a_folder_with_a_rank():
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert {f"cohsim.{f}" for f in folders} <= set(RANK)
    loose = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert {f"cohsim.{m}" for m in loose} <= set(RANK), "a loose module without a level"


def test_modules_and_functions_stay_small():
    """Over the caps fails; over the warning lines (400, 60) says so, to split by concept
    before the cap forces it (`pytest -rw` lists them)."""
    too_long, near = [], []
    for module, path in _modules().items():
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        if lines > MAX_MODULE_LINES:
            too_long.append(f"{module}: {lines} lines")
        elif lines > WARN_MODULE_LINES:
            near.append(f"{module}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    too_long.append(f"{module}.{node.name}: {n} lines")
                elif n > WARN_FUNCTION_LINES:
                    near.append(f"{module}.{node.name}: {n} lines")
    assert too_long == []
    if near:
        warnings.warn(
            f"{len(near)} near the caps (split by concept): " + "; ".join(near), stacklevel=1
        )


#: folders that hold no file of the repository's own, whatever is in them
_NOT_OURS = {".git", ".venv", "build", "dist", "__pycache__", ".hypothesis", ".tox", ".nox"}


def _tracked(pattern: str, root: Path = REPO) -> list[Path]:
    """The files under `root` whose name matches `pattern`, less build outputs, caches and
    every virtual environment: a folder holding pyvenv.cfg, whatever it is called (a venv made
    inside the checkout as `venv/` or `.venv-3.12/` is not the repository's code)."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(
            d for d in dirs if d not in _NOT_OURS and not (Path(folder) / d / "pyvenv.cfg").exists()
        )
        found += [Path(folder) / f for f in sorted(files) if fnmatch.fnmatch(f, pattern)]
    return found


def test_tracked_files_leave_out_any_virtual_environment(tmp_path: Path) -> None:
    """A venv named anything but .venv inside the checkout holds site-packages full of
    sys.path edits: they are not the repository's, and no test may read them as if they were."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\n")
    for venv in ("venv", ".venv-3.12", "env/inner"):
        site = tmp_path / venv / "lib" / "site-packages"
        site.mkdir(parents=True)
        (tmp_path / venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
        (site / "site.py").write_text("import sys\nsys.path" + ".insert(0, '.')\n")
    assert _tracked("*.py", tmp_path) == [tmp_path / "pkg" / "mod.py"]


def test_data_folders_hold_data_only():
    data = REPO / "calibration" / "data"
    code = [p for p in data.rglob("*") if p.suffix in {".py", ".c", ".sh", ".h"}]
    assert code == [], f"code in a data folder: {code[:5]}"


def test_no_sys_path_edits():
    edits = [
        f"{p.relative_to(REPO)}:{i}"
        for p in _tracked("*.py")
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"sys\.path\.(insert|append)|sys\.path\s*\+?=", line)
    ]
    assert edits == []


def test_the_repository_stands_alone():
    """Docstrings and docs cite files in the repository, not the design notes beside it."""
    outside = re.compile(r"\bDESIGN\.md\b|\bSTYLE\.md\b|\.\./shared\b")
    cites = [
        f"{p.relative_to(REPO)}:{i}"
        for pattern in ("*.py", "*.md", "*.toml")
        for p in _tracked(pattern)
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if outside.search(line)
    ]
    assert cites == []


def _where_is_x_paths() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Where is X", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]
    paths = []
    for row in rows:
        for ref in re.findall(r"`([^`]+)`", row):
            if "/" in ref and not ref.startswith(("cohsim ", "-")):
                paths.append(ref)
    return paths


def test_where_is_x_points_at_files_that_exist():
    paths = _where_is_x_paths()
    assert len(paths) >= 20
    missing = []
    for ref in paths:
        ref = re.sub(r"\b(NAME|X)\b", "*", ref.split(" ", 1)[0])  # placeholders
        matches = list(REPO.glob(ref)) if "*" in ref else [REPO / ref]
        if not any(m.exists() for m in matches):
            missing.append(ref)
    assert missing == []


def test_a_stale_installed_copy_is_named(tmp_path):
    """conftest's check: an installed copy equal to the tree passes; an edited module, a new
    one and a changed machine file are each named."""
    from conftest import _SHIPPED, stale_files

    for tree, installed, pattern in _SHIPPED:
        for src in (REPO / tree).glob(pattern):
            if "__pycache__" in src.parts:
                continue
            dst = tmp_path / installed / src.relative_to(REPO / tree)
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes())
    assert stale_files(tmp_path) == []
    (tmp_path / "cohsim" / "units.py").write_text("# an older units.py\n")
    (tmp_path / "cohsim" / "gone.py").write_text("")
    (tmp_path / "cohsim" / "_catalog" / "kernel" / "linux-6.18.toml").write_text("")
    stale = stale_files(tmp_path)
    assert "cohsim/units.py" in stale
    assert "cohsim/gone.py (gone from the tree)" in stale
    assert "models/kernel/linux-6.18.toml" in stale


def test_every_package_is_shipped():
    """pyproject.toml names the packages the wheel holds: a new subpackage left out of it
    would be missing from every non-editable install."""
    import tomllib

    listed = set(
        tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {".".join(p.parent.relative_to(REPO).parts) for p in PACKAGE.rglob("__init__.py")}
    assert found <= listed, f"not in pyproject.toml's packages: {sorted(found - listed)}"
