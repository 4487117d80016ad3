"""The engines' one result type (cohsim.kernel.result): its profile and its locks' document."""

from __future__ import annotations

import pytest

from cohsim.kernel.result import CONTESTED, CPU_SITES, OFF_CPU, LockTotals, Profile


def _profile(**cpu: float) -> Profile:
    sites = dict.fromkeys(CPU_SITES, 0.0) | cpu
    return Profile(sites, dict.fromkeys(OFF_CPU, 0.0), span_ns=1e9, cpus=4)


def test_the_profile_names_its_top_site_and_its_contested_share():
    p = _profile(path_init_spin=3e9, mount_work=1e9)
    assert p.top == "path_init_spin"
    assert p.contested_share == pytest.approx(0.75)
    d = p.to_dict()
    assert d["cpu_s"]["path_init_spin"] == 3.0 and d["busy_fraction"] == 1.0
    assert d["contested_sites"] == list(CONTESTED)
    assert sum(d["cpu_share"].values()) == pytest.approx(1.0, abs=1e-3)


def test_an_idle_profile_has_no_top_and_no_share():
    p = _profile()
    assert p.top == "" and p.contested_share == 0.0 and p.to_dict()["busy_fraction"] == 0.0


def test_a_profile_must_name_every_site_in_order():
    with pytest.raises(ValueError, match="sites"):
        Profile({"mount_work": 1.0}, dict.fromkeys(OFF_CPU, 0.0), 1.0, 1)


def test_a_total_an_engine_does_not_model_is_left_out_not_zero():
    assert LockTotals(None, 2e9).to_dict() == {"hold_s": 2.0}
    assert LockTotals(3, 1e9, 5e8, 2).to_dict() == {
        "acquisitions": 3,
        "wait_s": 0.5,
        "hold_s": 1.0,
        "max_waiters": 2,
    }
