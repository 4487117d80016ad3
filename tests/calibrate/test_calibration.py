"""calibration: the estimator recovers known parameters, returns a frozen result that refits
to the same bytes and predicts with intervals, and `cohsim calibrate` fails in one line."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math

import numpy as np
import pytest
from conftest import DATA
from hypothesis import Phase, example, given, settings
from hypothesis import strategies as st

from cohsim.calibrate.calibration import Calibration
from cohsim.calibrate.fitparams import apply_kernel_params
from cohsim.calibrate.fitresult import FitResult, load_fit
from cohsim.calibrate.hostterms import predict_run
from cohsim.calibrate.measuredruns import LABEL_OPS, BenchData, MountRun, load_bench
from cohsim.calibrate.mountreplay import bench_kernel, simulate_run
from cohsim.cli import app as cli
from cohsim.cli import calibrate as cli_calibrate
from cohsim.errors import CohsimError
from cohsim.kernel.costs import load_kernel
from cohsim.machine.catalog import Catalog

DEVVM = "devvm-2cpu-intel-xeon-f6m167"
DEVVM_DATA = DATA / DEVVM


def _main(argv: list[str]) -> int:
    """cohsim's CLI with `calibrate` registered (cli.py adds it to its tuple)."""
    orig = cli.build_parser

    def build(command: str | None = None) -> argparse.ArgumentParser:
        parser = orig(command)
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
    return op.cpu_ns + op.ns_write_ns + (k.rcu_exp_base_ns + k.rcu_exp_per_cpu_ns * vcpus) * op.rcu


def test_the_estimator_holds_settings_and_its_fit_is_a_frozen_result(small_fit):
    """An unfitted estimator has nothing to predict with (no result exists to call); the
    fit's result cannot be changed after the fact."""
    c = Calibration(DEVVM, seed=3)
    assert not any(hasattr(c, m) for m in ("predict", "sample_kernels", "to_dict", "params"))
    assert isinstance(small_fit, FitResult) and small_fit.seed == 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        small_fit.kind = "lock"  # type: ignore[misc]


def _synthetic(
    truth: dict[str, float],
    noise: float,
    seed: int,
    layers: int = 1,
    containers: int = 4,
    think: float = 150.0,
) -> BenchData:
    """mount_bench runs as the simulator itself produces them at `truth` (seeds other than the
    fit's), per-op means and times with lognormal noise, mount_bench's own time `think`."""
    machine = Catalog().get(DEVVM)
    k = bench_kernel(apply_kernel_params(load_kernel(), truth))
    rng = np.random.default_rng(seed)
    runs = []
    for strategy in ("per-layer", "lowerdir-plus"):
        for workers in (1, 2, 4):
            for repeat in range(3):
                sim = simulate_run(
                    machine,
                    k,
                    strategy,
                    workers,
                    layers,
                    containers=containers,
                    think_ns=think,
                    seed=10_000 + 97 * seed + repeat,
                    jitter=True,
                )
                labels, seq, calls = {}, 0.0, 0.0
                for label, op in LABEL_OPS[strategy].items():
                    if op in sim.op_means:
                        mean = sim.op_means[op] * math.exp(float(rng.normal(0, noise)))
                        c = sim.op_calls[op]
                        labels[label] = {"mean_ns": mean, "count": c, "calls_per_sequence": c}
                        seq, calls = seq + mean * c, calls + c
                seq += think * calls
                e = math.exp(float(rng.normal(0, noise)))
                runs.append(
                    MountRun(
                        strategy,
                        workers,
                        layers,
                        repeat,
                        containers,
                        2,
                        seq,
                        sim.stride_ns * e - seq,
                        sim.containers_per_s / e,
                        0.0,
                        21,
                        round(calls),
                        labels,
                    )
                )
    return BenchData(tuple(runs), (), {"synthetic.csv": "sha256:0"})


def _recovered(ser: float, rcu: float, seed: int) -> list[tuple[str, float, float, float]]:
    data = _synthetic({"ser_umount": ser, "rcu_exp_base_ns": rcu}, 0.02, seed, containers=16)
    c = Calibration(DEVVM, free=("ser_umount", "rcu_exp_base_ns"), containers=16).fit(data)
    out = []
    for name, true in (("ser_umount", ser), ("rcu_exp_base_ns", rcu)):
        span = c.bounds[name][1] - c.bounds[name][0]
        # within 3 reported standard errors, plus a floor of 0.02 of the bounds' span: the
        # optimizer stops at xatol 0.01 (scaled) and the simulated objective is rough below it
        out.append((name, true, c.params[name], 3 * c.stderr[name] + 0.02 * span))
    return out


