"""The unknowns: priors drawn in the replicates from their own streams, pinned by a user or a
measurement, and ranked by their effect on the launch p99."""

from __future__ import annotations

import json

import pytest

from cohsim.errors import CohsimError
from cohsim.kernel.costs import load_kernel
from cohsim.machine.catalog import Catalog
from cohsim.predict import RunOptions, predict
from cohsim.predict.unknowns import Sensitivity, draws, pin, rank, unknowns

SMALL = dict(containers=12, layers=4, jobs=1)


def test_replicate_0_is_nominal_and_every_draw_is_in_range():
    k = load_kernel()
    d = draws(k.priors, seed=5, replicates=6)
    assert d[0] == {} and all(set(x) == {p.attr for p in k.priors} for x in d[1:])
    for p in k.priors:
        xs = [x[p.attr] for x in d[1:]]
        assert all(p.low <= x <= p.high for x in xs) and len(set(xs)) == 5
    assert draws(k.priors, seed=5, replicates=6) == d  # same seed, same draws
    assert draws(k.priors, seed=6, replicates=6) != d


def test_a_priors_draws_do_not_depend_on_the_others_or_on_the_count():
    """Each prior has its own stream keyed by its name: pinning another prior, or asking
    for more replicates, leaves its draws as they were (replicate i's is the i-th number)."""
    k = load_kernel()
    full = draws(k.priors, seed=1, replicates=4)
    some = draws(unknowns(k, ["background.node_mounts"]), seed=1, replicates=4)
    more = draws(k.priors, seed=1, replicates=8)
    for i in range(1, 4):
        assert "node_mounts" not in some[i]
        assert all(some[i][a] == full[i][a] for a in some[i])
        assert more[i] == full[i]


def test_pins():
    k = load_kernel()
    assert pin(k, {"background.node_mounts": 2204}).node_mounts == 2204
    assert pin(k, {}) is k
    with pytest.raises(CohsimError, match="cannot pin cpu.call_sigma: not a prior"):
        pin(k, {"cpu.call_sigma": 0.1})
    with pytest.raises(CohsimError, match="must be a number >= 0"):
        pin(k, {"background.node_mounts": -1})


def test_ranking_is_by_swing_then_key():
    k = load_kernel()
    by = {p.key: p for p in k.priors}
    rows = [
        Sensitivity(by["cpu.wake_ns"], 2000.0, 1.0, 1.2, 0.1, 0.1),
        Sensitivity(by["background.node_mounts"], 50.0, 1.0, 2.0, 0.1, 0.5),
        Sensitivity(by["cpu.smt_slowdown"], 1.6, 1.2, 1.0, 0.1, 0.1),
        Sensitivity(by["percpu.mlp"], 10.0, 1.0, 1.0, 0.1, 0.1),
    ]
    ranked = [r.prior.key for r in rank(rows)]
    assert ranked == ["background.node_mounts", "cpu.smt_slowdown", "cpu.wake_ns", "percpu.mlp"]
    assert rank(list(reversed(rows))) == rank(rows)
    assert rows[2].to_dict()["swing_s"] == pytest.approx(0.2)


def test_priors_widen_the_interval_and_pins_are_reported():
    """Drawn priors widen the launch interval over the same replicates with them pinned; a
    user's node mount count is pinned (not drawn) and starts the table there."""
    drawn = predict(arch="mesh", replicates=4, **SMALL)
    pinned = predict(arch="mesh", replicates=4, priors=False, **SMALL)
    # replicate 0 is nominal in both
    assert drawn.per_container_s == pinned.per_container_s
    w = {
        n: p.launch_s["p99"].high - p.launch_s["p99"].low for n, p in (("d", drawn), ("p", pinned))
    }
    assert w["d"] > 2 * w["p"]
    assert drawn.priors["drawn"] and pinned.priors["drawn"] == []
    base = drawn.breakdown.base_s if drawn.breakdown else 0.0
    assert all(v.low >= base for v in drawn.launch_s.values())  # the base is not uncertain
    assert drawn.interval["level"] == 0.9 and drawn.interval["draws"] == 3
    user = predict(arch="mesh", replicates=3, node_mounts=2204, **SMALL)
    assert "background.node_mounts" not in user.priors["drawn"]
    assert user.priors["pinned"] == {
        "background.node_mounts": {
            "value": 2204.0,
            "by": "user",
            "range": [20.0, 5000.0],
            "inside_range": True,
        }
    }
    assert user.peak_mount_table >= 2204


def test_a_fits_own_host_pins_what_it_measured():
    """On the fitted host the lock fit's measured wake-up latency is not drawn."""
    p = predict(instance="devvm-2cpu-intel-xeon-f6m167", replicates=3, **SMALL)
    assert "cpu.wake_ns" not in p.priors["drawn"]
    assert p.priors["pinned"]["cpu.wake_ns"]["by"].startswith("calibration")


def test_explain_ranks_every_drawn_prior_the_same_way_whatever_the_workers():
    opts = RunOptions(replicates=2, explain=True, jobs=1)
    one = predict(arch="chiplet", containers=8, layers=3, options=opts)
    two = predict(
        arch="chiplet", containers=8, layers=3, options=RunOptions(**{**vars(opts), "jobs": 2})
    )
    assert json.dumps(one.to_dict()) == json.dumps(two.to_dict())
    keys = [r.prior.key for r in one.sensitivity]
    assert sorted(keys) == sorted(one.priors["drawn"])
    swings = [r.swing_s for r in one.sensitivity]
    assert swings == sorted(swings, reverse=True) and one.sensitivity_noise_s >= 0
    # the runtime's CPU work is added to every launch: its ends move the p99 by their span,
    # run at the machine's clock (cohsim.kernel.corespeed; 20-200 ms measured at 2 GHz)
    rt = next(r for r in one.sensitivity if r.prior.key == "launch.runtime_cpu_ns")
    ghz = Catalog().get(Catalog().archetype("chiplet").instance).microarch.freq_ghz
    span = (rt.prior.high - rt.prior.low) / 1e9 * 2.0 / ghz
    assert 0.8 * span < rt.launch_p99_high_s - rt.launch_p99_low_s < 1.5 * span
    assert predict(arch="chiplet", containers=8, layers=3, replicates=2, jobs=1).sensitivity == ()


@pytest.mark.slow
def test_an_unmeasured_96_core_machine_gets_the_width_its_priors_give():
    """m7i.metal-48xl (96 cores, 192 CPUs), 100 containers of 50 layers: the 90 % interval
    with the priors drawn is several times the one with them pinned (the fit's draws and the
    simulation's noise alone), and the pinned node mounts leave their prior out."""
    run = dict(instance="m7i.metal-48xl", containers=100, layers=50, replicates=4)
    drawn = predict(**run)
    pinned = predict(**run, priors=False)
    width = {
        name: p.launch_s["p99"].high - p.launch_s["p99"].low
        for name, p in (("drawn", drawn), ("pinned", pinned))
    }
    assert width["drawn"] > 3 * width["pinned"]
    assert len(drawn.priors["drawn"]) == len(load_kernel().priors)
