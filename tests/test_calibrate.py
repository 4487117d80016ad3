"""calibrate: recovery of known parameters, held-out prediction, fit JSON, one-line errors."""

from __future__ import annotations

import argparse
import dataclasses
import math

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from cohsim import cli, cli_calibrate
from cohsim.benchdata import BenchData, MountRun, bench_kernel, load_bench, medians, simulate_run
from cohsim.calibrate import (
    KERNEL_PARAMS,
    Calibration,
    apply_kernel_params,
    default_fit,
    kernel_bounds,
    load_fit,
)
from cohsim.catalog import Catalog
from cohsim.errors import CohsimError
from cohsim.kernel import load_kernel

from conftest import DATA, REPO

DEVVM = "devvm-2cpu-intel-xeon-f6m167"
DEVVM_DATA = DATA / DEVVM


def _main(argv: list[str]) -> int:
    """cohsim's CLI with `calibrate` registered (cli.py adds it to its tuple)."""
    orig = cli.build_parser

    def build() -> argparse.ArgumentParser:
        parser = orig()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        if "calibrate" not in sub.choices:
            cli_calibrate.register(sub, cli._add_json)
        return parser

    cli.build_parser = build
    try:
        return cli.main(argv)
    finally:
        cli.build_parser = orig


def _total(k, name, vcpus=2):
    op = k.op(name)
    return op.cpu_ns + op.ns_write_ns + (
        k.rcu_exp_base_ns + k.rcu_exp_per_cpu_ns * vcpus if op.rcu else 0.0)


def test_applying_parameters_keeps_every_op_total():
    base = load_kernel()
    k = apply_kernel_params(base, {"ser_bind": 0.5, "ser_overlay": 0.1, "ser_umount": 0.9,
                                   "rcu_exp_base_ns": 4000.0})
    for name in base.ops:
        assert _total(k, name) == pytest.approx(_total(base, name))
    assert k.op("umount_detach").ns_write_ns == pytest.approx(0.9 * (_total(base, "umount_detach") - 4000 - 1000))
    lo, hi = kernel_bounds(base)["rcu_exp_base_ns"]
    assert lo < base.rcu_exp_base_ns < hi


def test_unfitted_calibration_refuses():
    c = Calibration(DEVVM)
    for call in (lambda: c.predict("per-layer", 1, 1), lambda: c.sample_kernels(None, 2, 0),
                 lambda: c.to_dict(), lambda: c.kernel_params()):
        with pytest.raises(CohsimError, match="not fitted"):
            call()


def _synthetic(truth: dict[str, float], noise: float, seed: int) -> BenchData:
    """mount_bench runs as the simulator itself produces them at `truth`, with lognormal noise."""
    machine = Catalog().get(DEVVM)
    k = bench_kernel(apply_kernel_params(load_kernel(), truth))
    rng = np.random.default_rng(seed)
    runs = []
    for strategy in ("per-layer", "lowerdir-plus"):
        for workers in (1, 2, 4):
            sim = simulate_run(machine, k, strategy, workers, 10, containers=1)
            for repeat in range(3):
                e = float(rng.normal(0, noise))
                runs.append(MountRun(strategy, workers, 10, repeat, 1, 2,
                                     sim.stride_ns * math.exp(e), 0.0,
                                     sim.containers_per_s * math.exp(-e), 0.0, 21,
                                     {"per-layer": 42, "lowerdir-plus": 47}[strategy]))
    return BenchData(tuple(runs), (), {"synthetic.csv": "sha256:0"})


@pytest.mark.xfail(strict=True, reason=(
    "known defect: least_squares stops at wrong points with too-small standard errors "
    "(e.g. truth ser_umount 0.5, rcu 8000 -> 0.08 +/- 0.001, 8536 +/- 186): the simulated "
    "objective is piecewise constant in the parameters (integer-ns times, discrete "
    "scheduling), so finite-difference Jacobians mislead the optimizer"))
@settings(max_examples=3, deadline=None, phases=[Phase.generate])
@given(ser=st.floats(0.2, 0.9), rcu=st.floats(4000.0, 11000.0), seed=st.integers(0, 100))
def test_fit_recovers_parameters_of_simulated_data(ser, rcu, seed):
    data = _synthetic({"ser_umount": ser, "rcu_exp_base_ns": rcu}, 0.02, seed)
    c = Calibration(DEVVM, containers=1, free=("ser_umount", "rcu_exp_base_ns")).fit(data)
    for name, true in (("ser_umount", ser), ("rcu_exp_base_ns", rcu)):
        est, se = c.params_[name], c.stderr_[name]
        span = c.bounds_[name][1] - c.bounds_[name][0]
        # within the reported uncertainty (4 standard errors), with a floor for the ns
        # rounding of simulated time
        assert abs(est - true) <= 4 * se + 0.02 * span, (name, true, est, se)


@pytest.fixture(scope="module")
def small_fit():
    data = load_bench([DEVVM_DATA / "pause", DEVVM_DATA / "mount"])
    sub = dataclasses.replace(data, mount=tuple(
        r for r in data.mount if r.strategy == "per-layer" and r.layers == 1
        and r.workers in (1, 2)))
    return Calibration(DEVVM, containers=1, max_nfev=4,
                       free=("ser_umount", "rcu_exp_base_ns")).fit(sub)


