"""The host terms measured directly (cohsim.calibrate.measured): the grace period's part per busy
CPU from walk_bench, read from the committed 16-vCPU runs, and refused where a run cannot tell
it."""

from __future__ import annotations

from pathlib import Path

import pytest

from cohsim.calibrate.measured import (
    WalkPoint,
    grace_slope,
    measured_terms,
    wake_steps,
    walk_points,
)
from cohsim.calibrate.measuredruns import load_bench
from cohsim.errors import CohsimError
from cohsim.kernel.costs import load_kernel

DATA = Path(__file__).resolve().parents[2] / "calibration/data"
WALK16 = DATA / "devvm-16cpu-intel-xeon-f6m207/walk"
WALK2 = DATA / "devvm-2cpu-intel-xeon-f6m207/walk/walk_bench.csv"


def test_the_16_vcpu_runs_measure_about_2_us_a_busy_cpu():
    data = load_bench([WALK16 / "m1", WALK16 / "m1-second-sitting"])
    assert not data.mount and not data.skipped and len(data.walk) == 72
    slope, se, n = grace_slope(data.walk)
    # the walk README's per-run slopes are 1.9-2.0 us (umount2, both sittings, 10 and 50 layers)
    assert 1800 < slope < 2100 and se < 300 and n == 5
    ((name, param, note),) = measured_terms(load_kernel(), [], data.walk)
    assert name == "rcu_exp_per_cpu_ns" and param is not None
    assert param.value == note["value"] and "walk_bench" in str(note["why"])


def test_one_walker_count_cannot_tell_it_and_is_skipped():
    data = load_bench([WALK2, DATA / "devvm-2cpu-intel-xeon-f6m167/pause"])
    assert not data.walk and data.pause and len(data.skipped) == 1
    assert "two or more walker counts" in dict(data.skipped)[str(WALK2)]
    points = [WalkPoint(1, 10, r, 20_000.0 + r) for r in range(3)]
    assert grace_slope(points) is None
    ((_, param, note),) = measured_terms(load_kernel(), [], points)
    assert param is None and note["value"] == load_kernel().rcu_exp_per_cpu_ns


def test_a_malformed_row_names_its_line():
    rows = [
        (
            7,
            {
                "role": "mounter",
                "mounters": "1",
                "op": "umount2",
                "metric": "p50_ns",
                "repeat": "0",
                "walkers": "x",
                "layers": "10",
                "value": "1",
            },
        )
    ]
    with pytest.raises(CohsimError, match="malformed walk_bench row") as exc:
        walk_points(rows, "f.csv")
    assert "f.csv:7" in str(exc.value)


def test_the_traced_bursts_wake_readers_about_6_us_apart():
    """The 16-vCPU VM's seven traced bursts: one releaser's wake-ups of a reader batch 4.5-7.8
    us apart (medians by run; the burst-200 README's 6.0 us at 200 workers)."""
    data = load_bench([DATA / "devvm-16cpu-intel-xeon-f6m207/mount-trace/wake-pace"])
    assert not data.wake and len(data.wake_step) == 7
    assert all(4000 < s < 8000 for s in data.wake_step)
    ((name, param, note),) = measured_terms(load_kernel(), [], [], data.wake_step)
    assert name == "wake_step_ns" and param is not None and 5500 < param.value < 6500
    assert "wake_up_q" in str(note["why"])
    with pytest.raises(CohsimError, match="malformed wake-up pace row"):
        wake_steps([(3, {"metric": "step_p50", "value": "x"})], "p.csv")


def test_every_host_term_is_documented_for_the_fit_file():
    """A fit writes each parameter with its doc (cohsim.calibrate.fitparams.DOC)."""
    from cohsim.calibrate.fitparams import DOC, HOST_TERMS

    assert all(term in DOC for term in HOST_TERMS)
