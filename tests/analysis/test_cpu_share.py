"""calibration/analysis/cpu_share: mount_bench's per-call CPU times on the 2-vCPU host, and the
simulation's thread CPU clock beside them."""

from __future__ import annotations

import pytest
from analysis_runner import REPO, number, run

from calibration.analysis.cpu_share.clock import CpuClock
from calibration.analysis.cpu_share.compare import FIT, RUNS, in_calls, measured, simulated
from cohsim.calibrate import load_bench, load_fit


def test_clock_counts_only_the_spans_on_a_cpu() -> None:
    c = CpuClock()
    c.on("p", 0)
    c.off("p", 10)
    c.on("p", 20)
    c.restart("p", 25)  # woken at 20, ran from 25
    assert c.cpu_ns("p", 0, 40) == 10 + 15  # the open span counts to the window's end
    assert c.cpu_ns("p", 5, 22) == 5
    assert c.cpu_ns("q", 0, 40) == 0


def test_measured_waits_are_slept_not_spun() -> None:
    """Per-layer on 2 vCPUs: the CPU a sequence runs in its calls hardly moves from 1 to 16
    workers while its wall time grows five-fold; open_tree's wait is mostly slept."""
    m = measured(load_bench([RUNS]).mount)
    alone, busy = m[("per-layer", 1, 10)], m[("per-layer", 16, 10)]
    assert 0.8 < in_calls(busy) / in_calls(alone) < 1.2
    ot1, ot16 = alone["open_tree_clone"], busy["open_tree_clone"]
    assert ot1.cpu_ns / ot1.wall_ns > 0.9  # alone it runs throughout
    assert ot16.wall_ns > 4 * ot1.wall_ns and ot16.cpu_ns < 0.5 * ot16.wall_ns
    # the unmounts run less CPU with more workers (their grace periods shared)
    assert busy["umount_detach"].cpu_ns < alone["umount_detach"].cpu_ns


def test_runs_without_cpu_times_are_refused() -> None:
    old = REPO / "calibration/data/devvm-16cpu-intel-xeon-f6m207/mount-trace/run-per-layer-16w-10L"
    with pytest.raises(SystemExit, match="without --cpu-time"):
        measured(load_bench([old]).mount)


@pytest.mark.pure_python  # it patches the simulation's classes
def test_simulated_cpu_is_within_each_call() -> None:
    fit = load_fit(FIT)
    runs = {r.key: r for r in load_bench([RUNS]).mount}
    alone = simulated(fit, runs[("per-layer", 1, 10)], 1)
    two = simulated(fit, runs[("per-layer", 2, 10)], 1)
    for ops in (alone, two):
        assert all(0 < o.cpu_ns <= o.wall_ns for o in ops.values())
    # one worker: nothing to wait for but grace periods, so the writers run throughout
    assert alone["open_tree_clone"].cpu_ns == alone["open_tree_clone"].wall_ns
    assert alone["umount_detach"].cpu_ns < alone["umount_detach"].wall_ns  # a grace period
    # two workers on two CPUs: a waiting writer spins, so its CPU grows with its wall time
    assert two["open_tree_clone"].cpu_ns > alone["open_tree_clone"].cpu_ns
    assert two["open_tree_clone"].per_sequence == 10


@pytest.mark.pure_python
def test_compare_prints_both_sides() -> None:
    out = run("cpu_share.compare", "--seeds", "1", "--shapes", "per-layer:1:10,per-layer:4:10")
    assert "extra over 1 worker" in out
    assert number(r"per-layer 4 x 10: CPU in the calls a sequence ([\d.]+) \|", out) > 200
