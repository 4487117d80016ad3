"""One point's answer as a flat row: what a sweep's CSV and JSON list, one row per point.

A `Row` is the point (instance, variant, counts, strategy) with the machine's vCPUs, the
engine and levels that answered, the launch latency's p50/p95/p99/max and the mount phase's
p50/p99 each with the low and high end of its interval, the containers past the deadline and
the chance of missing it (the share of the containers past it), with intervals, the
mount-table peak and the root's peer group's, one whole mountinfo read at the peak (in the
host's namespace and in a container's), the mechanism that held namespace_sem longest, and
provenance (cohsim version, seed, replicates, the point's digest).

Every field is a string, an integer, a bool or a float rounded once, here, to a fixed number
of decimals (`DECIMALS`), so a row read back from the sweep cache (JSON keeps floats bit for
bit) is the row the prediction gave, and the CSV and JSON written from rows are
the same bytes however the points were computed (cohsim.sweep.outputs).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from cohsim import __version__
from cohsim.predict.results import Prediction
from cohsim.sweep.grid import SweepPoint

#: seconds to the microsecond, failures to a millionth of a container, the chance of missing to
#: a millionth
DECIMALS = 6


def _r(x: float) -> float:
    return round(float(x), DECIMALS) + 0.0  # + 0.0: no "-0.0"


@dataclass(frozen=True)
class Row:
    """One point of a sweep, flat (a CSV row). Times in seconds."""

    instance: str
    variant: str  #: "base", "smt-off", "1s" (cohsim.sweep.grid.SweepPoint.variant)
    smt: bool
    sockets: int  #: sockets used (the machine's all, or the variant's)
    vcpus: int
    strategy: str
    containers: int
    layers: int
    engine: str  #: level 3's engine asked ("des" or "analytic")
    launch_p50_s: float
    launch_p50_lo_s: float
    launch_p50_hi_s: float
    launch_p95_s: float
    launch_p95_lo_s: float
    launch_p95_hi_s: float
    launch_p99_s: float
    launch_p99_lo_s: float
    launch_p99_hi_s: float
    launch_max_s: float
    launch_max_lo_s: float
    launch_max_hi_s: float
    mount_p50_s: float
    mount_p50_lo_s: float
    mount_p50_hi_s: float
    mount_p99_s: float
    mount_p99_lo_s: float
    mount_p99_hi_s: float
    failures: float  #: containers past the deadline (median over the replicates)
    failures_lo: float
    failures_hi: float
    #: the chance of missing the deadline: the share of the containers past it (median over
    #: the replicates), with its interval from the same draws as the launch's
    miss_chance: float
    miss_chance_lo: float
    miss_chance_hi: float
    deadline_s: float
    peak_mount_table: int
    peak_peer_group: int  #: mounts in the root's peer group at its largest (/ and its binds)
    mountinfo_read_host_s: float  #: one whole mountinfo read at the peak, host namespace
    mountinfo_read_container_s: float  #: the same in a container's (slave) namespace
    dominant: str  #: what held namespace_sem longest, e.g. "namespace_sem: namespace"
    dominant_hold_s: float  #: how long it held it (nominal replicate)
    level: str  #: the levels that answered, "; "-separated
    calibration: str
    cohsim_version: str
    seed: int
    replicates: int
    digest: str  #: the point's input digest (cohsim.sweep.pointcache.point_digest)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Row:
        """A row from `to_dict`'s document (a KeyError or TypeError where it is not one)."""
        return cls(**{f.name: doc[f.name] for f in fields(cls)})


COLUMNS = tuple(f.name for f in fields(Row))


def row_of(
    point: SweepPoint, p: Prediction, *, vcpus: int, sockets: int, engine: str, digest: str
) -> Row:
    """The row of `point` from its prediction `p`."""
    lat = {}
    for name, stats, keys in (("launch", p.launch_s, ("p50", "p95", "p99", "max")),
                              ("mount", p.mount_s, ("p50", "p99"))):  # fmt: skip
        for k in keys:
            iv = stats[k]
            lat[f"{name}_{k}_s"] = _r(iv.value)
            lat[f"{name}_{k}_lo_s"] = _r(iv.low)
            lat[f"{name}_{k}_hi_s"] = _r(iv.high)
    b = p.breakdown
    held = b.ns_write_s[b.dominant] if b is not None and b.dominant else 0.0
    return Row(
        instance=point.instance,
        variant=point.variant,
        smt=point.smt,
        sockets=sockets,
        vcpus=vcpus,
        strategy=point.strategy,
        containers=point.containers,
        layers=point.layers,
        engine=engine,
        **lat,
        failures=_r(p.failures.value),
        failures_lo=_r(p.failures.low),
        failures_hi=_r(p.failures.high),
        miss_chance=_r(p.miss_chance.value),
        miss_chance_lo=_r(p.miss_chance.low),
        miss_chance_hi=_r(p.miss_chance.high),
        deadline_s=_r(p.deadline_s),
        peak_mount_table=int(p.peak_mount_table),
        peak_peer_group=int(p.peak_peer_group),
        mountinfo_read_host_s=_r(p.mountinfo_read_s.get("host", 0.0)),
        mountinfo_read_container_s=_r(p.mountinfo_read_s.get("container", 0.0)),
        dominant=b.holder if b is not None else "",
        dominant_hold_s=_r(held),
        level="; ".join(p.level),
        calibration=p.calibration,
        cohsim_version=__version__,
        seed=p.seed,
        replicates=p.replicates,
        digest=digest,
    )
