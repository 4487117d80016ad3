"""A storm of bare `unshare -m` (cohsim.workload.storm): what the classifier sees, mount_ops,
determinism, bad input."""

from __future__ import annotations

import pytest

from cohsim.errors import CohsimError
from cohsim.kernel.classify import ThreadState, classify
from cohsim.workload.parse import parse_text
from cohsim.workload.storm import PROPAGATIONS, expected_unshare_mount_ops, unshare_storm
from cohsim.workload.synth import write_strace


def ops_of(**kwargs: object) -> list[list[str]]:
    """Each process's ops, read back from the strace text."""
    trace = parse_text(write_strace(unshare_storm(3, seed=0, **kwargs)))  # type: ignore[arg-type]
    out = []
    for t in trace.threads:
        st = ThreadState()
        out.append([classify(e, st) for e in t.events])
    return out


def test_each_process_copies_the_table_and_makes_it_private() -> None:
    """unshare(CLONE_NEWNS) is a copy of the table (ns_copy); unshare(1)'s default
    MS_REC|MS_PRIVATE walks it (mount_rslave); nothing detaches an old root: the teardown at
    the exit has no syscall (the module docstring's gap)."""
    for ops in ops_of():
        assert ops == ["ns_copy", "mount_rslave"]


def test_unchanged_propagation_and_a_mountinfo_read() -> None:
    (ops, *_) = ops_of(propagation="unchanged", mountinfo=True)
    assert ops == ["ns_copy", "mountinfo_open", "mountinfo_read", "mountinfo_eof"]
    assert "umount_oldroot" not in ops


@pytest.mark.parametrize("propagation", PROPAGATIONS)
def test_mount_ops_match_the_closed_form(propagation: str) -> None:
    trace = parse_text(write_strace(unshare_storm(7, seed=2, propagation=propagation)))
    assert trace.mount_ops == expected_unshare_mount_ops(7, propagation)
    assert len(trace.threads) == 7 and trace.counts_by_name()["unshare"] == 7


def test_same_seed_same_bytes_and_arrivals() -> None:
    kw = {"arrival": "poisson:200", "think_ns": 5_000, "duration_ns": 20_000}
    a = write_strace(unshare_storm(20, seed=4, **kw))  # type: ignore[arg-type]
    assert a == write_strace(unshare_storm(20, seed=4, **kw))  # type: ignore[arg-type]
    assert a != write_strace(unshare_storm(20, seed=5, **kw))  # type: ignore[arg-type]
    stag = unshare_storm(3, seed=0, arrival="stagger:1000000")
    assert [t.events[0].start_ns for t in stag.threads] == [0, 1_000_000, 2_000_000]
    assert a.count("+++ exited with 0 +++") == 20  # each process's exit, no syscall


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"processes": 0}, "positive integer"),
        ({"processes": 100_001}, "beyond what a real node"),
        ({"propagation": "rprivate"}, "unknown propagation"),
        ({"arrival": "soon"}, "bad arrival"),
        ({"think_ns": -1}, "must not be negative"),
    ],
)
def test_bad_input_is_one_cohsim_error(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"processes": 2, "seed": 0, **kwargs}
    with pytest.raises(CohsimError, match=match):
        unshare_storm(**args)  # type: ignore[arg-type]
