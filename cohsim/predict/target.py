"""Running a prediction on its target: the machine, the kernel and the calibration, as a
`Target` (cohsim.predict.question) names them.

The machine is a catalog instance (`instance`) or the catalog's representative of an
interconnect kind (`arch`: mesh, chiplet, cmn), with SMT switched off or sockets left out if
asked. The kernel is a name under models/kernel/ or a TOML file.

Calibration: by default the committed fit that describes the machine (`calibrate.default_fit`)
is used for what it applies to — a kernel fit to every instance, a lock fit only to the
instances it names; `calibration="none"` uses the catalog and kernel files as they are. A
kernel fit also gives parameter draws from its covariance (for the replicates after the
first) and the model's misfit on the fitted host (which widens the intervals). Where a fit's
lock part applies (its own host), the wake-up latency it measured pins that prior. A fit is
read as its result (`cohsim.calibrate.fitresult.FitResult`): a prediction imports nothing of the
estimator that made it.

Pins: a user's values for some of the kernel model's priors (`--node-mounts`, `--set`,
`--priors`), which are then not drawn (cohsim.predict.unknowns); checked before any work
(cohsim.predict.pins), a value outside its prior's range said in the validity.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from cohsim.calibrate import default_fit, load_fit
from cohsim.errors import CohsimError
from cohsim.kernel.calls import Recent
from cohsim.kernel.corespeed import clock_ratio
from cohsim.kernel.costs import KernelParams, load_kernel
from cohsim.machine.catalog import Catalog
from cohsim.machine.model import Machine
from cohsim.predict.options import RunOptions
from cohsim.predict.pins import check as check_pins
from cohsim.predict.question import Target
from cohsim.predict.replicates import run_workload
from cohsim.predict.results import Prediction
from cohsim.predict.validity import Validity, assess
from cohsim.workload.trace import Trace

if TYPE_CHECKING:
    from cohsim.calibrate import FitResult


@dataclass(frozen=True)
class Fitted:
    """A target with its calibration applied (`apply_calibration`)."""

    machine: Machine
    kernel: KernelParams
    draws: list[KernelParams]  #: parameter sets from the fit's covariance
    note: str  #: what was used
    misfit_sd: float  #: the model's misfit on the fitted host (0 without a kernel fit)
    measured: tuple[str, ...] = ()  #: priors the fit measured on this host (not drawn)


#: the priors a fit's part measures where it applies: the lock part's host terms
#: (wake_bench's wake-up latency; `FitResult.host_kernel`), and on its own host the clock its
#: costs were measured at is the target's (cohsim.kernel.corespeed: the ratio is 1)
MEASURED_BY_LOCK_FIT = ("cpu.wake_ns", "cpu.reference_clock_scale")


def apply_calibration(
    spec: str | None, machine: Machine, kernel: KernelParams, samples: int, seed: int
) -> Fitted:
    """Apply a fit: `spec` None (the committed default), "none", or a fit JSON path. The note
    also says at which clock the kernel's CPU work runs (cohsim.kernel.corespeed)."""
    f = _apply(spec, machine, kernel, samples, seed)
    ref, ghz = f.kernel.reference_ghz, f.machine.microarch.freq_ghz
    ratio = clock_ratio(f.kernel, f.machine)  # (the nominal one: the scale's prior at 1)
    clock = f"CPU work at {ghz:g} GHz, measured at {ref:g} GHz (x {ratio:.3g})"
    return replace(f, note=f"{f.note}; {clock}")


#: the last calibrations applied, by the fit's, the machine's and the kernel's identity (each
#: kept by the entry; the committed fits and the kernel files are read once a file version),
#: the spec, the draws and the seed: a warm process's next prediction on the target draws the
#: same kernels again (a fit's draws: its covariance's, seeded)
_APPLIED = Recent(8)


def _apply(
    spec: str | None, machine: Machine, kernel: KernelParams, samples: int, seed: int
) -> Fitted:
    if spec == "none":
        return Fitted(machine, kernel, [], "none (catalog and kernel files as they are)", 0.0)
    cal = load_fit(spec) if spec is not None else default_fit(machine.name.split("+")[0])
    if cal is None:
        return Fitted(machine, kernel, [], "none (no committed fit describes this machine)", 0.0)
    objs, rest = (cal, machine, kernel), (spec, samples, seed)
    hit = _APPLIED.get(objs, rest)
    if hit is None:
        hit = _fitted(spec, cal, machine, kernel, samples, seed)
        _APPLIED.put(objs, rest, hit)
    return replace(hit, draws=list(hit.draws))  # (a list of the caller's own)


