"""The candidates a plan ranks: catalog machines, each with an idmap strategy, and variants.

A candidate is what a capacity planner could buy and configure: an instance type from the
catalog (cohsim.machine.catalog), run with one of containerd's idmap strategies
(cohsim.workload.synth.STRATEGIES), with SMT on or off and all its sockets or only the first.
`select` turns the command line's choice into the list, in a fixed order (machine in catalog
order, then variant, then strategy) so that the same question always gives the same candidates:

- no `instances` (or "all") and no `family`: every instance type of the catalog;
- `instances`: those names (an unknown one is a CohsimError that suggests neighbours);
- `family`: the instance types of that catalog family ("genoa", "sapphirerapids").

With `variants`, each machine also appears with SMT off where it has two threads per core
and with one socket where it has more than one: the hardware choices the planner can still
make on a machine they have chosen. The machines and variants are chosen as a sweep chooses
them (cohsim.sweep.grid), so a plan and a sweep over the same flags cover the same machines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cohsim.errors import CohsimError
from cohsim.machine.catalog import Catalog
from cohsim.predict.question import Burst
from cohsim.sweep.grid import select_instances, variants_of
from cohsim.workload.synth import STRATEGIES

ALL = "all"  #: the word that asks for every catalog machine, or every strategy


@dataclass(frozen=True, order=True)
class Candidate:
    """One machine configuration with one strategy: a row of the plan."""

    instance: str  #: catalog name (or a machine TOML path)
    strategy: str  #: containerd's idmap strategy
    smt: bool = True  #: False: one hardware thread per core
    sockets: int | None = None  #: use only the first N sockets (None: all)
    vcpus: int = 0  #: hardware threads the configuration has

    @property
    def machine_label(self) -> str:
        """The machine as cohsim names a variant ("r5.metal+1s+smt-off")."""
        label = self.instance
        if self.sockets is not None:
            label += f"+{self.sockets}s"
        if not self.smt:
            label += "+smt-off"
        return label

    @property
    def label(self) -> str:
        """The machine and strategy: unique within a plan."""
        return f"{self.machine_label} {self.strategy}"

    def to_dict(self) -> dict[str, object]:
        return {
            "instance": self.instance,
            "machine": self.machine_label,
            "strategy": self.strategy,
            "smt": self.smt,
            "sockets": self.sockets,
            "vcpus": self.vcpus,
        }


def strategies_of(strategy: str) -> tuple[str, ...]:
    """The strategies `--strategy` names: one of STRATEGIES, or all of them."""
    if strategy == ALL:
        return tuple(STRATEGIES)
    if strategy not in STRATEGIES:
        raise CohsimError(
            f"unknown strategy {strategy!r} (expected {', '.join(STRATEGIES)} or {ALL})"
        )
    return (strategy,)


def select(
    catalog: Catalog,
    *,
    instances: Sequence[str] | None = None,
    family: str | None = None,
    strategies: Sequence[str] = (Burst.strategy,),
    variants: bool = False,
) -> list[Candidate]:
    """Every candidate of the question, in a fixed order (see the module's docstring)."""
    for s in strategies:
        strategies_of(s)
    names = ALL if instances is not None and list(instances) == [ALL] else instances
    out = []
    for name in select_instances(catalog, names, family):
        base = catalog.get(name)
        for smt, sockets in variants_of(base) if variants else [(True, None)]:
            m = (base.with_sockets(sockets) if sockets is not None else base).with_smt(smt)
            out += [Candidate(name, s, smt, sockets, m.topology.vcpus) for s in strategies]
    return out
