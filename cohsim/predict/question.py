"""The question a prediction answers and what it runs on: `Burst` and `Target`.

A capacity planner asks "how long do 100 containers of a 50-layer image take to start, all at
once, on an m7a.24xlarge, each within 30 s?". The burst half of that (`Burst`: how many
containers, how many layers, containerd's idmap strategy, the runtime's own mount calls, the
mounts already on the node, the deadline) and the machine half (`Target`: which machine, with
SMT or not and how many sockets, the kernel model, the calibration and any priors pinned)
are each one frozen, typed object, and every default of the question is written here, once:
`predict`, `replay`, `sweep`, `plan` and the command line take these objects, or keywords
naming their fields, and show these defaults.

A value no burst or machine can have is a CohsimError when the object is made, before any
work: a count that is not a positive integer, an unknown strategy or runtime, a deadline that
is not a positive number, a burst beyond a real node (cohsim.predict.validity.LIMITS), a
target naming both an interconnect kind and an instance. What needs a file to judge (an
unknown instance, a pinned prior the kernel model does not have) is checked when the target
is resolved, still before any simulation.

How the replicates run (seed, replicates, engine, ...) is the third object,
`cohsim.predict.options.RunOptions`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, TypedDict

from cohsim.errors import CohsimError
from cohsim.machine.catalog import ARCHETYPES
from cohsim.predict.validity import refuse_absurd
from cohsim.workload.runtime import RUNTIMES
from cohsim.workload.synth import STRATEGIES

#: priors of the kernel model pinned to given values: (name, value) pairs sorted by name, so
#: that a target is hashable and the same pins are the same target whatever their order
Pins = tuple[tuple[str, float], ...]


def _positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise CohsimError(f"{name} must be a positive integer, not {value!r}")


def check_node_mounts(node_mounts: object) -> None:
    """A CohsimError unless `node_mounts` is None (not known) or a non-negative integer."""
    if node_mounts is None:
        return
    if isinstance(node_mounts, bool) or not isinstance(node_mounts, int) or node_mounts < 0:
        raise CohsimError(f"node_mounts must be a non-negative integer, not {node_mounts!r}")


def check_deadline(deadline_s: object) -> None:
    """A CohsimError unless `deadline_s` is a positive, finite number of seconds."""
    if (
        isinstance(deadline_s, bool)
        or not isinstance(deadline_s, int | float)
        or not (deadline_s > 0 and math.isfinite(deadline_s))
    ):
        raise CohsimError(f"deadline must be positive, not {deadline_s!r}")


@dataclass(frozen=True)
class Burst:
    """Containers of one image launched at once on a node: the question. Every default of
    the question is written here."""

    containers: int = 100  #: containers launched at once
    layers: int = 50  #: image layers
    #: containerd's idmap strategy (cohsim.workload.synth.STRATEGIES)
    strategy: str = "per-layer"
    #: the container runtime's own mount calls after containerd's ("runc"; "shared-ns" and
    #: "host-ns", without a namespace copy each; "none": containerd's only;
    #: cohsim.workload.runtime.RUNTIMES)
    runtime: str = "runc"
    #: mounts on the node before the burst (`wc -l /proc/self/mountinfo`), if known: pins
    #: that prior of the kernel model (None: drawn from its range)
    node_mounts: int | None = None
    #: each container must be up within this, s: slower ones count as failures and in the
    #: chance of missing the deadline
    deadline_s: float = 30.0

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise CohsimError(
                f"unknown strategy {self.strategy!r} (expected {', '.join(STRATEGIES)})"
            )
        if self.runtime not in RUNTIMES:
            raise CohsimError(f"unknown runtime {self.runtime!r} (expected {', '.join(RUNTIMES)})")
        _positive_int("containers", self.containers)
        _positive_int("layers", self.layers)
        check_node_mounts(self.node_mounts)
        check_deadline(self.deadline_s)
        refuse_absurd(
            containers=self.containers, layers=self.layers, node_mounts=self.node_mounts
        )  # beyond a real node: refused before any work

    def workload(self) -> dict[str, Any]:
        """What a prediction reports of its synthesised workload."""
        return {"strategy": self.strategy, "arrival": "all at once", "runtime": self.runtime}


def sorted_pins(pins: Mapping[str, float] | Pins) -> Pins:
    """`pins` (a mapping or (name, value) pairs) as a target keeps them: sorted pairs; a name
    that is not a string or a value that is not a number is a CohsimError."""
    if isinstance(pins, Mapping):
        pairs = list(pins.items())
    elif isinstance(pins, tuple | list):
        pairs = list(pins)
    else:
        raise CohsimError(f"pinned priors are a mapping or (name, value) pairs, not {pins!r}")
    out = []
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise CohsimError(f"a pinned prior is a (name, value) pair, not {pair!r}")
        name, value = pair
        if not isinstance(name, str):
            raise CohsimError(f"a pinned prior's name is a string, not {name!r}")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise CohsimError(f"pinned prior {name}: the value is a number, not {value!r}")
        out.append((name, float(value)))
    if len({n for n, _ in out}) != len(out):
        raise CohsimError("a prior is pinned twice: give each name once")
    return tuple(sorted(out))


@dataclass(frozen=True)
class Target:
    """What a prediction runs on: the machine, the kernel model and the calibration (the fit),
    with any of the kernel model's priors pinned. Every default is written here.

    The machine is a catalog instance or machine TOML (`instance`) or the catalog's
    representative of an interconnect kind (`arch`); a prediction needs exactly one, a sweep
    or a plan none (their grid or candidates are the machines)."""

    instance: str | None = None  #: a catalog name (`cohsim machines`) or a machine TOML
    #: or the catalog's representative of an interconnect kind (cohsim.machine.catalog
    #: .ARCHETYPES: "mesh", "chiplet", "cmn")
    arch: str | None = None
    smt: bool = True  #: False: one hardware thread per core
    sockets: int | None = None  #: use only the first N sockets (None: all)
    #: the kernel model: a name under models/kernel/ or a TOML file (None: the default,
    #: cohsim.kernel.costs.DEFAULT_KERNEL)
    kernel: str | None = None
    #: the fit: a fit JSON from `cohsim calibrate`, "none" (the model files as they are), or
    #: None (the committed fit that describes the machine, cohsim.calibrate.default_fit)
    calibration: str | None = None
    #: priors of the kernel model set to given values ("propagation.service_namespaces", 12):
    #: not drawn (cohsim.predict.pins; a mapping given here is kept as sorted pairs)
    pins: Pins = ()

    def __post_init__(self) -> None:
        if self.arch is not None and self.instance is not None:
            raise CohsimError("give exactly one of arch and instance (--arch, --instance)")
        if self.arch is not None and self.arch not in ARCHETYPES:
            raise CohsimError(
                f"unknown architecture {self.arch!r} (expected {', '.join(ARCHETYPES)})"
            )
        for name in ("instance", "kernel", "calibration"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise CohsimError(f"{name} must be a name or a path, not {value!r}")
        if not isinstance(self.smt, bool):
            raise CohsimError(f"smt must be True or False, not {self.smt!r}")
        if self.sockets is not None:
            _positive_int("sockets", self.sockets)
        object.__setattr__(self, "pins", sorted_pins(self.pins))

    @property
    def machine_named(self) -> bool:
        """Whether the target names a machine (an instance or an interconnect kind)."""
        return self.instance is not None or self.arch is not None

    def no_machine(self, who: str) -> None:
        """A CohsimError if the target names a machine where `who` chooses the machines."""
        if self.machine_named or self.sockets is not None or not self.smt:
            raise CohsimError(
                f"a {who} chooses its machines: name them in its instances, not in the target"
            )


class BurstFields(TypedDict, total=False):
    """`Burst`'s fields as keywords (`predict(containers=20)`): each replaces its default."""

    containers: int
    layers: int
    strategy: str
    runtime: str
    node_mounts: int | None
    deadline_s: float


class TargetFields(TypedDict, total=False):
    """`Target`'s fields as keywords (`predict(instance="r5.metal")`); `pins` may be a
    mapping."""

    instance: str | None
    arch: str | None
    smt: bool
    sockets: int | None
    kernel: str | None
    calibration: str | None
    pins: Mapping[str, float] | Pins | None


BURST_FIELDS = frozenset(f.name for f in fields(Burst))
TARGET_FIELDS = frozenset(f.name for f in fields(Target))


def split(keywords: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """`keywords` split into `Burst`'s fields, `Target`'s and the rest (the run options')."""
    burst = {k: v for k, v in keywords.items() if k in BURST_FIELDS}
    target = {k: v for k, v in keywords.items() if k in TARGET_FIELDS}
    if target.get("pins", ()) is None:
        target["pins"] = ()
    rest = {k: v for k, v in keywords.items() if k not in BURST_FIELDS | TARGET_FIELDS}
    return burst, target, rest