def _fitted(
    spec: str | None, cal: FitResult, machine: Machine, kernel: KernelParams, samples: int,
    seed: int,
) -> Fitted:  # fmt: skip
    """The fit `cal` (`spec`'s) applied to the target (`_apply`)."""
    applies = cal.applies_to
    used, notes = [], []
    fitted_kernel, draws, misfit = kernel, [], 0.0
    measured: tuple[str, ...] = ()
    if "kernel" in applies:
        fitted_kernel = cal.kernel_params(kernel)
        if samples:
            draws = cal.sample_kernels(kernel, samples, seed)
        misfit = cal.misfit_sd("stride_ns")
        used.append("kernel")
        notes.append(applies["kernel"].get("caveat", ""))
    lock = applies.get("lock", {})
    base_name = machine.name.split("+")[0]
    if base_name in lock.get("instances", []) or machine.family in lock.get("families", []):
        machine = cal.machine(machine)
        fitted_kernel = cal.host_kernel(fitted_kernel)
        draws = [cal.host_kernel(d) for d in draws]
        used.append("lock")
        measured = MEASURED_BY_LOCK_FIT
    if not used:
        return Fitted(machine, kernel, [], f"none ({cal.instance}'s fit does not apply here)", 0.0)
    source = spec if spec is not None else f"committed fit of {cal.instance}"
    note = f"{source}: {' and '.join(used)} parameters"
    if notes and notes[0]:
        note += f" (caveat: {notes[0]})"
    return Fitted(machine, fitted_kernel, draws, note, misfit, measured)


def resolve_calibration(
    spec: str | None, machine: Machine, kernel: KernelParams, samples: int, seed: int
) -> tuple[Machine, KernelParams, list[KernelParams], str, float]:
    """`apply_calibration` as a tuple: the machine, the kernel, parameter draws, a note saying
    what was used, and the model's misfit on the fitted host where a kernel fit applies."""
    f = apply_calibration(spec, machine, kernel, samples, seed)
    return f.machine, f.kernel, f.draws, f.note, f.misfit_sd


def resolve_machine(
    catalog: Catalog,
    *,
    arch: str | None,
    instance: str | None,
    smt: bool = True,
    sockets: int | None = None,
) -> tuple[Machine, str]:
    """The machine to predict for, and a note saying how it was chosen."""
    if (arch is None) == (instance is None):
        raise CohsimError("give exactly one of --arch and --instance")
    if arch is not None:
        a = catalog.archetype(arch)
        m, note = catalog.get(a.instance), f"--arch {arch} is {a.instance}: {a.why}"
    else:
        m, note = catalog.get(str(instance)), ""
    if sockets is not None:
        m = m.with_sockets(sockets)
    return m.with_smt(smt), note


def simulate(
    target: Target,
    trace: Trace,
    *,
    layers: int | None,
    workload: dict[str, Any],
    options: RunOptions,
    pins: Mapping[str, float],
    catalog: Catalog | None = None,
    on_validity: Callable[[Validity], None] | None = None,
) -> Prediction:
    """`trace` run on `target`: pick the machine (from `catalog`, default the installed one),
    assess the inputs (cohsim.predict.validity: refused beyond a real node; `on_validity` is
    called with the assessment before any simulation, where the command line warns), apply
    the calibration, run the replicates. `pins`: the priors the question pins (the target's
    and the node's mount table, cohsim.predict.api)."""
    machine, note = resolve_machine(
        catalog or Catalog(),
        arch=target.arch,
        instance=target.instance,
        smt=target.smt,
        sockets=target.sockets,
    )
    kernel = load_kernel(target.kernel)
    outside_prior = check_pins(kernel, pins)
    mounts = pins.get("background.node_mounts")
    validity = assess(
        containers=len(trace.threads),
        layers=layers,
        cpus=machine.topology.vcpus,
        node_mounts=None if mounts is None else int(mounts),
        pins=outside_prior,
    )
    if on_validity is not None:
        on_validity(validity)
    fit = apply_calibration(
        target.calibration,
        machine,
        kernel,
        options.n_replicates - 1,
        options.seed,
    )
    prediction = run_workload(
        fit.machine,
        trace,
        kernel=fit.kernel,
        options=options,
        layers=layers,
        kernel_samples=fit.draws,
        calibration=fit.note,
        misfit_sd=fit.misfit_sd,
        machine_note=note,
        workload=workload,
        pins=pins,
        measured=fit.measured,
    )
    return replace(prediction, validity=validity.to_dict())