def test_fit_json_round_trip_and_same_bytes(small_fit, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    small_fit.save(a)
    again = load_fit(a)
    assert again.to_dict() == small_fit.to_dict()
    again.save(b)
    assert a.read_bytes() == b.read_bytes()
    doc = small_fit.to_dict()
    assert doc["kind"] == "kernel+lock" and doc["schema"] == 1
    assert set(doc["parameters"]) == {"ser_umount", "rcu_exp_base_ns", "same_llc_ns", "pause_ns"}
    assert doc["covariance"]["names"] == ["ser_umount", "rcu_exp_base_ns", "same_llc_ns"]
    assert "rcu_exp_per_cpu_ns" in doc["fixed"] and "smt_slowdown" in doc["fixed"]
    assert all(v.startswith("sha256:") for v in doc["data_digests"].values())
    # refitting the same data with the same seed gives the same bytes
    data = load_bench([DEVVM_DATA / "pause", DEVVM_DATA / "mount"])
    sub = dataclasses.replace(data, mount=tuple(
        r for r in data.mount if r.strategy == "per-layer" and r.layers == 1
        and r.workers in (1, 2)))
    Calibration(DEVVM, containers=1, max_nfev=4,
                free=("ser_umount", "rcu_exp_base_ns")).fit(sub).save(b)
    assert a.read_bytes() == b.read_bytes()


def test_samples_and_prediction_intervals(small_fit):
    ks = small_fit.sample_kernels(None, 5, seed=1)
    base = load_kernel()
    assert len(ks) == 5
    lo, hi = small_fit.bounds_["rcu_exp_base_ns"]
    for k in ks:
        assert lo <= k.rcu_exp_base_ns <= hi
        assert _total(k, "umount_detach") == pytest.approx(_total(base, "umount_detach"))
    p = small_fit.predict("per-layer", 2, 1, samples=3)
    for v in p.values():
        assert v["low"] <= v["value"] <= v["high"]


def test_plot_draws_measured_vs_fitted(small_fit):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    artists = small_fit.plot(ax)
    assert len(artists) >= 3
    plt.close(fig)


def test_bad_fit_files(tmp_path):
    p = tmp_path / "f.json"
    p.write_text("{")
    with pytest.raises(CohsimError, match="invalid JSON"):
        load_fit(p)
    p.write_text('{"schema": 9}')
    with pytest.raises(CohsimError, match="schema 9"):
        load_fit(p)


@pytest.mark.parametrize("text, message", [
    ("", "unexpected CSV header"),
    ("bench,strategy,workers,layers,syscall,metric,value,unit,repeat\n", "no data rows"),
    ("bench,strategy,workers,layers,syscall,metric,value,unit,repeat\n"
     "mount,per-layer,1,1,run,wall_s,x,s,0\n", "mount_bench.csv:2: value 'x' is not a number"),
])
def test_cli_bad_input_exits_1_with_one_line(tmp_path, capsys, text, message):
    csv = tmp_path / "mount_bench.csv"
    csv.write_text(text)
    out = tmp_path / "fit.json"
    assert _main(["calibrate", str(csv), "--instance", DEVVM, "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def test_cli_unknown_instance(tmp_path, capsys):
    out = tmp_path / "fit.json"
    assert _main(["calibrate", str(DEVVM_DATA / "pause"), "--instance", "nope",
                  "--out", str(out)]) == 1
    assert not out.exists() and capsys.readouterr().err.count("\n") == 1


def test_committed_fit_loads_and_applies():
    path = REPO / "calibration" / "fits" / f"{DEVVM}.json"
    c = load_fit(path)
    assert c.kind_ == "kernel+lock" and set(KERNEL_PARAMS) <= set(c.params_)
    assert default_fit(DEVVM).instance_ == DEVVM
    other = default_fit("m7i.metal-24xl")  # the kernel part applies to every instance
    assert other is not None and other.applies_to_["kernel"]["instances"] == "*"


def _held_out():
    data = load_bench([DEVVM_DATA / "mount"])
    fit = Calibration(DEVVM).fit(data.select(workers=(1, 2)))
    held = medians(r for r in data.mount if r.workers == 4)
    errors, covered, total = {}, 0, 0
    for (s, w, L), (stride, cps) in held.items():
        p = fit.predict(s, w, L, samples=6)
        errors[(s, L)] = abs(p["stride_ns"]["value"] / stride - 1)
        for r in (r for r in data.mount if r.key == (s, w, L)):
            total += 1
            covered += p["stride_ns"]["low"] <= r.stride_ns <= p["stride_ns"]["high"]
    return errors, covered / total


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "the level-3 model prices an expedited RCU grace period the same whether the other CPU is "
    "idle or busy; on the devvm the unmounts' and the dissolving close's RCU waits grow 3-17x "
    "from 1 to 2-4 workers (mount_bench.csv: common-parent 50 layers umount2 14 -> 240 -> "
    "920 us per sequence), so throughput stays flat and 4-worker times are underpredicted by "
    "~40-60 % for every strategy"))
def test_held_out_4_workers_within_15_percent():
    errors, _coverage = _held_out()
    assert max(errors.values()) < 0.15, errors
