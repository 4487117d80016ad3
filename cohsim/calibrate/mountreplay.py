"""A mount_bench run simulated: the calls mount_bench makes, replayed by the kernel model.

`mount_bench_trace` builds the exact calls mount_bench makes (K workers = K threads, each
running `containers` x `sequences` sequences back to back, every sequence undoing its own
mounts, with the peak-point mountinfo sample), so `cohsim.kernel.simulation.launch.LaunchSim`
replays what mount_bench did rather than containerd's launch (`cohsim.workload.synth`).
`simulate_run` runs it and reports what is comparable with the measurement
(`cohsim.calibrate.measuredruns.MountRun`): the mean time a worker spends per sequence
(mount_bench's `sequence` wall time plus its `mountinfo_sample`, which is excluded from the
sequence's wall time but taken in the worker's stride) and `containers_per_s` (all workers'
containers over the run's span).

Think time: mount_bench's own user-space work between calls (path formatting, bookkeeping)
is not a kernel cost but occupies the CPU. It is given per call, measured as the part of the
1-worker sequence time that the kernel model's costs do not explain
(`cohsim.calibrate.hostterms.measure_bench_terms`).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

import numpy as np

from cohsim.errors import CohsimError
from cohsim.kernel.costs import KernelParams
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.simulation.launch import LaunchSim
from cohsim.machine.model import Machine
from cohsim.units import NS_PER_S
from cohsim.workload.synth import STRATEGIES
from cohsim.workload.trace import RawCall, Trace, assemble

_ROOT = "/tmp/mount_bench.cohsim"  # the scratch tmpfs (mount_bench's mkdtemp)
_USERNS_FD, _FD_A, _FD_B, _FD_C = 4, 5, 6, 7
_FLAGS = "OPEN_TREE_CLONE|OPEN_TREE_CLOEXEC|AT_EMPTY_PATH"
_IDMAP = (
    f"{{attr_set=MOUNT_ATTR_IDMAP, attr_clr=0, propagation=0 /* MS_??? */, userns_fd={_USERNS_FD}}}"
)
_PARENT = (
    "{attr_set=MOUNT_ATTR_RDONLY|MOUNT_ATTR_IDMAP, attr_clr=0, "
    f"propagation=MS_PRIVATE, userns_fd={_USERNS_FD}}}"
)
#: one read of /proc/self/mountinfo (the sample, and common-parent's UnmountRecursive)
_MOUNTINFO: list[tuple] = [
    ("openat", 'AT_FDCWD, "/proc/self/mountinfo", O_RDONLY|O_CLOEXEC', _FD_C, None),
    ("read", f'{_FD_C}, "22 1 0:21 / / rw"..., 4096', 4096, None),
    ("close", str(_FD_C), 0, None),
]


#: mount_bench's mountinfo lines, measured (calibration/data/devvm-2cpu-intel-xeon-f6m207/
#: mountinfo-lines/README.md): a bind of a layer or of the common parent 91-93 bytes, an
#: overlay 156 before its lower layers, each `lowerdir=` entry 28 (per-layer) or 30
#: (common-parent)
BENCH_MOUNT_LINE_BYTES, BENCH_OVERLAY_LINE_BYTES, BENCH_LOWERDIR_ENTRY_BYTES = 92.0, 156.0, 29.0


def _overlay_data(d: str) -> str:
    return f'"lowerdir=...,upperdir={d}/u,workdir={d}/k"'


def _per_layer(w: int, layers: int, sample: bool) -> list[tuple]:
    d = f"{_ROOT}/{w}"
    merged = f'"{d}/m"'
    calls: list[tuple] = []
    for i in range(layers):
        calls += [
            ("open_tree", f'-9, "{_ROOT}/l/{w}/{i}", {_FLAGS}', _FD_A, None),
            ("mount_setattr", f'{_FD_A}, "", AT_EMPTY_PATH, {_IDMAP}, 32', 0, None),
            ("move_mount", f'{_FD_A}, "", -9, "{d}/{i}", MOVE_MOUNT_F_EMPTY_PATH', 0, None),
            ("close", str(_FD_A), 0, None),
        ]
    calls.append(("mount", f'"overlay", {merged}, "overlay", 0, {_overlay_data(d)}', 0, None))
    calls += _MOUNTINFO if sample else []
    calls += [("umount2", f'"{d}/{i}", MNT_DETACH', 0, None) for i in range(layers)]
    calls.append(("umount2", f"{merged}, 0", 0, None))
    return calls


def _common_parent(w: int, layers: int, sample: bool) -> list[tuple]:
    d = f"{_ROOT}/{w}"
    merged = f'"{d}/m"'
    calls: list[tuple] = [
        ("open_tree", f'-9, "{_ROOT}/l/{w}", {_FLAGS}|AT_RECURSIVE', _FD_A, None),
        ("mount_setattr", f'{_FD_A}, "", AT_EMPTY_PATH|AT_RECURSIVE, {_PARENT}, 32', 0, None),
        ("move_mount", f'{_FD_A}, "", -9, "{d}/c", MOVE_MOUNT_F_EMPTY_PATH', 0, None),
        ("close", str(_FD_A), 0, None),
        ("mount", f'"overlay", {merged}, "overlay", 0, {_overlay_data(d)}', 0, None),
    ]
    calls += _MOUNTINFO if sample else []
    calls += _MOUNTINFO  # UnmountRecursive reads the table
    calls += [
        ("umount2", f'"{d}/c", 0', 0, None),
        ("umount2", f'"{d}/c", 0', -1, "EINVAL"),
        ("umount2", f"{merged}, 0", 0, None),
    ]
    return calls


def _lowerdir_plus(w: int, layers: int, sample: bool) -> list[tuple]:
    d = f"{_ROOT}/{w}"
    merged = f'"{d}/m"'
    calls: list[tuple] = [("fsopen", '"overlay", FSOPEN_CLOEXEC', _FD_A, None)]
    fds = [100 + i for i in range(layers)]
    for i, fd in enumerate(fds):
        calls += [
            ("open_tree", f'-9, "{_ROOT}/l/{w}/{i}", {_FLAGS}', fd, None),
            ("mount_setattr", f'{fd}, "", AT_EMPTY_PATH, {_IDMAP}, 32', 0, None),
            ("fsconfig", f'{_FD_A}, FSCONFIG_SET_FD, "lowerdir+", NULL, {fd}', 0, None),
        ]
    calls += [
        ("fsconfig", f'{_FD_A}, FSCONFIG_SET_STRING, "upperdir", "{d}/u", 0', 0, None),
        ("fsconfig", f'{_FD_A}, FSCONFIG_SET_STRING, "workdir", "{d}/k", 0', 0, None),
        ("fsconfig", f"{_FD_A}, FSCONFIG_CMD_CREATE, NULL, NULL, 0", 0, None),
    ]
    calls += [("close", str(fd), 0, None) for fd in fds]
    calls += [
        ("fsmount", f"{_FD_A}, FSMOUNT_CLOEXEC, 0", _FD_B, None),
        ("move_mount", f'{_FD_B}, "", -9, {merged}, MOVE_MOUNT_F_EMPTY_PATH', 0, None),
    ]
    calls += _MOUNTINFO if sample else []
    calls += [
        ("close", str(_FD_B), 0, None),
        ("close", str(_FD_A), 0, None),
        ("umount2", f"{merged}, 0", 0, None),
    ]
    return calls


_SEQUENCES = {
    "per-layer": _per_layer,
    "common-parent": _common_parent,
    "lowerdir-plus": _lowerdir_plus,
}


def _sequence(strategy: str, w: int, layers: int, sample: bool) -> list[tuple]:
    """One mount_bench sequence of worker `w`: (name, args, ret, errno) per call."""
    make = _SEQUENCES.get(strategy)
    if make is None:
        raise CohsimError(f"unknown strategy {strategy!r} ({', '.join(STRATEGIES)})")
    return make(w, layers, sample)


def mount_bench_trace(
    strategy: str,
    workers: int,
    layers: int,
    containers: int,
    *,
    sequences_per_container: int = 2,
    think_ns: int = 0,
    mountinfo_sample: bool = True,
    rng: np.random.Generator | None = None,
    start_spread_ns: float = 0.0,
) -> Trace:
    """mount_bench's calls: `workers` threads, each `containers` x `sequences` sequences.

    Every call lasts 0 (the simulator prices it) and is followed by `think_ns` of the worker's
    own user-space work; all workers are released together at t=0, as mount_bench does.
    With `rng`, each gap is drawn uniformly from [0, 2 think_ns] (same mean) and each worker
    starts at a uniform offset in [0, start_spread_ns): real workers never start or run in
    lock step, and these draws let calibration average over interleavings (common random
    numbers: the same rng seed for every candidate parameter set).
    """
    if workers < 1 or layers < 1 or containers < 1 or sequences_per_container < 1:
        raise CohsimError("workers, layers, containers and sequences must be at least 1")
    raw: list[RawCall] = []
    for w in range(workers):
        seq = _sequence(strategy, w, layers, mountinfo_sample)
        n = containers * sequences_per_container * len(seq)
        if rng is None:
            now, gaps = 0, [think_ns] * n
        else:
            now = int(rng.uniform(0.0, start_spread_ns)) if start_spread_ns > 0 else 0
            gaps = np.rint(rng.uniform(0.0, 2.0 * think_ns, n)).astype(int).tolist()
        i = 0
        for _ in range(containers * sequences_per_container):
            for name, args, ret, err in seq:
                raw.append(RawCall(w + 1, now, 0, name, args, ret, err))
                now += gaps[i]
                i += 1
    meta = (
        ("strategy", strategy),
        ("workers", str(workers)),
        ("layers", str(layers)),
        ("containers", str(containers)),
        ("think_ns", str(think_ns)),
    )
    return assemble(
        raw, source=f"mount_bench:{strategy}:{workers}x{layers}", format="synth", meta=meta
    )


@dataclass(frozen=True)
class SimRun:
    """The simulated counterpart of a mount_bench run's comparable figures."""

    stride_ns: float  #: mean over workers of (their time) / (their sequences)
    containers_per_s: float
    #: mean simulated duration of one call of each op (ns, waits included)
    op_means: dict[str, float] = field(default_factory=dict, compare=False)
    #: calls of each op per sequence (all workers' calls / all sequences)
    op_calls: dict[str, float] = field(default_factory=dict, compare=False)


