"""The kernel model file: it loads, every table cites a source, bad files are refused."""

from __future__ import annotations

import tomllib

import pytest
from conftest import REPO

from cohsim.errors import CohsimError
from cohsim.kernel.costs import OPS, kernel_from_dict, load_kernel

KFILE = REPO / "models" / "kernel" / "linux-6.18.toml"


def test_shipped_kernel_loads_and_matches_measured_totals():
    k = load_kernel()
    assert set(k.ops) <= set(OPS) and "other" in k.ops
    # each op's parts add up to the 1-worker mount_bench p50 quoted in the file's comments
    assert k.op("open_tree_clone").uncontended_ns(k.walk_ns, 1) == pytest.approx(2322)
    assert k.op("mount_overlay").uncontended_ns(k.walk_ns, 1) == pytest.approx(45472, rel=1e-3)
    assert k.op("mount_overlay").uncontended_ns(k.walk_ns, 50) == pytest.approx(137627, rel=2e-3)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d["path"].update(speed=1), "unknown key path.speed"),
        (lambda d: d["rcu"].pop("exp_base_ns"), "missing key rcu.exp_base_ns"),
        (lambda d: d["ops"]["move_mount"].update(cpu_ns=-1.0), "must be a finite number >= 0"),
        (lambda d: d["ops"].update(teleport={"cpu_ns": 1.0}), "unknown op ops.teleport"),
        (lambda d: d["ops"]["umount"].update(rcu="yes"), "ops.umount.rcu must be true, false or a"),
        (lambda d: d["ops"]["umount"].update(rcu=-1), "ops.umount.rcu must be true, false or a"),
        (lambda d: d["sources"].pop("percpu"), r"\[percpu\] has no entry in \[sources\]"),
        (lambda d: d.update(schema=2), "schema 2 is not supported"),
    ],
)
def test_bad_kernel_files(edit, message):
    doc = tomllib.loads(KFILE.read_text())
    edit(doc)
    with pytest.raises(CohsimError, match=message):
        kernel_from_dict(doc, "k.toml")


def test_missing_and_invalid_files(tmp_path):
    with pytest.raises(CohsimError, match="no such kernel parameter file"):
        load_kernel(tmp_path / "none.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("schema = \n")
    with pytest.raises(CohsimError, match="invalid TOML"):
        load_kernel(bad)
