"""The mount table in the launch simulation (cohsim.kernel.simulation.mounttable)."""

from __future__ import annotations

from cohsim.kernel.simulation.clock import Environment
from cohsim.kernel.simulation.mounttable import MountTable
from cohsim.kernel.simulation.records import LaunchRecord


def test_changes_count_peak_record_and_wake_systemd():
    env = Environment()
    rec = LaunchRecord()
    t = MountTable(env, 10, rec, 740.0)
    first = t.dirty
    for delta in (+1, +1, -1):
        t.change(delta)
    assert t.mounts == 11 and t.peak == 12 and first.triggered
    assert [m for _, m in rec.mount_table] == [11, 12, 11]
    t.dirty = env.event()  # systemd re-read: the next change fires the fresh event
    t.change(-1)
    assert t.dirty.triggered and t.mounts == 10 and t.peak == 12


def test_a_call_changes_the_text_with_the_table():
    t = MountTable(Environment(), 10, None, 740.0)
    t.apply(+1, 0, 0, 400.0)  # an overlay's line
    t.apply(0, +1, 0, 0.0)  # a detached clone joins the ring: no line
    assert t.mounts == 11 and t.nbytes == 1140.0 and t.ring == 2
    t.apply(-1, -1, 0, -400.0)
    assert t.mounts == 10 and t.nbytes == 740.0
