"""What a planned call costs in the node's state (cohsim.kernel.callcost): the one definition the
simulation and the analytic model share."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from cohsim.kernel.callcost import CallCosts, percpu_sum_ns
from cohsim.kernel.calls import TABLE, plan_calls
from cohsim.kernel.costs import load_kernel
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
    per-CPU area (under namespace_sem); an unmount removes them under mount_lock, nested in its
    namespace_sem hold, and puts each copy after its grace period, beside its own mount and
    path_umount()'s last reference (docs/kernel-audit.md C2, C4)."""
    k, sum_ns, cc, steps = parts
    bind, unbind = steps["move_mount"], steps["umount_detach"]
    assert bind.prop == 1 and unbind.prop == -1
    quiet, busy = State(), State(windows=10)
    assert cc.write_hold_ns(bind, busy) - cc.write_hold_ns(bind, quiet) == pytest.approx(
        10 * (k.prop_per_slave_mount_ns + sum_ns)
    )
    assert cc.write_hold_ns(unbind, busy) == cc.write_hold_ns(unbind, quiet)
    assert _ml(cc, unbind, busy) - _ml(cc, unbind, quiet) == pytest.approx(
        10 * k.prop_per_slave_umount_ns
    )
    assert cc.puts(unbind, 100, busy) == 2 + 10 + round(k.service_namespaces)
    alone = CallCosts(k.with_values(service_namespaces=0.0), sum_ns)  # no node services
    assert cc.write_hold_ns(bind, quiet) - alone.write_hold_ns(bind, quiet) == pytest.approx(
        k.service_namespaces * (k.prop_per_slave_mount_ns + sum_ns)
    )
    assert _ml(cc, unbind, quiet) - _ml(alone, unbind, quiet) == pytest.approx(
        k.service_namespaces * k.prop_per_slave_umount_ns
    )
    assert cc.puts(bind, 100, busy) == 0


def _ml(cc, s, st):
    """`s`'s mount_lock section's work beyond its fixed part, in state `st`."""
    return cc.ml_hold_at(s, cc.row(s.name, s.op), st.mounts, st.ring, st.windows)


def test_an_unmounts_walks_and_busy_check_are_under_mount_lock(parts):
    """umount2's walks of the parent's peers run under mount_lock, nested in namespace_sem
    (do_umount(): docs/kernel-audit.md C1), and umount2(0)'s busy check sums the per-CPU
    counts of every propagated copy it finds there (C3); MNT_DETACH's does not check."""
    k, sum_ns, cc, steps = parts
    events = synthesize("common-parent", 1, 2, seed=0).threads[0].events
    umount = next(s for s in plan_calls(events, k, 2, sum_ns) if s.name == "umount")
    binds = synthesize("per-layer", 1, 2, seed=0).threads[0].events
    detach = next(
        s for s in plan_calls(binds, k, 2, sum_ns) if s.name == "umount_detach" and s.group_walk
    )
    small, grown = State(ring=1), State(ring=1001, windows=4)
    assert cc.write_hold_ns(umount, grown) == cc.write_hold_ns(umount, small)
    slaves = 4 + k.service_namespaces
    walk = 1000 * k.op("umount").mount_lock_per_peer_ns
    assert _ml(cc, umount, grown) - _ml(cc, umount, small) == pytest.approx(
        walk + 4 * k.prop_per_slave_umount_ns + 4 * sum_ns
    )
    assert _ml(cc, umount, small) == pytest.approx(
        k.op("umount").mount_lock_per_peer_ns + (slaves - 4) * (k.prop_per_slave_umount_ns + sum_ns)
    )
    assert _ml(cc, detach, grown) - _ml(cc, detach, small) == pytest.approx(
        1000 * k.op("umount_detach").mount_lock_per_peer_ns + 4 * k.prop_per_slave_umount_ns
    )


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


def test_every_ring_walk_takes_the_peer_walk_scale(parts):
    """`propagation.peer_walk_scale` (a prior spanning the hosts measured) scales a bind's walk
    of the group's peers, an unmount's under mount_lock and the mountinfo read's ring steps,
    nothing else."""
    k, sum_ns, cc, steps = parts
    doubled = CallCosts(k.with_values(peer_walk_scale=2.0), sum_ns)
    bind, clone = steps["move_mount"], steps["open_tree_clone"]
    small, grown = State(), State(ring=1001, binds=1000)
    walk = cc.write_hold_ns(bind, grown) - cc.write_hold_ns(bind, small)
    assert doubled.write_hold_ns(bind, grown) - doubled.write_hold_ns(bind, small) == (
        pytest.approx(2 * walk)
    )
    assert doubled.write_hold_ns(clone, grown) == cc.write_hold_ns(clone, grown)  # children
    r, r2 = cc.full_read_ns(3000, 2000), doubled.full_read_ns(3000, 2000)
    assert r2["host"] == r["host"]
    assert r2["container"] - r2["host"] == pytest.approx(2 * (r["container"] - r["host"]))
