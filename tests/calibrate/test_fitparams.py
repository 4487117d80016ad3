"""params: the kernel parameters applied to a kernel model keep every op's total."""

from __future__ import annotations

import math

import pytest

from cohsim.calibrate.fitparams import Param, apply_kernel_params, kernel_bounds
from cohsim.errors import CohsimError
from cohsim.kernel.costs import load_kernel


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


def test_a_parameter_knows_its_group_unit_and_doc():
    p = Param("ser_umount", 0.5, 0.1, 0.0, 1.0)
    assert (p.group, p.unit, p.bounds) == ("kernel", "fraction", (0.0, 1.0))
    assert "namespace_sem" in p.doc
    w = Param("wake_ns", 3000.0, 10.0)  # measured: no upper bound
    assert (w.group, w.unit, w.bounds) == ("lock", "ns", (0.0, math.inf))


def test_a_zero_fraction_still_takes_namespace_sem():
    # the kernel's open_tree clone, move_mount, unmounts and dissolving close always call
    # namespace_lock(): a fraction of 0 shortens the section to nothing, the op still takes
    # the lock (OpCost.takes_ns_write, from the model file)
    base = load_kernel()
    k = apply_kernel_params(base, {"ser_bind": 0.0, "ser_overlay": 0.0, "ser_umount": 0.0})
    for name in ("open_tree_clone", "move_mount", "mount_setattr_ro", "umount_detach"):
        assert k.op(name).ns_write_ns == 0.0
        assert k.op(name).takes_ns_write
        assert _total(k, name) == pytest.approx(_total(base, name))
    # IDMAP alone: no namespace_sem, whatever a fit does
    assert k.op("mount_setattr").ns_write_ns == 0.0
    assert not k.op("mount_setattr").takes_ns_write
    assert not base.with_values(**{"mount_setattr.cpu_ns": 1.0}).op("mount_setattr").takes_ns_write
    # above the floor the split is the fraction's, as before
    half = apply_kernel_params(base, {"ser_bind": 0.5})
    body = base.op("move_mount").cpu_ns + base.op("move_mount").ns_write_ns
    assert half.op("move_mount").ns_write_ns == 0.5 * body


def test_the_longest_grace_period_leaves_every_op_its_unlocked_work():
    """At the bound every RCU op whose split is not given keeps its lock section and at least
    50 ns of unlocked work (a draw past the old bound once left umount_oldroot negative work, a
    negative delay in the simulation), and past the bound such an op is refused."""
    base = load_kernel()
    _, hi = kernel_bounds(base)["rcu_exp_base_ns"]
    k = apply_kernel_params(base, {"rcu_exp_base_ns": hi})
    for name in base.ops:
        if base.op(name).rcu:
            assert k.op(name).cpu_ns >= 50.0 - 1e-6, name
            assert k.op(name).ns_write_ns == base.op(name).ns_write_ns, name
    with pytest.raises(CohsimError, match="exceeds op umount's unlocked work"):
        apply_kernel_params(base, {"rcu_exp_base_ns": hi + 100.0})
