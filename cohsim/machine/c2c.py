"""Core-to-core latency: the model against a measured matrix, and the fit that derives a
machine's per-class latencies from one.

`compare` prices every measured pair with the machine model and reports, per pair class, the
model's value against the measured median, and the per-pair median absolute error. `fit` is how
the catalog's numbers for measured machines are obtained: the per-class medians of the matrix
(one-way ns), with cross-socket and remote-home pairs pooled because the graph model gives both
the same two socket crossings. `detect_home` finds the socket that homed the benchmark's line.
`family_coherence` is how cohsim treats a machine nobody measured: the median of the fitted
values of the other machines of its family.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from cohsim.errors import CohsimError
from cohsim.machine.model import Machine
from cohsim.machine.parts import Coherence, PairClass

# Which measured pair classes inform which coherence parameter.
FIT_CLASSES: dict[str, tuple[PairClass, ...]] = {
    "smt_ns": (PairClass.SMT,),
    "same_llc_ns": (PairClass.SAME_LLC,),
    "cross_llc_ns": (PairClass.CROSS_LLC,),
    "cross_socket_ns": (PairClass.CROSS_SOCKET, PairClass.REMOTE_HOME),
}


@dataclass(frozen=True)
class ClassStat:
    """Model against measurement for one pair class."""

    pair_class: str  #: PairClass label
    pairs: int  #: measured pairs of this class
    model_ns: float  #: the model's latency for the class
    measured_median_ns: float  #: median of the measured pairs
    pct_error: float  #: (model - measured median) / measured median, percent


@dataclass(frozen=True)
class Comparison:
    """The machine model against one measured matrix."""

    machine: str  #: catalog machine name
    matrix: str  #: file name of the matrix
    home: int | None  #: socket homing the line (None: each pair's own socket)
    cpus: int  #: CPUs the matrix covers (the first `cpus` of the machine)
    classes: tuple[ClassStat, ...]  #: per-class medians
    median_abs_pct_error: float  #: median over pairs of |model - measured| / measured, percent

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["home"] = "local" if self.home is None else f"socket{self.home}"
        d["classes"] = {
            c.pair_class: {k: v for k, v in asdict(c).items() if k != "pair_class"}
            for c in self.classes
        }
        return d


def _pairs(
    machine: Machine, measured: np.ndarray, home: int | None, where: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Class codes, model values and measured values of every measured pair (lower triangle)."""
    n = measured.shape[0]
    if n > machine.vcpus:
        raise CohsimError(
            f"the matrix has {n} CPUs but {machine.name} has only {machine.vcpus}", where
        )
    if home is not None and not 0 <= home < machine.topology.sockets:
        raise CohsimError(f"home socket {home} does not exist on {machine.name}", where)
    i, j = np.tril_indices(n, k=-1)
    cls = machine.class_matrix(home)[i, j]
    return cls, machine.latency_matrix(home)[i, j], measured[i, j]


def compare(
    machine: Machine, measured: np.ndarray, home: int | None = None, matrix_name: str = ""
) -> Comparison:
    """Per-class and per-pair errors of the model against a measured matrix."""
    cls, model, meas = _pairs(machine, measured, home, matrix_name)
    stats = []
    for c in PairClass:
        mask = cls == c
        if c is PairClass.SAME or not mask.any():
            continue
        med = float(np.median(meas[mask]))
        mod = float(np.median(model[mask]))
        stats.append(
            ClassStat(
                c.label,
                int(mask.sum()),
                round(mod, 3),
                round(med, 3),
                round(100 * (mod - med) / med, 3),
            )
        )
    per_pair = np.abs(model - meas) / meas
    return Comparison(
        machine=machine.name,
        matrix=Path(matrix_name).name,
        home=home,
        cpus=measured.shape[0],
        classes=tuple(stats),
        median_abs_pct_error=round(float(100 * np.median(per_pair)), 3),
    )


def fit(
    machine: Machine, measured: np.ndarray, home: int | None = None, matrix_name: str = ""
) -> Machine:
    """The machine with its coherence latencies set to the matrix's per-class medians.

    A class the matrix does not cover (e.g. SMT pairs on a truncated file) keeps its value.
    """
    cls, _, meas = _pairs(machine, measured, home, matrix_name)
    values = machine.coherence.values()
    fitted = []
    for key, classes in FIT_CLASSES.items():
        mask = np.isin(cls, [int(c) for c in classes])
        if mask.any():
            values[key] = round(float(np.median(meas[mask])), 2)
            fitted.append(key)
    try:
        coherence = Coherence(**values)
        new = replace(machine, coherence=coherence)
    except CohsimError as exc:
        raise CohsimError(f"the fitted latencies are impossible: {exc.what}", matrix_name) from None
    sources = dict(new.sources)
    home_text = "local" if home is None else f"socket{home}"
    cmd = f"cohsim c2c {machine.name} --vs {matrix_name} --home {home_text} --fit"
    for key in fitted:
        sources[f"coherence.{key}"] = f"{cmd} (median of the measured pairs)"
    return replace(new, sources=sources)


def detect_home(machine: Machine, measured: np.ndarray, matrix_name: str = "") -> int | None:
    """The home policy that explains the matrix best (lowest mean per-pair error after `fit`).

    Only machines with several sockets *and* several LLC domains per socket can show a
    remote-home effect; for the others the answer is None.
    """
    t = machine.topology
    candidates: list[int | None] = [None]
    if t.sockets > 1 and t.llc_domains_per_socket > 1:
        candidates += list(range(t.sockets))
    best, best_err = None, np.inf
    for home in candidates:
        try:
            fitted = fit(machine, measured, home, matrix_name)
        except CohsimError:  # this policy cannot explain the matrix at all
            continue
        _, model, meas = _pairs(fitted, measured, home, matrix_name)
        err = float(np.mean(np.abs(model - meas) / meas))
        if err < best_err - 1e-12:
            best, best_err = home, err
    return best


def family_coherence(members: list[Machine]) -> dict[str, float]:
    """Median of each coherence latency over the fitted machines of one family."""
    if not members:
        raise CohsimError("no measured machine in the family to learn from")
    out: dict[str, float] = {}
    for key in FIT_CLASSES:
        vals = [v for m in members if (v := m.coherence.values().get(key)) is not None]
        if vals:
            out[key] = round(float(np.median(vals)), 2)
    return out


def predict_from_family(target: Machine, members: list[Machine]) -> Machine:
    """`target`'s topology with coherence latencies learnt from other machines of its family."""
    learnt = family_coherence(members)
    names = ", ".join(m.name for m in members)
    values = target.coherence.values()
    sources = dict(target.sources)
    for key in values:
        if key not in learnt:
            raise CohsimError(
                f"no machine of family {target.family!r} ({names}) has a measured "
                f"{key} to transfer to {target.name}"
            )
        values[key] = learnt[key]
        sources[f"coherence.{key}"] = f"median of the fitted {key} of {names}"
    return replace(target, coherence=Coherence(**values), sources=sources)
