"""The container runtime's own mount syscalls, synthesised: what runc does after containerd's.

containerd's two passes (cohsim.workload.synth) prepare the rootfs; then runc starts the
container. Recorded with strace on Debian's runc 1.1.5 (calibration/data/
devvm-2cpu-amd-epyc-f25m1/runc-strace/README.md: one container start, every call in order), a
start with a user namespace does, per container:

1. ``runc run`` reads the host's /proc/self/mountinfo twice (cgroup mount points): per file an
   ``openat``, one ``read`` of 4096 bytes and one that returns 0;
2. ``runc init`` protects its own binary in the **host** namespace: a bind mount of
   /proc/self/exe onto a file under /run/runc/<id>/, a read-only remount, a detach;
3. ``unshare(CLONE_NEWUSER)``, then ``unshare(CLONE_NEWNS|...)``: the copy of the host's whole
   mount table (cohsim.kernel.classify: ``ns_copy``);
4. in the new namespace: ``mount("", "/", MS_REC|MS_SLAVE)`` over the whole copy, a mountinfo
   read, the rootfs bind onto itself, six new filesystems (proc, /dev tmpfs, devpts, shm,
   mqueue, sysfs), six device binds (the user-namespace run), a second mountinfo read, the
   cgroup mount, ``pivot_root(".", ".")``, ``MS_REC|MS_SLAVE`` on the old root, its detach
   (``umount2(".", MNT_DETACH)``: ~N mounts), the read-only root remount, four read-only
   /proc paths (bind + remount) and one that does not exist, and the masked paths: two
   /dev/null binds, two read-only tmpfs, two binds that fail with ENOTDIR (a directory: the
   kernel has cloned the mount by then and unmounts it, with a grace period) and six
   paths that do not exist (ENOENT, refused at the path walk).

One difference from the recording, said where it is made: the recording host mounts cgroup v1
(a tmpfs on /sys/fs/cgroup and a bind + read-only remount per hierarchy, 9 of them); the nodes
cohsim predicts for run cgroup v2, where runc 1.1 mounts one ``cgroup2`` filesystem instead
(assumption: a cgroup-v2 node; on a v1 node add 18 mount_lock sections per container).

Two variants ask what the namespace copy costs (line numbers: Linux 6.18). What each copy
costs is copy_mnt_ns()'s copy_tree() of the whole table under namespace_sem
(fs/namespace.c:4111, :4140), a slave namespace that receives every host mount event while it
lives, and the old root's detach: do_umount()'s umount_tree() over ~N mounts in one mount_lock
hold (fs/namespace.c:1950), namespace_unlock()'s expedited grace period (:1720) and one mntput()
per mount.

``shared-ns``: the containers join one namespace made beforehand (the nsenter approach; an OCI
mount namespace given by ``path``, which runc's nsexec joins with setns() instead of
unsharing). That namespace was made a slave of the host's once, when it was made, and holds
the containers' rootfs mounts by propagation. Per container:

- **gone**: ``unshare(CLONE_NEWNS)`` (no copy: setns() reaches mntns_install(), which takes a
  reference and looks up the namespace's root, fs/namespace.c:6250-6290: no copy_tree(), no
  namespace_sem); the ``MS_REC|MS_SLAVE`` of / (done once for the namespace); pivot_root, the
  old root's rslave and its detach (pivot_root() in a shared namespace would move every task
  whose root is the old root, chroot_fs_refs(), fs/namespace.c:4634, the other containers
  included: the runtime chroot()s into the rootfs instead, as runc does without a new
  namespace, and chroot() is no mount call);
- **added**: ``setns(fd, CLONE_NEWNS)`` where the unshare was (cohsim.kernel.classify: other);
- **kept**: runc run's two host mountinfo reads and the binary's protection (both in the
  host namespace, before the join), ``unshare(CLONE_NEWUSER)`` and the other namespaces, the
  mountinfo reads (rootfsParentMountPrivate's, the cgroup's: of the shared table), the rootfs
  bind onto itself, the filesystems, device binds and cgroup mount under the rootfs, the
  read-only root, the read-only /proc paths and the masked paths (runc accepts them: the
  container has a mount namespace, a joined one).

``host-ns`` (no copy): runc 1.1 with no mount namespace in the OCI config, the container in
the host's. runc then runs the same rootfs preparation (prepareRootfs: prepareRoot's
``MS_REC|MS_SLAVE`` of / — now the host's / —, its mountinfo read, the rootfs bind, the
filesystems, devices and cgroup) and jails the process with chroot() instead of pivot_root
(runc 1.1 prepareRootfs(): ``else { err = chroot() }`` when the config has no NEWNS); finalizeRootfs
(the read-only root) runs only with a mount namespace, and runc's config validator refuses
masked and read-only paths without one ("unable to restrict sys entries without a private MNT
namespace"), so the config must drop them. Per container:

- **gone**: the copy (``unshare`` without CLONE_NEWNS), pivot_root, the old root's rslave and
  detach, the read-only root, the read-only /proc paths and the masked paths;
- **kept**: the rest, every mount in the **host's** table (they stay there while the container
  runs).

Both variants assume what real runc does not do with a user namespace: runc init mounts after
nsexec unshared the user namespace, and a namespace owned by the host's user namespace (the
host's, or one made by root) refuses mounts from a task without CAP_SYS_ADMIN over its owner
(may_mount(), fs/namespace.c:2005): runc 1.1 would fail there with EPERM. The variants assume a
runtime that makes these mounts with the host's privileges (before it enters the user
namespace: after a chroot() it could not, create_user_ns() refuses a chrooted caller,
kernel/user_namespace.c:106). The trace keeps runc's order, since the classifier prices
``unshare(CLONE_NEWUSER)`` the same wherever it sits (other).

What the model does not see (cohsim.kernel is not changed here): the classifier knows a
namespace of the thread's own only from ``unshare(CLONE_NEWNS)``, so ``shared-ns``'s mounts
count in the host's table (each +1, propagated into the node services' namespaces, seen by
systemd's reads) where they are in the shared namespace's, and its mountinfo reads are priced
as the host's, not a slave's; the shared namespace itself is one more slave of the host (as
`service_namespaces` counts the node services').

Only the mount-relevant calls are emitted, with runc's arguments as strace prints them, so the
parser and the classifier read them as they read a real trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

#: the runtimes, the default first (cohsim.predict.question.Burst.runtime)
RUNTIMES: tuple[str, ...] = ("runc", "shared-ns", "host-ns", "none")
#: what each runtime is, for the command lines' help
RUNTIME_HELP = (
    "the runtime's own mount calls after containerd's: runc (its own copy of the host's "
    "mount namespace), shared-ns (all containers join one namespace: no copy, no old root to "
    "detach), host-ns (runc in the host's namespace: no copy, no pivot, no masked paths), "
    "none (containerd's calls only)"
)

MOUNTINFO_FD = 9  # the fd runc's mountinfo reads use in the synthesised trace
ROOTFS_FD = 6  # runc mounts through /proc/self/fd/6 (its rootfs directory)
NS_FD = 10  # the shared namespace's /proc/PID/ns/mnt, opened by the runtime (shared-ns)

_Call = tuple[str, str, int, str | None]  # name, args, ret, errno

_NEW_FS = (  # source, target under the rootfs, fstype, flags
    ("proc", "proc", "proc", "MS_NOSUID|MS_NODEV|MS_NOEXEC"),
    ("tmpfs", "dev", "tmpfs", "MS_NOSUID|MS_STRICTATIME"),
    ("devpts", "dev/pts", "devpts", "MS_NOSUID|MS_NOEXEC"),
    ("shm", "dev/shm", "tmpfs", "MS_NOSUID|MS_NODEV|MS_NOEXEC"),
    ("mqueue", "dev/mqueue", "mqueue", "MS_NOSUID|MS_NODEV|MS_NOEXEC"),
    ("sysfs", "sys", "sysfs", "MS_RDONLY|MS_NOSUID|MS_NODEV|MS_NOEXEC"),
)
_DEVICES = ("null", "random", "full", "tty", "zero", "urandom")
_RO_PATHS = ("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys")
#: runc's default masked paths and what became of each bind of /dev/null in the recording: a
#: file that exists is masked; a directory fails with ENOTDIR after the kernel cloned the mount
#: (and is masked with a tmpfs instead); a path the host lacks fails the walk (ENOENT)
_MASKED = (
    ("/proc/acpi", "ENOTDIR"), ("/proc/asound", "ENOENT"), ("/proc/kcore", "ENOENT"),
    ("/proc/keys", "ok"), ("/proc/latency_stats", "ENOENT"), ("/proc/timer_list", "ok"),
    ("/proc/timer_stats", "ENOENT"), ("/proc/sched_debug", "ENOENT"), ("/sys/firmware", "ENOTDIR"),
    ("/proc/scsi", "ENOENT"),
)  # fmt: skip
_OTHER_NS = "CLONE_NEWUTS|CLONE_NEWIPC|CLONE_NEWPID|CLONE_NEWNET"

#: mount-table changes (`cohsim.workload.trace.mount_ops`) of each part of a sequence: the
#: binary's protection (bind, remount, detach); the rslave of /; the rootfs's own mounts (its
#: bind, the new filesystems, the device binds, the cgroup); the pivot's (the old root's
#: rslave and detach); the finishing ones (the read-only root, a bind and a remount per
#: read-only path, the masks that succeed: a /dev/null bind, or the tmpfs after ENOTDIR)
_PROTECT, _RSLAVE, _PIVOT = 3, 1, 2
_ROOTFS = 1 + len(_NEW_FS) + len(_DEVICES) + 1
_FINISH = 1 + 2 * len(_RO_PATHS) + sum(fate in ("ok", "ENOTDIR") for _, fate in _MASKED)
_MOUNT_OPS = {
    "runc": _PROTECT + _RSLAVE + _ROOTFS + _PIVOT + _FINISH,
    "shared-ns": _PROTECT + _ROOTFS + _FINISH,
    "host-ns": _PROTECT + _RSLAVE + _ROOTFS,
    "none": 0,
}


def runtime_mount_ops(runtime: str) -> int:
    """Mount-table changes one container's runtime makes (`cohsim.workload.trace.mount_ops`):
    every successful mount (binds, new filesystems, remounts and the rslave changes) and
    unmount of its sequence (runc: the host bind and its detach, then in its own namespace its
    mounts and the old root's detach)."""
    return _MOUNT_OPS[runtime]


def runtime_calls(runtime: str, cid: str, rootfs: str) -> Iterator[_Call]:
    """`runtime`'s mount-relevant calls for container `cid` whose rootfs is at `rootfs`
    (``none``: nothing)."""
    calls: dict[str, Callable[[str, str], Iterator[_Call]]] = {
        "runc": runc, "shared-ns": shared_ns, "host-ns": host_ns,
    }  # fmt: skip
    if runtime != "none":
        yield from calls[runtime](cid, rootfs)


def runc(cid: str, rootfs: str) -> Iterator[_Call]:
    """runc 1.1's mount-relevant calls for container `cid` whose rootfs is mounted at `rootfs`."""
    yield from _host_part(cid)
    yield "unshare", "CLONE_NEWUSER", 0, None
    yield "unshare", f"CLONE_NEWNS|{_OTHER_NS}", 0, None
    yield "mount", '"", "/", NULL, MS_REC|MS_SLAVE, NULL', 0, None
    yield from _rootfs_mounts(rootfs)
    yield "pivot_root", '".", "."', 0, None
    yield "mount", '"", ".", NULL, MS_REC|MS_SLAVE, NULL', 0, None
    yield "umount2", '".", MNT_DETACH', 0, None
    yield from _finish()


def shared_ns(cid: str, rootfs: str) -> Iterator[_Call]:
    """runc's calls with the container joining one shared namespace (module docstring): no
    copy, no rslave of /, no pivot and no old root; chroot() (no mount call) instead."""
    yield from _host_part(cid)
    yield "setns", f"{NS_FD}, CLONE_NEWNS", 0, None
    yield "unshare", "CLONE_NEWUSER", 0, None
    yield "unshare", _OTHER_NS, 0, None
    yield from _rootfs_mounts(rootfs)
    yield from _finish()


def host_ns(cid: str, rootfs: str) -> Iterator[_Call]:
    """runc's calls with the container in the host's namespace (module docstring): no copy,
    no pivot, no read-only root, no read-only or masked paths."""
    yield from _host_part(cid)
    yield "unshare", "CLONE_NEWUSER", 0, None
    yield "unshare", _OTHER_NS, 0, None
    yield "mount", '"", "/", NULL, MS_REC|MS_SLAVE, NULL', 0, None
    yield from _rootfs_mounts(rootfs)


def _host_part(cid: str) -> Iterator[_Call]:
    """runc run's two mountinfo reads, then runc init's protection of its own binary: both
    in the host's namespace."""
    for _ in range(2):  # runc run: the host's mountinfo, for the cgroup mount points
        yield from _mountinfo()
    exe = f"/run/runc/{cid[:12]}/runc.{cid[12:18]}"
    yield "mount", f'"/proc/self/exe", "{exe}", NULL, MS_BIND, NULL', 0, None
    yield "mount", f'"", "{exe}", NULL, MS_RDONLY|MS_REMOUNT|MS_BIND, NULL', 0, None
    yield "umount2", f'"{exe}", MNT_DETACH', 0, None


def _rootfs_mounts(rootfs: str) -> Iterator[_Call]:
    """The rootfs prepared: a mountinfo read (the rootfs's parent mount), the rootfs bound
    onto itself, the new filesystems and device binds under it, a mountinfo read, the cgroup."""
    yield from _mountinfo()
    yield "mount", f'"{rootfs}", "{rootfs}", NULL, MS_BIND|MS_REC, NULL', 0, None
    fd = f"/proc/self/fd/{ROOTFS_FD}"
    for source, target, fstype, flags in _NEW_FS:
        yield "mount", f'"{source}", "{fd}/{target}", "{fstype}", {flags}, NULL', 0, None
    for dev in _DEVICES:
        yield "mount", f'"/dev/{dev}", "{fd}/dev/{dev}", NULL, MS_BIND, NULL', 0, None
    yield from _mountinfo()
    cg = f'"cgroup2", "{fd}/sys/fs/cgroup", "cgroup2"'
    yield "mount", f"{cg}, MS_NOSUID|MS_NODEV|MS_NOEXEC|MS_RELATIME, NULL", 0, None


def _finish() -> Iterator[_Call]:
    """In the container's root: the read-only root, the read-only /proc paths (and one that
    does not exist), the masked paths in the recorded order."""
    yield "mount", '"", "/", NULL, MS_RDONLY|MS_REMOUNT|MS_BIND, NULL', 0, None
    for path in _RO_PATHS:
        yield "mount", _bind(path, "MS_BIND|MS_REC"), 0, None
        yield "mount", _bind(path, "MS_RDONLY|MS_REMOUNT|MS_BIND"), 0, None
    yield "mount", _bind("/proc/sysrq-trigger", "MS_BIND|MS_REC"), -1, "ENOENT"
    for path, fate in _MASKED:
        if fate == "ok":
            yield "mount", _bind(path, "MS_BIND", "/dev/null"), 0, None
        else:
            yield "mount", _bind(path, "MS_BIND", "/dev/null"), -1, fate
        if fate == "ENOTDIR":  # a directory: masked with a read-only tmpfs instead
            yield "mount", f'"tmpfs", "{path}", "tmpfs", MS_RDONLY, NULL', 0, None


def _bind(path: str, flags: str, source: str | None = None) -> str:
    return f'"{source or path}", "{path}", NULL, {flags}, NULL'


def _mountinfo() -> Iterator[_Call]:
    """One whole read of /proc/self/mountinfo as runc does it: 4096-byte reads until EOF."""
    yield "openat", 'AT_FDCWD, "/proc/self/mountinfo", O_RDONLY|O_CLOEXEC', MOUNTINFO_FD, None
    yield "read", f'{MOUNTINFO_FD}, "22 1 0:21 / / rw,relatime - ext4"..., 4096', 4096, None
    yield "read", f'{MOUNTINFO_FD}, "", 4096', 0, None
