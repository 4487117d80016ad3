"""The mount table in the launch simulation (cohsim.kernel.simulation.launch): how many mounts the
node has now, the most it had, and whether it changed since systemd last read it; how large the
root's peer group is; how many namespaces receive the host's mount events.

Its size is what a /proc/self/mountinfo read costs in proportion to, its text's bytes how
many read() calls and so namespace_sem read sections the read takes
(cohsim.kernel.simulation.nssections); its changes are what wakes systemd to read it again
(cohsim.kernel.simulation.background).

The peer group (`ring`): on a systemd host / is a shared mount, and every bind or open_tree
clone of a directory on it joins its peer group (Linux 6.18 fs/namespace.c clone_mnt() without
CL_PRIVATE puts the clone on its source's mnt_share ring). containerd's idmapped layer binds do,
so the ring is 1 + the binds alive. A reader in a slave namespace pays for it: for each of its
lines whose master is on the ring, get_dominating_id() walks the whole ring (fs/pnode.c
get_peer_under_root()), so one full read costs ring x ring steps more than the host's.

The slave namespaces (`windows`): a container runtime's copy of the table, from its
unshare(CLONE_NEWNS) to the detach of its old root, holds a slave of every host mount, so every
host mount event under a shared mount is propagated into it (and into the node services'
namespaces, `service_namespaces` in the kernel model).
"""

from __future__ import annotations

from cohsim.kernel.simulation.clock import Environment
from cohsim.kernel.simulation.records import LaunchRecord


class MountTable:
    """The node's mount count over one simulation; `dirty` fires at the first change after it
    was made (systemd makes a fresh one each time it re-reads)."""

    def __init__(
        self, env: Environment, mounts: int, record: LaunchRecord | None, nbytes: float
    ) -> None:
        self.env = env
        self.mounts = mounts
        self.nbytes = nbytes  #: the bytes of its mountinfo text
        self.peak = mounts
        self.record = record
        self.dirty = env.event()  #: a change since systemd's last re-read
        self.dirty_since = 0  #: when the first change since systemd's last re-read came (ns)
        self.ring = 1  #: mounts in the root's peer group: / and the clones that joined it
        self.ring_peak = 1
        self.binds = 0  #: the group's clones attached under the root mount (its children)
        self.windows = 0  #: runtimes' namespace copies alive (unshare .. old root detached)
        self.windows_peak = 0

    def apply(self, delta: int, ring: int, binds: int, nbytes: float) -> None:
        """A call's changes to the table (`change`; `nbytes` its mountinfo text's), the root's
        group (`ring_change`) and its clones under the root (`binds_change`), those that are
        not 0, in that order."""
        if delta:
            self.nbytes += nbytes
            self.change(delta)
        if ring:
            self.ring_change(ring)
        if binds:
            self.binds_change(binds)

    def ring_change(self, delta: int) -> None:
        """A clone of a mount of the root's group was made (+1) or went (-1)."""
        self.ring += delta
        if self.ring > self.ring_peak:
            self.ring_peak = self.ring

    def binds_change(self, delta: int) -> None:
        """A clone of the root's group was attached under it (+1) or unmounted (-1)."""
        self.binds += delta

    def window_change(self, delta: int) -> None:
        """A runtime copied the table into its own namespace (+1) or detached its old root
        (-1)."""
        self.windows += delta
        if self.windows > self.windows_peak:
            self.windows_peak = self.windows

    def change(self, delta: int) -> None:
        """A call added (+1) or removed (-1) a mount."""
        self.mounts += delta
        if self.mounts > self.peak:
            self.peak = self.mounts
        if self.record is not None:
            self.record.mount_table.append((int(self.env.now), self.mounts))
        if not self.dirty.triggered:
            self.dirty_since = int(self.env.now)
            self.dirty.succeed()
