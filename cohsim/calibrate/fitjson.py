"""The fit JSON: the one definition of the document a fit is written to and read from.

A fit document is what `FitResult.save` (cohsim.calibrate.fitresult) writes and `load_fit`
reads back (the committed fits are calibration/fits/*.json; calibration/fits/README.md
describes them). `to_doc` turns a fit into the document (`applies_to_doc`: where a new fit
applies); `check_header`, `settings_of`, `parameters_of` and `covariance_of` validate a
document's parts, from which `FitResult.from_dict` builds the fit; `read_doc` reads a file;
`choose_fit` picks the fit that describes an instance or family. Values are rounded to 6
significant figures (`round_sig`) so that writing the same fit gives the same bytes.

Format history: schema 1 — kind, instance, kernel, applies_to, parameters, covariance,
residuals, think_ns, fixed, data_digests, optimizer, settings, cohsim_version, seed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypedDict, TypeVar

import numpy as np

from cohsim import __version__
from cohsim.calibrate.fitparams import DOC, Param
from cohsim.errors import CohsimError
from cohsim.kernel.waketable import WakeTable
from cohsim.machine.catalog import Catalog

SCHEMA = 1
#: the response-surface half-width the estimator uses (cohsim.calibrate.calibration), and
#: what a file written before the settings recorded it was fitted with
RADIUS = 0.15
KINDS = ("kernel", "lock", "kernel+lock")
#: the keys every fit document has
_REQUIRED = (
    "kind",
    "instance",
    "kernel",
    "parameters",
    "covariance",
    "residuals",
    "fixed",
    "data_digests",
    "optimizer",
    "seed",
    "think_ns",
    "applies_to",
)


def round_sig(x: float, digits: int = 6) -> float:
    """Round to `digits` significant figures (stable JSON bytes)."""
    if x == 0 or not math.isfinite(x):
        return 0.0 if not math.isfinite(x) else x
    return float(f"{x:.{digits}g}")


class Covariance(TypedDict):
    """The fitted parameters' covariance: `matrix[i][j]` between `names[i]` and `names[j]`."""

    names: list[str]
    matrix: np.ndarray


class FittedView(Protocol):
    """What `to_doc` reads of a fit (`cohsim.calibrate.fitresult.FitResult`, frozen: read-only)."""

    @property
    def settings(self) -> FitSettings: ...

    @property
    def kind(self) -> str: ...

    @property
    def instance(self) -> str: ...

    @property
    def kernel_name(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Param]: ...

    @property
    def cov(self) -> Covariance: ...

    @property
    def residuals(self) -> list[dict[str, Any]]: ...

    @property
    def think_ns(self) -> dict[str, dict[str, float]]: ...

    @property
    def op_extra_ns(self) -> dict[str, dict[str, dict[str, float]]]: ...

    @property
    def wake_table(self) -> WakeTable | None: ...

    @property
    def fixed(self) -> dict[str, dict[str, Any]]: ...

    @property
    def data_digests(self) -> dict[str, str]: ...

    @property
    def optimizer(self) -> dict[str, Any]: ...

    @property
    def applies_to(self) -> dict[str, Any]: ...


def _parameter_docs(parameters: Mapping[str, Param]) -> dict[str, dict[str, Any]]:
    out = {}
    for n in sorted(parameters):
        p = parameters[n]
        out[n] = {
            "value": round_sig(p.value),
            "stderr": round_sig(p.stderr),
            "low": round_sig(p.low),
            "high": None if math.isinf(p.high) else round_sig(p.high),
            "group": p.group,
            "doc": p.doc,
        }
    return out


def to_doc(fit: FittedView) -> dict[str, Any]:
    """The versioned fit document of a fit."""
    settings = fit.settings
    return {
        "schema": SCHEMA,
        "kind": fit.kind,
        "instance": fit.instance,
        "kernel": fit.kernel_name,
        "applies_to": dict(fit.applies_to),
        "parameters": _parameter_docs(fit.parameters),
        "covariance": {
            "names": list(fit.cov["names"]),
            "matrix": [[round_sig(float(v)) for v in row] for row in np.asarray(fit.cov["matrix"])],
        },
        "residuals": fit.residuals,
        "think_ns": fit.think_ns,
        "op_extra_ns": fit.op_extra_ns,
        "wake_table": fit.wake_table.to_doc() if fit.wake_table else None,
        "fixed": fit.fixed,
        "data_digests": fit.data_digests,
        "optimizer": fit.optimizer,
        "settings": {
            "containers_per_worker": settings.containers,
            "seeds": settings.seeds,
            "max_nfev": settings.max_nfev,
            "starts": settings.starts,
            "seed_sets": settings.seed_sets,
            "radius": settings.radius,
            "free": list(settings.free) if settings.free else None,
        },
        "cohsim_version": __version__,
        "seed": settings.seed,
    }


