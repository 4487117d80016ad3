"""What a launch simulation records (cohsim.kernel.simulation.records)."""

from __future__ import annotations

from cohsim.kernel.simulation.records import LockStats


def test_lock_stats_report_seconds_rounded_to_the_microsecond():
    st = LockStats(acquisitions=3, wait_ns=1_234_567_890.4, hold_ns=499.0, max_waiters=2)
    assert st.to_dict() == {
        "acquisitions": 3,
        "wait_s": 1.234568,
        "hold_s": 0.0,
        "max_waiters": 2,
    }
