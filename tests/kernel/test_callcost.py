"""What a planned call costs in the node's state (cohsim.kernel.callcost): the one definition the
simulation and the analytic model share."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from cohsim.kernel.callcost import CallCosts, percpu_sum_ns
from cohsim.kernel.costs import load_kernel
from cohsim.kernel.plan import TABLE, plan_calls
from cohsim.workload.synth import synthesize


@dataclass
class State:
    mounts: float = 100.0
    ring: float = 1.0
    binds: float = 0.0
    windows: float = 0.0


@pytest.fixture(scope="module")
def parts(catalog):
    k = load_kernel()
    sum_ns = percpu_sum_ns(catalog.get("c6gd.metal"), k)
    steps = {
        s.name: s
        for s in plan_calls(synthesize("per-layer", 1, 2, seed=0).threads[0].events, k, 2, sum_ns)
    }
    return k, sum_ns, CallCosts(k, sum_ns), steps


def test_a_host_mount_event_pays_for_every_slave_namespace(parts):
    """A host mount event is copied into every live slave namespace (runtimes' copies between
    their unshare and their old root's detach, plus the node services'), each copy with its
    per-CPU area; an unmount removes them, and puts each copy after its grace period."""
    k, sum_ns, cc, steps = parts
    bind, unbind = steps["move_mount"], steps["umount_detach"]
    assert bind.prop == 1 and unbind.prop == -1
    quiet, busy = State(), State(windows=10)
    assert cc.write_hold_ns(bind, busy) - cc.write_hold_ns(bind, quiet) == pytest.approx(
        10 * (k.prop_per_slave_mount_ns + sum_ns)
    )
    assert cc.write_hold_ns(unbind, busy) - cc.write_hold_ns(unbind, quiet) == pytest.approx(
        10 * k.prop_per_slave_umount_ns
    )
    assert cc.puts(unbind, 100, busy) == 1 + 10 + round(k.service_namespaces)
    alone = CallCosts(k.with_values(service_namespaces=0.0), sum_ns)  # no node services
    assert cc.write_hold_ns(bind, quiet) - alone.write_hold_ns(bind, quiet) == pytest.approx(
        k.service_namespaces * (k.prop_per_slave_mount_ns + sum_ns)
    )
    assert cc.write_hold_ns(unbind, quiet) - alone.write_hold_ns(unbind, quiet) == pytest.approx(
        k.service_namespaces * k.prop_per_slave_umount_ns
    )
    assert cc.puts(bind, 100, busy) == 0


def test_binds_walk_the_groups_peers_and_the_roots_children(parts):
    k, _, cc, steps = parts
    clone, bind = steps["open_tree_clone"], steps["move_mount"]
    grown = State(ring=1001, binds=1000)
    assert cc.write_hold_ns(bind, grown) - cc.write_hold_ns(bind, State()) == pytest.approx(
        1000 * k.op("move_mount").per_peer_ns
    )
    assert cc.write_hold_ns(clone, grown) - cc.write_hold_ns(clone, State()) == pytest.approx(
        1000 * k.op("open_tree_clone").per_child_ns
    )


def test_the_copy_and_the_old_roots_detach_grow_with_the_table(parts):
    k, sum_ns, cc, steps = parts
    copy, detach = steps["ns_copy"], steps["umount_oldroot"]
    assert copy.allocs == TABLE and detach.puts == TABLE
    small, big = State(mounts=1000), State(mounts=5000)
    per_mount = k.op("ns_copy").per_mount_write_ns + sum_ns  # each copy's per-CPU area too
    assert cc.write_hold_ns(copy, big) - cc.write_hold_ns(copy, small) == pytest.approx(
        4000 * per_mount
    )
    assert cc.puts(detach, 5000, small) == 5000  # the copy it found, whatever the table now
    assert cc.write_hold_ns(steps["close_attached"], big) == 0.0  # takes no namespace_sem


def test_a_whole_read(parts):
    k, _, cc, _ = parts
    r = cc.full_read_ns(3000, 2000)
    assert r["host"] > k.op("mountinfo_read").per_mount_read_ns * 3000
    assert r["container"] - r["host"] == pytest.approx(2000**2 * k.peer_step_ns)
    assert cc.slave_line_ns(State(mounts=3000, ring=2000)) * 3000 == pytest.approx(
        r["container"] - r["host"]
    )
