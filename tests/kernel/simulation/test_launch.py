"""Level 3: the launch simulation's invariants and the kernel model's bookkeeping."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cohsim.kernel.classify import ThreadState, classify
from cohsim.kernel.costs import load_kernel
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.simulation.launch import LaunchSim
from cohsim.kernel.walk import units, walks_for
from cohsim.predict import burst_workload
from cohsim.workload.parse import parse_text
from cohsim.workload.runtime import runtime_mount_ops
from cohsim.workload.synth import STRATEGIES, synthesize


@pytest.fixture(scope="module")
def kernel():
    return load_kernel()


@pytest.fixture(scope="module")
def costs(catalog):
    return {
        name: LineCosts(catalog.get(name), model="markov")
        for name in ("m7i.metal-24xl", "m7a.24xlarge", "c6gd.metal")
    }


def run(catalog, costs, kernel, name, trace, **kw):
    sim = LaunchSim(catalog.get(name), kernel, trace, costs=costs[name], **kw)
    return sim, sim.run()


def test_one_container_alone_costs_what_the_kernel_says(catalog, costs, kernel):
    """Uncontended, a container's mount phase is the sum of its ops' costs plus RCU waits."""
    trace = synthesize("per-layer", 1, 3, seed=0)
    sim, res = run(catalog, costs, kernel, "c6gd.metal", trace, layers=3, background=False)
    (r,) = res
    assert r.lock_wait_ns < 0.05 * (r.mounts_done_ns - r.start_ns)
    # one grace period per unmount, none shared: containerd's 6 binds; runc's own binary, its
    # two ENOTDIR masks and its old root
    assert r.rcu_wait_ns > 0 and sim.rcu.count == 6 + 4
    assert r.end_ns - r.mounts_done_ns == pytest.approx(kernel.runtime_cpu_ns, rel=0.01)


@settings(max_examples=12)
@given(
    strategy=st.sampled_from(STRATEGIES),
    containers=st.integers(1, 12),
    layers=st.integers(1, 6),
    seed=st.integers(0, 3),
    machine=st.sampled_from(["m7i.metal-24xl", "m7a.24xlarge"]),
)
def test_invariants(catalog, costs, kernel, strategy, containers, layers, seed, machine):
    """Every thread finishes; time moves forward; the mount table ends where the sequences
    leave it; no lock is ever held by two writers (the rwsem raises otherwise)."""
    trace = synthesize(strategy, containers, layers, seed=seed)
    sim, res = run(
        catalog,
        costs,
        kernel,
        machine,
        trace,
        layers=layers,
        seed=seed,
        node_mounts=50,
        record=True,
    )
    assert len(res) == containers
    for r in res:
        assert r.start_ns <= r.mounts_done_ns <= r.end_ns
    ends = [t for t, _ in sim.record.mount_table]
    assert ends == sorted(ends)
    # both passes leave their overlay mounted (teardown is outside launch)
    assert sim.mounts == 50 + 2 * containers
    assert not sim.ns.writer and sim.ns.readers == 0 and not sim.ml.held
    # every container gave its CPU back; a background reader (systemd, the probes) may be in
    # the middle of a read when the last container ends the run
    assert sim.cpus.busy <= 2 and sim.cpus.waiting == 0
    for holds in (sim.record.ns_holds, sim.record.ml_holds):
        spans = sorted((a, b) for _, a, b in holds)
        assert all(b1 <= a2 for (_, b1), (a2, _) in zip(spans, spans[1:], strict=False))


def test_same_seed_same_result(catalog, costs, kernel):
    trace = burst_workload("per-layer", 20, 5, seed=3)
    outs = []
    for _ in range(2):
        _, res = run(catalog, costs, kernel, "m7i.metal-24xl", trace, layers=5, seed=3)
        outs.append([(r.tid, r.end_ns, r.lock_wait_ns) for r in res])
    assert outs[0] == outs[1]


def test_burst_workload_counts_match_the_synthesiser():
    a = burst_workload("per-layer", 100, 50)
    assert a.mount_ops == 20_200 + 100 * runtime_mount_ops("runc") == 23_500
    assert burst_workload("per-layer", 100, 50, runtime="none").mount_ops == 20_200
    b = synthesize("per-layer", 7, 4, seed=0)
    c = burst_workload("per-layer", 7, 4)
    assert (c.mount_ops, c.syscalls, c.counts_by_name()) == (
        b.mount_ops,
        b.syscalls,
        b.counts_by_name(),
    )


def test_overlay_mount_clones_each_layer_under_namespace_sem(catalog, costs, kernel):
    """overlayfs takes namespace_sem for reading once per layer (clone_private_mount)."""
    assert kernel.op("mount_overlay").layer_reads == 1
    no_clones = kernel.with_values(**{"mount_overlay.layer_reads": 0})
    layers, acq, overlays = 7, [], 0
    for k in (kernel, no_clones):
        calls: list[tuple[int, str, int, int]] = []
        trace = synthesize("per-layer", 1, layers, seed=0)
        sim = LaunchSim(
            catalog.get("c6gd.metal"),
            k,
            trace,
            costs=costs["c6gd.metal"],
            layers=layers,
            background=False,
            calls=calls,
        )
        sim.run()
        acq.append(sim.stats["namespace_sem"].acquisitions)
        overlays = sum(op == "mount_overlay" for _, op, _, _ in calls)
    assert overlays >= 1 and acq[0] - acq[1] == layers * overlays


def test_calls_records_every_syscall_from_issue_to_return(catalog, costs, kernel):
    """`calls=` (calibration's per-call durations): one (tid, op, start, end) per syscall, in
    issue order per thread, named as classify names them; each spans its call from issue to
    return with every wait inside it, so per thread the calls and the think time between
    them fill the mount phase exactly, contended or not."""
    trace = synthesize("per-layer", 4, 3, seed=0)
    calls: list[tuple[int, str, int, int]] = []
    sim, res = run(catalog, costs, kernel, "c6gd.metal", trace, layers=3, calls=calls)
    assert len(calls) == trace.syscalls
    assert sum(r.lock_wait_ns for r in res) > 0  # four at once: they did wait
    for t, r in zip(trace.threads, res, strict=True):
        mine = [c for c in calls if c[0] == t.tid]
        state = ThreadState()
        assert [op for _, op, _, _ in mine] == [classify(e, state) for e in t.events]
        think = [
            max(0, e.start_ns - p.end_ns) if p.duration_ns is not None else 0
            for p, e in zip(t.events, t.events[1:], strict=False)
        ]
        assert mine[0][2] == r.start_ns and mine[-1][3] == r.mounts_done_ns
        for (_, _, _, end), (_, _, start, _), gap in zip(mine[:-1], mine[1:], think, strict=True):
            assert start == end + gap
        assert all(start <= end for _, _, start, end in mine)
    # a list given to several simulations collects all of them
    run(catalog, costs, kernel, "c6gd.metal", trace, layers=3, calls=calls)
    assert len(calls) == 2 * trace.syscalls


def _devvm_run(workers: int, corun: float) -> float:
    import dataclasses

    from cohsim.calibrate import simulate_run
    from cohsim.machine.catalog import Catalog

    m = Catalog().get("devvm-2cpu-intel-xeon-f6m167")
    m = dataclasses.replace(m, microarch=dataclasses.replace(m.microarch, corun_slowdown=corun))
    return simulate_run(m, load_kernel(), "per-layer", workers, 5, containers=3, seed=1).stride_ns


def test_corun_slowdown_slows_concurrent_work_only():
    """A VM's measured co-run slowdown applies while both vCPUs are busy: a lone worker is
    unaffected, two workers are slower, and not more than the slowdown itself."""
    assert _devvm_run(1, 1.36) == _devvm_run(1, 1.0)
    fast, slow = _devvm_run(2, 1.0), _devvm_run(2, 1.36)
    assert fast < slow <= 1.36 * fast


def test_devvm_corun_slowdown_is_the_committed_measurement(catalog):
    """models/servers/devvm-*.toml's corun_slowdown is the median both/one ratio of the
    committed corun_bench run."""
    import csv
    import statistics

    from conftest import REPO

    path = REPO / "calibration/data/devvm-2cpu-intel-xeon-f6m167/corun/corun_bench.csv"
    by: dict[tuple[str, str], dict[int, float]] = {}
    for r in csv.DictReader(path.open()):
        by.setdefault((r["metric"], r["repeat"]), {})[int(r["threads"])] = float(r["value"])
    ratios = [v[2] / v[1] for v in by.values()]
    assert len(ratios) == 27
    m = catalog.get("devvm-2cpu-intel-xeon-f6m167")
    assert m.microarch.corun_slowdown == pytest.approx(statistics.median(ratios), abs=0.005)


def test_each_call_varies_about_its_cost(catalog, costs, kernel):
    """With call_sigma 0 every uncontended open_tree takes the same time (to a nanosecond: its
    mount_lock section fetches the line from the daemons' walks with a chance that depends on
    the time since the last section, cohsim.kernel.linetake); with the model's call_sigma each
    call's work is drawn about that time (median kept, log spread ~sigma)."""
    import math
    import statistics

    trace = synthesize("per-layer", 1, 60, seed=0)
    out = []
    for sigma in (0.0, kernel.call_sigma):
        calls: list[tuple[int, str, int, int]] = []
        # the clone's walk over the root's children grows with the binds: not part of this check
        k = kernel.with_values(call_sigma=sigma, **{"open_tree_clone.per_child_ns": 0.0})
        sim = LaunchSim(
            catalog.get("c6gd.metal"),
            k,
            trace,
            costs=costs["c6gd.metal"],
            layers=60,
            background=False,
            calls=calls,
            seed=3,
        )
        sim.run()
        out.append([end - start for _, op, start, end in calls if op == "open_tree_clone"])
    fixed, varied = out
    assert len(fixed) == len(varied) >= 60 and max(fixed) - min(fixed) <= 1
    assert statistics.median(varied) == pytest.approx(fixed[0], rel=0.1)
    spread = statistics.stdev(math.log(d / fixed[0]) for d in varied)
    assert 0.6 * kernel.call_sigma < spread < 1.4 * kernel.call_sigma


def test_call_sigma_is_the_committed_measurement(kernel):
    """models/kernel/linux-6.18.toml's call_sigma: ln(p90 / p50) / z(0.9) of each 1-worker
    call label in the committed mount_bench run, median over repeats, then over the cells."""
    import math
    import statistics

    from conftest import DATA

    from cohsim.calibrate import load_bench

    per: dict[tuple[str, int, str], list[float]] = {}
    for r in load_bench([DATA / "devvm-2cpu-intel-xeon-f6m167" / "mount"]).mount:
        if r.workers == 1:
            for label, m in r.calls.items():
                if m.get("p50_ns", 0) > 0 and "p90_ns" in m:
                    sigma = math.log(m["p90_ns"] / m["p50_ns"]) / 1.2815516
                    per.setdefault((r.strategy, r.layers, label), []).append(sigma)
    assert len(per) == 78
    sigma = statistics.median(statistics.median(v) for v in per.values())
    assert kernel.call_sigma == pytest.approx(sigma, abs=0.001)


RUNTIME = (
    "1 12:00:00.000001 unshare(CLONE_NEWNS|CLONE_NEWUTS) = 0 <0.001000>\n"
    '1 12:00:00.002000 pivot_root(".", ".") = 0 <0.000050>\n'
    '1 12:00:00.002100 umount2(".", MNT_DETACH) = 0 <0.000060>\n'
    '1 12:00:00.002200 umount2("/x", MNT_DETACH) = 0 <0.000010>\n'
)


def test_a_runtimes_namespace_steps_are_their_own_ops():
    """unshare(CLONE_NEWNS) copies the table; the first detach after pivot_root is the old
    root's (every mount of the copy), a later one an ordinary detach."""
    st = ThreadState()
    ops = [classify(e, st) for e in parse_text(RUNTIME).events]
    assert ops == ["ns_copy", "pivot_root", "umount_oldroot", "umount_detach"]


def test_namespace_steps_hold_namespace_sem_per_mount_in_the_table(catalog, costs, kernel):
    """A runtime's copy of the mount table, its rslave walk and its detach of the old root hold
    namespace_sem (write) for the kernel file's per-mount cost times the mounts already there
    (the detach's umount_tree() part under mount_lock too); no other op has that cost."""
    with_it = {"ns_copy", "umount_oldroot", "mount_rslave"}
    assert all(kernel.op(o).per_mount_write_ns > 0 for o in with_it)
    assert all(c.per_mount_write_ns == 0 for n, c in kernel.ops.items() if n not in with_it)
    assert [n for n, c in kernel.ops.items() if c.per_mount_lock_ns] == ["umount_oldroot"]
    steady = kernel.with_values(call_sigma=0.0)
    holds = []
    for mounts in (1_000, 5_000):
        calls: list[tuple[int, str, int, int]] = []
        sim, _ = run(catalog, costs, steady, "c6gd.metal", parse_text(RUNTIME),
                     background=False, node_mounts=mounts, calls=calls)  # fmt: skip
        assert [c[1] for c in calls] == [
            "ns_copy",
            "pivot_root",
            "umount_oldroot",
            "umount_detach",
        ]
        holds.append(sim.stats["namespace_sem"].hold_ns)
    copy, detach = kernel.op("ns_copy"), kernel.op("umount_oldroot")
    # and the copy allocates each mount's per-CPU area (a walk over every CPU's line) and
    # attaches each copied mount in a mount_lock write section of its own, after a locked
    # reader (clone_mnt()'s setup_mnt()): each takes the line after the copy's own previous
    # access, fetching it from the daemons' walks that read it in between (cohsim.kernel.linetake)
    both = copy.per_mount_write_ns + detach.per_mount_write_ns + detach.per_mount_lock_ns
    both += sim.percpu_sum_ns + copy.per_mount_lock_section_ns
    line = (holds[1] - holds[0]) / 4_000 - both
    busy = min(sim.ml.busy_bg, sim.m.vcpus)
    fetch = sim.ml.takes.ns(0, busy, copy.per_mount_write_ns)
    assert 0 < fetch < sim.ml.takes.ns(1, 0.0, 0.0) / 10  # a walk in between is rare
    assert line == pytest.approx(2 * fetch, abs=0.5)


def test_a_slave_namespaces_read_walks_the_ring_for_each_of_its_lines(catalog, costs, kernel):
    """One whole mountinfo read in a runtime's copy costs ring x ring peer steps more than in
    the host (get_dominating_id() per line of the root's group): quadratic in the binds."""
    m = catalog.get("c6gd.metal")
    sim = LaunchSim(m, kernel, parse_text(RUNTIME), costs=costs["c6gd.metal"], node_mounts=3000)
    quiet = sim.peak_read_ns()
    sim.table.ring_change(+1999)
    loaded = sim.peak_read_ns()
    assert loaded["host"] == quiet["host"]
    op = kernel.op("mountinfo_read")
    assert quiet["host"] > op.per_mount_read_ns * 3000
    extra = loaded["container"] - loaded["host"]
    assert extra == pytest.approx(2000**2 * kernel.peer_step_ns)
    assert sim.cc.slave_line_ns(sim.table) * 3000 == pytest.approx(extra)


def test_unmounts_put_their_mounts_under_mount_lock_with_a_per_cpu_sum(catalog, costs, kernel):
    """After its grace period an unmount puts each mount it took out; each put of a detached
    mount sums its per-CPU counts under mount_lock (mntput_no_expire()). The old root's detach
    puts the whole copy: that section grows with the table and with the CPU count."""
    steady = kernel.with_values(call_sigma=0.0, service_namespaces=0.0)
    sections = {}
    for name in ("c6gd.metal", "m7i.metal-24xl"):
        sim, _ = run(catalog, costs, steady, name, parse_text(RUNTIME), background=False,
                     node_mounts=2000, record=True)  # fmt: skip
        holds = [b - a for _, a, b in sim.record.ml_holds]
        sections[name] = (max(holds), sim.percpu_sum_ns, sim.m.vcpus)
        assert max(holds) >= 2000 * sim.percpu_sum_ns
    (big_a, sum_a, cpus_a), (big_b, sum_b, cpus_b) = sections.values()
    assert cpus_a < cpus_b and sum_a < sum_b and big_a < big_b


def test_binds_of_the_root_group_walk_its_peers_and_children(catalog, costs, kernel):
    """containerd's per-layer binds join the root's peer group and sit under the root mount:
    each later clone walks the root's children, each attach and detach the group's peers
    (prop-ring's per-peer costs), so the namespace_sem hold per layer grows with the binds
    already alive."""
    steady = kernel.with_values(call_sigma=0.0, service_namespaces=0.0)
    holds = {}
    for n in (1, 20):
        sim, _ = run(catalog, costs, steady, "c6gd.metal", synthesize("per-layer", 1, n, seed=0,
                     runtime="none"), background=False, layers=n, record=True)  # fmt: skip
        holds[n] = [b - a for _, a, b in sim.record.ns_holds]
        assert sim.table.ring_peak == n + 1 and sim.table.binds == 0
    first, last = holds[20][0], holds[20][2 * 19]  # first and last layer's open_tree
    # the 19 children walked more, at the line the machine's caches price (all inside its L2)
    bands = walks_for(catalog.get("c6gd.metal"), steady).children
    assert bands and units(19, bands) == pytest.approx(19 * bands[0][1])
    grown = units(19, bands) * kernel.op("open_tree_clone").per_child_ns
    # (each hold's parts are whole ns: the two holds' roundings differ by up to 2)
    assert last - first == pytest.approx(grown, abs=2)
