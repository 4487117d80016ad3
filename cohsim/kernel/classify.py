"""Which kernel op a traced syscall is (level 3): the map from a trace to cohsim.kernel.costs.

A trace says `open_tree(..., OPEN_TREE_CLONE)`, `close(5)` or `umount2(path, MNT_DETACH)`; the
kernel model prices ops such as `open_tree_clone`, `close_attached` or `umount_detach`. Which
op a call is can depend on the thread's earlier calls (was the fd being closed attached by a
move_mount? is the path being unmounted an overlay this thread mounted?), so `classify` walks
a thread's calls in order with a `ThreadState`; `layers_of` says, per call, how many image
layers its op scales with.
"""

from __future__ import annotations

from cohsim.workload.trace import SyscallEvent


class ThreadState:
    """What `classify` must remember about one traced thread: its fds and mounts."""

    __slots__ = ("attached_fds", "overlay_targets", "layers_pending", "pivoted")

    def __init__(self) -> None:
        self.attached_fds: set[int] = set()  # open_tree fds that move_mount attached
        self.overlay_targets: set[str] = set()  # where this thread mounted overlays
        self.layers_pending = 0  # binds / lowerdir fds prepared since the last overlay
        self.pivoted = False  # pivot_root done, the old root not yet detached


def classify(e: SyscallEvent, st: ThreadState) -> str:
    """The op of one traced syscall, updating the thread's state."""
    name = e.name
    if name == "open_tree":
        if "OPEN_TREE_CLONE" in e.flags:
            st.layers_pending += 1
            if e.ret is not None and e.ret >= 0:
                st.attached_fds.discard(e.ret)
            return "open_tree_clone"
        return "other"
    if name == "mount_setattr":
        if "MOUNT_ATTR_RDONLY" in e.flags or "MS_PRIVATE" in e.flags:
            return "mount_setattr_ro"
        return "mount_setattr"
    if name == "move_mount":
        if e.fd is not None:
            st.attached_fds.add(e.fd)
        if e.fd_source == "fsmount" and e.path:  # lowerdir+: the overlay itself is attached
            st.overlay_targets.add(e.path)
        return "move_mount"
    if name == "close":
        if e.fd_source == "open_tree":
            attached = e.fd in st.attached_fds
            st.attached_fds.discard(e.fd if e.fd is not None else -1)
            return "close_attached" if attached else "close_detached"
        return "other"
    if name == "mount":
        if e.args.lstrip().startswith('"overlay"'):
            if e.path:
                st.overlay_targets.add(e.path)
            return "mount_overlay"
        return "other"
    if name in ("umount2", "umount"):
        if not e.ok:
            return "umount_einval"
        if e.path in st.overlay_targets:
            st.overlay_targets.discard(e.path)
            return "umount_overlay"
        if st.pivoted and "MNT_DETACH" in e.flags:  # a runtime detaching the old root
            st.pivoted = False
            return "umount_oldroot"
        return "umount_detach" if "MNT_DETACH" in e.flags else "umount"
    if name == "read" and e.fd_source == "mountinfo":
        return "mountinfo_read"
    if name == "openat" and e.path and "mountinfo" in e.path:
        return "mountinfo_open"
    if name == "fsopen":
        return "fsopen"
    if name == "fsconfig":
        return "fsconfig_create" if "FSCONFIG_CMD_CREATE" in e.flags else "fsconfig"
    if name == "fsmount":
        return "fsmount"
    if name == "pivot_root":
        st.pivoted = e.ok
        return "other"
    if name == "unshare" and "CLONE_NEWNS" in e.flags:
        return "ns_copy"  # a container runtime's own mount namespace: a copy of the table
    return "other"


def layers_of(events: tuple[SyscallEvent, ...]) -> list[int]:
    """For each event, the layer count that its op scales with (overlay mount, fsconfig create,
    fsmount): the idmapped clones prepared since the thread's previous overlay, at least 1."""
    out, pending = [], 0
    for e in events:
        if e.name == "open_tree" and "OPEN_TREE_CLONE" in e.flags:
            # a recursive clone of the common parent stands for every layer under it
            pending += 1
        out.append(max(1, pending))
        if (e.name == "mount" and e.args.lstrip().startswith('"overlay"')) or e.name == "fsmount":
            pending = 0
    return out
