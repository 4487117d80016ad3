"""The kernel's CPU work at the target's core clock (cohsim.kernel.corespeed)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from cohsim.calibrate import load_fit
from cohsim.kernel.corespeed import CLOCKED_OP, CLOCKED_TOP, at_clock, clock_ratio
from cohsim.kernel.costs import load_kernel
from cohsim.machine.catalog import Catalog, machine_to_toml
from cohsim.machine.model import Machine
from cohsim.predict import Burst, Target, predict

FITS = Path(__file__).resolve().parents[2] / "calibration" / "fits"


def _at(machine: Machine, ghz: float) -> Machine:
    return replace(machine, microarch=replace(machine.microarch, freq_ghz=ghz))


def test_cpu_work_runs_at_the_targets_clock() -> None:
    k = load_kernel()
    m = Catalog().get("m7a.24xlarge")
    assert k.reference_ghz == 2.0 and m.microarch.freq_ghz == 3.7
    fast = at_clock(k, m)
    r = 2.0 / 3.7
    assert clock_ratio(k, m) == pytest.approx(r)
    assert fast.walk_ns == pytest.approx(k.walk_ns * r)
    assert fast.runtime_cpu_ns == pytest.approx(k.runtime_cpu_ns * r)
    bind, bind_fast = k.op("move_mount"), fast.op("move_mount")
    assert bind_fast.ns_write_ns == pytest.approx(bind.ns_write_ns * r)
    assert bind_fast.cpu_ns == pytest.approx(bind.cpu_ns * r)
    # what the machine prices or what is not CPU work at the core's clock stays
    assert bind_fast.per_peer_ns == bind.per_peer_ns and fast.peer_step_ns == k.peer_step_ns
    assert fast.rcu_exp_base_ns == k.rcu_exp_base_ns and fast.wake_step_ns == k.wake_step_ns
    assert fast.base_launch_ns == k.base_launch_ns
    # the result is at the machine's clock: applying it again changes nothing
    assert fast.reference_ghz == 3.7 and at_clock(fast, m) is fast
    assert at_clock(k, _at(m, 2.0)) is k  # the reference clock itself: the same kernel
    assert "per_peer_ns" not in CLOCKED_OP and "ns_write_ns" in CLOCKED_OP
    assert "walk_ns" in CLOCKED_TOP and "rcu_exp_base_ns" not in CLOCKED_TOP


def test_the_reference_hosts_clock_is_a_prior() -> None:
    k = load_kernel()
    (p,) = [p for p in k.priors if p.key == "cpu.reference_clock_scale"]
    assert (p.low, p.high) == (0.75, 1.5) and p.low <= k.reference_clock_scale <= p.high
    slow_host = k.with_values(reference_clock_scale=1.5)
    m = Catalog().get("m7i.metal-24xl")
    assert clock_ratio(slow_host, m) == pytest.approx(1.5 * 2.0 / 3.2)


def test_a_fit_measures_at_its_hosts_clock() -> None:
    two = load_fit(FITS / "devvm-2cpu-intel-xeon-f6m167.json")
    sixteen = load_fit(FITS / "devvm-16cpu-intel-xeon-f6m207.json")
    assert two.kernel_params().reference_ghz == 2.0
    assert sixteen.kernel_params().reference_ghz == 2.1
    assert {d.reference_ghz for d in sixteen.sample_kernels(None, 3, 0)} == {2.1}
    host = Catalog().get(sixteen.instance)
    assert clock_ratio(sixteen.kernel_params(), host) == 1.0  # its own host: as measured


def test_a_faster_clock_shortens_the_burst(tmp_path: Path) -> None:
    """The same machine at two clocks (analytic engine, nominal, the committed fit): the
    mount phase is shorter at the higher clock, and the note says the ratio."""
    m = Catalog().get("m7i.metal-24xl")
    p50 = {}
    for ghz in (2.0, 4.0):
        toml = tmp_path / f"m7i-{ghz:g}ghz.toml"
        toml.write_text(machine_to_toml(_at(m, ghz)))
        pred = predict(Burst(containers=20, layers=10), Target(instance=str(toml)),
                       engine="analytic", replicates=1)  # fmt: skip
        p50[ghz] = pred.mount_s["p50"].value
    assert p50[4.0] < 0.8 * p50[2.0]
    assert "CPU work at 4 GHz, measured at 2 GHz (x 0.5)" in pred.calibration


def test_a_kernel_at_a_clock_is_kept_by_its_value_and_its_unequal_fields_identity() -> None:
    """An equal kernel in another object is put at the clock once (the same object back); one
    whose fields that `==` leaves out differ (a fit's wake table) gets its own, with them."""
    k, m = load_kernel(), Catalog().get("m7a.24xlarge")
    first = at_clock(k, m)
    again = k.with_values(walk_ns=k.walk_ns)
    assert again is not k and at_clock(again, m) is first
    other = replace(k, wake_table=None, sources={"other": "file"})
    assert other == k and at_clock(other, m) is not first
    assert at_clock(other, m).sources == {"other": "file"}
    assert at_clock(k, _at(m, 3.0)) is not first
