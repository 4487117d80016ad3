"""calibrate: recovery of known parameters, held-out prediction, fit JSON, one-line errors."""

from __future__ import annotations

import argparse
import dataclasses
import math

import numpy as np
import pytest
from conftest import DATA, REPO
from hypothesis import Phase, example, given, settings
from hypothesis import strategies as st

from cohsim.calibrate.benchdata import (
    LABEL_OPS,
    BenchData,
    MountRun,
    SimRun,
    bench_kernel,
    load_bench,
    simulate_run,
)
from cohsim.calibrate.calibration import (
    _MIN_NOISE,
    KERNEL_PARAMS,
    Calibration,
    _noise_sd,
    _seed_cov,
    apply_kernel_params,
    default_fit,
    kernel_bounds,
    load_fit,
)
from cohsim.calibrate.heldout import BOUND, SPLITS, HeldOut, held_out, split_runs
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
    return op.cpu_ns + op.ns_write_ns + (k.rcu_exp_base_ns + k.rcu_exp_per_cpu_ns * vcpus) * op.rcu


def test_applying_parameters_keeps_every_op_total():
    base = load_kernel()
    k = apply_kernel_params(
        base, {"ser_bind": 0.5, "ser_overlay": 0.1, "ser_umount": 0.9, "rcu_exp_base_ns": 4000.0}
    )
    for name in base.ops:
        assert _total(k, name) == pytest.approx(_total(base, name))
    body = _total(base, "umount_detach") - 4000 - 1000
    assert k.op("umount_detach").ns_write_ns == pytest.approx(0.9 * body)
    lo, hi = kernel_bounds(base)["rcu_exp_base_ns"]
    assert lo < base.rcu_exp_base_ns < hi


def test_unfitted_calibration_refuses():
    c = Calibration(DEVVM)
    for call in (
        lambda: c.predict("per-layer", 1, 1),
        lambda: c.sample_kernels(None, 2, 0),
        lambda: c.to_dict(),
        lambda: c.kernel_params(),
    ):
        with pytest.raises(CohsimError, match="not fitted"):
            call()


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
        span = c.bounds_[name][1] - c.bounds_[name][0]
        # within 3 reported standard errors, plus a floor of 0.02 of the bounds' span: the
        # optimizer stops at xatol 0.01 (scaled) and the simulated objective is rough below it
        out.append((name, true, c.params_[name], 3 * c.stderr_[name] + 0.02 * span))
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


def _fit_small() -> Calibration:
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


def test_seed_spread_is_the_minima_covariance_but_at_least_the_roughness():
    rough = np.diag([1e-4, 4e-4])
    same = np.array([[0.5, 0.5]] * 3)  # seed sets that agree: the roughness term stands
    assert np.allclose(_seed_cov(same, rough), rough)
    spread = np.array([[0.4, 0.5], [0.6, 0.5], [0.5, 0.5]])  # variance 0.01 along the first
    c = _seed_cov(spread, rough)
    assert c[0, 0] == pytest.approx(0.01) and c[1, 1] == pytest.approx(4e-4)
    assert c[0, 1] == pytest.approx(0.0, abs=1e-12)
    assert np.linalg.eigvalsh(c).min() >= -1e-15
    assert np.allclose(_seed_cov(spread[:1], rough), rough)  # one seed set: roughness only


def _run(stride: float, cps: float, repeat: int, layers: int = 1) -> MountRun:
    return MountRun("per-layer", 1, layers, repeat, 4, 1, stride, 0.0, cps, 0.0, 21, 8)


def test_noise_is_the_hosts_repeat_scatter_plus_the_simulations():
    # two shapes, three repeats each: log scatter pooled over both (4 degrees of freedom)
    a = [_run(s, 1000.0, i) for i, s in enumerate((100.0, 110.0, 90.0))]
    b = [_run(s, 1000.0, i, layers=10) for i, s in enumerate((200.0, 200.0, 230.0))]
    groups = {a[0].key: a, b[0].key: b}

    def sims(sa: float, sb: float) -> dict:
        return {a[0].key: SimRun(sa, 1000.0), b[0].key: SimRun(sb, 1000.0)}

    sets = [sims(100.0, 200.0), sims(120.0, 190.0), sims(80.0, 210.0)]
    sd = _noise_sd(groups, sets)
    ss = sum(
        (x - np.mean(np.log(v))) ** 2 for v in ((100, 110, 90), (200, 200, 230)) for x in np.log(v)
    )
    sim_var = np.mean([np.var(np.log(v), ddof=1) for v in ((100, 120, 80), (200, 190, 210))])
    assert sd[("stride_ns", "", 1)] == pytest.approx(math.sqrt(ss / 4 + sim_var))
    # containers/s agree everywhere: no noise to weigh by, so the floor
    assert sd[("containers_per_s", "", 1)] == _MIN_NOISE
    # one seed set: the host's scatter alone
    assert _noise_sd(groups, sets[:1])[("stride_ns", "", 1)] == pytest.approx(math.sqrt(ss / 4))


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


