"""The launch breakdown: a container's time by mechanism, the waits attributed, adding up to
the launch latency less the fixed base."""

from __future__ import annotations

import numpy as np
import pytest

from cohsim.kernel.costs import load_kernel
from cohsim.kernel.simulation.records import ThreadResult
from cohsim.predict import predict
from cohsim.predict.breakdown import CATEGORIES, launch_breakdown, mechanism, thread_breakdown


def test_ops_map_to_mechanisms():
    assert mechanism("ns_copy") == mechanism("pivot_root") == "namespace"
    assert mechanism("open_tree_clone") == mechanism("close_attached") == "bind_mounts"
    assert mechanism("fsconfig_create") == mechanism("mount_overlay") == "overlay"
    assert mechanism("umount_overlay") == "unmounts"
    assert mechanism("mountinfo_read") == "mountinfo"
    assert mechanism("other") == mechanism("a_future_op") == "other_calls"


def test_one_thread_by_hand():
    """A thread that waited 10 ns for a CPU, made a bind (100 ns, 20 of them waiting for a
    lock), an unmount (1,000 ns: 600 in a grace period, 100 for a CPU after it, 50 for a
    lock) 30 ns later, then ran its runtime for 500 ns."""
    k = load_kernel()
    r = ThreadResult(7, 0, 1140, 1640, 2, 70.0, 600.0, 110.0)
    calls = [(7, "move_mount", 10, 110), (7, "umount", 140, 1140)]
    b = thread_breakdown(r, calls, k)
    assert b["run_queue"] == 110 and b["rcu_wait"] == 600 and b["lock_wait"] == 70
    assert b["between_calls"] == 30 and b["runtime_cpu"] == 500
    # the grace period and the CPU wait after it are the unmount's (the only call with one);
    # the lock waits split over the 100 + 300 ns left, a quarter and three quarters
    assert b["unmounts"] == pytest.approx(1000 - 700 - 70 * 0.75)
    assert b["bind_mounts"] == pytest.approx(100 - 70 * 0.25)
    assert sum(b.values()) == pytest.approx(r.end_ns - r.start_ns)
    assert set(b) == set(CATEGORIES)


def test_interleaved_threads_split_as_each_alone():
    """The launch's breakdown sums every thread's calls at once, whatever their interleaving:
    the mean and the slowest are each thread's own breakdown, to the bit (a thread without
    calls has its runtime only)."""
    k = load_kernel()
    a = ThreadResult(1, 0, 1140, 1640, 2, 70.0, 600.0, 110.0)
    b = ThreadResult(2, 5, 900, 3000, 3, 40.0, 0.0, 20.0)
    c = ThreadResult(3, 0, 0, 10, 0, 0.0, 0.0, 0.0)
    calls_a = [(1, "move_mount", 10, 110), (1, "umount", 140, 1140)]
    calls_b = [(2, "ns_copy", 25, 300), (2, "mount_overlay", 400, 800), (2, "fsopen", 850, 900)]
    mixed = [calls_b[0], calls_a[0], calls_b[1], calls_a[1], calls_b[2]]
    got = launch_breakdown([a, b, c], mixed, k)
    alone = [thread_breakdown(r, cs, k) for r, cs in ((a, calls_a), (b, calls_b), (c, []))]
    assert got.mean_s == {x: sum(t[x] for t in alone) / 3 / 1e9 for x in CATEGORIES}
    assert got.slowest_s == {x: alone[1][x] / 1e9 for x in CATEGORIES}
    assert alone[1]["between_calls"] == 100 + 50 and alone[2]["runtime_cpu"] == 10


def test_no_calls_no_threads():
    k = load_kernel()
    assert thread_breakdown(ThreadResult(1, 0, 0, 50, 0, 0.0, 0.0, 0.0), [], k)["runtime_cpu"] == 50
    empty = launch_breakdown([], [], k)
    assert sum(empty.mean_s.values()) == 0 and empty.base_s == k.base_launch_ns / 1e9


@pytest.mark.parametrize("arch, strategy", [("mesh", "per-layer"), ("chiplet", "lowerdir-plus")])
def test_a_predictions_breakdown_adds_up_to_its_launches(arch, strategy):
    """Every prediction reports its nominal replicate's breakdown: the mean container's adds
    up to the mean launch less the base, the slowest one's to the slowest launch less it."""
    p = predict(arch=arch, containers=10, layers=4, strategy=strategy, replicates=1, jobs=1)
    b = p.breakdown
    assert b is not None and list(b.mean_s) == list(CATEGORIES)
    launches = np.asarray(p.per_container_s)
    assert sum(b.mean_s.values()) + b.base_s == pytest.approx(launches.mean(), rel=1e-9)
    assert sum(b.slowest_s.values()) + b.base_s == pytest.approx(launches.max(), rel=1e-9)
    assert all(v >= 0 for v in b.mean_s.values())
    assert b.mean_s["bind_mounts"] > 0 and b.mean_s["overlay"] > 0 and b.mean_s["runtime_cpu"] > 0
    assert p.to_dict()["breakdown"]["mean_s"]["unmounts"] == round(b.mean_s["unmounts"], 6)


def test_every_kernel_op_has_a_mechanism():
    """A new op in the kernel model must say where its time goes (only `other` is other)."""
    from cohsim.kernel.costs import OPS
    from cohsim.predict.breakdown import MECHANISM

    assert [op for op in OPS if op not in MECHANISM] == ["other"]
    assert set(MECHANISM) <= set(OPS)


def test_namespace_sem_holders_add_up_to_its_write_holds(catalog):
    """Who held namespace_sem for writing, by mechanism: every write hold of the run is some
    op's, so they add up to the lock's write holds; largest first, the dominant one named."""
    from cohsim.kernel.linecosts import LineCosts
    from cohsim.kernel.simulation.launch import LaunchSim
    from cohsim.predict import burst_workload

    m = catalog.get("c6gd.metal")
    calls: list = []
    sim = LaunchSim(m, load_kernel(), burst_workload("per-layer", 6, 4), costs=LineCosts(m),
                    layers=4, background=False, calls=calls, record=True)  # fmt: skip
    results = sim.run()
    b = launch_breakdown(results, calls, sim.k, sim.ns_write_by_op)
    held = list(b.ns_write_s.values())
    assert held == sorted(held, reverse=True) and b.dominant == next(iter(b.ns_write_s))
    writes = sum(end - start for _, start, end in sim.record.ns_holds)  # read holds not in it
    assert sum(held) == pytest.approx(writes / 1e9, rel=1e-9)
    assert {"bind_mounts", "namespace", "unmounts"} <= set(b.ns_write_s)
    assert b.to_dict()["dominant_holder"] == b.dominant
