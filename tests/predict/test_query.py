"""One op's or one mountinfo read's cost alone (cohsim.predict.query), from the cost
definition both engines share (cohsim.kernel.callcost): the parts add up to what CallCosts
gives, each grows with what it says."""

from __future__ import annotations

import pytest

from cohsim.errors import UsageError
from cohsim.kernel.callcost import CallCosts, percpu_sum_ns
from cohsim.kernel.costs import load_kernel
from cohsim.kernel.walk import walks_for
from cohsim.machine.catalog import Catalog
from cohsim.predict.query import State, human, mountinfo_cost, op_cost, step_of

M = Catalog().get("m7i.metal-24xl")
K = load_kernel()


def _parts(answer, section):
    return {p.what: p for p in answer.sections[section]}


def test_the_write_hold_is_callcosts_split_in_parts():
    st = State(mounts=5000, ring=2000, binds=1999, slaves=50)
    a = op_cost(M, K, "move_mount", st)
    sum_ns = percpu_sum_ns(M, K)
    step = step_of("move_mount", "per-layer", "runc", K, sum_ns)
    cc = CallCosts(K, sum_ns, walks=walks_for(M, K))
    hold = cc.write_hold_at(step, cc.row(step.name, step.op), 5000, 2000, 1999, 50)
    assert a.section_ns("namespace_sem write hold") == pytest.approx(hold)
    parts = _parts(a, "namespace_sem write hold")
    assert parts["walk of the root's peer group"].grows_with == "ring"
    assert parts["copy into every slave namespace"].grows_with == "slaves"
    assert a.total_ns == pytest.approx(sum(a.section_ns(s) for s in a.sections))


def test_each_part_grows_with_what_it_says():
    small = op_cost(M, K, "move_mount", State(100, 1000, 999, 10))
    big = op_cost(M, K, "move_mount", State(100, 2000, 1999, 20))
    s, b = (_parts(x, "namespace_sem write hold") for x in (small, big))
    ring = "walk of the root's peer group"
    assert b[ring].ns == pytest.approx(2 * s[ring].ns)
    # the runtimes' copies and the node services' (the kernel's service_namespaces)
    slaves = "copy into every slave namespace"
    n = K.service_namespaces
    assert b[slaves].ns / s[slaves].ns == pytest.approx((20 + n) / (10 + n))
    assert b["the op's own work"].ns == pytest.approx(s["the op's own work"].ns)
    copy = op_cost(M, K, "ns_copy", State(5000, 1, 0, 0))
    half = op_cost(M, K, "ns_copy", State(2500, 1, 0, 0))
    assert copy.section_ns("namespace_sem write hold") > 1.9 * half.section_ns(
        "namespace_sem write hold"
    )


def test_an_unmount_pays_in_mount_lock_and_after():
    a = op_cost(M, K, "umount_detach", State(5000, 2000, 1999, 50))
    ml = _parts(a, "mount_lock write section")
    assert ml["walk of the parent's peers"].ns > 0 and ml["walk of the parent's peers"].grows_with
    after = a.sections["after the call"]
    assert any("grace period" in p.what for p in after)


def test_a_mountinfo_read_in_a_slave_walks_the_group_per_line():
    a = mountinfo_cost(M, K, State(5000, 2000, 1999, 0))
    host = a.section_ns("in the host's namespace")
    slave = a.section_ns("in a runtime's own namespace")
    assert slave - host == pytest.approx(2000**2 * K.peer_step_ns)
    assert a.total_ns is None and a.to_dict()["total_ns"] is None
    cc = CallCosts(K, percpu_sum_ns(M, K))
    assert host == pytest.approx(cc.full_read_ns(5000, 2000)["host"])


def test_bad_questions_are_usage_errors():
    with pytest.raises(UsageError, match="closest: move_mount"):
        op_cost(M, K, "mov_mount", State(1, 1, 0, 0))
    with pytest.raises(UsageError, match="binds under /"):
        State(10, 5, 5, 0)
    with pytest.raises(UsageError, match="ring >= 1"):
        State(10, 0, 0, 0)
    with pytest.raises(UsageError, match=">= 0"):
        State(-1, 1, 0, 0)


def test_human_times():
    assert [human(x) for x in (0, 12.34, 999.9, 3600, 4.55e6, 1e10)] == [
        "0 ns", "12.3 ns", "1 us", "3.6 us", "4.55 ms", "10,000 ms"
    ]  # fmt: skip


def test_the_read_op_holds_namespace_sem_for_reading_per_line():
    st = State(5000, 100, 99, 0)
    a = op_cost(M, K, "mountinfo_read", st)
    holds = a.section_ns("namespace_sem read holds")
    whole = mountinfo_cost(M, K, st).section_ns("in the host's namespace")
    assert 0 < whole - holds < 10_000  # the whole read adds the open and the read's own work
    assert _parts(a, "namespace_sem read holds")["one line per mount"].grows_with == "mounts"
