"""What a plan needs to know about one point (a candidate at a container count): `Outcome`.

A plan asks many points (every candidate at the question's count, then at the counts its
search probes) of an evaluator: a function from a list of `Probe`s to the list of their
`Outcome`s, in the same order (`Evaluate`). The default evaluator hands the points to the
sweep engine (cohsim.sweep.run_points: cached, parallel, on Dask when asked;
cohsim.plan.evaluate); tests pass their own. An outcome holds only what the plan's table
shows: the launch p50 and p99 with their intervals, the failures past the deadline and the
chance of missing it (the share of the containers past it), with intervals, the
mount-table peak, one whole mountinfo read at the peak (in the host's namespace and in a
container's), the mechanism that held namespace_sem longest, the engine that answered and
the digest of the point's full result.

`from_prediction` reads one from a `Prediction` (cohsim.predict.results), `from_row` from a
sweep row's flat dictionary.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cohsim import provenance
from cohsim.plan.candidates import Candidate
from cohsim.predict.intervals import Interval
from cohsim.predict.results import Prediction

#: which end of the launch p99's interval a deadline test reads: the value itself, its low
#: end (the optimistic reading) or its high end (the pessimistic one)
ENDS = ("value", "low", "high")


@dataclass(frozen=True, order=True)
class Probe:
    """One point a plan asks about: a candidate with `containers` of `layers` layers."""

    candidate: Candidate
    containers: int
    layers: int


@dataclass(frozen=True)
class Outcome:
    """What a plan reads from one evaluated point."""

    containers: int
    launch_p50: Interval  #: s
    launch_p99: Interval  #: s
    failures: Interval  #: containers past the deadline
    #: the chance of missing the deadline: the share of the containers past it, its interval
    #: from the same draws as the launch's (cohsim.predict.intervals)
    miss_chance: Interval
    peak_mount_table: int  #: mounts in the host's table at its largest
    read_host_s: float  #: one whole mountinfo read at the peak, in the host's namespace
    read_container_s: float  #: the same in a container's namespace before its old root goes
    #: the mechanism that held namespace_sem longest ("namespace_sem: namespace"; "": none)
    dominant: str
    engine: str  #: the level-3 engine that answered ("des", "analytic")
    digest: str = ""  #: sha256 of the point's full result
    peak_peer_group: int = 1  #: mounts in the root's peer group at its largest (/ and its binds)

    def p99_at(self, end: str = "value") -> float:
        """The launch p99, or one end of its interval (`ENDS`), s."""
        p99 = self.launch_p99
        return {"value": p99.value, "low": p99.low, "high": p99.high}[end]

    def meets(self, deadline_s: float, end: str = "value") -> bool:
        """Whether the launch p99 (at `end` of its interval) is within the deadline."""
        return self.p99_at(end) <= deadline_s

    def to_dict(self) -> dict[str, Any]:
        return {
            "containers": self.containers,
            "launch_p50_s": self.launch_p50.to_dict(),
            "launch_p99_s": self.launch_p99.to_dict(),
            "failures": self.failures.to_dict(),
            "miss_chance": self.miss_chance.to_dict(),
            "peak_mount_table": self.peak_mount_table,
            "peak_peer_group": self.peak_peer_group,
            "mountinfo_read_at_peak_s": {
                "host": round(self.read_host_s, 6),
                "container": round(self.read_container_s, 6),
            },
            "dominant": self.dominant,
            "engine": self.engine,
            "digest": self.digest,
        }


#: an evaluator: the outcomes of the probes, in their order
Evaluate = Callable[[Sequence[Probe]], list[Outcome]]


def from_prediction(p: Prediction) -> Outcome:
    """The outcome of one prediction (its digest: its JSON document's)."""
    doc = p.to_dict()
    reads = p.mountinfo_read_s
    return Outcome(
        containers=p.containers,
        launch_p50=p.launch_s["p50"],
        launch_p99=p.launch_s["p99"],
        failures=p.failures,
        miss_chance=p.miss_chance,
        peak_mount_table=p.peak_mount_table,
        peak_peer_group=p.peak_peer_group,
        read_host_s=float(reads.get("host", 0.0)),
        read_container_s=float(reads.get("container", 0.0)),
        dominant=p.breakdown.holder if p.breakdown else "",
        engine=p.engine["name"],
        digest=provenance.text_digest(provenance.dumps(doc)),
    )


def _interval(row: Mapping[str, Any], key: str, unit: str, suffix: str = "") -> Interval:
    """A row's `key{suffix}` with its `key_lo{suffix}` and `key_hi{suffix}`."""
    return Interval(
        float(row[f"{key}{suffix}"]),
        float(row[f"{key}_lo{suffix}"]),
        float(row[f"{key}_hi{suffix}"]),
        unit,
    )


def from_row(row: Mapping[str, Any]) -> Outcome:
    """The outcome of a sweep row (cohsim.sweep's flat `Row.to_dict()`)."""
    return Outcome(
        containers=int(row["containers"]),
        launch_p50=_interval(row, "launch_p50", "s", "_s"),
        launch_p99=_interval(row, "launch_p99", "s", "_s"),
        failures=_interval(row, "failures", "containers"),
        miss_chance=_interval(row, "miss_chance", "fraction of containers"),
        peak_mount_table=int(row["peak_mount_table"]),
        peak_peer_group=int(row["peak_peer_group"]),
        read_host_s=float(row["mountinfo_read_host_s"]),
        read_container_s=float(row["mountinfo_read_container_s"]),
        dominant=str(row["dominant"]),
        engine=str(row["engine"]),
        digest=str(row["digest"]),
    )