def bench_kernel(kernel: KernelParams) -> KernelParams:
    """The kernel as mount_bench sees it: no container runtime work, no node daemons walking,
    and no propagation. mount_bench works in a mount namespace of its own made private
    (`unshare(CLONE_NEWNS)`, then `/` MS_REC|MS_PRIVATE, then its scratch tmpfs under it:
    calibration/bench/mount_bench.c), so none of its mounts has a peer (propagate_mnt() and
    the umounts' propagation walk nothing: every op's `per_peer_ns` and
    `mount_lock_per_peer_ns` is 0) and no namespace is its slave (`service_namespaces` 0).
    What a clone's source has as children (`per_child_ns`: the binds under the scratch tmpfs)
    it has there too. Its mountinfo lines are its own (calibration/data/
    devvm-2cpu-intel-xeon-f6m207/mountinfo-lines/README.md): binds 91-93 bytes, overlays 156
    before their lower layers, a `lowerdir=` entry 28-30 (its scratch directory's short
    paths; a `lowerdir+` entry is the kernel's 12 whatever the paths)."""
    peers = {
        f"{n}.{f}": 0.0
        for n, op in kernel.ops.items()
        for f in ("per_peer_ns", "mount_lock_per_peer_ns")
        if getattr(op, f)
    }
    return kernel.with_values(
        runtime_cpu_ns=0.0,
        daemon_cpus=0.0,
        base_launch_ns=0.0,
        service_namespaces=0.0,
        mount_line_bytes=BENCH_MOUNT_LINE_BYTES,
        overlay_line_bytes=BENCH_OVERLAY_LINE_BYTES,
        lowerdir_entry_bytes=BENCH_LOWERDIR_ENTRY_BYTES,
        **peers,
    )


