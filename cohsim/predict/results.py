"""What a prediction reports: `Prediction`, and its JSON document (`to_dict`, schema 1).

Launch latency per container (first syscall to the last, plus the kernel's fixed base launch
cost) and the mount phase alone (first mount syscall to the last), each as p50/p95/p99/max
with an interval (`cohsim.predict.intervals`); the chance of missing the deadline (the share
of the burst's containers past it) and their number, with intervals from the same draws; lock
wait and hold per lock; the mount-table peak; the calibration used and the levels that
answered; the launch breakdown by mechanism (`cohsim.predict.breakdown`), what the intervals
are, which priors were drawn and which pinned, and with `explain` the priors ranked by their
effect on the launch p99 (`cohsim.predict.unknowns`); where the nominal replicate's CPU time
went, by kernel site (`profile`, cohsim.kernel.result.Profile); and provenance (version,
seed). Same inputs and seed give the same document, byte for byte. The breakdown, interval,
priors, sensitivity, profile and validity keys were added without a schema change (additive),
and so was `miss_chance` (when the intervals became joint: cohsim.predict.intervals).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cohsim import __version__
from cohsim.kernel.result import Profile
from cohsim.kernel.simulation.records import LaunchRecord
from cohsim.predict.breakdown import Breakdown
from cohsim.predict.intervals import MISFIT_LEVEL, Interval
from cohsim.predict.unknowns import Sensitivity

SCHEMA = 1


@dataclass(frozen=True)
class Prediction:
    """What `cohsim predict` / `cohsim replay` report."""

    machine: str
    machine_note: str  #: e.g. which instance `--arch` chose
    workload: dict[str, Any]
    containers: int
    layers: int | None
    mount_ops: int
    syscalls: int
    launch_s: dict[str, Interval]
    mount_s: dict[str, Interval]  #: the mount phase alone: first mount syscall to the last
    failures: Interval  #: the burst's containers past the deadline
    #: the chance of missing the deadline: the share of the burst's containers whose launch is
    #: past it, with its interval from the same draws as the launch's (cohsim.predict.intervals)
    miss_chance: Interval
    deadline_s: float
    lock_wait_fraction: Interval
    locks: dict[str, Any]
    peak_mount_table: int
    calibration: str
    level: list[str]
    replicates: int
    seed: int
    kernel: str
    handoff_table: dict[str, dict[int, float]]
    per_container_s: tuple[float, ...] = field(repr=False)  #: the nominal replicate's launches
    record: LaunchRecord | None = field(default=None, repr=False, compare=False)
    #: the model's misfit on the fitted host (log sd of the worker time per sequence), which
    #: widened the intervals; 0 without a kernel fit
    misfit_sd: float = 0.0
    #: one whole /proc/self/mountinfo read at the peak, alone, in the host's namespace and in a
    #: runtime's own (slave) namespace (cohsim.kernel.simulation.launch.LaunchSim.peak_read_ns); the
    #: largest over the replicates, s
    mountinfo_read_s: dict[str, float] = field(default_factory=dict)
    #: systemd's re-reads of the mount table in the nominal replicate: how many, the longest
    #: (read and parse), and the longest a change waited for a re-read that saw it (its
    #: backlog; one still unparsed at the end counts until then), s
    systemd: dict[str, float] = field(default_factory=dict)
    #: where the nominal replicate's launch time went, by mechanism (cohsim.predict.breakdown)
    breakdown: Breakdown | None = None
    #: what the latency intervals are (cohsim.predict.intervals.method)
    interval: dict[str, Any] = field(default_factory=dict)
    #: the kernel model's priors: which were drawn in the replicates, which pinned and by whom
    priors: dict[str, Any] = field(default_factory=dict)
    #: with `explain`: each drawn prior's effect on the launch p99, largest first
    sensitivity: tuple[Sensitivity, ...] = ()
    #: the nominal launch p99's change with another seed alone: swings below it are noise
    sensitivity_noise_s: float = 0.0
    #: which engine answered level 3 ("des" or "analytic") and what it reports differently
    engine: dict[str, Any] = field(default_factory=lambda: {"name": "des"})
    #: where the nominal replicate's CPU time went, by kernel site (cohsim.kernel.result)
    profile: Profile | None = None
    #: mounts in the host root's peer group at its largest, over the replicates: / and the
    #: clones that joined it (containerd's binds); each bind walks it, and a read in a slave
    #: namespace walks it per line (cohsim.kernel.simulation.mounttable)
    peak_peer_group: int = 1
    #: whether the inputs lie inside the ranges the model was checked on
    #: (cohsim.predict.validity.Validity.to_dict; empty where the caller did not assess them)
    validity: dict[str, Any] = field(default_factory=dict)
    #: every replicate's launch per container (s), the nominal one first: what `--plot` draws
    #: (not in the JSON document: the statistics above summarise it)
    replicate_launch_s: tuple[tuple[float, ...], ...] = field(default=(), repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "machine": self.machine,
            "machine_note": self.machine_note,
            "workload": self.workload,
            "containers": self.containers,
            "layers": self.layers,
            "mount_ops": self.mount_ops,
            "syscalls": self.syscalls,
            "launch_s": {k: v.to_dict() for k, v in self.launch_s.items()},
            "mount_s": {k: v.to_dict() for k, v in self.mount_s.items()},
            "failures": self.failures.to_dict(),
            "miss_chance": self.miss_chance.to_dict(),
            "deadline_s": self.deadline_s,
            "lock_wait_fraction": self.lock_wait_fraction.to_dict(),
            "locks": self.locks,
            "peak_mount_table": self.peak_mount_table,
            "peak_peer_group": self.peak_peer_group,
            "mountinfo_read_at_peak_s": self.mountinfo_read_s,
            "systemd": self.systemd,
            "calibration": self.calibration,
            "level": self.level,
            "engine": self.engine,
            "replicates": self.replicates,
            "seed": self.seed,
            "kernel": self.kernel,
            "handoff_table_ns": self.handoff_table,
            "model_misfit": {
                "log_sd": round(self.misfit_sd, 6),
                "level": MISFIT_LEVEL,
                "widens": "every container's mount phase (lognormal factor), its launch by "
                "the same amount, in every draw the intervals are taken over",
            },
            "interval": self.interval,
            "breakdown": self.breakdown.to_dict() if self.breakdown else None,
            "priors": self.priors,
            "sensitivity": [r.to_dict() for r in self.sensitivity],
            "sensitivity_noise_s": round(self.sensitivity_noise_s, 6),
            "profile": self.profile.to_dict() if self.profile else None,
            "validity": self.validity or None,
            "provenance": {"cohsim_version": __version__, "seed": self.seed},
        }