@dataclass(frozen=True)
class FitSettings:
    """The estimator's settings as a fit document records them (defaults for older files)."""

    instance: str
    kernel: str
    seed: int
    containers: int
    seeds: int
    max_nfev: int
    starts: int
    seed_sets: int
    free: Sequence[str] | None
    radius: float  #: the response-surface design's half-width, in scaled units


def check_header(doc: Any, where: str) -> None:
    """A fit document's schema, required keys and kind (`where`: the file, for the one-line
    error)."""
    if not isinstance(doc, Mapping):
        raise CohsimError("a fit must be a JSON object", where)
    if doc.get("schema") != SCHEMA:
        raise CohsimError(
            f"fit schema {doc.get('schema')!r} is not supported (expected {SCHEMA})", where
        )
    for key in _REQUIRED:
        if key not in doc:
            raise CohsimError(f"missing key {key}", where)
    if doc["kind"] not in KINDS:
        raise CohsimError(f"kind {doc['kind']!r} is not one of {', '.join(KINDS)}", where)


def settings_of(doc: Mapping[str, Any]) -> FitSettings:
    """The estimator's settings a document records (defaults for an older file)."""
    settings = doc.get("settings", {})
    return FitSettings(
        instance=doc["instance"],
        kernel=doc["kernel"],
        seed=int(doc["seed"]),
        containers=int(settings.get("containers_per_worker", 2)),
        seeds=int(settings.get("seeds", 2)),
        max_nfev=int(settings.get("max_nfev", 60)),
        starts=int(settings.get("starts", 8)),
        seed_sets=int(settings.get("seed_sets", 1)),
        free=settings.get("free"),
        radius=float(settings.get("radius", RADIUS)),
    )


def parameters_of(doc: Mapping[str, Any], where: str) -> dict[str, Param]:
    """The parameters a document holds, each a known one with numbers."""
    out: dict[str, Param] = {}
    for n, p in doc["parameters"].items():
        if n not in DOC:
            raise CohsimError(f"unknown parameter parameters.{n}", where)
        try:
            value, stderr = float(p["value"]), float(p["stderr"])
            hi = math.inf if p["high"] is None else float(p["high"])
            out[n] = Param(n, value, stderr, float(p["low"]), hi)
        except (KeyError, TypeError, ValueError):
            raise CohsimError(
                f"parameters.{n} needs numeric value, stderr, low, high", where
            ) from None
    return out


def covariance_of(doc: Mapping[str, Any], params: Mapping[str, Param], where: str) -> Covariance:
    """The covariance a document holds, over names that are among `params`."""
    names = list(doc["covariance"].get("names", []))
    matrix = (
        np.array(doc["covariance"].get("matrix", []), dtype=float).reshape(len(names), len(names))
        if names
        else np.zeros((0, 0))
    )
    for n in names:
        if n not in params:
            raise CohsimError(f"covariance names {n}, which is not a parameter", where)
    return {"names": names, "matrix": matrix}


def read_doc(path: str | Path) -> Any:
    """The JSON document in a fit file (not yet validated: `FitResult.from_dict`)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CohsimError("no such fit file", str(path)) from None
    except json.JSONDecodeError as exc:
        raise CohsimError(f"invalid JSON: {exc}", str(path)) from None


def applies_to_doc(kind: str, instance: str, kernel_name: str) -> dict[str, Any]:
    """Where a new fit's parts apply (its `applies_to`): the kernel part to every instance,
    the lock part to the fitted instance only."""
    applies: dict[str, Any] = {}
    if kind in ("kernel", "kernel+lock"):
        applies["kernel"] = {
            "instances": "*",
            "kernel": kernel_name,
            "caveat": f"measured on {instance} (2 vCPUs): the critical-section split "
            "and the grace period are properties of the kernel, but were seen "
            "only at 1-4 workers on 2 CPUs; per-CPU effects are not identified",
        }
    if kind in ("lock", "kernel+lock"):
        fam = Catalog().get(instance).family
        applies["lock"] = {
            "instances": [instance],
            "families": [],
            "caveat": f"a VM's vCPU-to-vCPU transfer; do not apply to bare-metal {fam} "
            "hosts (calibration/data README)",
        }
    return applies


class _Applies(Protocol):
    @property
    def instance(self) -> str: ...

    @property
    def applies_to(self) -> dict[str, Any]: ...


F = TypeVar("F", bound=_Applies)


def choose_fit(fits: Sequence[F], instance_or_family: str, family: str) -> F | None:
    """The fit that describes this instance or family, if any: exact instance matches win;
    then a fit whose lock part names the instance or `family`; then any kernel fit (its
    `applies_to.kernel.instances` is "*": kernel parameters apply to every instance)."""
    for c in fits:
        if c.instance == instance_or_family:
            return c
    for c in fits:
        lock = c.applies_to.get("lock", {})
        if instance_or_family in lock.get("instances", []) or family in lock.get("families", []):
            return c
    for c in fits:
        if c.applies_to.get("kernel", {}).get("instances") == "*":
            return c
    return None