def with_op_extra(kernel: KernelParams, extra_ns: dict[str, float], layers: int) -> KernelParams:
    """`kernel` with each op's own work (unlocked + namespace_sem section, per-layer part at
    `layers`) lengthened by `extra_ns[op]` (may be negative), its split kept: how mount_bench's
    1-worker mean of that op differs from the model's p50-based total (tails, this VM)."""
    values: dict[str, float] = {}
    for name, extra in sorted(extra_ns.items()):
        if name not in kernel.ops or not extra:
            continue
        op = kernel.ops[name]
        body = op.cpu_ns + op.per_layer_cpu_ns * layers + op.ns_write_ns
        if body <= 0:
            continue
        f = max(0.05, (body + extra) / body)
        values[f"{name}.cpu_ns"] = op.cpu_ns * f
        values[f"{name}.per_layer_cpu_ns"] = op.per_layer_cpu_ns * f
        values[f"{name}.ns_write_ns"] = op.ns_write_ns * f
    return kernel.with_values(**values) if values else kernel


def simulate_run(
    machine: Machine,
    kernel: KernelParams,
    strategy: str,
    workers: int,
    layers: int,
    *,
    containers: int = 2,
    sequences_per_container: int = 2,
    think_ns: float = 0.0,
    baseline_mounts: int = 21,
    seed: int = 0,
    costs: LineCosts | None = None,
    jitter: bool = False,
    start_spread_ns: float = 20_000.0,
    mountinfo_sample: bool = True,
    calls: list[tuple[int, str, int, int]] | None = None,
) -> SimRun:
    """Replay mount_bench's run on `machine` with `kernel` (already `bench_kernel`-ed).

    `jitter`: draw the think gaps and the workers' start offsets from `seed`
    (`mount_bench_trace`); without it every run of the same inputs is the same lock-step run.
    `mountinfo_sample`: each sequence reads /proc/self/mountinfo once, as mount_bench does
    unless run with `--mountinfo-every 0`. `calls`, when given, receives every simulated call
    as (worker's thread id, op, start ns, end ns).
    """
    rng = np.random.default_rng(seed) if jitter else None
    trace = mount_bench_trace(
        strategy,
        workers,
        layers,
        containers,
        sequences_per_container=sequences_per_container,
        think_ns=round(think_ns),
        rng=rng,
        start_spread_ns=start_spread_ns,
        mountinfo_sample=mountinfo_sample,
    )
    # layers=: every sequence's overlay, fsconfig create and fsmount see all `layers` lowers
    # (kernel.layers_of would count common-parent's one recursive clone as one layer)
    calls = [] if calls is None else calls
    sim = LaunchSim(
        machine,
        kernel,
        trace,
        costs=costs or LineCosts(machine, seed=seed),
        seed=seed,
        layers=layers,
        background=False,
        node_mounts=baseline_mounts,
        calls=calls,
    )
    res = sim.run()
    durations: dict[str, list[int]] = {}
    for _tid, op, start, end in calls:
        durations.setdefault(op, []).append(end - start)
    per_worker = containers * sequences_per_container
    stride = statistics.fmean((r.mounts_done_ns - r.start_ns) / per_worker for r in res)
    span = max(r.mounts_done_ns for r in res) - min(r.start_ns for r in res)
    seqs = workers * per_worker
    return SimRun(
        stride_ns=stride,
        containers_per_s=workers * containers / (span / NS_PER_S),
        op_means={k: statistics.fmean(v) for k, v in sorted(durations.items())},
        op_calls={k: len(v) / seqs for k, v in sorted(durations.items())},
    )
