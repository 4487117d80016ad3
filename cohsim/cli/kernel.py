"""`cohsim kernel op|mountinfo`: what one op, or one mountinfo read, costs alone in a given node
state, in parts (cohsim.predict.query): on the machine and kernel a prediction would use."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from cohsim import provenance
from cohsim.cli.args import (
    add_model_files,
    add_pins,
    add_runtime,
    nonneg_int,
    pins_of,
    positive_int,
    warn_pins,
)
from cohsim.kernel.corespeed import at_clock
from cohsim.kernel.costs import KernelParams, load_kernel
from cohsim.machine.catalog import Catalog
from cohsim.machine.model import Machine
from cohsim.predict.query import Answer, State, human, mountinfo_cost, op_cost
from cohsim.predict.question import Burst
from cohsim.predict.target import apply_calibration, resolve_machine
from cohsim.predict.unknowns import pin
from cohsim.workload.synth import STRATEGIES


def _target(args: argparse.Namespace) -> tuple[Machine, KernelParams, str]:
    """The machine and the kernel as a prediction's nominal replicate has them (the fit
    applied, the pins set), and the calibration note."""
    if args.arch is None and args.instance is None:
        args.arch = "mesh"
    machine, _ = resolve_machine(Catalog(), arch=args.arch, instance=args.instance)
    pins = pins_of(args)
    warn_pins(args.kernel, pins)  # an unknown name or impossible value: exit 2, before work
    fit = apply_calibration(args.calibration, machine, load_kernel(args.kernel), 0, 0)
    return fit.machine, at_clock(pin(fit.kernel, pins), fit.machine), fit.note


def _state(args: argparse.Namespace) -> State:
    binds = args.binds if args.binds is not None else max(0, args.ring - 1)
    return State(args.mounts, args.ring, binds, args.slaves)


def _print(a: Answer, calibration: str) -> None:
    q = a.question
    layers = f"{q.get('layers')} layer" + ("s" if q.get("layers") != 1 else "")
    what = f"{q['op']} (as {q['strategy']} issues it, {layers})" if "op" in q else "mountinfo read"
    print(
        f"{what} on {q['machine']} ({q['cpus']} CPUs, {q['kernel']}): {q['mounts']} mounts, "
        f"peer group of / {q['ring']} ({q['binds']} binds under /), {q['slaves']} runtime "
        "copies alive"
    )
    for name, parts in a.sections.items():
        print(f"  {name}: {human(a.section_ns(name))}")
        for p in parts:
            grows = f"  (grows with {p.grows_with})" if p.grows_with else "  (fixed)"
            print(f"    {p.what:<48s} {human(p.ns):>10s}{grows}")
    if a.total_ns is not None:
        print(f"  total, alone: {human(a.total_ns)}")
    for n in a.notes:
        print(f"  note: {n}")
    print(f"  calibration: {calibration}")


def _emit(a: Answer, args: argparse.Namespace, calibration: str) -> int:
    if args.json:
        doc: dict[str, Any] = {"schema": 1, **a.to_dict(), "calibration": calibration}
        doc["provenance"] = provenance.stamp(command="kernel")
        print(provenance.dumps(doc), end="")
    else:
        _print(a, calibration)
    return 0


def _op(args: argparse.Namespace) -> int:
    machine, kernel, note = _target(args)
    a = op_cost(
        machine,
        kernel,
        args.op,
        _state(args),
        strategy=args.strategy,
        runtime=args.runtime,
        layers=args.layers,
    )
    return _emit(a, args, note)


def _mountinfo(args: argparse.Namespace) -> int:
    machine, kernel, note = _target(args)
    return _emit(mountinfo_cost(machine, kernel, _state(args)), args, note)


def _common(
    p: argparse.ArgumentParser, add_json: Callable[[argparse.ArgumentParser], None]
) -> None:
    p.add_argument("--arch", choices=["mesh", "chiplet", "cmn"], help="(default mesh)")
    p.add_argument("--instance", help="catalog name or a machine TOML")
    p.add_argument(
        "--mounts", type=nonneg_int, default=100, help="mounts in the host's table (default 100)"
    )
    p.add_argument(
        "--ring",
        type=positive_int,
        default=1,
        help="mounts in the root's peer group: / and the binds that joined it (default 1)",
    )
    p.add_argument(
        "--binds",
        type=nonneg_int,
        help="of those, binds attached under / (default: all but /)",
    )
    p.add_argument(
        "--slaves",
        type=nonneg_int,
        default=0,
        help="runtimes' namespace copies alive, slaves of the host's mounts; the node "
        "services' come from the kernel model (default 0)",
    )
    add_model_files(p)
    add_pins(p)
    add_json(p)


def register(
    sub: argparse._SubParsersAction, add_json: Callable[[argparse.ArgumentParser], None]
) -> None:
    """Add `kernel` to the cohsim parser."""
    k = sub.add_parser(
        "kernel",
        help="what one op or one mountinfo read costs alone at a given table and peer group",
        description="The cost of one op, or of one mountinfo read, uncontended, in parts: "
        "what grows with the mounts, the peer group of /, the slave namespaces and the CPUs "
        "(the cost definition both engines share: cohsim.kernel.callcost).",
    )
    ks = k.add_subparsers(dest="what", required=True, metavar="op|mountinfo")
    p = ks.add_parser("op", help="one op (e.g. move_mount, umount_detach, ns_copy)")
    p.add_argument("op", help="the op's name as the kernel model has it (models/kernel/*.toml)")
    p.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default=Burst.strategy,
        help="whose sequence issues it: what it does to the peer group and the slaves "
        "(default %(default)s)",
    )
    add_runtime(p, Burst.runtime)
    p.add_argument("--layers", type=positive_int, default=1, help="image layers (default 1)")
    _common(p, add_json)
    p.set_defaults(func=_op)
    p = ks.add_parser("mountinfo", help="one whole /proc/self/mountinfo read")
    _common(p, add_json)
    p.set_defaults(func=_mountinfo)
