"""calibration/analysis/burst_locks on the 16-vCPU host's burst traces: the trace's lock waits
by call and its reader batches, the sleeps by site of lowerdir-plus 32 x 10, and the
simulation's waits recorded by section."""

from __future__ import annotations

import pytest
from analysis_runner import REPO, number, run

from calibration.analysis.burst_locks.model import simulate
from calibration.analysis.burst_locks.trace import Batches, lock_names, tally, waker_steps
from cohsim.calibrate import load_bench, load_fit

HOST = REPO / "calibration/data/devvm-16cpu-intel-xeon-f6m207"
TRACES = HOST / "mount-trace"
T32 = TRACES / "burst-32/trace-lowerdir-plus-32w-10L.txt.xz"
S32 = TRACES / "burst-32/sleep-stacks/stacks-lowerdir-plus-32w-10L.txt.xz"
T200 = TRACES / "burst-200/trace-common-parent-200w-50L.txt.xz"
FIT = REPO / "calibration/fits/devvm-16cpu-intel-xeon-f6m207.json"


def test_batches_group_waits_that_end_together() -> None:
    b = Batches.of([(0.0, 5.0), (10.0, 5.0), (20.0, 5.0), (500.0, 5.0), (530.0, 5.0)])
    assert b.batches == 2 and b.mean_size == 2.5
    assert b.spread_us == (20.0 + 30.0) / 2 and b.gap_us == 480.0 and b.cycle_us == 265.0


def test_stacks_name_the_locks_of_the_same_boot() -> None:
    names = lock_names(S32)
    assert names["000000009b102b02"] == "mutex: pcpu_alloc_noprof"
    assert names["00000000a6533302"] == "mutex: exp_funnel_lock"
    t = tally(T32)
    reads = [v for (a, f, _w), v in t.spans.items() if f == "READ"]
    assert len(reads) == 1 and 7.5 < len(reads[0]) / 64 < 8.5  # waits a sequence


def test_common_parent_200_waits_on_its_mountinfo_pages() -> None:
    out = run("burst_locks.trace", T200)
    pages = number(r"namespace_sem +READ +other +([\d.]+) waits/seq", out)
    clones = number(r"namespace_sem +READ +mount +([\d.]+) waits/seq", out)
    assert pages > 60 and 35 < clones < 45
    assert number(r"READ +other .*\(\s*([\d.]+)%\)", out) > 60  # of the sequence
    assert number(r"one every (\d+) us", out) > 1500  # a reader batch, every 1.9 ms
    # the readers sleep through most of a wait; woken, they wait for a CPU a few hundred us
    assert 150 < number(r"woken to running (\d+) us", out) < 300
    assert 3 < number(r"one every ([\d.]+) us \(median\)", out) < 10  # wake_up_q's pace


def test_the_pace_rows_are_the_committed_ones(tmp_path) -> None:
    """wake-pace/wake_bench.csv is what --pace-csv writes for the 32-worker trace (its row)."""
    out = tmp_path / "wake_bench.csv"
    run("burst_locks.trace", T32, "--pace-csv", out)
    committed = (TRACES / "wake-pace" / "wake_bench.csv").read_text().splitlines()
    written = out.read_text().splitlines()
    assert written[0] == committed[0] and len(written) == 3
    assert all(row in committed for row in written[1:])
    assert waker_steps([(float(i), 1) for i in range(0, 50, 5)]) == [5.0]


def test_pcpu_sleeps_do_not_lengthen_the_read_batches() -> None:
    out = run("burst_locks.trace", T200, "--names", S32, "--floor", "1000")
    with_sleep = number(r"ending in them: \d+ running over (\d+) us", out)
    without = number(r"ending in them: .* the other \d+ (\d+) us", out)
    assert abs(with_sleep / without - 1) < 0.1


def test_lowerdir_plus_32_sleeps() -> None:
    out = run("burst_locks.sleeps", S32)
    assert number(r"namespace_sem read \(clone_private_mount\): ([\d.]+) us/seq", out) > 1000
    gp = r"grace period, another caller's request, close of a detached mount: ([\d.]+) us/seq"
    assert number(gp, out) > 500
    assert "pcpu" not in out  # its sleeps are too few to list (5 in 64 sequences)


@pytest.mark.pure_python  # it subclasses the simulation's lock tally
def test_model_records_each_section() -> None:
    fit = load_fit(FIT)
    (run32,) = load_bench([TRACES / "burst-32/run-lowerdir-plus-32w-10L"]).mount
    s = simulate(fit, run32, 1)
    n = s.sequences
    assert n == 64
    assert s.ns["read, layer clones"][2] / n == 10  # one read section a layer
    assert s.ns["write"][2] / n == 22  # 10 clones, 10 closes, the attach, the unmount
    assert "read, mountinfo pages" not in s.ns  # no sample in the traced run
    (cp,) = load_bench([TRACES / "burst-100/run-common-parent-100w-50L"]).mount
    sim = simulate(fit, cp, 1)
    pages = sim.ns["read, mountinfo pages"][2] / sim.sequences
    # a page of text a read(): near the trace's 8.9 waiting sections a sequence (the model's
    # 8.5-10.4 with the fits of session 35: how many overlays are up when it reads), the peak
    # table's text (100 overlays of 1.6 KB and their binds: 41 pages) at most; 4.0 a
    # sequence when a read() was 27 lines whatever their length
    assert 7 < pages < 41
