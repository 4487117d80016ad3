"""The five machine configurations and the published order among them, as relations with
margins.

A published study of 100 containers x 50 layers (containerd's per-layer idmapped mounts,
launched at once) on AWS found: r5.metal the slowest of r5.metal, m7i.metal-24xl and
m7a.24xlarge (R1) and the first of them to fail a 30 s deadline as the burst grows (R6);
m7a.24xlarge the fastest (R2); m7i.metal-24xl faster with SMT off (R3); m7i.metal-48xl slower
than m7i.metal-24xl (R4); at 20 containers all within 25 % of each other (R5).

Each relation is read from launch p50s (R6 from safe bursts) with a margin in percent that is
positive where it holds: how much slower (or smaller) the machine that should lose is than
the nearest one that should beat it. R5's margin is 25 minus the spread (max/min - 1, %) at
20 containers: percentage points left before the spread passes 25 %.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    """One machine configuration: a catalog instance, with SMT on or off."""

    label: str  #: as cohsim names the variant ("m7i.metal-24xl+smt-off")
    short: str  #: a table's column header
    instance: str
    smt: bool = True


R5M = Config("r5.metal", "r5", "r5.metal")
M7I = Config("m7i.metal-24xl", "m7i-24", "m7i.metal-24xl")
M7I_OFF = Config("m7i.metal-24xl+smt-off", "m7i-24-off", "m7i.metal-24xl", smt=False)
M7I_48 = Config("m7i.metal-48xl", "m7i-48", "m7i.metal-48xl")
M7A = Config("m7a.24xlarge", "m7a", "m7a.24xlarge")
#: the five configurations, in the report's column order
CONFIGS = (R5M, M7I, M7I_OFF, M7I_48, M7A)
#: the three machines R1, R2 and R6 compare
TRIO = (R5M, M7I, M7A)
#: the containers of R5 and its bound on max/min
SMALL_BURST = 20
SPREAD = 1.25

#: what each relation says
TEXT = {
    "R1": "r5.metal slowest of r5.metal, m7i.metal-24xl, m7a.24xlarge",
    "R2": "m7a.24xlarge fastest of r5.metal, m7i.metal-24xl, m7a.24xlarge",
    "R3": "m7i.metal-24xl faster with SMT off than on",
    "R4": "m7i.metal-48xl slower than m7i.metal-24xl",
    "R5": f"at {SMALL_BURST} containers all five within 25 % (max/min <= {SPREAD})",
    "R6": "r5.metal the first of the three to fail the deadline as the burst grows",
}
#: the relations read from launch p50s (R6 is read from safe bursts)
P50_RELATIONS = ("R1", "R2", "R3", "R4", "R5")


@dataclass(frozen=True)
class Relation:
    """One relation at one point: whether it holds and by how much (% or points, see the
    module's docstring; positive where it holds)."""

    name: str
    holds: bool
    margin_pct: float
    #: the numbers cannot tell (R6 with a search stopped at its ceiling): `holds` is False
    undetermined: bool = False

    def to_dict(self) -> dict[str, object]:
        if self.undetermined:
            return {"holds": None, "margin_pct": None}
        return {"holds": self.holds, "margin_pct": round(self.margin_pct, 4)}


def pct(a: float, b: float) -> float:
    """How much larger `a` is than `b`, in percent."""
    return (a / b - 1.0) * 100.0


def p50_relations(at_n: Mapping[str, float], at_20: Mapping[str, float]) -> dict[str, Relation]:
    """R1-R5 from the launch p50s by configuration label: `at_n` at the question's count,
    `at_20` at SMALL_BURST containers."""
    r1 = pct(at_n[R5M.label], max(at_n[M7I.label], at_n[M7A.label]))
    r2 = pct(min(at_n[R5M.label], at_n[M7I.label]), at_n[M7A.label])
    r3 = pct(at_n[M7I.label], at_n[M7I_OFF.label])
    r4 = pct(at_n[M7I_48.label], at_n[M7I.label])
    small = [at_20[c.label] for c in CONFIGS]
    r5 = (SPREAD - 1.0) * 100.0 - pct(max(small), min(small))
    margins = {"R1": r1, "R2": r2, "R3": r3, "R4": r4}
    out = {k: Relation(k, m > 0, m) for k, m in margins.items()}
    out["R5"] = Relation("R5", r5 >= 0, r5)
    return out


def burst_relation(bursts: Mapping[str, int], capped: bool = False) -> Relation:
    """R6 from the safe bursts of the three machines by label: r5.metal's strictly the
    smallest. With `capped` (a search stopped at its ceiling still passing) it is
    undetermined."""
    r5 = bursts[R5M.label]
    others = min(bursts[M7I.label], bursts[M7A.label])
    margin = pct(others, r5) if r5 > 0 else 0.0
    return Relation("R6", margin > 0 and not capped, margin, undetermined=capped)
