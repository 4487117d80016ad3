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
        (
            lambda d: (d["sources"].pop("percpu"), d["sources"].pop("percpu.alloc_mutex_ns")),
            r"\[percpu\] has no entry in \[sources\]",
        ),
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


def test_priors_range_the_unmeasured_numbers():
    """Each prior names a number of the file, has a reason in [sources] and a measurement that
    would pin it, and holds the file's own (nominal) value."""
    k = load_kernel()
    assert len(k.priors) >= 8
    keys = [p.key for p in k.priors]
    assert len(set(keys)) == len(keys)
    assert {"background.node_mounts", "rcu.exp_per_cpu_ns", "cpu.smt_slowdown"} <= set(keys)
    for p in k.priors:
        assert p.low <= k.value(p.attr) <= p.high
        assert p.why == k.sources[f"priors.{p.key}"] and p.measure
        assert p.at(0.0) == pytest.approx(p.low) and p.at(1.0) == pytest.approx(p.high)
    mounts = next(p for p in k.priors if p.key == "background.node_mounts")
    assert mounts.shape == "log-uniform" and mounts.high >= 2204  # containerd #12139's node
    assert mounts.at(0.5) == pytest.approx((mounts.low * mounts.high) ** 0.5)


def _prior(doc, key, **spec):
    doc.setdefault("priors", {})[key] = {
        "low": 1.0,
        "high": 4.0,
        "shape": "uniform",
        "measure": "m",
        **spec,
    }
    doc["sources"][f"priors.{key}"] = "why"


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: _prior(d, "cpu.speed"), "unknown key priors.cpu.speed"),
        (lambda d: _prior(d, "cpu.smt_slowdown", low=2.0, high=1.5), "low 2 must be below high"),
        (lambda d: _prior(d, "cpu.smt_slowdown", high=1.2), r"nominal value 1.6 is outside"),
        (lambda d: _prior(d, "cpu.smt_slowdown", low=0.5), "smt_slowdown.low must be at least 1"),
        (lambda d: _prior(d, "cpu.wake_ns", low=0.0, high=1e4, shape="log-uniform"), "positive"),
        (lambda d: _prior(d, "cpu.smt_slowdown", shape="normal"), "shape must be one of"),
        (lambda d: _prior(d, "cpu.smt_slowdown", low="1"), "low must be a number"),
        (lambda d: _prior(d, "cpu.smt_slowdown", extra=1), "unknown key priors.cpu.smt_slowdown"),
        (lambda d: _prior(d, "cpu.smt_slowdown", measure=""), "must say which measurement"),
        (
            lambda d: (_prior(d, "cpu.smt_slowdown"), d["sources"].pop("priors.cpu.smt_slowdown")),
            r"priors.cpu.smt_slowdown has no entry in \[sources\]",
        ),
        (lambda d: d.update(priors=3), r"\[priors\] must be a table"),
    ],
)
def test_bad_priors(edit, message):
    doc = tomllib.loads(KFILE.read_text())
    doc.pop("priors", None)
    edit(doc)
    with pytest.raises(CohsimError, match=message) as e:
        kernel_from_dict(doc, "k.toml")
    assert str(e.value).startswith("k.toml")


def test_a_file_without_priors_has_none():
    doc = tomllib.loads(KFILE.read_text())
    doc.pop("priors")
    assert kernel_from_dict(doc, "k.toml").priors == ()


def test_a_changed_kernel_is_the_replaced_one_and_a_wrong_name_is_refused():
    import dataclasses

    k = load_kernel()
    new = k.changed(walk_ns=k.walk_ns * 2, reference_clock_scale=1.25)
    assert new == dataclasses.replace(k, walk_ns=k.walk_ns * 2, reference_clock_scale=1.25)
    assert new.priors == k.priors and new.ops is k.ops and k.walk_ns != new.walk_ns
    with pytest.raises(TypeError):
        k.changed(walk_nss=1.0)
