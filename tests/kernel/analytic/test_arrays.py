"""The burst model's arrays (cohsim.kernel.analytic.arrays) price every call as CallCosts
does, the one definition the simulation uses too."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cohsim.kernel.analytic.arrays import FixedNodeState, StepArrays
from cohsim.kernel.callcost import CallCosts, percpu_sum_ns
from cohsim.kernel.calls import plan
from cohsim.kernel.costs import load_kernel
from cohsim.machine.parts import Walks
from cohsim.predict import burst_workload

#: list walks that bend with their length (cohsim.kernel.walk), as a measured host's file has
BENT = Walks(children=((0.0, 0.4), (800.0, 2.5)), peers=((0.0, 0.5), (1000.0, 1.9), (2500.0, 3.0)))


@pytest.mark.parametrize("walks", [None, BENT], ids=["line", "bent"])
@pytest.mark.parametrize("strategy", ["per-layer", "common-parent", "lowerdir-plus"])
def test_the_arrays_reproduce_callcosts_at_any_state(catalog, strategy, walks):
    m, k = catalog.get("m7i.metal-24xl"), load_kernel()
    sum_ns = percpu_sum_ns(m, k)
    cc = CallCosts(k, sum_ns, walks=walks)
    calls = plan(burst_workload(strategy, 1, 4).threads[0].events, k, 4, sum_ns)
    steps = calls.steps()
    mf = math.exp(k.call_sigma**2 / 2)
    a = StepArrays(calls, cc, mf)
    rng = np.random.default_rng(7)
    hi = np.array([5000.0, 3000.0, 2000.0, 200.0])  # mounts, group, binds, copies
    st = rng.uniform(1.0, hi, size=(len(steps), 4))
    holds, reads, puts = a.holds(st), a.reads(st), a.put_count(st)
    for j, s in enumerate(steps):
        p = FixedNodeState(*st[j])
        op = s.op
        want = 0.0
        if op.ns_write_ns or op.per_mount_write_ns:
            ml = cc.ml_hold_at(s, cc.row(s.name, op), p.mounts, p.ring, p.windows)
            ml += op.per_mount_lock_section_ns * p.mounts  # (one more than copy_tree's N - 1)
            want = cc.write_hold_ns(s, p) * mf + s.ml_work + ml
        assert holds[j] == pytest.approx(want, rel=1e-9, abs=1e-6), s.name
        read = s.reads * (op.layer_read_ns * mf + sum_ns)
        if op.ns_read_ns or op.per_mount_read_ns:
            extra = cc.slave_line_ns(p) if s.own_ns else 0.0
            read += op.ns_read_ns + (op.per_mount_read_ns + extra) * p.mounts
        assert reads[j] == pytest.approx(read, rel=1e-9, abs=1e-6), s.name
        assert puts[j] == pytest.approx(cc.puts(s, p.mounts, p), rel=1e-9, abs=1e-9), s.name
    assert len(a.gates) == 2 and all(steps[g].reads == 4 for g in a.gates)
    assert a.own[-1].tolist() == pytest.approx(a.effect.sum(axis=0).tolist())
