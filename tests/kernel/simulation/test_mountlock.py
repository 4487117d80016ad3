"""mount_lock in the launch simulation (cohsim.kernel.simulation.mountlock): writers, walkers, the
counter."""

from __future__ import annotations

import dataclasses

import pytest

from cohsim.kernel.costs import load_kernel
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.simulation.clock import Environment
from cohsim.kernel.simulation.launch import LaunchSim
from cohsim.kernel.simulation.mountlock import MountLock
from cohsim.kernel.simulation.records import LaunchRecord, LockStats
from cohsim.workload.synth import synthesize


@pytest.fixture(scope="module")
def costs(catalog):
    c = LineCosts(catalog.get("c6gd.metal"), model="markov")
    c.prefill()
    return c


def make(costs, daemon_cpus=0.0):
    env = Environment()
    kernel = dataclasses.replace(load_kernel(), daemon_cpus=daemon_cpus)
    ml = MountLock(env, costs, kernel, 64, lambda: 1.0, LockStats(), LockStats(), LaunchRecord())
    return env, ml


def test_writers_are_served_first_come_first_served(costs):
    env, ml = make(costs)
    order = []

    def writer(tid, at):
        yield env.timeout(at)
        yield from ml.section(1000.0, tid)
        order.append((tid, env.now))

    for tid, at in ((1, 0), (2, 10), (3, 20)):
        env.process(writer(tid, at))
    env.run()
    assert [t for t, _ in order] == [1, 2, 3]
    holds = ml.record.ml_holds
    assert all(a[2] <= b[1] for a, b in zip(holds, holds[1:], strict=False))  # no overlap
    assert ml.stats.acquisitions == 3 and ml.stats.max_waiters == 2
    assert not ml.busy and ml.releases == 3
    assert len(ml.change_times) == 6  # the counter moves on every take and every release


def test_a_walk_spins_while_write_held_and_legitimizes_if_the_counter_moved(costs):
    env, ml = make(costs)
    spun = []

    def writer():
        yield from ml.section(5000.0, 1)

    def walker():
        yield env.timeout(100)
        assert ml.held
        t0 = env.now
        yield from ml.seq_spin()
        spun.append(env.now - t0)

    env.process(writer())
    env.process(walker())
    env.run()
    assert spun and spun[0] >= 4900  # until the release, plus the re-read of the line
    assert ml.spin_stats.acquisitions == 1 and ml.seq_spinners == 0
    took, released = ml.change_times
    assert ml.moved_under(took - 10, 20)  # the take fell inside that walk
    assert not ml.moved_under(took + 10, 100)  # nothing moved between take and release
    assert ml.moved_under(released - 50, 100)
    assert not ml.moved_under(released + 1, 1e6)
    assert not ml.moved_under(took - 10, 0.0)  # no walk, nothing to legitimize

    def legit():
        yield from ml.legitimize_walk()

    env.process(legit())
    env.run()
    assert ml.legitimize == 1 and ml.stats.acquisitions == 2 and not ml.busy


def test_the_release_event_is_made_only_for_someone_waiting(costs):
    env, ml = make(costs)

    def writer():
        yield from ml.section(100.0, 1)

    env.process(writer())
    env.run()
    assert ml._released is None  # nobody asked: no event was scheduled


def test_spinning_is_done_when_the_waiters_and_the_writers_spinners_have_left(costs):
    """What a grace period waits for (cohsim.kernel.simulation.rcu): each writer queued now
    takes and releases the lock, a walk spinning on the writer's counter leaves at its
    release."""
    env, ml = make(costs)
    seen = {}

    def writer(tid, at):
        yield env.timeout(at)
        yield from ml.section(10_000.0, tid)

    def walker():
        yield env.timeout(20)
        yield from ml.seq_spin()

    def look():
        yield env.timeout(30)  # writer 1 holds, a walk spins, writer 2 waits
        seen["at"] = at = ml.spinning_done_at()
        seen["then"] = ml.spinning_done(at)
        while not ml.spinning_done(at):
            yield ml.released
        seen["done"] = (env.now, ml.releases)

    for p in (writer(1, 0), writer(2, 10), walker(), look()):
        env.process(p)
    env.run()
    assert seen["at"] == 2 and not seen["then"]  # writer 1 (a walk spins on it), queued 2
    assert seen["done"] == (ml.change_times[-1], 2)  # both writers' releases
    assert ml.spinning_done(99)  # free and wanted by no one


