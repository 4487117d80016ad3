"""`predict` and `replay`: determinism, bad requests, the burst workload, the two entry points
agreeing with the lower-level path."""

from __future__ import annotations

import json

import pytest
from conftest import DATA

from cohsim.errors import CohsimError
from cohsim.kernel.costs import load_kernel
from cohsim.predict import (
    MAX_REPLAY_SPAN_NS,
    RunOptions,
    burst_workload,
    check_span,
    predict,
    replay,
    resolve_machine,
    run_workload,
)
from cohsim.workload.parse import parse_text, parse_trace
from cohsim.workload.runtime import runtime_mount_ops
from cohsim.workload.trace import Trace

SMALL = dict(containers=12, layers=4, replicates=2, jobs=1)
TRACE = DATA / "devvm-2cpu-intel-xeon-f6m167" / "strace" / "per-layer-2workers-3layers.strace"


def test_same_seed_same_bytes_whatever_the_worker_count():
    a = predict(arch="mesh", seed=5, **SMALL).to_dict()
    b = predict(arch="mesh", seed=5, **{**SMALL, "jobs": 2}).to_dict()
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_options_object_and_keywords_say_the_same():
    """`options=RunOptions(...)` and its fields as keywords are one API; keywords replace the
    object's fields."""
    by_keywords = predict(arch="chiplet", containers=6, layers=2, seed=3, replicates=1, jobs=1)
    by_object = predict(
        arch="chiplet", containers=6, layers=2, options=RunOptions(seed=3, replicates=1, jobs=1)
    )
    mixed = predict(
        arch="chiplet", containers=6, layers=2, options=RunOptions(seed=9, replicates=1), seed=3
    )
    assert by_keywords.to_dict() == by_object.to_dict() == mixed.to_dict()
    assert by_object.seed == 3 and by_object.replicates == 1


@pytest.mark.parametrize(
    "kw, message",
    [
        (dict(arch="ring"), "unknown architecture"),
        (dict(instance="m7i.metal"), "did you mean"),
        (dict(arch="mesh", instance="c5.metal"), "exactly one of"),
        (dict(arch="mesh", strategy="per-image"), "unknown strategy"),
        (dict(arch="mesh", sockets=2), "sockets must be between 1 and 1"),
        (dict(arch="mesh", seed=-1), "seed must be a non-negative integer, not -1"),
        (dict(arch="mesh", replicates=0), "replicates must be at least 1, not 0"),
        (dict(arch="mesh", deadline_s=0.0), "deadline must be positive, not 0.0"),
    ],
)
def test_bad_requests(kw, message):
    with pytest.raises(CohsimError, match=message):
        predict(**{**SMALL, **kw})


def test_a_negative_seed_is_refused_by_every_entry_point():
    with pytest.raises(CohsimError, match="seed must be a non-negative integer, not -1"):
        replay(str(TRACE), instance="c5.metal", seed=-1)
    with pytest.raises(CohsimError, match="seed must be a non-negative integer, not -1"):
        burst_workload("per-layer", 2, 2, seed=-1)
    with pytest.raises(CohsimError, match="seed must be a non-negative integer, not -2"):
        predict(arch="mesh", options=RunOptions(), seed=-2)


def test_burst_of_one_strategy_each():
    for strategy, per_container in (
        ("per-layer", 2 * (1 + 50 + 50)),
        ("common-parent", 2 * 3),
        ("lowerdir-plus", 2 * (50 + 1)),
    ):
        runc = runtime_mount_ops("runc")
        assert burst_workload(strategy, 100, 50).mount_ops == 100 * (per_container + runc)
        assert burst_workload(strategy, 100, 50, runtime="none").mount_ops == 100 * per_container


def test_replay_function_matches_the_lower_level_path(catalog):
    p = replay(str(TRACE), instance="c5.metal", replicates=1, jobs=1, calibration="none")
    trace = parse_trace(TRACE)
    machine, _ = resolve_machine(catalog, arch=None, instance="c5.metal")
    q = run_workload(machine, trace, kernel=load_kernel(), replicates=1, jobs=1)
    assert p.per_container_s == q.per_container_s
    assert p.workload["trace"] == TRACE.name and p.calibration.startswith("none")


def test_the_same_prediction_with_level_2_from_the_disk(tmp_path, monkeypatch):
    """Same inputs and seed, same document, whether level 2 ran or its table came from the
    cache (cohsim.kernel.linecache) or there is no cache."""
    kw = dict(arch="chiplet", containers=6, layers=3, replicates=2, jobs=1, seed=5)
    monkeypatch.setenv("COHSIM_CACHE", "off")
    none = predict(**kw).to_dict()
    monkeypatch.setenv("COHSIM_CACHE", str(tmp_path))
    computed = predict(**kw).to_dict()
    read = predict(**kw).to_dict()
    assert len(list((tmp_path / "linecosts").iterdir())) == 1
    assert json.dumps(none, sort_keys=True) == json.dumps(computed, sort_keys=True)
    assert json.dumps(read, sort_keys=True) == json.dumps(computed, sort_keys=True)


# ----------------------------------------------------------------- a trace's span (issue 30)

#: a -ttt trace whose clock steps 2.5e9 s before line 3 (issue 30: replay ran for more than
#: 300 s with nothing shown)
JUMP = (
    '7 1795305658.387786 open_tree(-9, "/l/0", OPEN_TREE_CLONE) = 6 <0.000022>\n'
    '7 1795305658.387941 move_mount(6, "", -9, "/t/0", MOVE_MOUNT_F_EMPTY_PATH) = 0 <0.000040>\n'
    '7 4295305658.388277 umount2("/t/0", 0) = 0 <0.000026>\n'
)


@pytest.fixture
def no_simulation(monkeypatch):
    """A replay that gets as far as simulating fails at once (rather than running for hours)."""

    def simulate(*args, **kwargs):
        raise AssertionError("the trace was simulated")

    monkeypatch.setattr("cohsim.predict.api.simulate", simulate)


def test_replay_refuses_a_clock_step_naming_its_line(tmp_path, no_simulation):
    path = tmp_path / "jump.strace"
    path.write_text(JUMP)
    for lenient in (False, True):
        with pytest.raises(CohsimError, match="spans 2.5e\\+09 s, more than the hour") as exc:
            replay(str(path), arch="mesh", lenient=lenient)
        assert exc.value.where == f"{path}:3"
        assert "umount2 (thread 7) starts 2.5e+09 s after" in exc.value.what


def test_the_span_bound_is_an_hour_of_gaps_or_of_one_call():
    def trace(gap_s: int, dur_s: str = "0.000026") -> Trace:
        text = JUMP.replace("4295305658", str(1795305658 + gap_s)).replace("0.000026", dur_s)
        return parse_text(text, source="t")

    check_span(trace(3599), "t")  # under an hour: replayed
    assert MAX_REPLAY_SPAN_NS == 3600 * 10**9
    with pytest.raises(CohsimError, match="spans 3601 s") as exc:
        check_span(trace(3601), "t")
    assert exc.value.where == "t:3"
    with pytest.raises(CohsimError, match="umount2 \\(thread 7\\) lasts 4000 s") as exc:
        check_span(trace(0, "4000.000000"), "t")
    assert exc.value.where == "t:3"