@pytest.mark.slow  # about 90 s
def test_fit_recovers_one_example():
    for name, true, est, tol in _recovered(0.5, 8000.0, 1):
        assert abs(est - true) <= tol, (name, true, est, tol)


@pytest.mark.slow  # about 8 min
@settings(max_examples=3, deadline=None, phases=[Phase.explicit, Phase.generate], derandomize=True)
@given(ser=st.floats(0.2, 0.9), rcu=st.floats(4000.0, 11000.0), seed=st.integers(0, 100))
# the case that failed before the seed sets: the fit's seeds alone moved ser_umount by 0.2
@example(ser=0.8, rcu=5000.0, seed=1)
def test_fit_recovers_parameters_of_simulated_data(ser, rcu, seed):
    for name, true, est, tol in _recovered(ser, rcu, seed):
        assert abs(est - true) <= tol, (name, true, est, tol)


def _fit_small() -> FitResult:
    """A quick fit: per-layer, 1 layer, 1-2 workers, two free kernel parameters."""
    data = load_bench([DEVVM_DATA / "pause", DEVVM_DATA / "mount"])
    sub = dataclasses.replace(
        data,
        mount=tuple(
            r
            for r in data.mount
            if r.strategy == "per-layer" and r.layers == 1 and r.workers in (1, 2)
        ),
    )
    return Calibration(
        DEVVM,
        containers=1,
        seeds=1,
        max_nfev=4,
        starts=1,
        seed_sets=2,
        free=("ser_umount", "rcu_exp_base_ns"),
    ).fit(sub)


@pytest.fixture(scope="module")
def small_fit():
    return _fit_small()


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
    assert doc["optimizer"]["kernel"]["seed_sets"] == doc["settings"]["seed_sets"] == 2
    assert all(v.startswith("sha256:") for v in doc["data_digests"].values())
    # refitting the same data with the same seed gives the same bytes
    _fit_small().save(b)
    assert a.read_bytes() == b.read_bytes()


def test_samples_and_prediction_intervals(small_fit):
    ks = small_fit.sample_kernels(None, 5, seed=1)
    base = load_kernel()
    assert len(ks) == 5
    lo, hi = small_fit.bounds["rcu_exp_base_ns"]
    for k in ks:
        assert lo <= k.rcu_exp_base_ns <= hi
        assert _total(k, "umount_detach") == pytest.approx(_total(base, "umount_detach"))
    p = predict_run(small_fit, "per-layer", 2, 1, samples=3)
    for v in p.values():
        assert v["low"] <= v["value"] <= v["high"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "unexpected CSV header"),
        ("bench,strategy,workers,layers,syscall,metric,value,unit,repeat\n", "no data rows"),
        (
            "bench,strategy,workers,layers,syscall,metric,value,unit,repeat\n"
            "mount,per-layer,1,1,run,wall_s,x,s,0\n",
            "mount_bench.csv:2: value 'x' is not a number",
        ),
    ],
)
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
    assert (
        _main(["calibrate", str(DEVVM_DATA / "pause"), "--instance", "nope", "--out", str(out)])
        == 1
    )
    assert not out.exists() and capsys.readouterr().err.count("\n") == 1


def test_wake_data_alone_fits_nothing():
    with pytest.raises(CohsimError, match="nothing to fit"):
        Calibration(DEVVM).fit([DEVVM_DATA / "wake"])


def test_cli_fits_a_results_dir_and_says_what_it_skipped(tmp_path, capsys):
    """The README's flow: every bench written into results/, then calibrate results/: it fits
    what it can and says, one line each on stderr, which files it skipped and why."""
    from test_measuredruns import OTHER_BENCHES, results_dir

    results = results_dir(tmp_path, *OTHER_BENCHES)
    out = tmp_path / "fit.json"
    argv = ["calibrate", str(results), "--instance", DEVVM, "--out", str(out), "--no-progress"]
    assert _main(argv) == 0
    err = capsys.readouterr().err
    skipped = [line for line in err.splitlines() if line.startswith("cohsim: skipped ")]
    assert len(skipped) == len(OTHER_BENCHES)
    for bench in OTHER_BENCHES:
        assert any(f"{bench}_bench.csv: " in line for line in skipped)
    assert load_fit(out).to_dict()["kind"] == "lock"
    assert _main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["skipped"]) == len(OTHER_BENCHES)
