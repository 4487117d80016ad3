"""Pinning any prior of the kernel model (cohsim.predict.pins): names, values, files, and a
pin reaching the prediction (drawn vs pinned, the validity)."""

from __future__ import annotations

import pytest

from cohsim.errors import CohsimError, UsageError
from cohsim.kernel.costs import load_kernel
from cohsim.predict import predict
from cohsim.predict.pins import check, load, merge, parse_assignment

SMALL = {"containers": 6, "layers": 2, "engine": "analytic"}


def test_a_known_prior_in_range_passes_quietly():
    k = load_kernel()
    assert check(k, {"propagation.service_namespaces": 12, "cpu.wake_ns": 5000}) == ()


def test_an_unknown_name_names_the_closest_ones():
    k = load_kernel()
    with pytest.raises(UsageError, match="closest: propagation.service_namespaces"):
        check(k, {"service_namespace": 3})
    with pytest.raises(UsageError, match="its priors: rcu.exp_per_cpu_ns, "):
        check(k, {"zzz": 3})


@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        ("background.probe_reads_per_s", -1, "below 0"),
        ("cpu.wake_ns", float("nan"), "not a finite number"),
        ("cpu.wake_ns", float("inf"), "not a finite number"),
        ("cpu.smt_slowdown", 0.9, "slowdown below 1"),
        ("percpu.mlp", 0, "needs a positive number"),
    ],
)
def test_an_impossible_value_is_refused(key, value, why):
    with pytest.raises(UsageError, match=why):
        check(load_kernel(), {key: value})


def test_a_value_outside_the_range_is_said_not_refused():
    out = check(load_kernel(), {"propagation.service_namespaces": 40, "cpu.smt_slowdown": 1.0})
    assert out == (
        "propagation.service_namespaces = 40 (its prior's range 0-30)",
        "cpu.smt_slowdown = 1 (its prior's range 1.1-2)",
    )
    # the node's mount count is judged by the validity's range (0-5,000), not the prior's
    assert check(load_kernel(), {"background.node_mounts": 5}) == ()


def test_assignments_and_files(tmp_path):
    assert parse_assignment("cpu.wake_ns=2e3") == ("cpu.wake_ns", 2000.0)
    for bad in ("cpu.wake_ns", "=3", "cpu.wake_ns=fast"):
        with pytest.raises(ValueError):
            parse_assignment(bad)
    f = tmp_path / "p.toml"
    f.write_text('"cpu.wake_ns" = 2000\n[propagation]\nservice_namespaces = 3\n')
    assert load(f) == {"cpu.wake_ns": 2000.0, "propagation.service_namespaces": 3.0}
    f.write_text('"cpu.wake_ns" = "fast"\n')
    with pytest.raises(CohsimError, match=r"p.toml\[cpu.wake_ns\]: .* must be a number"):
        load(f)
    f.write_text("cpu.wake_ns = \n")
    with pytest.raises(CohsimError, match="invalid TOML"):
        load(f)
    with pytest.raises(UsageError, match="given twice"):
        merge({"cpu.wake_ns": 1.0}, {"cpu.wake_ns": 2.0})
    assert merge({"cpu.wake_ns": 1.0}, {"cpu.wake_ns": 1.0}) == {"cpu.wake_ns": 1.0}


def test_a_pin_is_not_drawn_and_is_reported():
    p = predict(arch="mesh", replicates=3, pins={"propagation.service_namespaces": 40}, **SMALL)
    assert "propagation.service_namespaces" not in p.priors["drawn"]
    pin = p.priors["pinned"]["propagation.service_namespaces"]
    assert pin == {"value": 40, "by": "user", "range": [0.0, 30.0], "inside_range": False}
    assert not p.validity["inside_checked_range"]
    assert any("service_namespaces = 40" in o for o in p.validity["outside"])
    # more slave namespaces: more propagation in every bind, a slower launch
    few = predict(arch="mesh", replicates=1, pins={"propagation.service_namespaces": 0}, **SMALL)
    many = predict(arch="mesh", replicates=1, pins={"propagation.service_namespaces": 30}, **SMALL)
    assert many.launch_s["p99"].value > few.launch_s["p99"].value


def test_node_mounts_and_pins_must_agree():
    with pytest.raises(UsageError, match="given twice"):
        predict(arch="mesh", node_mounts=10, pins={"background.node_mounts": 20}, **SMALL)
    p = predict(arch="mesh", replicates=1, node_mounts=10, pins={"cpu.wake_ns": 2000}, **SMALL)
    assert set(p.priors["pinned"]) == {"background.node_mounts", "cpu.wake_ns"}
    with pytest.raises(UsageError):
        predict(arch="mesh", pins={"nope": 1}, **SMALL)
