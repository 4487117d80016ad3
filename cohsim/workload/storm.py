"""A storm of bare ``unshare -m`` processes, synthesised: no containerd, no overlay.

Each process (util-linux unshare(1) as root, ``unshare -m true``) does, as strace prints it:

1. ``unshare(CLONE_NEWNS)``: a copy of the host's whole mount table (Linux 6.18
   copy_mnt_ns(), fs/namespace.c:4111; copy_tree() under namespace_sem, :4140), classified
   ``ns_copy`` (cohsim.kernel.classify); as root in the host's user namespace the copy is
   not a slave (CL_SLAVE only for a new user namespace, :4137-4138): its mounts join the
   host's peer groups;
2. the propagation unshare(1) sets on the new namespace's / (``--propagation``, util-linux's
   default ``private`` since 2.27): ``mount("none", "/", NULL, MS_REC|MS_PRIVATE, NULL)``, or
   ``MS_REC|MS_SLAVE`` / ``MS_REC|MS_SHARED``, or nothing (``unchanged``); each a walk over the
   whole copy (do_change_type(): ``mount_rslave``);
3. optionally one whole read of its /proc/self/mountinfo (``unshare -m cat
   /proc/self/mountinfo``: ``mountinfo``);
4. ``execve`` of the command and its exit (not mount calls: the exit is the trace's
   ``+++ exited with 0 +++`` line).

What the trace cannot show and the model does not have: the namespace's teardown at the
exit. The last reference to a mount namespace goes in exit_task_namespaces()
(kernel/exit.c:977) -> free_nsproxy() -> put_mnt_ns() (kernel/nsproxy.c:188), which takes
namespace_sem for writing and mount_lock and runs umount_tree() over every mount of the copy
(fs/namespace.c:6063-6071); namespace_unlock() then waits an expedited grace period
(fs/namespace.c:1720) and puts each mount (mntput(), mount_lock again for each). That is the
cost of runc's old-root detach (``umount_oldroot``: umount_tree() over ~N mounts, the grace
period, N puts), paid at every process's exit, with no syscall to classify: cohsim.kernel has
no op for a namespace's teardown, so a prediction from this trace leaves it out (and keeps each
copy as a live slave namespace to the end, where the real copy goes at the exit).

Times and arrivals as cohsim.workload.synth's (`arrivals`, `timed`): same arguments, same
trace, same bytes.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from cohsim.errors import CohsimError
from cohsim.workload.synth import FIRST_TID, arrivals, timed
from cohsim.workload.trace import RawCall, Trace, assemble

#: unshare(1)'s --propagation values and the mount(2) flags each sets on the new namespace's /
PROPAGATIONS: dict[str, str | None] = {
    "private": "MS_REC|MS_PRIVATE",
    "slave": "MS_REC|MS_SLAVE",
    "shared": "MS_REC|MS_SHARED",
    "unchanged": None,
}
#: the most processes a storm may have (as containers: cohsim.predict.validity.LIMITS); each
#: holds a mount namespace, and their number is capped by user.max_mnt_namespaces, by
#: default max_threads / 2 (kernel/fork.c:846)
MAX_PROCESSES = 100_000
MOUNTINFO_FD = 3  # cat's first free fd

_Call = tuple[str, str, int, str | None]  # name, args, ret, errno


def expected_unshare_mount_ops(processes: int, propagation: str = "private") -> int:
    """Closed form of `cohsim.workload.trace.mount_ops` for a storm: one propagation change
    a process (none when unchanged)."""
    _check_propagation(propagation)
    return processes * (PROPAGATIONS[propagation] is not None)


def unshare_storm(
    processes: int,
    *,
    seed: int,
    arrival: str = "burst",
    propagation: str = "private",
    mountinfo: bool = False,
    think_ns: int | None = None,
    duration_ns: int | None = None,
) -> Trace:
    """``processes`` bare ``unshare -m`` processes, one thread each (tid FIRST_TID + k).

    ``propagation``: what unshare(1) sets on the copy's / (`PROPAGATIONS`); ``mountinfo``:
    each reads its own /proc/self/mountinfo once before it exits. ``arrival``, ``think_ns``,
    ``duration_ns``: as cohsim.workload.synth.synthesize's.
    """
    _check_propagation(propagation)
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise CohsimError(f"processes must be a positive integer, not {processes!r}")
    if processes > MAX_PROCESSES:
        raise CohsimError(
            f"{processes:,} unshare processes: beyond what a real node can run (each holds a "
            f"mount namespace; at most {MAX_PROCESSES:,})",
            "--processes",
        )
    if (think_ns is not None and think_ns < 0) or (duration_ns is not None and duration_ns < 0):
        raise CohsimError(
            "think and duration means must not be negative", "--think-ns/--duration-ns"
        )
    arrival_rng, time_rng = (
        np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2)
    )
    starts = arrivals(arrival, processes, arrival_rng)
    seq = list(_one(propagation, mountinfo))
    calls: list[RawCall] = []
    for k in range(processes):
        calls.extend(timed(FIRST_TID + k, starts[k], seq, time_rng, think_ns, duration_ns))
    meta = (("pattern", "unshare"), ("processes", str(processes)), ("seed", str(seed)),
            ("arrival", arrival), ("propagation", propagation),
            ("mountinfo", str(mountinfo).lower()))  # fmt: skip
    source = f"synth:unshare:processes={processes}:propagation={propagation}:seed={seed}"
    return assemble(calls, source=source, format="synth", meta=meta)


def _check_propagation(propagation: str) -> None:
    if propagation not in PROPAGATIONS:
        raise CohsimError(
            f"unknown propagation {propagation!r} ({', '.join(PROPAGATIONS)})", "--propagation"
        )


def _one(propagation: str, mountinfo: bool) -> Iterator[_Call]:
    """One process's mount-relevant calls."""
    yield "unshare", "CLONE_NEWNS", 0, None
    flags = PROPAGATIONS[propagation]
    if flags is not None:
        yield "mount", f'"none", "/", NULL, {flags}, NULL', 0, None
    if mountinfo:
        yield "openat", 'AT_FDCWD, "/proc/self/mountinfo", O_RDONLY', MOUNTINFO_FD, None
        yield "read", f'{MOUNTINFO_FD}, "22 1 0:21 / / rw,relatime - ext4"..., 131072', 4096, None
        yield "read", f'{MOUNTINFO_FD}, "", 131072', 0, None