def test_background_walkers_lengthen_a_hold_and_run_up_a_debt(costs):
    quiet_env, quiet = make(costs)
    busy_env, busy = make(costs, daemon_cpus=32.0)
    for env, ml in ((quiet_env, quiet), (busy_env, busy)):
        env.process(ml.section(20_000.0, 1))
        env.run()
    assert busy.stats.hold_ns > quiet.stats.hold_ns
    # the daemons' CPUs walk at their own, lower rate: so many runtime-equivalent walkers
    assert busy.busy_bg == pytest.approx(
        32.0 * busy.k.walk_interval_ns / busy.k.daemon_walk_interval_ns
    )
    assert busy.bg_spin_ns > 0 and busy.debt_per_cpu == pytest.approx(
        busy.bg_spin_ns / busy.busy_bg
    )
    assert quiet.bg_spin_ns == 0 and quiet.debt_per_cpu == 0


def test_the_spinners_debt_is_half_the_hold_and_their_reread_each(costs):
    """Each background CPU spinning on the line by a write section's end owes, on average,
    half the hold (they arrived uniformly during it) and its re-read of the line after the
    release, level 2's reader cost among all of them: k (h / 2 + reader_ns(k)), shared by the
    busy background CPUs."""
    env, ml = make(costs, daemon_cpus=32.0)
    env.process(ml.section(20_000.0, 1))
    env.run()
    k, h = ml._bg_fixed_point(20_000.0, ml.walking)
    reread = costs.reader_ns(k)
    assert k > 1 and h > 20_000 and reread > 0
    assert ml.bg_spin_ns == pytest.approx(k * (h / 2 + reread), rel=1e-9)
    assert ml.bg_spin_ns - k * h / 2 == pytest.approx(k * reread, rel=1e-6)
    assert ml.debt_per_cpu == pytest.approx(ml.bg_spin_ns / ml.busy_bg, rel=1e-12)


def _ml_holds(catalog, name):
    """One container of the common-parent strategy alone on `name`, with no background CPUs
    and no call-to-call variation: every mount_lock write section's hold (ns)."""
    m = catalog.get(name)
    kernel = dataclasses.replace(load_kernel(), daemon_cpus=0.0, call_sigma=0.0)
    trace = synthesize("common-parent", 1, 2, seed=0, runtime="none")
    sim = LaunchSim(
        m, kernel, trace, costs=LineCosts(m, model="markov"), background=False, record=True
    )
    sim.run()
    assert sim.record is not None
    return sim, [end - start for _, start, end in sim.record.ml_holds]


def test_two_sockets_lengthen_the_percpu_sum_inside_mount_lock(catalog):
    """The per-CPU counter sum (mount_setattr(RDONLY), umount2 without MNT_DETACH, the put of
    an unmounted mount) walks every CPU's line while holding mount_lock, priced from the
    level-1 latency matrix: on
    two sockets of the same CPU there are twice the lines and half of them are across the
    socket link, so those sections are much longer than on one socket, by exactly the
    difference of the sums (times the sums a section does: an unmount puts its mount and the
    copies in the node's slave namespaces), while sections without the sum are the same length
    on both. Back-to-back sections (the puts, each its own lock_mount_hash()) pay the line
    again each after the first, which two sockets price differently too."""
    one, h1 = _ml_holds(catalog, "xeon-gold-6242-1s")
    two, h2 = _ml_holds(catalog, "xeon-gold-6242-2s")
    assert one.m.topology.sockets == 1 and two.m.topology.sockets == 2
    assert one.m.microarch == two.m.microarch  # the same family: only the sockets differ
    assert len(h1) == len(h2)
    plain = min(h1)
    assert min(h2) == plain  # sections without the sum: the same on both
    summed = [(a, b) for a, b in zip(h1, h2, strict=True) if b != a]
    assert summed, "no section sums the per-CPU counter"
    extra = two.percpu_sum_ns - one.percpu_sum_ns
    line = two.costs.writer_ns(0) - one.costs.writer_ns(0)  # a line hand-off, nobody spinning
    for a, b in summed:
        assert b > a + plain  # measurably longer: the extra exceeds a whole plain section
        # sums: an unmount's (its mount and its slaves' copies), or its puts' (one each), in
        # `again` sections after the first
        fits = [
            (abs(b - a - sums * extra - again * line), sums)
            for sums in range(1, 40)
            for again in range(sums)
        ]
        miss, sums = min(fits)
        assert miss <= 2 * sums
