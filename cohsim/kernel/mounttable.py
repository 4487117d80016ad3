"""The mount table in the launch simulation (cohsim.kernel.launch): how many mounts the node
has now, the most it had, and whether it changed since systemd last read it.

Its size is what a /proc/self/mountinfo read costs in proportion to (cohsim.kernel.nssections);
its changes are what wakes systemd to read it again (cohsim.kernel.background).
"""

from __future__ import annotations

import simpy

from cohsim.kernel.records import LaunchRecord


class MountTable:
    """The node's mount count over one simulation; `dirty` fires at the first change after it
    was made (systemd makes a fresh one each time it re-reads)."""

    def __init__(self, env: simpy.Environment, mounts: int, record: LaunchRecord | None) -> None:
        self.env = env
        self.mounts = mounts
        self.peak = mounts
        self.record = record
        self.dirty = env.event()  #: a change since systemd's last re-read

    def change(self, delta: int) -> None:
        """A call added (+1) or removed (-1) a mount."""
        self.mounts += delta
        if self.mounts > self.peak:
            self.peak = self.mounts
        if self.record is not None:
            self.record.mount_table.append((int(self.env.now), self.mounts))
        if not self.dirty.triggered:
            self.dirty.succeed()
