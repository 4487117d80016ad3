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

Only the mount-relevant calls are emitted, with runc's arguments as strace prints them, so the
parser and the classifier read them as they read a real trace.
"""

from __future__ import annotations

from collections.abc import Iterator

RUNTIMES: tuple[str, ...] = ("runc", "none")

MOUNTINFO_FD = 9  # the fd runc's mountinfo reads use in the synthesised trace
ROOTFS_FD = 6  # runc mounts through /proc/self/fd/6 (its rootfs directory)

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


def runtime_mount_ops(runtime: str) -> int:
    """Mount-table changes one container's runtime makes (`cohsim.workload.trace.mount_ops`):
    the host bind and its detach, then in its own namespace every successful mount (binds,
    new filesystems, remounts and the rslave changes) and the old root's detach."""
    if runtime == "none":
        return 0
    before_pivot = 1 + 1 + len(_NEW_FS) + len(_DEVICES) + 1  # rslave, rootfs, fs, devices, cgroup
    masks = sum(fate in ("ok", "ENOTDIR") for _, fate in _MASKED)  # a bind, or the tmpfs
    after_pivot = 3 + 2 * len(_RO_PATHS) + masks  # rslave, detach, ro root, ro paths, masks
    return 3 + before_pivot + after_pivot


def runc(cid: str, rootfs: str) -> Iterator[_Call]:
    """runc 1.1's mount-relevant calls for container `cid` whose rootfs is mounted at `rootfs`."""
    for _ in range(2):  # runc run: the host's mountinfo, for the cgroup mount points
        yield from _mountinfo()
    exe = f"/run/runc/{cid[:12]}/runc.{cid[12:18]}"
    yield "mount", f'"/proc/self/exe", "{exe}", NULL, MS_BIND, NULL', 0, None
    yield "mount", f'"", "{exe}", NULL, MS_RDONLY|MS_REMOUNT|MS_BIND, NULL', 0, None
    yield "umount2", f'"{exe}", MNT_DETACH', 0, None
    yield "unshare", "CLONE_NEWUSER", 0, None
    ns = "CLONE_NEWNS|CLONE_NEWUTS|CLONE_NEWIPC|CLONE_NEWPID|CLONE_NEWNET"
    yield "unshare", ns, 0, None
    yield "mount", '"", "/", NULL, MS_REC|MS_SLAVE, NULL', 0, None
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
    yield "pivot_root", '".", "."', 0, None
    yield "mount", '"", ".", NULL, MS_REC|MS_SLAVE, NULL', 0, None
    yield "umount2", '".", MNT_DETACH', 0, None
    yield "mount", '"", "/", NULL, MS_RDONLY|MS_REMOUNT|MS_BIND, NULL', 0, None
    for path in _RO_PATHS:
        yield "mount", _bind(path, "MS_BIND|MS_REC"), 0, None
        yield "mount", _bind(path, "MS_RDONLY|MS_REMOUNT|MS_BIND"), 0, None
    yield "mount", _bind("/proc/sysrq-trigger", "MS_BIND|MS_REC"), -1, "ENOENT"
    for path, fate in _MASKED:  # in the recorded order
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
