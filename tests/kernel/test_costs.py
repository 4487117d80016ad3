"""The kernel model file: it loads, every table cites a source, bad files are refused, and the
classification of traced syscalls into ops."""

from __future__ import annotations

import tomllib

import pytest
from conftest import REPO

from cohsim.errors import CohsimError
from cohsim.kernel.costs import OPS, ThreadState, classify, kernel_from_dict, layers_of, load_kernel
from cohsim.workload.synth import synthesize

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


def test_classify_the_three_strategies():
    def ops(strategy):
        st = ThreadState()
        return [classify(e, st) for e in synthesize(strategy, 1, 2, seed=0).threads[0].events]

    per_layer = ops("per-layer")
    assert per_layer.count("umount_detach") == 4 and per_layer.count("close_attached") == 4
    common = ops("common-parent")
    assert "mount_setattr_ro" in common and "umount_einval" in common
    assert "mountinfo_read" in common
    plus = ops("lowerdir-plus")
    assert plus.count("close_detached") == 4 and "fsconfig_create" in plus


def test_layers_of_counts_clones_since_the_last_overlay():
    events = synthesize("per-layer", 1, 3, seed=0).threads[0].events
    counts = layers_of(events)
    overlay = [i for i, e in enumerate(events) if e.name == "mount"]
    assert [counts[i] for i in overlay] == [3, 3]
