"""One kind of syscall's costs, uncontended (`OpCost`), and the ops a kernel model names
(`OPS`): what cohsim.kernel.costs reads per `[ops.*]` table of a kernel file, and what each
replicate copies with its own numbers (a calibration's draw, the target's clock:
cohsim.kernel.corespeed), so a copy is made without running `__init__` again (`changed`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar


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
    per_mount_lock_ns: float = 0.0  #: ... and per mount in the table (a walk of a whole copy
    #: under one hold: the rslave change, the old root's umount_tree())
    #: namespace_sem (write) per member of the root mount's peer group, for an attach or detach
    #: there (propagate_mnt() / propagate_umount() visit every peer of the destination)
    per_peer_ns: float = 0.0
    #: ... and per child of the root mount that is such a bind (a clone of it walks its
    #: source's children: __has_locked_children())
    per_child_ns: float = 0.0
    percpu_sum: bool = False  #: the mount_lock section sums a per-CPU counter over all CPUs
    #: ... and one more for each copy of the mount propagated into a slave namespace
    #: (umount2(0)'s busy check: propagate_mount_busy() -> do_refcount_check() per copy)
    percpu_sum_per_copy: bool = False
    #: the mount_lock section (nested in the namespace_sem write hold) walks the parent's
    #: peers: per member of the root mount's peer group (an unmount's propagation walks)
    mount_lock_per_peer_ns: float = 0.0
    #: the op's mount_lock section is a locked reader (read_seqlock_excl: the spinlock and its
    #: line, but the sequence counter does not move and no walk spins on it)
    mount_lock_reader: bool = False
    #: per mount in the table, a mount_lock write section of its own with this much work,
    #: among the namespace_sem hold's other work (copy_tree()'s attach of each copied mount)
    per_mount_lock_section_ns: float = 0.0
    #: locked-reader sections of mount_lock nested in its namespace_sem write hold (LOCK_MOUNT's
    #: and clone_mnt()'s read_seqlock_excl / guard(mount_locked_reader): docs/kernel-audit.md
    #: C18): each takes the line exclusive (cohsim.kernel.linetake), the counter does not move
    mount_lock_readers: int = 0
    mount_lock_readers_per_copy: int = 0  #: ... and per copy into a live slave namespace
    mount_lock_readers_per_mount: int = 0  #: ... and per mount in the table (a namespace copy)
    rcu: int = 0  #: synchronize_rcu_expedited() calls at its end (true in the file: one)
    layer_reads: int = 0  #: namespace_sem read sections per layer (overlayfs cloning each layer)
    layer_read_ns: float = 0.0  #: ... each this long (part of the op's per-layer work)
    #: whether the op takes namespace_sem for writing at all (namespace_lock()): whether the
    #: model file gives it a write section, decided when the file is read and kept when a
    #: fit changes the section's length (`KernelParams.with_values`), down to 0
    takes_ns_write: bool | None = None

    def __post_init__(self) -> None:
        if self.takes_ns_write is None:
            takes = bool(self.ns_write_ns or self.per_mount_write_ns)
            object.__setattr__(self, "takes_ns_write", takes)

    def changed(self, changes: Mapping[str, Any]) -> OpCost:
        """`dataclasses.replace(self, **changes)`, without running `__init__` again (a fifth
        of the time: every replicate copies every op); `__post_init__` only fills
        `takes_ns_write` where it is None, and `self` has it. A name that is not a field is
        refused as replace refuses it."""
        return copied(self, changes, _FIELDS)

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
            + self.per_mount_lock_ns * mounts
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
    "mount_rslave",
    "mount_bind",
    "mount_new",
    "mount_remount",
    "mount_enotdir",
    "mount_failed",
    "pivot_root",
    "mountinfo_eof",
    "other",
)

#: OpCost's field names (`OpCost.changed`)
_FIELDS = frozenset(f.name for f in fields(OpCost))

_D = TypeVar("_D")


def copied(obj: _D, changes: Mapping[str, Any], names: frozenset[str]) -> _D:
    """`dataclasses.replace(obj, **changes)` for a frozen dataclass whose `__init__` would
    only set the fields again (OpCost, KernelParams): a copy of its `__dict__` with the
    changes, without running `__init__`. A name not among its fields (`names`) goes to
    replace, which refuses it."""
    if not changes.keys() <= names:
        return replace(obj, **changes)  # type: ignore[type-var]
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__, **changes)
    return new
