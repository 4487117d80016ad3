"""A user's values for the kernel model's priors: `--set NAME=VALUE` and `--priors FILE`.

Any prior of the kernel file's `[priors]` (cohsim.kernel.costs.Prior) can be pinned: it then
takes the given value in every replicate and is not drawn (cohsim.predict.unknowns.pin). The
names are the file's keys ("propagation.service_namespaces"); a priors file is a TOML of
NAME = VALUE, with the name quoted or written as a table (`[background]` then
`probe_reads_per_s = 20`).

What is checked, before any work (`check`):

- a name that is not one of the kernel's priors is a usage error naming the closest ones;
- a value no node can have is a usage error: not a finite number, below 0 (every prior is a
  count, a rate, a time or a factor), a slowdown below 1 (that would be a speed-up), or 0
  where the model divides by it or repeats it that often (`POSITIVE`);
- a value outside the prior's documented range is allowed and said: one phrase per such pin,
  which the prediction's validity carries (the command line prints it as a warning). The
  node's mount count is judged by the validity's own range instead (cohsim.predict.validity).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cohsim.errors import CohsimError, UsageError
from cohsim.io import read_toml
from cohsim.kernel.costs import KernelParams
from cohsim.kernel.priors import Prior

#: priors whose value is a slowdown factor: below 1 would make the work faster
SLOWDOWNS = ("cpu.smt_slowdown", "cpu.spin_slowdown")
#: priors the model divides by, or repeats that often, so that 0 is no node: lines a loop
#: fetches at once, a mountinfo line's bytes, the time between two path walks
POSITIVE = (
    "percpu.mlp",
    "background.node_line_bytes",
    "launch.walk_interval_ns",
    "background.daemon_walk_interval_ns",
)
#: judged by cohsim.predict.validity's range, not the prior's
BY_VALIDITY = ("background.node_mounts",)


def close_names(name: str, known: list[str]) -> str:
    """ "closest: " the known names closest to `name` (up to 3), or "its priors: " every known
    one if none is close."""
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    if not close:
        # "service_namespaces" for "propagation.service_namespaces": the part after the dot
        tails = {k.split(".")[-1]: k for k in known}
        close = [tails[t] for t in difflib.get_close_matches(name.split(".")[-1], list(tails))]
    return f"closest: {', '.join(close)}" if close else f"its priors: {', '.join(known)}"


def _impossible(key: str, value: float) -> str:
    """Why no node has `value` for the prior `key` ("" when one could)."""
    if not math.isfinite(value):
        return "not a finite number"
    if value < 0:
        return "below 0"
    if key in SLOWDOWNS and value < 1:
        return "a slowdown below 1 (a speed-up)"
    if key in POSITIVE and value == 0:
        return "0, where the model needs a positive number"
    return ""


def check(kernel: KernelParams, pins: Mapping[str, float]) -> tuple[str, ...]:
    """Refuse unknown names and impossible values (a UsageError, one line); give one phrase
    per pin outside its prior's documented range."""
    by_key: dict[str, Prior] = {p.key: p for p in kernel.priors}
    outside = []
    for key, value in pins.items():
        if key not in by_key:
            raise UsageError(
                f"{key!r} is not a prior of {kernel.name} ({close_names(key, list(by_key))}; "
                "[priors] in models/kernel/*.toml lists them)"
            )
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise UsageError(f"{key} must be a number, not {value!r}")
        why = _impossible(key, float(value))
        if why:
            raise UsageError(f"{key} = {value:g} is impossible: {why}")
        p = by_key[key]
        if key not in BY_VALIDITY and not p.low <= value <= p.high:
            outside.append(f"{key} = {value:g} (its prior's range {p.low:g}-{p.high:g})")
    return tuple(outside)


def parse_assignment(text: str) -> tuple[str, float]:
    """ "NAME=VALUE" as (name, value); a ValueError saying what is wrong otherwise."""
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or not name:
        raise ValueError(f"{text!r} is not NAME=VALUE (e.g. propagation.service_namespaces=12)")
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{text!r}: {value.strip()!r} is not a number") from None
    return name, number


def _flatten(doc: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in doc.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, f"{key}."))
        else:
            out[key] = v
    return out


def load(path: str | Path) -> dict[str, float]:
    """A priors file's pins: NAME = VALUE, every value a number (else a CohsimError naming the
    file and the key)."""
    out = {}
    for key, v in _flatten(read_toml(path, "priors file")).items():
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise CohsimError(f"{key} must be a number, not {v!r}", f"{path}[{key}]")
        out[key] = float(v)
    if not out:
        raise CohsimError("no NAME = VALUE in it", str(path))
    return out


def merge(*sources: Mapping[str, float]) -> dict[str, float]:
    """The pins of every source; a name given twice with two values is a UsageError."""
    out: dict[str, float] = {}
    for src in sources:
        for k, v in src.items():
            if k in out and out[k] != v:
                raise UsageError(f"{k} given twice: {out[k]:g} and {v:g}")
            out[k] = v
    return out
