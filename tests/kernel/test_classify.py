"""Traced syscalls into kernel ops (cohsim.kernel.classify): the three strategies' ops and the
layer count each op scales with."""

from __future__ import annotations

from cohsim.kernel.classify import ThreadState, classify, layers_of
from cohsim.workload.parse import parse_text
from cohsim.workload.synth import synthesize


def test_classify_the_three_strategies():
    def ops(strategy):
        st = ThreadState()
        trace = synthesize(strategy, 1, 2, seed=0, runtime="none")
        return [classify(e, st) for e in trace.threads[0].events]

    per_layer = ops("per-layer")
    assert per_layer.count("umount_detach") == 4 and per_layer.count("close_attached") == 4
    common = ops("common-parent")
    assert "mount_setattr_ro" in common and "umount_einval" in common
    assert "mountinfo_read" in common
    plus = ops("lowerdir-plus")
    assert plus.count("close_detached") == 4 and "fsconfig_create" in plus


def test_layers_of_counts_clones_since_the_last_overlay():
    events = synthesize("per-layer", 1, 3, seed=0, runtime="none").threads[0].events
    counts = layers_of(events)
    overlay = [i for i, e in enumerate(events) if e.name == "mount"]
    assert [counts[i] for i in overlay] == [3, 3]


def test_runc_calls_are_the_kernel_paths_they_take():
    """runc's own sequence (cohsim.workload.runtime): each mount(2) by what it asks of
    path_mount(), the first read of a mountinfo fd priced as the whole file, the rest as EOF."""
    st = ThreadState()
    trace = synthesize("per-layer", 1, 1, seed=0)
    ops = [classify(e, st) for e in trace.threads[0].events]
    runc = ops[ops.index("mountinfo_open") :]  # per-layer's containerd part reads none
    assert runc.count("ns_copy") == 1 and runc.count("umount_oldroot") == 1
    assert runc.count("mount_rslave") == 2 and runc.count("pivot_root") == 1
    assert runc.count("mountinfo_read") == 4 and runc.count("mountinfo_eof") == 4
    assert runc.count("mount_enotdir") == 2 and runc.count("mount_failed") == 7
    assert runc.count("mount_new") == 9  # 6 filesystems, cgroup2, 2 read-only tmpfs masks
    assert runc.count("mount_remount") == 6  # runc's binary, the root, 4 read-only /proc paths
    assert runc.index("ns_copy") < runc.index("mount_rslave") < runc.index("pivot_root")
    assert st.in_own_ns and not st.pivoted and not st.bind_targets


def test_ring_membership_follows_the_clones():
    """An open_tree clone of a shared mount joins its group; an attached one leaves when its
    bind is unmounted, a detached one when it is dissolved."""
    for strategy in ("per-layer", "common-parent", "lowerdir-plus"):
        st, total = ThreadState(), 0
        for e in synthesize(strategy, 1, 3, seed=0).threads[0].events:
            classify(e, st)
            total += st.ring_delta
            assert total >= 0
        assert total == 0, strategy


CLONES = (
    "100 12:00:00.000001 clone(child_stack=NULL, flags=CLONE_NEWNS|CLONE_NEWUTS|SIGCHLD)"
    " = 101 <0.001000>\n"
    "100 12:00:00.002000 clone(child_stack=NULL, flags=CLONE_VM|CLONE_FS|SIGCHLD)"
    " = 102 <0.000050>\n"
    "100 12:00:00.003000 clone3({flags=CLONE_NEWNS|CLONE_NEWUSER, exit_signal=SIGCHLD,"
    " stack=NULL, stack_size=0}, 88) = 103 <0.001000>\n"
    '101 12:00:00.004000 pivot_root(".", ".") = 0 <0.000050>\n'
    '101 12:00:00.004100 umount2(".", MNT_DETACH) = 0 <0.000060>\n'
)


def test_a_clone_with_a_new_mount_namespace_is_a_copy_of_the_table():
    """clone/clone3 with CLONE_NEWNS copy the table for the child (copy_namespaces() in the
    caller's call); other clones (threads, plain forks) are not mount-relevant and skipped.
    The caller stays in its namespace; the child detaches its old root."""
    trace = parse_text(CLONES)
    assert trace.unknown_skipped == 1
    ops = {}
    for thread in trace.threads:
        st = ThreadState()
        ops[thread.tid] = [classify(e, st) for e in thread.events]
        assert not st.in_own_ns
    assert ops == {100: ["ns_copy", "ns_copy"], 101: ["pivot_root", "umount_oldroot"]}
    assert trace.threads[0].events[1].flags == ("CLONE_NEWNS", "CLONE_NEWUSER")
