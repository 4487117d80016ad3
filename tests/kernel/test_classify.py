"""Traced syscalls into kernel ops (cohsim.kernel.classify): the three strategies' ops and the
layer count each op scales with."""

from __future__ import annotations

from cohsim.kernel.classify import ThreadState, classify, layers_of
from cohsim.workload.synth import synthesize


def test_classify_the_three_strategies():
    def ops(strategy):
        st = ThreadState()
        return [classify(e, st) for e in synthesize(strategy, 1, 2, seed=0).threads[0].events]

    per_layer = ops("per-layer")
    assert per_layer.count("umount_detach") == 4 and per_layer.count("close_attached") == 4
    common = ops("common-parent")
    assert "mount_setattr_ro" in common and "umount_einval" in common
    assert "mountinfo_read" in common
    plus = ops("lowerdir-plus")
    assert plus.count("close_detached") == 4 and "fsconfig_create" in plus


def test_layers_of_counts_clones_since_the_last_overlay():
    events = synthesize("per-layer", 1, 3, seed=0).threads[0].events
    counts = layers_of(events)
    overlay = [i for i, e in enumerate(events) if e.name == "mount"]
    assert [counts[i] for i in overlay] == [3, 3]
