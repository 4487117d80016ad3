"""Synthesised containerd workloads: sequences, mount_ops, determinism, strace round trip."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cohsim.errors import CohsimError
from cohsim.workload.parse import parse_text, parse_trace
from cohsim.workload.runtime import runtime_mount_ops
from cohsim.workload.synth import STRATEGIES, expected_mount_ops, synthesize, write_strace
from cohsim.workload.trace import Trace

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "calibration" / "data" / "reference" / "trace-format-examples"
DATA = Path(__file__).resolve().parents[1] / "data" / "traces"


def same_up_to_origin(parsed: Trace, original: Trace) -> bool:
    """parse(write(t)) == t up to the source/format/unknown-count fields."""
    return parsed == dataclasses.replace(
        original,
        source=parsed.source,
        format=parsed.format,
        unknown_skipped=parsed.unknown_skipped,
    )


# ----------------------------------------------------------------- examples


def test_per_layer_100_containers_50_layers_is_20200_mount_ops() -> None:
    trace = synthesize("per-layer", 100, 50, seed=0, runtime="none")
    assert trace.mount_ops == 20_200
    assert expected_mount_ops("per-layer", 100, 50, "none") == 20_200
    assert len(trace.threads) == 100
    # per pass: L x (open_tree, mount_setattr, move_mount, close) + mount + L umount2
    assert trace.syscalls == 100 * 2 * (4 * 50 + 1 + 50)


def test_per_layer_sequence_matches_containerd_2_0() -> None:
    trace = synthesize("per-layer", 1, 2, seed=1, runtime="none")
    (thread,) = trace.threads
    names = [e.name for e in thread.events]
    one_pass = (
        ["open_tree", "mount_setattr", "move_mount", "close"] * 2 + ["mount"] + ["umount2"] * 2
    )
    assert names == one_pass * 2
    ev = thread.events
    assert ev[0].flags == ("OPEN_TREE_CLONE", "AT_EMPTY_PATH")
    assert ev[0].path.endswith("/snapshots/1/fs")
    assert ev[1].flags == ("AT_EMPTY_PATH", "MOUNT_ATTR_IDMAP")
    assert ev[2].path.endswith("/0") and "/tmpmounts/ovl-idmapped" in ev[2].path
    assert ev[3].fd_source == "open_tree"
    assert ev[8].args.startswith('"overlay", "/var/lib/containerd/tmpmounts/containerd-mount')
    assert ev[9].flags == ("MNT_DETACH",)
    assert ev[8 + 11].path.endswith("/rootfs")  # second pass: the real rootfs
    assert all(e.duration_ns is None and e.start_ns == 0 for e in ev)


def test_common_parent_sequence_matches_containerd_2_2() -> None:
    trace = synthesize("common-parent", 1, 50, seed=1, runtime="none")
    ev = trace.threads[0].events
    names = [e.name for e in ev]
    one_pass = ["open_tree", "mount_setattr", "move_mount", "close", "mount", "openat", "read",
                "umount2", "umount2"]  # fmt: skip
    assert names == one_pass * 2
    assert ev[0].flags == ("OPEN_TREE_CLONE", "AT_RECURSIVE", "AT_EMPTY_PATH")
    assert {"MOUNT_ATTR_IDMAP", "MOUNT_ATTR_RDONLY", "MS_PRIVATE"} <= set(ev[1].flags)
    assert ev[5].path == "/proc/self/mountinfo" and ev[6].fd_source == "mountinfo"
    assert (ev[7].ok, ev[8].errno) == (True, "EINVAL")
    assert trace.mount_ops == 6 == expected_mount_ops("common-parent", 1, 50, "none")


def test_lowerdir_plus_has_no_named_bind_mounts() -> None:
    trace = synthesize("lowerdir-plus", 1, 3, seed=1, runtime="none")
    ev = trace.threads[0].events
    counts = trace.counts_by_name()
    assert "mount" not in counts and "umount2" not in counts
    assert counts["move_mount"] == 2  # only the overlays
    assert counts["open_tree"] == 6 and counts["fsconfig"] == 2 * (3 + 1)
    lower = [e for e in ev if e.name == "fsconfig" and e.path == "lowerdir+"]
    assert len(lower) == 6 and all(e.flags == ("FSCONFIG_SET_FD",) for e in lower)
    assert all(e.mount_op for e in ev if e.name == "open_tree")  # detached clones
    moves = [e for e in ev if e.name == "move_mount"]
    assert [e.fd_source for e in moves] == ["fsmount", "fsmount"]
    assert trace.mount_ops == 2 * (1 + 3)


def test_think_times_and_durations_are_whole_microseconds() -> None:
    trace = synthesize("per-layer", 3, 4, seed=7, think_ns=20_000, duration_ns=50_000)
    for t in trace.threads:
        assert all(g >= 0 and g % 1000 == 0 for g in t.think_times_ns())
        assert all(e.duration_ns is not None and e.duration_ns % 1000 == 0 for e in t.events)
    assert any(g > 0 for g in trace.think_times_ns()[trace.threads[0].tid])


def test_default_has_no_times() -> None:
    trace = synthesize("common-parent", 4, 2, seed=3)
    assert all(g == 0 for gaps in trace.think_times_ns().values() for g in gaps)
    assert trace.span_ns == 0


def test_arrivals() -> None:
    stag = synthesize("common-parent", 3, 1, seed=0, arrival="stagger:1000000")
    assert [t.events[0].start_ns for t in stag.threads] == [0, 1_000_000, 2_000_000]
    poi = synthesize("common-parent", 5, 1, seed=0, arrival="poisson:100")
    starts = [t.events[0].start_ns for t in poi.threads]
    assert starts[0] == 0 and starts == sorted(starts) and starts[-1] > 0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"strategy": "overlay-magic"},
        {"containers": 0},
        {"layers": 0},
        {"arrival": "sometimes"},
        {"arrival": "poisson:-1"},
        {"think_ns": -5},
    ],
)
def test_bad_arguments_are_cohsim_errors(kwargs: dict[str, object]) -> None:
    args: dict[str, object] = {"strategy": "per-layer", "containers": 2, "layers": 2}
    args.update(kwargs)
    with pytest.raises(CohsimError):
        synthesize(args.pop("strategy"), args.pop("containers"), args.pop("layers"), seed=0,
                   **args)  # type: ignore[arg-type]  # fmt: skip


def test_written_text_looks_like_the_reference_examples() -> None:
    text = write_strace(synthesize("per-layer", 1, 1, seed=0, duration_ns=10_000))
    first = text.splitlines()[0]
    assert first.startswith('4001 00:00:00.000000 open_tree(-9, "/var/lib/containerd/')
    assert first.endswith(
        ", OPEN_TREE_CLONE|OPEN_TREE_CLOEXEC|AT_EMPTY_PATH) = 7 <" + first[-9:-1] + ">"
    )
    assert "propagation=0 /* MS_??? */, userns_fd=6}, 32) = 0" in text
    assert text.splitlines()[-1].endswith("+++ exited with 0 +++")


def test_overlapping_calls_are_written_as_unfinished_resumed() -> None:
    trace = synthesize("per-layer", 2, 2, seed=0, duration_ns=100_000)
    text = write_strace(trace)
    assert "<unfinished ...>" in text and "resumed>) = 0 <" in text
    assert same_up_to_origin(parse_text(text), trace)


@pytest.mark.parametrize("name", ["interleaved_tt_T.strace", "nopid_r_T.strace",
                                  "pid_brackets_ttt_noT.strace", "perf_continued.txt"])  # fmt: skip
def test_parsed_traces_round_trip_through_strace_text(name: str) -> None:
    parsed = parse_trace(DATA / name)
    for style in ("tt", "ttt", "r"):
        assert same_up_to_origin(parse_text(write_strace(parsed, style)), parsed)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.txt")), ids=lambda p: p.name)
def test_reference_examples_round_trip(path: Path) -> None:
    parsed = parse_trace(path)
    assert same_up_to_origin(parse_text(write_strace(parsed)), parsed)


def test_write_strace_rejects_unknown_style() -> None:
    with pytest.raises(CohsimError, match="style"):
        write_strace(synthesize("per-layer", 1, 1, seed=0), "t")


# ----------------------------------------------------------------- properties

workloads = st.fixed_dictionaries(
    {
        "strategy": st.sampled_from(STRATEGIES),
        "containers": st.integers(1, 4),
        "layers": st.integers(1, 6),
        "seed": st.integers(0, 2**32 - 1),
        "arrival": st.sampled_from(["burst", "stagger:1500", "poisson:20000"]),
        "think_ns": st.none() | st.integers(0, 50_000),
        "duration_ns": st.none() | st.integers(0, 80_000),
    }
)


def make(w: dict[str, object]) -> Trace:
    return synthesize(w["strategy"], w["containers"], w["layers"], seed=w["seed"],  # type: ignore[arg-type]
                      arrival=w["arrival"], think_ns=w["think_ns"],  # type: ignore[arg-type]
                      duration_ns=w["duration_ns"])  # type: ignore[arg-type]  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(workloads, st.sampled_from(["tt", "ttt", "r"]))
def test_round_trip_parse_of_write_is_identity(w: dict[str, object], style: str) -> None:
    trace = make(w)
    text = write_strace(trace, style)
    parsed = parse_text(text, source="roundtrip")
    assert same_up_to_origin(parsed, trace)
    assert parsed.mount_ops == trace.mount_ops
    assert parsed.format == f"strace-{style}"


@settings(max_examples=25, deadline=None)
@given(workloads)
def test_mount_ops_matches_closed_form(w: dict[str, object]) -> None:
    trace = make(w)
    assert trace.mount_ops == expected_mount_ops(w["strategy"], w["containers"], w["layers"])  # type: ignore[arg-type]
    assert trace.syscalls >= trace.mount_ops


@settings(max_examples=20, deadline=None)
@given(workloads)
def test_same_seed_same_bytes(w: dict[str, object]) -> None:
    assert write_strace(make(w)) == write_strace(make(w))
    other = dict(w, seed=(int(w["seed"]) + 1) % 2**32)  # type: ignore[call-overload]
    assert write_strace(make(other)) != write_strace(make(w))  # tmp names come from the seed


@settings(max_examples=20, deadline=None)
@given(workloads)
def test_time_never_decreases_within_a_thread(w: dict[str, object]) -> None:
    for t in make(w).threads:
        assert all(g >= 0 for g in t.think_times_ns())


def test_runc_follows_containerd_on_the_same_thread() -> None:
    """With the default runtime each container's thread goes on, after containerd's two
    passes, with runc's calls as recorded (cohsim.workload.runtime): the host's mountinfo
    twice, its binary's bind, remount and detach, the two unshares, the rslave, ... the old
    root's detach; its mount-table changes are counted in mount_ops."""
    bare = synthesize("per-layer", 2, 3, seed=4, runtime="none")
    full = synthesize("per-layer", 2, 3, seed=4)
    for b, f in zip(bare.threads, full.threads, strict=True):
        n = len(b.events)
        assert [e.args for e in f.events[:n]] == [e.args for e in b.events]
        runc = f.events[n:]
        assert [e.name for e in runc[:9]] == ["openat", "read", "read"] * 2 + [
            "mount",
            "mount",
            "umount2",
        ]
        unshares = [e for e in runc if e.name == "unshare"]
        assert [e.flags for e in unshares] == [("CLONE_NEWUSER",), ("CLONE_NEWNS",)]
        assert [e.name for e in runc].count("pivot_root") == 1
        assert runc[-1].errno == "ENOENT"
    assert full.mount_ops == bare.mount_ops + 2 * runtime_mount_ops("runc")
    assert full.mount_ops == expected_mount_ops("per-layer", 2, 3)
    assert runtime_mount_ops("none") == 0
    with pytest.raises(CohsimError, match="unknown runtime"):
        synthesize("per-layer", 1, 1, seed=0, runtime="crun")
