"""`cohsim`'s public API at the top level: every name importable from `cohsim`, the same object
as where it is defined, and `import cohsim` cheap (each name imported on first use)."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys

import pytest
from conftest import REPO

import cohsim
from cohsim._entry import EntryPackage


def test_every_public_name_is_the_one_its_module_defines():
    assert cohsim.__all__ == sorted(cohsim.__all__)
    assert set(cohsim.__all__) == {*cohsim._EXPORTS, "__version__"}
    for name, where in cohsim._EXPORTS.items():
        value = getattr(cohsim, name)
        module = importlib.import_module(where)
        assert value is (module if where == f"cohsim.{name}" else getattr(module, name)), name
    assert set(cohsim.__all__) <= set(dir(cohsim))


def test_the_typed_stub_names_the_same_api():
    stub = (REPO / "cohsim" / "__init__.pyi").read_text(encoding="utf-8")
    for name in cohsim._EXPORTS:
        assert f" {name}" in stub or f"{name}," in stub, name
    assert "__all__ = [" in stub and all(f'"{n}"' in stub for n in cohsim.__all__)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nosuch'"):
        cohsim.nosuch  # noqa: B018


def test_predict_and_plan_are_their_packages_and_callable():
    """`from cohsim import plan` gives something to call, and the subpackage's modules stay
    importable by their dotted names (cohsim._entry)."""
    from cohsim import plan, predict
    from cohsim.plan.api import plan as plan_function
    from cohsim.predict.api import predict as predict_function

    assert isinstance(predict, EntryPackage) and predict.__entry__ is predict_function
    assert isinstance(plan, EntryPackage) and plan.__entry__ is plan_function
    import cohsim.plan.api as plan_api

    assert plan_api.plan is plan_function


def test_the_top_level_entry_points_answer_as_their_functions():
    from cohsim import Burst, Target, predict
    from cohsim.predict.api import predict as predict_function

    burst, target = Burst(containers=4, layers=2), Target(arch="chiplet")
    run = {"replicates": 1, "jobs": 1, "engine": "analytic"}
    assert (
        predict(burst, target, **run).to_dict() == predict_function(burst, target, **run).to_dict()
    )


def _fresh(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    return out.stdout.strip()


def test_import_cohsim_is_cheap():
    """Nothing but the package itself: no numpy, no simulation, no subpackage."""
    loaded = _fresh("import sys, cohsim; print(sorted(m for m in sys.modules if "
                    "m.split('.')[0] in ('cohsim', 'numpy', 'scipy', 'simpy')))")  # fmt: skip
    assert loaded == "['cohsim', 'cohsim._lazy', 'cohsim._pure']"  # and the standard library


def test_a_public_name_first_then_the_subpackage_or_the_reverse():
    code = (
        "from cohsim import {0}; import cohsim.{1}.api as api; from cohsim import {0} as again; "
        "print(callable({0}), {0} is again, api.__name__)"
    )
    for first, sub in (("plan", "plan"), ("predict", "predict")):
        assert _fresh(code.format(first, sub)) == f"True True cohsim.{sub}.api"
    reverse = "import cohsim.plan.api; from cohsim import plan; print(callable(plan))"
    assert _fresh(reverse) == "True"


def test_the_readmes_python_example_runs(tmp_path, monkeypatch, capsys):
    """The README's "From Python" block, as written."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert len(blocks) == 1 and "from cohsim import" in blocks[0]
    monkeypatch.setenv("COHSIM_CACHE", str(tmp_path))
    exec(compile(blocks[0], "README.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Interval(")
    assert sorted(ast.literal_eval(out[1])) == ["m7a.24xlarge per-layer", "r5.metal per-layer"]
