"""heldout: fitting part of the mount_bench runs and predicting the rest."""

from __future__ import annotations

import pytest
from conftest import DATA

from cohsim.calibrate.heldout import BOUND, SPLITS, HeldOut, held_out, split_runs
from cohsim.calibrate.measuredruns import load_bench
from cohsim.errors import CohsimError

DEVVM = "devvm-2cpu-intel-xeon-f6m167"
DEVVM_DATA = DATA / DEVVM


def test_held_out_splits():
    data = load_bench([DEVVM_DATA / "mount", DEVVM_DATA / "wake"])
    fit, held = split_runs(data, "workers")
    assert {r.workers for r in fit.mount} == {1, 2} and {r.workers for r in held} == {4}
    assert fit.wake == data.wake  # the host's wake-up latency goes with every split
    s3 = DEVVM_DATA / "mount-wake-long"
    table = load_bench([s3 / "mount", s3 / "wake-idle"])
    assert split_runs(table, "workers")[0].wake_idle is table.wake_idle is not None
    fit, held = split_runs(data, "repeats")
    assert {r.repeat for r in fit.mount} == {0, 1, 2} and {r.repeat for r in held} == {3, 4}
    with pytest.raises(CohsimError, match="unknown split"):
        split_runs(data, "layers")


_HELD_OUT_XFAIL = (
    "known misfit (calibration/fits/README.md, sessions 8 and 26): the model is still too "
    "fast for common-parent at 4 workers and too slow for per-layer at 4 workers and 1 layer. "
    "Workers split (session 26, namespace_sem as 6.x arbitrates it): worst -28.5 % "
    "(common-parent 4 workers 50 layers), per-layer 4 workers 1 layer +26.7 %, median 11.3 %. "
    "Repeats split (session 8), on the 23 shapes the host repeats "
    "within 15 %: worst -37.8 % (common-parent 4 workers 10 layers), five shapes over 15 %. "
    "Session 11: the host itself does not repeat these shapes within 15 % between sittings "
    "(multi-worker slowdowns moved 19 % median, up to 87 %: "
    "calibration/data/devvm-2cpu-intel-xeon-f6m167/mount-interleaved-rounds/README.md)"
)


def test_held_out_leaves_out_only_shapes_the_host_did_not_repeat():
    a, b, c = ("per-layer", 1, 1), ("per-layer", 2, 1), ("per-layer", 4, 1)
    h = HeldOut("repeats", {a: 0.30, b: -0.10, c: 0.05}, 0.9, 6, {a: 0.40, b: 0.02, c: -0.16})
    assert h.drifted == [a, c]
    assert h.worst == pytest.approx(0.30) and h.worst_reproducible == pytest.approx(0.10)
    # the workers split has no host figure: every shape counts
    w = HeldOut("workers", {a: 0.30, b: -0.10}, 0.9, 6)
    assert w.drifted == [] and w.worst_reproducible == pytest.approx(0.30)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=_HELD_OUT_XFAIL)
@pytest.mark.parametrize("split", SPLITS)
def test_held_out_within_15_percent(split):
    s3 = DEVVM_DATA / "mount-wake-long"
    data = load_bench([s3 / "mount", s3 / "wake", s3 / "wake-idle"])
    h = held_out(data, DEVVM, split)
    # the repeats split leaves out shapes whose own later repeats moved by more than the
    # bound (h.drifted; the host's step changes): no model fitted to the earlier ones can
    # follow them. The workers split predicts new shapes: every one counts
    assert h.worst_reproducible < BOUND, (h.errors, h.drifted)
    assert len(h.drifted) <= len(h.errors) // 4, h.host  # most shapes still count
