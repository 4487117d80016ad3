"""A sweep's grid: the points it predicts, in the order its outputs list them.

A point is one `cohsim predict` call: an instance type (a catalog name or a machine TOML),
a burst of `containers` containers of a `layers`-layer image, containerd's idmap strategy,
and the hardware variant (SMT on or off, all sockets or the first). A grid is the product
of instances x variants x strategies x layers x containers, in that order (containers vary
fastest, so the rows of one curve of launch time against containers sit together); the
order of every list the caller gives is kept, so the same request gives the same rows in
the same order whoever computes them.

Variants (`variants=True`): besides each machine as it is, SMT off where its cores have
more than one thread, and one socket where it has more than one. Instance selection
(`select_instances`): a list of names, a family (`sapphirerapids`, `genoa`, ...) or every
catalog instance type ("all"); an unknown name is a CohsimError that suggests neighbours,
before anything runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, TypeVar

from cohsim.errors import CohsimError
from cohsim.machine.catalog import Catalog
from cohsim.machine.model import Machine
from cohsim.predict import Prediction, RunOptions, predict
from cohsim.predict.question import Burst, Target
from cohsim.predict.validity import refuse_absurd

T = TypeVar("T")


@dataclass(frozen=True)
class SweepPoint:
    """One prediction of a sweep: which machine, which burst, which strategy."""

    instance: str  #: catalog name (`cohsim machines`) or a machine TOML path
    containers: int  #: containers launched at once
    layers: int  #: image layers
    strategy: str = Burst.strategy  #: containerd's idmap strategy (cohsim.workload.synth)
    smt: bool = Target.smt  #: False: one hardware thread per core
    sockets: int | None = Target.sockets  #: use only the first N sockets (None: all)

    def __post_init__(self) -> None:
        self.burst()  # the burst and the machine checked as the question checks them
        self.target(Target())

    def burst(self, runtime: str = Burst.runtime, deadline_s: float = Burst.deadline_s) -> Burst:
        """This point's burst, with the sweep's runtime and deadline."""
        return Burst(self.containers, self.layers, self.strategy, runtime, deadline_s=deadline_s)

    def target(self, target: Target) -> Target:
        """`target` (the sweep's kernel model, calibration and pins) on this point's machine."""
        return replace(target, instance=self.instance, smt=self.smt, sockets=self.sockets)

    @property
    def variant(self) -> str:
        """ "base", "smt-off", "1s" or "smt-off+1s": the hardware variant, for people."""
        parts = [] if self.smt else ["smt-off"]
        if self.sockets is not None:
            parts.append(f"{self.sockets}s")
        return "+".join(parts) or "base"

    def predict(
        self,
        catalog: Catalog,
        run: RunOptions,
        *,
        target: Target | None = None,
        runtime: str = Burst.runtime,
    ) -> Prediction:
        """This point's prediction with `run`'s options and deadline (cohsim.predict.predict),
        on `target` (the kernel model, calibration and pinned priors; default `Target()`)
        with this point's machine."""
        return predict(
            self.burst(runtime, run.deadline_s),
            self.target(target or Target()),
            options=run,
            catalog=catalog,
        )

    def machine(self, catalog: Catalog) -> Machine:
        """The machine this point runs on (its variant applied), as `predict` resolves it."""
        m = catalog.get(self.instance)
        if self.sockets is not None:
            m = m.with_sockets(self.sockets)
        return m.with_smt(self.smt)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def select_instances(
    catalog: Catalog, instances: Sequence[str] | str | None = None, family: str | None = None
) -> list[str]:
    """The instance names a sweep covers: `instances` (a list, or "all"/None for every
    catalog instance type), or those of one `family`. Unknown names and families are
    CohsimErrors; duplicates are dropped, the first kept."""
    if family is not None:
        if instances not in (None, "all"):
            raise CohsimError("give either instances or a family, not both")
        known = sorted({m.family for m in catalog.machines() if m.kind == "instance"})
        chosen = [m.name for m in catalog.machines() if m.kind == "instance" and m.family == family]
        if not chosen:
            raise CohsimError(f"unknown family {family!r} (the catalog has {', '.join(known)})")
        return chosen
    if instances is None or instances == "all":
        return [m.name for m in catalog.machines() if m.kind == "instance"]
    if isinstance(instances, str):
        instances = [instances]
    if not instances:
        raise CohsimError("no instances to sweep")
    names: list[str] = []
    for name in instances:
        catalog.get(name)  # an unknown name is a CohsimError naming it
        if name not in names:
            names.append(name)
    return names


def variants_of(machine: Machine) -> list[tuple[bool, int | None]]:
    """(smt, sockets) of a machine's variants: itself, SMT off where it has SMT, one socket
    where it has more than one."""
    out: list[tuple[bool, int | None]] = [(True, None)]
    if machine.topology.threads_per_core > 1:
        out.append((False, None))
    if machine.topology.sockets > 1:
        out.append((True, 1))
    return out


def grid(
    catalog: Catalog,
    instances: Sequence[str],
    containers: Sequence[int],
    layers: Sequence[int],
    strategies: Sequence[str] = (Burst.strategy,),
    *,
    variants: bool = False,
) -> list[SweepPoint]:
    """Every point of instances x variants x strategies x layers x containers, in that order
    (each list's own order kept, duplicates dropped)."""
    counts = {"containers": _unique(containers), "layers": _unique(layers)}
    for name, values in counts.items():
        if not values:
            raise CohsimError(f"no {name} counts to sweep")
        refuse_absurd(**{name: max(values)})  # beyond a real node: before any point runs
    strats = _unique(strategies)
    if not strats:
        raise CohsimError("no strategies to sweep")
    points = []
    for inst in _unique(instances):
        machine = catalog.get(inst)
        for smt, sockets in variants_of(machine) if variants else [(True, None)]:
            for s in strats:
                for n_layers in counts["layers"]:
                    for n in counts["containers"]:
                        points.append(SweepPoint(inst, n, n_layers, s, smt, sockets))
    return points


def _unique(values: Sequence[T]) -> list[T]:
    out: list[T] = []
    for v in values:
        if v not in out:
            out.append(v)
    return out
