"""One container per process tree (cohsim.workload.trees): a traced runtime's processes and
threads joined into one sequence."""

from __future__ import annotations

from conftest import DATA

from cohsim.kernel.classify import ThreadState, classify
from cohsim.workload.parse import parse_text, parse_trace
from cohsim.workload.trees import by_process_tree, roots

RUNC = DATA / "devvm-2cpu-amd-epyc-f25m1" / "runc-strace" / "plain.strace"


def test_roots_follow_the_creations_up_to_the_first_traced_ancestor():
    assert roots(((2, 1), (3, 2), (4, 1), (9, 8))) == {2: 1, 3: 1, 4: 1, 9: 8}
    assert roots(((2, 3), (3, 2))) == {2: 3, 3: 2}  # a reused id does not loop


def test_a_real_runc_start_is_one_container():
    """runc run, runc init (twice) and the container's init made the mount calls of one
    container: joined, they are one sequence in time order, classified as one thread (the
    unshare's own namespace carries over to the init's calls)."""
    trace = parse_trace(RUNC)
    assert len(trace.threads) == 4 and len(trace.parents) > 4
    joined = by_process_tree(trace)
    (one,) = joined.threads
    assert joined.syscalls == trace.syscalls and joined.mount_ops == trace.mount_ops
    starts = [e.start_ns for e in one.events]
    assert starts == sorted(starts)
    st = ThreadState()
    ops = [classify(e, st) for e in one.events]
    assert ops.count("ns_copy") == 1 and ops.count("umount_oldroot") == 1
    assert ops.index("ns_copy") < ops.index("pivot_root") < ops.index("umount_oldroot")
    assert dict(joined.meta)["containers_by"] == "process tree"


def test_separate_trees_stay_separate_containers():
    text = (
        "10 12:00:00.000001 clone(child_stack=NULL, flags=SIGCHLD) = 11 <0.000010>\n"
        "20 12:00:00.000002 fork() = 21 <0.000010>\n"
        '11 12:00:00.000100 umount2("/a", MNT_DETACH) = 0 <0.000010>\n'
        '21 12:00:00.000200 umount2("/b", MNT_DETACH) = 0 <0.000010>\n'
        '10 12:00:00.000300 umount2("/c", MNT_DETACH) = 0 <0.000010>\n'
    )
    joined = by_process_tree(parse_text(text))
    assert [(t.tid, [e.path for e in t.events]) for t in joined.threads] == [
        (10, ["/a", "/c"]),
        (20, ["/b"]),
    ]
