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

    __slots__ = (
        "attached_fds",
        "overlay_targets",
        "bind_targets",
        "pivoted",
        "in_own_ns",
        "mountinfo_read_fds",
        "ring_delta",
        "binds_delta",
    )

    def __init__(self) -> None:
        self.attached_fds: set[int] = set()  # open_tree fds that move_mount attached
        self.overlay_targets: set[str] = set()  # where this thread mounted overlays
        self.bind_targets: set[str] = set()  # where it attached open_tree clones (binds)
        self.pivoted = False  # pivot_root done, the old root not yet detached
        #: after its unshare(CLONE_NEWNS) or setns(CLONE_NEWNS): its calls change its own
        #: namespace, not the host's table
        self.in_own_ns = False
        self.mountinfo_read_fds: set[int] = set()  # mountinfo fds already read (from the top)
        #: what the last call did to the host's shared root peer group: +1 a clone of a mount
        #: of it (an open_tree clone or a bind joins its source's group: clone_mnt() without
        #: CL_PRIVATE), -1 one left it (a bind unmounted, a detached clone dissolved)
        self.ring_delta = 0
        #: what it did to the root mount's children that are such clones (binds attached)
        self.binds_delta = 0


def classify(e: SyscallEvent, st: ThreadState) -> str:
    """The op of one traced syscall, updating the thread's state."""
    st.ring_delta = st.binds_delta = 0
    name = e.name
    if name == "open_tree":
        if "OPEN_TREE_CLONE" in e.flags:
            st.ring_delta = 0 if st.in_own_ns or not e.ok else 1
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
        elif e.path:
            st.bind_targets.add(e.path)
            st.binds_delta = 0 if st.in_own_ns or not e.ok else 1
        return "move_mount"
    if name == "close":
        if e.fd_source == "open_tree":
            attached = e.fd in st.attached_fds
            st.attached_fds.discard(e.fd if e.fd is not None else -1)
            if not attached and not st.in_own_ns:
                st.ring_delta = -1
            return "close_attached" if attached else "close_detached"
        return "other"
    if name == "mount":
        return _mount(e, st)
    if name in ("umount2", "umount"):
        if not e.ok:
            return "umount_einval"
        if e.path in st.overlay_targets:
            st.overlay_targets.discard(e.path)
            return "umount_overlay"
        if e.path in st.bind_targets:
            st.bind_targets.discard(e.path)
            st.ring_delta = st.binds_delta = -1
        if st.pivoted and "MNT_DETACH" in e.flags:  # a runtime detaching the old root
            st.pivoted = False
            return "umount_oldroot"
        return "umount_detach" if "MNT_DETACH" in e.flags else "umount"
    if name == "read" and e.fd_source == "mountinfo":
        if e.fd in st.mountinfo_read_fds:  # the rest of a file read from the top already
            return "mountinfo_eof"
        if e.fd is not None:
            st.mountinfo_read_fds.add(e.fd)
        return "mountinfo_read"  # the whole file, in chunks (cohsim.kernel.simulation.nssections)
    if name == "openat" and e.path and "mountinfo" in e.path:
        if e.ret is not None:
            st.mountinfo_read_fds.discard(e.ret)
        return "mountinfo_open"
    if name == "fsopen":
        return "fsopen"
    if name == "fsconfig":
        return "fsconfig_create" if "FSCONFIG_CMD_CREATE" in e.flags else "fsconfig"
    if name == "fsmount":
        return "fsmount"
    if name == "pivot_root":
        st.pivoted = e.ok
        return "pivot_root" if e.ok else "other"
    if name == "unshare" and "CLONE_NEWNS" in e.flags:
        st.in_own_ns = e.ok
        return "ns_copy"  # a container runtime's own mount namespace: a copy of the table
    if name in ("clone", "clone3") and "CLONE_NEWNS" in e.flags:
        return "ns_copy"  # the copy is made in the caller's call, for the child
    if name == "setns" and "CLONE_NEWNS" in e.flags:
        # joining a namespace made before (a runtime sharing one): no copy, no namespace_sem
        # (fs/namespace.c:6250 mntns_install(): a walk to its root); its mounts are its own
        st.in_own_ns = st.in_own_ns or e.ok
        return "other"
    return "other"


def _mount(e: SyscallEvent, st: ThreadState) -> str:
    """mount(2) by what it asks (fs/namespace.c path_mount()): a propagation change
    (do_change_type), a bind remount (do_reconfigure_mnt), a bind (do_loopback), an overlay or
    another new filesystem (do_new_mount). A bind that fails with ENOTDIR has cloned the mount
    before graft_tree() refuses it, and unmounts the clone again; other failures stop at the
    path walk."""
    flags = e.flags
    if not e.ok:
        return "mount_enotdir" if e.errno == "ENOTDIR" and "MS_BIND" in flags else "mount_failed"
    if "MS_REMOUNT" in flags:
        return "mount_remount"
    if "MS_SLAVE" in flags or "MS_SHARED" in flags or "MS_PRIVATE" in flags:
        return "mount_rslave" if "MS_REC" in flags else "other"  # one mount: not priced apart
    if "MS_BIND" in flags:
        return "mount_bind"
    if e.args.lstrip().startswith('"overlay"'):
        if e.path:
            st.overlay_targets.add(e.path)
        return "mount_overlay"
    return "mount_new"


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
