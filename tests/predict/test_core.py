"""`predict` and `replay`: contracts, determinism, and what the mechanism must show."""

from __future__ import annotations

import json

import pytest
from conftest import DATA

from cohsim.errors import CohsimError
from cohsim.kernel.costs import load_kernel
from cohsim.predict.core import (
    burst_workload,
    predict,
    replay,
    resolve_calibration,
    resolve_machine,
    run_workload,
)
from cohsim.workload.parse import parse_trace

SMALL = dict(containers=12, layers=4, replicates=2, jobs=1)


def test_prediction_reports_every_contract_field():
    p = predict(arch="chiplet", **SMALL)
    d = p.to_dict()
    for key in (
        "containers",
        "layers",
        "mount_ops",
        "syscalls",
        "launch_s",
        "failures",
        "lock_wait_fraction",
        "machine",
        "calibration",
        "level",
    ):
        assert key in d
    assert d["machine"] == "m7a.24xlarge" and "m7a.24xlarge" in d["machine_note"]
    assert d["mount_ops"] == 12 * 2 * (1 + 4 + 4)
    for stat in ("p50", "p95", "p99", "max"):
        v = d["launch_s"][stat]
        assert v["low"] <= v["value"] <= v["high"] and v["unit"] == "s"
    assert d["launch_s"]["p50"]["value"] <= d["launch_s"]["max"]["value"]
    assert any("level 2" in x for x in d["level"]) and any("level 3" in x for x in d["level"])
    json.dumps(d)


def test_same_seed_same_bytes_whatever_the_worker_count():
    a = predict(arch="mesh", seed=5, **SMALL).to_dict()
    b = predict(arch="mesh", seed=5, **{**SMALL, "jobs": 2}).to_dict()
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@pytest.mark.parametrize(
    "kw, message",
    [
        (dict(arch="ring"), "unknown architecture"),
        (dict(instance="m7i.metal"), "did you mean"),
        (dict(arch="mesh", instance="c5.metal"), "exactly one of"),
        (dict(arch="mesh", strategy="per-image"), "unknown strategy"),
        (dict(arch="mesh", sockets=2), "sockets must be between 1 and 1"),
    ],
)
def test_bad_requests(kw, message):
    with pytest.raises(CohsimError, match=message):
        predict(**{**SMALL, **kw})


def test_replay_of_a_real_mount_bench_trace(catalog):
    trace = parse_trace(
        DATA / "devvm-2cpu-intel-xeon-f6m167" / "strace" / "per-layer-2workers-3layers.strace"
    )
    machine, _ = resolve_machine(catalog, arch=None, instance="c5.metal")
    p = run_workload(machine, trace, kernel=load_kernel(), replicates=1, jobs=1)
    assert p.containers == len(trace.threads) and p.mount_ops == trace.mount_ops
    assert p.launch_s["max"].value > load_kernel().base_launch_ns / 1e9


def test_reference_traces_replay_on_every_interconnect(catalog):
    ref = DATA / "reference" / "trace-format-examples"
    for f in sorted(ref.glob("*.txt")):
        trace = parse_trace(f)
        for name in ("m7i.metal-24xl", "m7a.24xlarge", "m7g.metal"):
            p = run_workload(catalog.get(name), trace, kernel=load_kernel(), replicates=1, jobs=1)
            assert p.syscalls == trace.syscalls


def test_burst_of_one_strategy_each():
    for strategy, per_container in (
        ("per-layer", 2 * (1 + 50 + 50)),
        ("common-parent", 2 * 3),
        ("lowerdir-plus", 2 * (50 + 1)),
    ):
        assert burst_workload(strategy, 100, 50).mount_ops == 100 * per_container


def test_replay_function_matches_the_lower_level_path(catalog):
    path = DATA / "devvm-2cpu-intel-xeon-f6m167" / "strace" / "per-layer-2workers-3layers.strace"
    p = replay(str(path), instance="c5.metal", replicates=1, jobs=1, calibration="none")
    trace = parse_trace(path)
    machine, _ = resolve_machine(catalog, arch=None, instance="c5.metal")
    q = run_workload(machine, trace, kernel=load_kernel(), replicates=1, jobs=1)
    assert p.per_container_s == q.per_container_s
    assert p.workload["trace"] == path.name and p.calibration.startswith("none")


def test_intervals_carry_the_calibrations_misfit(catalog):
    """With the committed kernel fit, the mount phase's intervals are the replicates' range
    widened by the fit's in-sample scatter (a lognormal factor covering 90 % of it), and each
    launch statistic's by the same absolute amount; without a fit they are the range alone."""
    import math
    import statistics

    from cohsim.calibrate import default_fit

    fit = default_fit("m7a.24xlarge")
    res = [
        r["log_residual"]
        for r in fit.residuals_
        if r.get("kind") == "kernel" and r["metric"] == "stride_ns"
    ]
    sd = math.sqrt(sum(x * x for x in res) / len(res))
    assert fit.misfit_sd() == pytest.approx(sd) and 0.05 < sd < 0.5
    bare = predict(arch="chiplet", calibration="none", **SMALL)
    assert bare.misfit_sd == 0.0 and bare.to_dict()["model_misfit"]["log_sd"] == 0.0
    fitted = predict(arch="chiplet", **SMALL)
    assert fitted.misfit_sd == pytest.approx(sd)
    assert fitted.to_dict()["model_misfit"]["log_sd"] == round(sd, 6)
    # the same runs without the widening: predict's own path with misfit_sd left at 0
    machine, _ = resolve_machine(catalog, arch="chiplet", instance=None)
    machine, kernel, draws, _, misfit = resolve_calibration(None, machine, load_kernel(), 1, 0)
    assert misfit == fitted.misfit_sd
    narrow = run_workload(
        machine,
        burst_workload("per-layer", 12, 4),
        kernel=kernel,
        kernel_samples=draws,
        replicates=2,
        jobs=1,
        layers=4,
    )
    f = math.exp(statistics.NormalDist().inv_cdf(0.95) * sd)
    for k, m in fitted.mount_s.items():
        m0, l0, l1 = narrow.mount_s[k], narrow.launch_s[k], fitted.launch_s[k]
        assert m.value == m0.value and l1.value == l0.value
        assert m.low == pytest.approx(m0.low / f) and m.high == pytest.approx(m0.high * f)
        assert l1.high - l0.high == pytest.approx(m.high - m0.high)
        assert l0.low - l1.low == pytest.approx(m0.low - m.low)
