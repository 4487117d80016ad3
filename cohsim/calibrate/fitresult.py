"""A fit's result: what a calibration learned, frozen, and how a prediction applies it.

`Calibration.fit` (cohsim.calibrate.calibration, the estimator) returns a `FitResult`, and
`load_fit` reads one back from a fit JSON (the committed fits are calibration/fits/*.json;
`cohsim.calibrate.committed.default_fit` picks the one that describes an instance). It holds
the parameters with their standard errors and bounds, their covariance, the residual rows,
the optimizer's report, what was kept fixed and why, the host's measured mount_bench terms,
the estimator's settings, and where the fit's parts apply.

It is all a prediction needs, and it imports nothing of the estimator (the bench data, the
mount_bench simulation, the optimizers): `cohsim.predict` loads fits without them.

- `kernel_params`: the fitted kernel; `sample_kernels`: parameter draws from the fit's normal
  approximation (clipped to the bounds), for the replicates after the first;
- `host_kernel`, `machine`: the terms measured on the fitted host (wake-up latency, the grace
  period's part per busy CPU; PAUSE and the cache-line transfer), where the lock part applies;
- `misfit_sd`: the model's own error on the fitted host, which widens prediction intervals;
- `report`, `plot`: the fit as text and as a picture.

The JSON is written and read here (`to_dict`, `save`, `from_dict`, `load_fit`) through the
format's one definition, cohsim.calibrate.fitjson.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from cohsim import provenance
from cohsim.calibrate import fitjson
from cohsim.calibrate.fitjson import Covariance, FitSettings
from cohsim.calibrate.fitparams import (
    HOST_TERMS,
    KERNEL_PARAMS,
    Param,
    apply_kernel_params,
    kernel_bounds,
)
from cohsim.calibrate.fitplot import plot_fit
from cohsim.errors import CohsimError
from cohsim.kernel.costs import KernelParams, load_kernel
from cohsim.kernel.waketable import WakeTable
from cohsim.machine.catalog import Catalog
from cohsim.machine.model import Machine


@dataclass(frozen=True)
class FitResult:
    """A calibration's fit of kernel (mount_bench) and lock (pause_bench) parameters."""

    settings: FitSettings  #: the estimator's settings (its seed, kernel model, budget)
    kind: str  #: "kernel", "lock" or "kernel+lock"
    instance: str  #: the machine the data was measured on
    kernel_name: str  #: the kernel model's name
    parameters: dict[str, Param]  #: fitted and measured parameters (value, stderr, bounds)
    cov: Covariance  #: the fitted parameters' covariance
    residuals: list[dict[str, Any]]  #: one row per compared figure
    fixed: dict[str, dict[str, Any]]  #: what was kept fixed, and why
    data_digests: dict[str, str]  #: bench file -> sha256
    optimizer: dict[str, Any]  #: per part (kernel, lock), the optimizer's report
    think_ns: dict[str, dict[str, float]]  #: strategy -> layers -> mount_bench's time per call
    op_extra_ns: dict[str, dict[str, dict[str, float]]]  #: ... -> op -> 1-worker excess, ns
    wake_table: WakeTable | None  #: the host's wake-up table by idle time, if fitted with one
    applies_to: dict[str, Any]  #: where the kernel and lock parts apply

    # ----- the parameters -----------------------------------------------------------------

    @property
    def params(self) -> dict[str, float]:
        """Each parameter's value (a view of `parameters`)."""
        return {n: p.value for n, p in self.parameters.items()}

    @property
    def stderr(self) -> dict[str, float]:
        """Each parameter's standard error (a view of `parameters`)."""
        return {n: p.stderr for n, p in self.parameters.items()}

    @property
    def bounds(self) -> dict[str, tuple[float, float]]:
        """Each parameter's bounds, high possibly inf (a view of `parameters`)."""
        return {n: p.bounds for n, p in self.parameters.items()}

    @property
    def seed(self) -> int:
        """The estimator's seed (its simulations' common random numbers start there)."""
        return self.settings.seed

    # ----- applied to a kernel model and a machine ------------------------------------------

    def base_kernel(self) -> KernelParams:
        """The kernel model the fit started from (the model file it names)."""
        return load_kernel(self.settings.kernel)

    def kernel_params(self, base: KernelParams | None = None) -> KernelParams:
        """The fitted kernel (base: the model file the fit started from), its CPU work measured
        at its host's clock (`host_ghz`)."""
        values = {n: p.value for n, p in self.parameters.items() if n in KERNEL_PARAMS}
        fitted = apply_kernel_params(base or self.base_kernel(), values)
        return replace(fitted, reference_ghz=self.host_ghz())

    def host_ghz(self) -> float:
        """This fit's host's core clock (the catalog's `microarch.freq_ghz` of `instance`):
        the fitted costs are that host's times (cohsim.kernel.corespeed)."""
        return Catalog().get(self.instance).microarch.freq_ghz

    def sample_kernels(self, base: KernelParams | None, n: int, seed: int) -> list[KernelParams]:
        """`n` kernels with parameters drawn from the fit's normal approximation (clipped to
        the bounds); base: the model file the fit started from (default: load it)."""
        base = base or self.base_kernel()
        names = [x for x in self.cov["names"] if x in KERNEL_PARAMS]
        if not names:
            raise CohsimError("this fit has no kernel parameters (no mount_bench data)")
        idx = [self.cov["names"].index(x) for x in names]
        cov = np.asarray(self.cov["matrix"])[np.ix_(idx, idx)]
        chosen = [self.parameters[x] for x in names]
        mean = np.array([p.value for p in chosen])
        rng = np.random.default_rng(seed)
        draws = rng.multivariate_normal(mean, cov, size=n, method="eigh")
        # the bounds the fit had, narrowed to the base's own (a fit made under wider ones)
        now = kernel_bounds(base)
        lo = np.array([max(p.low, now[p.name][0]) for p in chosen])
        hi = np.array([min(p.high, now[p.name][1]) for p in chosen])
        draws = np.clip(draws, lo, hi)
        ghz = self.host_ghz()  # (the catalog read once, not once a draw)
        return [
            apply_kernel_params(base, dict(zip(names, d, strict=True))).changed(reference_ghz=ghz)
            for d in draws
        ]

    def host_kernel(self, kernel: KernelParams) -> KernelParams:
        """`kernel` with this fit's host-only terms (the measured wake-up latency: wake_bench's
        `wake_ns`, and the table by idle duration where the fit had one; the grace period's
        part per busy CPU where walk_bench measured it; a traced burst's wake-up pace)."""
        for name in HOST_TERMS:
            if name in self.parameters:
                kernel = kernel.with_values(**{name: self.parameters[name].value})
        if self.wake_table is not None:
            kernel = replace(kernel, wake_table=self.wake_table)
        return kernel

    def machine(self, machine: Machine | None = None) -> Machine:
        """`machine` (default: the fitted instance) with the fitted PAUSE and transfer."""
        m = machine or Catalog().get(self.instance)
        params = self.params
        if "pause_ns" in params:
            m = replace(
                m,
                microarch=replace(
                    m.microarch, pause_cycles=params["pause_ns"] * m.microarch.freq_ghz
                ),
            )
        if "same_llc_ns" in params:
            m = replace(m, coherence=replace(m.coherence, same_llc_ns=params["same_llc_ns"]))
        return m

    def misfit_sd(self, metric: str = "stride_ns") -> float:
        """The model's own error on the fitted host, which the parameters' errors leave out:
        the root mean square of the fit's log residuals of a run metric (`stride_ns`, the
        worker time per sequence, or `containers_per_s`), over every run it saw."""
        res = [
            r["log_residual"]
            for r in self.residuals
            if r.get("kind") == "kernel" and r["metric"] == metric
        ]
        return float(np.sqrt(np.mean(np.square(res)))) if res else 0.0

    # ----- report -------------------------------------------------------------------------

    def report(self) -> str:
        """The parameters with their standard errors (as the fit JSON rounds them), and what
        was kept fixed and why: one line each."""
        doc = self.to_dict()
        lines = [
            f"  {name:<16s} {p['value']:>12.6g} +/- {p['stderr']:<10.3g} ({p['group']})"
            for name, p in doc["parameters"].items()
        ]
        lines += [f"  fixed {name}: {f['why']}" for name, f in doc["fixed"].items()]
        return "\n".join(lines)

    def plot(self, ax: Any) -> list[Any]:
        """Measured vs fitted (log-log), one marker per metric; returns the artists drawn
        (`cohsim.calibrate.fitplot`)."""
        return plot_fit(self.residuals, self.instance, ax)

    # ----- JSON (the format: cohsim.calibrate.fitjson) -------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The versioned fit document."""
        return fitjson.to_doc(self)

    def save(self, path: str | Path) -> None:
        """Write the fit JSON atomically (deterministic bytes; no missing folder is made)."""
        provenance.write_atomic(path, provenance.dumps(self.to_dict()), make_dirs=False)

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], where: str = "") -> FitResult:
        """The fit a JSON document describes (validated; `where`: the file, for the one-line
        error)."""
        fitjson.check_header(doc, where)
        settings = fitjson.settings_of(doc)
        parameters = fitjson.parameters_of(doc, where)
        table = doc.get("wake_table")
        return cls(
            settings=settings,
            kind=doc["kind"],
            instance=doc["instance"],
            kernel_name=doc["kernel"],
            parameters=parameters,
            cov=fitjson.covariance_of(doc, parameters, where),
            residuals=list(doc["residuals"]),
            fixed=dict(doc["fixed"]),
            data_digests=dict(doc["data_digests"]),
            optimizer=dict(doc["optimizer"]),
            think_ns={s: dict(v) for s, v in doc["think_ns"].items()},
            op_extra_ns={
                s: {L: dict(ops) for L, ops in v.items()}
                for s, v in doc.get("op_extra_ns", {}).items()
            },
            wake_table=WakeTable.from_doc(table, where) if table is not None else None,
            applies_to=dict(doc["applies_to"]),
        )


def load_fit(path: str | Path) -> FitResult:
    """Read a fit JSON written by `FitResult.save` (validated)."""
    return FitResult.from_dict(fitjson.read_doc(path), str(path))
