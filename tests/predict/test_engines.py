"""Level 3's two engines behind one contract: `predict(..., engine="analytic")` reports what
the simulation does, in the same document, and says which engine answered (how far the two
agree: tests/predict/test_engine_agreement.py)."""

from __future__ import annotations

import json

import pytest

from cohsim.cli import main
from cohsim.errors import CohsimError
from cohsim.kernel.result import CPU_SITES, OFF_CPU
from cohsim.predict import RunOptions, predict, replay

SMALL = {"instance": "m7a.24xlarge", "containers": 12, "layers": 4, "seed": 3}


@pytest.fixture(scope="module")
def both(catalog):
    """The same small burst answered by each engine (4 replicates: intervals, priors)."""
    return {e: predict(**SMALL, catalog=catalog, engine=e, jobs=1) for e in ("des", "analytic")}


def test_the_analytic_prediction_has_the_simulations_document(both):
    des, ana = (both[e].to_dict() for e in ("des", "analytic"))
    assert set(ana) == set(des)
    for key in ("launch_s", "mount_s"):
        assert set(ana[key]) == set(des[key])
        for stat in ana[key].values():
            assert 0 < stat["low"] <= stat["value"] <= stat["high"]
    assert ana["containers"] == des["containers"] == SMALL["containers"]
    assert ana["mount_ops"] == des["mount_ops"]
    assert ana["peak_mount_table"] > 0
    assert set(ana["mountinfo_read_at_peak_s"]) == {"host", "container"}
    assert ana["breakdown"]["dominant_holder"]  # what the lock waits waited for
    assert len(ana["priors"]["drawn"]) == len(des["priors"]["drawn"]) > 0


def test_each_prediction_says_which_engine_answered(both):
    assert both["des"].engine == {"name": "des"}
    ana = both["analytic"]
    assert ana.engine["name"] == "analytic"
    assert "not_modelled" in ana.engine and "lock_wait_fraction" in ana.engine
    assert ana.level[0].startswith("level 3: analytic")
    assert not any("level 2" in lv for lv in ana.level)  # no line-cost table was asked for
    assert ana.handoff_table == {}
    assert 0.0 <= ana.lock_wait_fraction.value < 1.0


def test_the_analytic_engine_is_deterministic_and_needs_no_workers(catalog):
    docs = [
        json.dumps(predict(**SMALL, catalog=catalog, engine="analytic", jobs=j).to_dict())
        for j in (1, 2)
    ]
    assert docs[0] == docs[1]


def test_an_unknown_engine_is_refused_before_anything_runs():
    with pytest.raises(CohsimError, match="unknown engine 'fluid'"):
        RunOptions(engine="fluid")


def test_a_replayed_trace_is_the_simulations(tmp_path, catalog):
    trace = tmp_path / "t.strace"
    trace.write_text(
        '100 10:00:00.000001 open_tree(AT_FDCWD, "/a", OPEN_TREE_CLONE) = 3\n'
        '101 10:00:00.000002 umount2("/b", MNT_DETACH) = 0\n'
    )
    with pytest.raises(CohsimError, match="analytic"):
        replay(str(trace), instance="m7a.24xlarge", catalog=catalog, engine="analytic")


def test_cli_engine_flag_and_its_refusals(tmp_path, capsys):
    assert main(["predict", "--instance", "m7a.24xlarge", "--containers", "5", "--layers", "2",
                 "--engine", "analytic", "--json"]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert doc["engine"]["name"] == "analytic"
    out = tmp_path / "launch.png"
    code = main(["predict", "--arch", "mesh", "--layers", "2", "--engine", "analytic",
                 "--plot", str(out)])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and "--engine des" in err[0]
    assert not out.exists()


def test_both_engines_profile_the_same_sites(both):
    """One profile document whichever engine answered: every site, the contested share."""
    docs = {e: both[e].to_dict()["profile"] for e in ("des", "analytic")}
    for d in docs.values():
        assert list(d["cpu_s"]) == list(CPU_SITES) and list(d["off_cpu_s"]) == list(OFF_CPU)
        assert 0.0 <= d["contested_share"] <= 1.0 and d["top"] in CPU_SITES
        assert d["cpus"] == 96 and d["span_s"] > 0
    # walkers spin while mount_lock is write-held: the closed form has the node daemons' only
    assert (
        0.0 < docs["analytic"]["cpu_s"]["path_init_spin"] <= docs["des"]["cpu_s"]["path_init_spin"]
    )


def test_cli_profile_prints_where_the_cpus_time_went(capsys):
    assert main(["predict", "--instance", "m7a.24xlarge", "--containers", "5", "--layers", "2",
                 "--engine", "analytic", "--profile"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "CPU time by kernel site" in out and "on contested lines" in out
    assert "runtime" in out


@pytest.mark.parametrize("strategy", ["per-layer", "common-parent", "lowerdir-plus"])
def test_the_analytic_engines_containers_finish_in_turn(strategy):
    """Issue 30: the analytic engine's p50 equalled its p99. Its containers now finish one gap
    apart (cohsim.kernel.analytic.spread), so its quantiles differ as the simulation's do."""
    p = predict(arch="mesh", containers=100, layers=50, strategy=strategy, engine="analytic")
    launch = p.launch_s
    assert launch["p50"].value < launch["p95"].value < launch["p99"].value
    assert launch["p99"].value - launch["p50"].value > 0.005  # s: ms apart, not one hold
    assert p.mount_s["p50"].value < p.mount_s["p99"].value
