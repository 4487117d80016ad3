"""The kernel's mount path (level 3): what each mount-related syscall costs, and which locks it
takes, before any contention.

Facts modelled (fs/namespace.c, fs/namei.c):

- `mount_lock` is a seqlock: a sequence counter and a queued spinlock on one cache line. Writers
  take the spinlock; every path walk reads the counter, spins (PAUSE) while a writer holds it, and
  takes the spinlock itself if the counter moved under it (`__legitimize_mnt`).
- `namespace_sem` (an rwsem) is held for writing by open_tree(CLONE), move_mount, umount2,
  mount, a propagation-changing mount_setattr and the close() of an open_tree fd; reading
  /proc/*/mountinfo holds it for reading.
- mount_setattr(RDONLY) and umount2 without MNT_DETACH sum a per-CPU counter over all possible
  CPUs while holding mount_lock.
- every unmount ends with synchronize_rcu_expedited() after dropping namespace_sem.

`KernelParams` are read from a TOML file (default `models/kernel/linux-6.18.toml`) whose
`[sources]` table says where each number comes from; cohsim.kernel.classify maps a traced
syscall to one of its ops. The contention itself — waiting, spinning, line transfers, grace
periods — is the simulator's business (cohsim.kernel.simulation.launch).

Priors: what no measurement identifies on a large machine (the per-CPU cost of a grace period,
the SMT slowdown, the wake-up latency, the node's mount table, its readers and daemons, the
runtime's CPU work) has a `[priors]` entry: a range [low, high] the number may take, its shape
(uniform, or log-uniform where the range spans orders of magnitude), the measurement that would
pin it, and a `[sources]` line `priors.<key>` saying why the range is what it is. The nominal
value in its own table lies inside the range. A prediction draws every prior in its replicates
after the first (cohsim.predict), so its interval says what is unknown.

Format history: schema 1 — path, rcu, percpu, background, launch, ops.*, sources; priors
(optional, added without a schema change: a file without it has no priors).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from cohsim.errors import CohsimError
from cohsim.io import catalog_dir, read_toml
from cohsim.kernel.opcost import OPS, OpCost, copied
from cohsim.kernel.priors import PRIOR_SHAPES, Prior, check_range
from cohsim.kernel.waketable import WakeTable

SCHEMA = 1
DEFAULT_KERNEL = "linux-6.18"


@dataclass(frozen=True)
class KernelParams:
    """Everything the level-3 kernel model needs that is not the machine."""

    name: str  #: e.g. "linux-6.18"
    walk_ns: float  #: one RCU-mode path walk
    legitimize_ns: float  #: mount_lock held by a walker whose counter moved
    rcu_exp_base_ns: float  #: expedited grace period, fixed part
    rcu_exp_per_cpu_ns: float  #: expedited grace period, per busy CPU of a leaf (an IPI)
    percpu_mlp: float  #: per-CPU counter lines one summing loop fetches in parallel
    #: an allocation's section under pcpu_alloc_mutex (the chunk search under pcpu_lock), part
    #: of the measured cost of the op that allocates
    pcpu_alloc_ns: float
    systemd_parse_per_mount_ns: float  #: systemd's processing of one mountinfo line
    systemd_ratelimit: float  #: systemd re-reads at most once per this x its processing time
    probe_reads_per_s: float  #: other periodic mountinfo readers
    #: mountinfo line lengths (bytes): a read() takes namespace_sem once and returns at most a
    #: page (cohsim.kernel.simulation.nssections), so a read's sections are the table's bytes
    #: over a page. A line of the node's own mounts (before the launch), of a mount the burst
    #: makes (a bind, a new filesystem), an overlay's without its lower layers, and each lower
    #: layer a `lowerdir=` list adds (its path and a separator)
    node_line_bytes: float
    mount_line_bytes: float
    overlay_line_bytes: float
    lowerdir_entry_bytes: float
    #: bytes systemd asks per read() (libmount through stdio: a quarter page a section)
    systemd_read_bytes: float
    node_mounts: float  #: mounts on the node before the launch
    daemon_cpus: float  #: CPUs node daemons keep busy (doing path walks)
    daemon_walk_interval_ns: float  #: ... each starting a path walk this often (CPU ns)
    base_launch_ns: float  #: launch latency that is neither mounts nor CPU work
    runtime_cpu_ns: float  #: CPU work of a container's runtime after its mounts
    walk_interval_ns: float  #: busy runtime/daemon code starts a path walk this often
    smt_slowdown: float  #: a thread runs this much slower while its SMT sibling is busy
    #: ... and this much slower while its sibling spins on a lock with PAUSE
    smt_spin_slowdown: float
    wake_ns: float  #: a task that slept resumes on an idle CPU this much later (idle exit)
    #: a releaser wakes the readers it granted namespace_sem one after another (wake_up_q):
    #: this much apart (a try_to_wake_up() and its IPI)
    wake_step_ns: float
    #: call-to-call dispersion of a syscall's own work: each call's work is its cost times
    #: exp(call_sigma x a standard normal) (median 1: the op costs are p50s); 0: none
    call_sigma: float
    #: a host mount event under a shared mount copies the new mount into every live slave
    #: namespace, inside the namespace_sem write hold: this much per slave namespace
    prop_per_slave_mount_ns: float
    prop_per_slave_umount_ns: float  #: ... and an unmount this much per slave namespace
    service_namespaces: float  #: slave mount namespaces on the node besides containers'
    #: one step round a peer group's ring (next_peer()): get_dominating_id() in a slave
    #: namespace's mountinfo read, and propagation visiting the destination's peers
    peer_step_ns: float
    #: a peer walk on a machine whose caches are known and whose walks were not measured
    #: (cohsim.kernel.walk.walks_for): the loads a peer costs while the ring fits in the L2
    #: and beyond it, and the bytes of L2 a peer holds (the ring's knee: the L2 over them)
    peer_l2_loads: float
    peer_llc_loads: float
    peer_bytes: float
    #: every walk of a peer ring (the ops' per-peer costs, the mountinfo ring steps) against
    #: the measured lines they come from: the hosts measured differ by x0.55-x1.98 (a prior)
    peer_walk_scale: float = 1.0
    #: the core clock (GHz) of the host the CPU work was measured on, and that host's effective
    #: clock over it (a prior): the work runs at the target's clock (cohsim.kernel.corespeed)
    reference_ghz: float = 2.0
    reference_clock_scale: float = 1.0
    ops: dict[str, OpCost] = field(compare=True, hash=False, default_factory=dict)
    sources: dict[str, str] = field(compare=False, hash=False, default_factory=dict)
    #: a host's measured wake-up latency by idle duration (cohsim.kernel.waketable); replaces
    #: `wake_ns` where set (a calibration fit carries it for its own host only)
    wake_table: WakeTable | None = field(default=None, compare=False, hash=False)
    #: the ranges of the numbers no measurement identifies on a large machine (`[priors]`)
    priors: tuple[Prior, ...] = field(default=(), compare=False, hash=False)

    def op(self, name: str) -> OpCost:
        return self.ops.get(name, self.ops["other"])

    def with_values(self, **values: float) -> KernelParams:
        """A copy with some top-level numbers or `op.field` numbers replaced (for calibration)."""
        # field names come from the caller, so the changes are keyword dicts of unknown keys
        # (dataclasses.replace refuses a name that is not a field)
        top: dict[str, Any] = {k: v for k, v in values.items() if "." not in k}
        changes: dict[str, dict[str, Any]] = {}  # each op's changes, made in one copy
        for key, v in values.items():
            if "." in key:
                op, f = key.split(".", 1)
                changes.setdefault(op, {})[f] = v
        ops = dict(self.ops)
        for op, change in changes.items():
            ops[op] = ops[op].changed(change)
        return self.changed(ops=ops, **top)

    def changed(self, **changes: Any) -> KernelParams:
        """`dataclasses.replace(self, **changes)`, without running `__init__` again (a tenth
        of the time: every replicate's kernel is made by a few such copies; KernelParams has
        no `__post_init__`). A name that is not a field is refused as replace refuses it."""
        return copied(self, changes, _KERNEL_FIELDS)

    def value(self, key: str) -> float:
        """A top-level number or an `op.field` number by name."""
        if "." in key:
            op, f = key.split(".", 1)
            return float(getattr(self.ops[op], f))
        return float(getattr(self, key))


#: KernelParams' field names (`KernelParams.changed`)
_KERNEL_FIELDS = frozenset(f.name for f in fields(KernelParams))

_TABLES = {
    "path": {"walk_ns": "walk_ns", "legitimize_ns": "legitimize_ns"},
    "rcu": {"exp_base_ns": "rcu_exp_base_ns", "exp_per_cpu_ns": "rcu_exp_per_cpu_ns"},
    "percpu": {"mlp": "percpu_mlp", "alloc_mutex_ns": "pcpu_alloc_ns"},
    "background": {
        "systemd_parse_per_mount_ns": "systemd_parse_per_mount_ns",
        "systemd_ratelimit": "systemd_ratelimit",
        "probe_reads_per_s": "probe_reads_per_s",
        "node_line_bytes": "node_line_bytes",
        "mount_line_bytes": "mount_line_bytes",
        "overlay_line_bytes": "overlay_line_bytes",
        "lowerdir_entry_bytes": "lowerdir_entry_bytes",
        "systemd_read_bytes": "systemd_read_bytes",
        "node_mounts": "node_mounts",
        "daemon_cpus": "daemon_cpus",
        "daemon_walk_interval_ns": "daemon_walk_interval_ns",
    },
    "launch": {
        "base_ns": "base_launch_ns",
        "runtime_cpu_ns": "runtime_cpu_ns",
        "walk_interval_ns": "walk_interval_ns",
    },
    "cpu": {
        "smt_slowdown": "smt_slowdown",
        "spin_slowdown": "smt_spin_slowdown",
        "reference_ghz": "reference_ghz",
        "reference_clock_scale": "reference_clock_scale",
        "wake_ns": "wake_ns",
        "wake_step_ns": "wake_step_ns",
        "call_sigma": "call_sigma",
    },
    "propagation": {
        "per_slave_mount_ns": "prop_per_slave_mount_ns",
        "per_slave_umount_ns": "prop_per_slave_umount_ns",
        "service_namespaces": "service_namespaces",
        "peer_step_ns": "peer_step_ns",
        "peer_walk_scale": "peer_walk_scale",
        "peer_l2_loads": "peer_l2_loads",
        "peer_llc_loads": "peer_llc_loads",
        "peer_bytes": "peer_bytes",
    },
}
#: OpCost's counts of locked-reader sections (integers in the file)
_READER_COUNTS = (
    "mount_lock_readers",
    "mount_lock_readers_per_copy",
    "mount_lock_readers_per_mount",
)
_OP_FIELDS = {f.name: f.type for f in fields(OpCost) if f.name != "takes_ns_write"}
#: KernelParams' field of each top-level number, by its key in the file ("cpu.wake_ns")
_ATTR = {f"{table}.{key}": attr for table, keys in _TABLES.items() for key, attr in keys.items()}
#: numbers with a minimum above 0 (a factor, a count that divides)
_MINIMUMS = {
    "percpu.mlp": 1.0,
    "cpu.smt_slowdown": 1.0,
    "cpu.spin_slowdown": 1.0,
    "background.node_line_bytes": 1.0,
    "background.mount_line_bytes": 1.0,
    "background.overlay_line_bytes": 1.0,
    "background.systemd_read_bytes": 1.0,
    "launch.walk_interval_ns": 1.0,
    "propagation.peer_l2_loads": 0.1,
    "propagation.peer_llc_loads": 0.1,
    "propagation.peer_bytes": 64.0,
    "background.daemon_walk_interval_ns": 1.0,
}


def _number(where: str, key: str, value: Any, *, integer: bool = False) -> float:
    ok = isinstance(value, int) if integer else isinstance(value, int | float)
    if isinstance(value, bool) or not ok:
        raise CohsimError(
            f"{key} must be a{'n integer' if integer else ' number'}, not {value!r}", where
        )
    if not math.isfinite(value) or value < 0:
        raise CohsimError(f"{key} must be a finite number >= 0, not {value!r}", where)
    return value


def kernel_from_dict(doc: dict[str, Any], where: str) -> KernelParams:
    """Validate a parsed kernel document; errors name `where` and the key."""
    allowed = {"schema", "name", "ops", "sources", "priors", *_TABLES}
    for key in doc:
        if key not in allowed:
            raise CohsimError(f"unknown key {key}", where)
    if doc.get("schema") != SCHEMA:
        raise CohsimError(
            f"schema {doc.get('schema')!r} is not supported (expected {SCHEMA})", where
        )
    if not isinstance(doc.get("name"), str):
        raise CohsimError("missing key name", where)
    values: dict[str, Any] = {}  # KernelParams' numeric fields by name (all floats)
    for table, keys in _TABLES.items():
        t = doc.get(table)
        if not isinstance(t, dict):
            raise CohsimError(f"missing table [{table}]", where)
        for key in t:
            if key not in keys:
                raise CohsimError(f"unknown key {table}.{key}", where)
        for key, attr in keys.items():
            if key not in t:
                raise CohsimError(f"missing key {table}.{key}", where)
            values[attr] = float(_number(where, f"{table}.{key}", t[key]))
    ops: dict[str, OpCost] = {}
    raw_ops = doc.get("ops")
    if not isinstance(raw_ops, dict):
        raise CohsimError("missing table [ops]", where)
    for name, spec in raw_ops.items():
        if name not in OPS:
            raise CohsimError(f"unknown op ops.{name} (expected one of {', '.join(OPS)})", where)
        kw: dict[str, Any] = {}
        for key, value in spec.items():
            if key not in _OP_FIELDS:
                raise CohsimError(f"unknown key ops.{name}.{key}", where)
            if key == "rcu":
                if isinstance(value, bool) or (isinstance(value, int) and 0 <= value <= 8):
                    kw[key] = int(value)
                else:
                    raise CohsimError(
                        f"ops.{name}.rcu must be true, false or a number of grace periods "
                        f"(0-8), not {value!r}",
                        where,
                    )
            elif key in ("percpu_sum", "percpu_sum_per_copy", "mount_lock_reader"):
                if not isinstance(value, bool):
                    raise CohsimError(f"ops.{name}.{key} must be true or false", where)
                kw[key] = value
            elif key in ("walks", "walks_per_layer", "layer_reads", *_READER_COUNTS):
                kw[key] = int(_number(where, f"ops.{name}.{key}", value, integer=True))
            else:
                kw[key] = float(_number(where, f"ops.{name}.{key}", value))
        ops[name] = OpCost(**kw)
    if "other" not in ops:
        raise CohsimError("missing table [ops.other] (the cost of any other call)", where)
    sources = doc.get("sources", {})
    for table in [*_TABLES, "ops"]:
        if not any(k == table or k.startswith(table + ".") for k in sources):
            raise CohsimError(f"[{table}] has no entry in [sources]", where)
    for key, low in _MINIMUMS.items():
        if values[_ATTR[key]] < low:
            raise CohsimError(f"{key} must be at least {low:g}", where)
    priors = priors_from_dict(doc.get("priors", {}), values, sources, where)
    return KernelParams(name=doc["name"], ops=ops, sources=dict(sources), priors=priors, **values)


def priors_from_dict(
    table: Any, values: dict[str, float], sources: dict[str, Any], where: str
) -> tuple[Prior, ...]:
    """The `[priors]` table: `"table.key" = {low, high, shape, measure}` per number, each with
    a `priors.<key>` line in `[sources]`, its nominal value (`values`, by field) inside the
    range. Errors name `where` and the key. In the file's order."""
    if not isinstance(table, dict):
        raise CohsimError("[priors] must be a table", where)
    out = []
    for key, spec in table.items():
        if key not in _ATTR:
            raise CohsimError(
                f"unknown key priors.{key} (a prior ranges a number of {', '.join(_TABLES)}, "
                "e.g. cpu.smt_slowdown)",
                where,
            )
        if not isinstance(spec, dict):
            raise CohsimError(f"priors.{key} must be a table {{low, high, shape, measure}}", where)
        for k in spec:
            if k not in ("low", "high", "shape", "measure"):
                raise CohsimError(f"unknown key priors.{key}.{k}", where)
        for k in ("low", "high", "shape", "measure"):
            if k not in spec:
                raise CohsimError(f"missing key priors.{key}.{k}", where)
        low = float(_number(where, f"priors.{key}.low", spec["low"]))
        high = float(_number(where, f"priors.{key}.high", spec["high"]))
        shape, measure = spec["shape"], spec["measure"]
        if shape not in PRIOR_SHAPES:
            raise CohsimError(
                f"priors.{key}.shape must be one of {', '.join(PRIOR_SHAPES)}, not {shape!r}",
                where,
            )
        if not isinstance(measure, str) or not measure:
            raise CohsimError(f"priors.{key}.measure must say which measurement pins it", where)
        check_range(key, low, high, shape, values[_ATTR[key]], _MINIMUMS.get(key, 0.0), where)
        why = sources.get(f"priors.{key}")
        if not isinstance(why, str):
            raise CohsimError(f"priors.{key} has no entry in [sources]", where)
        out.append(Prior(key, _ATTR[key], low, high, shape, measure, why))
    return tuple(out)


def load_kernel(name_or_path: str | Path | None = None) -> KernelParams:
    """Read kernel parameters: a TOML path, or a name under models/kernel/ (default linux-6.18)."""
    text = str(name_or_path) if name_or_path is not None else DEFAULT_KERNEL
    path = Path(text) if text.endswith(".toml") else catalog_dir() / "kernel" / f"{text}.toml"
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        stamp = -1  # read_toml says what is wrong with it
    return _load_kernel(path, stamp)


@functools.lru_cache(maxsize=16)
def _load_kernel(path: Path, stamp: int) -> KernelParams:
    """A kernel file read once per process (keyed by path and modification time: a file
    rewritten since is read again); KernelParams is frozen, so callers may share it."""
    doc = read_toml(path, "kernel parameter file")
    return kernel_from_dict(doc, str(path))