def test_committed_fit_loads_and_applies():
    path = REPO / "calibration" / "fits" / f"{DEVVM}.json"
    c = load_fit(path)
    assert c.kind_ == "kernel+lock" and set(KERNEL_PARAMS) <= set(c.params_)
    assert default_fit(DEVVM).instance_ == DEVVM
    other = default_fit("m7i.metal-24xl")  # the kernel part applies to every instance
    assert other is not None and other.applies_to_["kernel"]["instances"] == "*"


def test_wake_data_alone_fits_nothing():
    with pytest.raises(CohsimError, match="nothing to fit"):
        Calibration(DEVVM).fit([DEVVM_DATA / "wake"])


def test_held_out_splits():
    data = load_bench([DEVVM_DATA / "mount", DEVVM_DATA / "wake"])
    fit, held = split_runs(data, "workers")
    assert {r.workers for r in fit.mount} == {1, 2} and {r.workers for r in held} == {4}
    assert fit.wake == data.wake  # the host's wake-up latency goes with every split
    s3 = DEVVM_DATA / "mount-wake-long"
    table = load_bench([s3 / "mount", s3 / "wake-idle"])
    assert split_runs(table, "workers")[0].wake_idle is table.wake_idle is not None
    fit, held = split_runs(data, "repeats")
    assert {r.repeat for r in fit.mount} == {0, 1, 2} and {r.repeat for r in held} == {3, 4}
    with pytest.raises(CohsimError, match="unknown split"):
        split_runs(data, "layers")


_HELD_OUT_XFAIL = (
    "known misfit (calibration/fits/README.md, session 8): the model is still too fast for "
    "common-parent at 4 workers and too slow for per-layer at 4 workers and 1 layer. Workers "
    "split: worst +30.7 % (per-layer 4 workers 1 layer), common-parent 4 workers 10 / 50 "
    "layers -22.1 / -27.5 %, median 8.7 %. Repeats split, on the 23 shapes the host repeats "
    "within 15 %: worst -37.8 % (common-parent 4 workers 10 layers), five shapes over 15 %. "
    "Session 11: the host itself does not repeat these shapes within 15 % between sittings "
    "(multi-worker slowdowns moved 19 % median, up to 87 %: "
    "calibration/data/devvm-2cpu-intel-xeon-f6m167/mount-interleaved-rounds/README.md)"
)


def test_held_out_leaves_out_only_shapes_the_host_did_not_repeat():
    a, b, c = ("per-layer", 1, 1), ("per-layer", 2, 1), ("per-layer", 4, 1)
    h = HeldOut("repeats", {a: 0.30, b: -0.10, c: 0.05}, 0.9, 6, {a: 0.40, b: 0.02, c: -0.16})
    assert h.drifted == [a, c]
    assert h.worst == pytest.approx(0.30) and h.worst_reproducible == pytest.approx(0.10)
    # the workers split has no host figure: every shape counts
    w = HeldOut("workers", {a: 0.30, b: -0.10}, 0.9, 6)
    assert w.drifted == [] and w.worst_reproducible == pytest.approx(0.30)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=_HELD_OUT_XFAIL)
@pytest.mark.parametrize("split", SPLITS)
def test_held_out_within_15_percent(split):
    s3 = DEVVM_DATA / "mount-wake-long"
    data = load_bench([s3 / "mount", s3 / "wake", s3 / "wake-idle"])
    h = held_out(data, DEVVM, split)
    # the repeats split leaves out shapes whose own later repeats moved by more than the
    # bound (h.drifted; the host's step changes): no model fitted to the earlier ones can
    # follow them. The workers split predicts new shapes: every one counts
    assert h.worst_reproducible < BOUND, (h.errors, h.drifted)
    assert len(h.drifted) <= len(h.errors) // 4, h.host  # most shapes still count
