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
periods — is the simulator's business (cohsim.kernel.launch).

Format history: schema 1 — path, rcu, percpu, background, launch, ops.*, sources.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from cohsim.errors import CohsimError
from cohsim.io import catalog_dir, read_toml
from cohsim.kernel.waketable import WakeTable

SCHEMA = 1
DEFAULT_KERNEL = "linux-6.18"


@dataclass(frozen=True)
class OpCost:
    """One kind of syscall, uncontended. Times in ns; `layers` is the image's layer count."""

    walks: int = 0  #: path walks before any lock
    walks_per_layer: int = 0  #: extra path walks per layer (overlay resolving its lowerdirs)
    cpu_ns: float = 0.0  #: work outside the mount locks
    per_layer_cpu_ns: float = 0.0  #: extra work outside the locks per layer
    ns_write_ns: float = 0.0  #: namespace_sem held for writing (not counting mount_lock inside)
    per_mount_write_ns: float = 0.0  #: ... and per mount in the table (a namespace's copy,
    #: or its old root's detach)
    ns_read_ns: float = 0.0  #: namespace_sem held for reading, fixed part
    per_mount_read_ns: float = 0.0  #: ... and per mount in the table (mountinfo)
    mount_lock_ns: float = 0.0  #: mount_lock write section (inside namespace_sem if any)
    percpu_sum: bool = False  #: the mount_lock section sums a per-CPU counter over all CPUs
    rcu: int = 0  #: synchronize_rcu_expedited() calls at its end (true in the file: one)
    layer_reads: int = 0  #: namespace_sem read sections per layer (overlayfs cloning each layer)
    layer_read_ns: float = 0.0  #: ... each this long (part of the op's per-layer work)

    def uncontended_ns(self, walk_ns: float, layers: int, mounts: int = 0) -> float:
        """The op's time alone on an idle machine, without the per-CPU sum or the RCU wait."""
        return (
            (self.walks + self.walks_per_layer * layers) * walk_ns
            + self.cpu_ns
            + self.per_layer_cpu_ns * layers
            + self.ns_write_ns
            + self.per_mount_write_ns * mounts
            + self.ns_read_ns
            + self.per_mount_read_ns * mounts
            + self.layer_reads * layers * self.layer_read_ns
            + self.mount_lock_ns
        )


OPS = (
    "open_tree_clone",
    "mount_setattr",
    "mount_setattr_ro",
    "move_mount",
    "close_attached",
    "close_detached",
    "mount_overlay",
    "umount_detach",
    "umount",
    "umount_overlay",
    "umount_einval",
    "umount_oldroot",
    "mountinfo_read",
    "mountinfo_open",
    "fsopen",
    "fsconfig",
    "fsconfig_create",
    "fsmount",
    "ns_copy",
    "other",
)


