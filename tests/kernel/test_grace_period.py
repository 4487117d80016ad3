"""One expedited grace period against the busy CPUs (cohsim.kernel.callcost.grace_period_ns;
docs/kernel-audit.md C20): idle CPUs are not IPIed, a leaf's 16 CPUs are, one after another,
the leaves in parallel."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cohsim.kernel.callcost import RCU_FANOUT_LEAF, grace_period_ns
from cohsim.kernel.costs import load_kernel

K = load_kernel()
BASE, PER = K.rcu_exp_base_ns, K.rcu_exp_per_cpu_ns


def test_no_other_cpu_busy_is_the_fixed_part():
    assert grace_period_ns(K, 16, 0.0) == BASE
    assert grace_period_ns(K, 1, 5.0) == BASE  # one CPU: nobody else to IPI


def test_one_leaf_pays_each_busy_cpu_up_to_all_but_the_workers_own():
    assert grace_period_ns(K, 16, 5.0) == pytest.approx(BASE + 5 * PER)
    assert grace_period_ns(K, 16, 40.0) == pytest.approx(BASE + 15 * PER)


def test_leaves_run_in_parallel():
    # 192 CPUs are 12 leaves: every CPU busy costs 191 / 12 IPIs a leaf, not 191
    assert grace_period_ns(K, 192, 191.0) == pytest.approx(BASE + 191 / 12 * PER)
    assert grace_period_ns(K, 192, 1.0) == pytest.approx(BASE + PER)  # one busy CPU: one IPI
    assert grace_period_ns(K, 192, 6.0) == pytest.approx(BASE + PER)


@given(st.integers(1, 512), st.floats(0.0, 600.0), st.floats(0.0, 600.0))
def test_grows_with_busy_cpus_and_is_bounded(vcpus, a, b):
    lo, hi = sorted((a, b))
    g_lo, g_hi = grace_period_ns(K, vcpus, lo), grace_period_ns(K, vcpus, hi)
    assert BASE <= g_lo <= g_hi <= BASE + RCU_FANOUT_LEAF * PER + 1e-9