@dataclass(frozen=True)
class KernelParams:
    """Everything the level-3 kernel model needs that is not the machine."""

    name: str  #: e.g. "linux-6.18"
    walk_ns: float  #: one RCU-mode path walk
    legitimize_ns: float  #: mount_lock held by a walker whose counter moved
    rcu_exp_base_ns: float  #: expedited grace period, fixed part
    rcu_exp_per_cpu_ns: float  #: expedited grace period, per online CPU
    percpu_mlp: float  #: per-CPU counter lines one summing loop fetches in parallel
    systemd_parse_per_mount_ns: float  #: systemd's processing of one mountinfo line
    systemd_ratelimit: float  #: systemd re-reads at most once per this x its processing time
    probe_reads_per_s: float  #: other periodic mountinfo readers
    mountinfo_lines_per_read: float  #: mountinfo lines one read() returns under namespace_sem
    node_mounts: float  #: mounts on the node before the launch
    daemon_cpus: float  #: CPUs node daemons keep busy (doing path walks)
    base_launch_ns: float  #: launch latency that is neither mounts nor CPU work
    runtime_cpu_ns: float  #: CPU work of a container's runtime after its mounts
    walk_interval_ns: float  #: busy runtime/daemon code starts a path walk this often
    smt_slowdown: float  #: a thread runs this much slower while its SMT sibling is busy
    wake_ns: float  #: a task that slept resumes on an idle CPU this much later (idle exit)
    #: call-to-call dispersion of a syscall's own work: each call's work is its cost times
    #: exp(call_sigma x a standard normal) (median 1: the op costs are p50s); 0: none
    call_sigma: float
    ops: dict[str, OpCost] = field(compare=True, hash=False, default_factory=dict)
    sources: dict[str, str] = field(compare=False, hash=False, default_factory=dict)
    #: a host's measured wake-up latency by idle duration (cohsim.kernel.waketable); replaces
    #: `wake_ns` where set (a calibration fit carries it for its own host only)
    wake_table: WakeTable | None = field(default=None, compare=False, hash=False)

    def op(self, name: str) -> OpCost:
        return self.ops.get(name, self.ops["other"])

    def with_values(self, **values: float) -> KernelParams:
        """A copy with some top-level numbers or `op.field` numbers replaced (for calibration)."""
        # field names come from the caller, so the changes are keyword dicts of unknown keys
        # (dataclasses.replace refuses a name that is not a field)
        top: dict[str, Any] = {k: v for k, v in values.items() if "." not in k}
        ops = dict(self.ops)
        for key, v in values.items():
            if "." in key:
                op, f = key.split(".", 1)
                change: dict[str, Any] = {f: v}
                ops[op] = replace(ops[op], **change)
        return replace(self, ops=ops, **top)

    def value(self, key: str) -> float:
        """A top-level number or an `op.field` number by name."""
        if "." in key:
            op, f = key.split(".", 1)
            return float(getattr(self.ops[op], f))
        return float(getattr(self, key))


_TABLES = {
    "path": {"walk_ns": "walk_ns", "legitimize_ns": "legitimize_ns"},
    "rcu": {"exp_base_ns": "rcu_exp_base_ns", "exp_per_cpu_ns": "rcu_exp_per_cpu_ns"},
    "percpu": {"mlp": "percpu_mlp"},
    "background": {
        "systemd_parse_per_mount_ns": "systemd_parse_per_mount_ns",
        "systemd_ratelimit": "systemd_ratelimit",
        "probe_reads_per_s": "probe_reads_per_s",
        "mountinfo_lines_per_read": "mountinfo_lines_per_read",
        "node_mounts": "node_mounts",
        "daemon_cpus": "daemon_cpus",
    },
    "launch": {
        "base_ns": "base_launch_ns",
        "runtime_cpu_ns": "runtime_cpu_ns",
        "walk_interval_ns": "walk_interval_ns",
    },
    "cpu": {"smt_slowdown": "smt_slowdown", "wake_ns": "wake_ns", "call_sigma": "call_sigma"},
}
_OP_FIELDS = {f.name: f.type for f in fields(OpCost)}


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
    allowed = {"schema", "name", "ops", "sources", *_TABLES}
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
            elif key == "percpu_sum":
                if not isinstance(value, bool):
                    raise CohsimError(f"ops.{name}.{key} must be true or false", where)
                kw[key] = value
            elif key in ("walks", "walks_per_layer", "layer_reads"):
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
    for key, attr, low in (
        ("percpu.mlp", "percpu_mlp", 1.0),
        ("cpu.smt_slowdown", "smt_slowdown", 1.0),
        ("background.mountinfo_lines_per_read", "mountinfo_lines_per_read", 1.0),
        ("launch.walk_interval_ns", "walk_interval_ns", 1.0),
    ):
        if values[attr] < low:
            raise CohsimError(f"{key} must be at least {low:g}", where)
    return KernelParams(name=doc["name"], ops=ops, sources=dict(sources), **values)


def load_kernel(name_or_path: str | Path | None = None) -> KernelParams:
    """Read kernel parameters: a TOML path, or a name under models/kernel/ (default linux-6.18)."""
    text = str(name_or_path) if name_or_path is not None else DEFAULT_KERNEL
    path = Path(text) if text.endswith(".toml") else catalog_dir() / "kernel" / f"{text}.toml"
    doc = read_toml(path, "kernel parameter file")
    return kernel_from_dict(doc, str(path))
