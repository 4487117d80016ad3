"""A prediction as a person reads it: the human output of `cohsim predict` and `replay`.

It leads with the answer, in words and units: the burst asked about, the launch p50 and p99
with their intervals, the chance of missing the deadline, and what dominated the launch (the
largest part of the mean container's launch, and what held namespace_sem longest). The
details follow under a heading: the mount phase, what the intervals are, the locks, the
calibration and engine, the launch by mechanism, the unknowns ranked. Every figure is
formatted here, nothing is printed as Python writes it (no dictionaries, lists or reprs);
`--json` is the machine's format.
"""

from __future__ import annotations

import math
from typing import Any

from cohsim.predict import MISFIT_LEVEL, Prediction
from cohsim.predict.intervals import Interval

#: each breakdown category (cohsim.predict.breakdown.CATEGORIES) in words
CATEGORY_WORDS = {
    "namespace": "the runtime's namespace set-up",
    "bind_mounts": "the idmapped bind mounts",
    "overlay": "the overlay mounts",
    "unmounts": "the unmounts",
    "mountinfo": "the runtime's mountinfo reads",
    "other_calls": "other calls",
    "between_calls": "the time between calls",
    "runtime_cpu": "the runtime's own CPU work",
    "run_queue": "waiting for a CPU",
    "lock_wait": "waiting for the mount locks",
    "rcu_wait": "waiting for RCU grace periods",
    "base": "the kernel's fixed launch cost",
}


def sig(x: float) -> str:
    """`x` to 3 significant digits, without an exponent ("4.06", "0.572", "1,235")."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    digits = max(0, 2 - math.floor(math.log10(abs(x))))
    return f"{x:,.{digits}f}"


def seconds(iv: Interval) -> str:
    """'4.06 s [1.76, 11.5]'."""
    return f"{sig(iv.value)} s [{sig(iv.low)}, {sig(iv.high)}]"


def percent(x: float) -> str:
    """A share as a percentage to 3 significant digits ("0 %", "0.05 %", "12.5 %")."""
    return f"{100 * x:.3g} %"


def times(n: float, what: str) -> str:
    """'1 time', '3 times' ('what' in the singular)."""
    return f"{n:g} {what}" + ("" if n == 1 else "s")


def words(value: Any) -> str:
    """A value from a prediction's dictionaries in words: dictionaries as 'key value, ...'
    (a key ending in _s in seconds), lists joined by commas, numbers with %g."""
    if isinstance(value, dict):
        return ", ".join(_pair(str(k), v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(words(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _pair(key: str, value: Any) -> str:
    if key.endswith("_s") and isinstance(value, int | float):
        return f"{key[:-2].replace('_', ' ')} {sig(value)} s"
    return f"{key.replace('_', ' ')} {words(value)}"


def workload(p: Prediction) -> str:
    """The burst or trace asked about, in words."""
    w = p.workload
    size = f"{p.containers} containers" + (f" x {p.layers} layers" if p.layers else "")
    if "trace" in w:
        skipped = (
            f"{w.get('unknown_skipped', 0)} unknown, {w.get('malformed_skipped', 0)} malformed"
        )
        return (
            f"{size} replayed from {w['trace']} ({w.get('format', '')}; one container per "
            f"{w.get('containers_by', 'thread')}; lines skipped: {skipped})"
        )
    how = f"{w['arrival']}" if "arrival" in w else ""
    parts = [f"{w['strategy']} strategy" if "strategy" in w else ""]
    parts += [f"{w['runtime']} runtime" if "runtime" in w else "", f"launched {how}" if how else ""]
    return f"{size}, " + ", ".join(x for x in parts if x)


def dominated(p: Prediction) -> str:
    """What dominated the launch: the largest part of the mean container's launch and what
    held namespace_sem longest (the analytic engine, which has no breakdown: the waits'
    share of each launch)."""
    b = p.breakdown
    if b is None or not b.mean_s:  # the analytic engine: no launch breakdown by category
        out = (
            f"waiting (for the locks and CPUs): {percent(p.lock_wait_fraction.value)} of each "
            "launch, as the analytic engine counts it (no breakdown by mechanism)"
        )
    else:
        parts = {**b.mean_s, "base": b.base_s}
        total = sum(parts.values())
        top = max(parts, key=lambda c: parts[c])
        out = (
            f"{CATEGORY_WORDS.get(top, top.replace('_', ' '))}, {sig(parts[top])} s of the mean"
            f" container's {sig(total)} s launch "
            f"({percent(parts[top] / total if total else 0.0)})"
        )
    if b is None:
        return out
    if b.dominant:
        held = b.ns_write_s[b.dominant]
        out += (
            f"; namespace_sem was held longest by {CATEGORY_WORDS.get(b.dominant, b.dominant)} "
            f"({sig(held)} s held for writing)"
        )
    return out


def answer(p: Prediction) -> list[str]:
    """The lines that answer the question, first."""
    launch = p.launch_s
    c = p.miss_chance
    f = p.failures
    lines = [f"{p.machine}: {workload(p)}"]
    if p.machine_note:
        lines.append(f"  ({p.machine_note})")
    return lines + [
        f"  launch latency: p50 {seconds(launch['p50'])}, p99 {seconds(launch['p99'])}",
        f"  chance of missing the {p.deadline_s:g} s deadline: {percent(c.value)} "
        f"[{percent(c.low)}, {percent(c.high)}] of the containers ({f.value:g} [{f.low:g}, "
        f"{f.high:g}] of {p.containers})",
        f"  what dominated: {dominated(p)}",
        f"  (intervals: {interval_kind(p)}; the details below say how they are made)",
    ]


def interval_kind(p: Prediction) -> str:
    """The intervals in a few words."""
    level = p.interval.get("level")
    draws = p.interval.get("draws", 0)
    if level and draws >= 2:
        return f"{level:.0%} prediction intervals from {p.replicates} replicates"
    return f"the range of {times(p.replicates, 'replicate')}"


def details(p: Prediction) -> list[str]:
    """The figures behind the answer."""
    lines = ["", "  details"]
    lines += [f"  mount table: peak {p.peak_mount_table:,} mounts; {p.mount_ops:,} mount "
              f"calls, {p.syscalls:,} syscalls"]  # fmt: skip
    lines.append(
        f"  peak peer group of /: {p.peak_peer_group:,} mounts (/ and the binds that joined it: "
        "each bind walks it, a container's mountinfo read walks it per line)"
    )
    if p.mountinfo_read_s:
        r = p.mountinfo_read_s
        lines.append(
            f"  one whole mountinfo read at the peak: host {r['host'] * 1e3:.2f} ms, "
            f"in a container's namespace before its old root goes {r['container'] * 1e3:.2f} ms"
        )
    if p.systemd:
        sd = p.systemd
        lines.append(
            f"  systemd re-read the mount table {times(sd['rereads'], 'time')}, the longest "
            f"{sd['longest_reread_s'] * 1e3:.1f} ms; a change waited up to "
            f"{sd['max_lag_s']:.3f} s for one"
        )
    lines.append("  launch latency (s):      value    [interval]")
    for k, v in p.launch_s.items():
        lines.append(f"    {k:>4s}              {v.value:9.3f}  [{v.low:.3f}, {v.high:.3f}]")
    m = p.mount_s
    lines.append(
        f"  mount phase (s): p50 {m['p50'].value:.4f} [{m['p50'].low:.4f}, {m['p50'].high:.4f}], "
        f"p99 {m['p99'].value:.4f}, max {m['max'].value:.4f} "
        f"[{m['max'].low:.4f}, {m['max'].high:.4f}]"
    )
    return lines + intervals(p) + locks(p)


def intervals(p: Prediction) -> list[str]:
    """What the intervals are: the method, the misfit, the priors drawn and pinned."""
    lines = [f"  intervals: {p.interval.get('method', 'range of the replicates')}"]
    if p.misfit_sd:
        lines.append(
            f"    widened by the model's misfit on the fitted host "
            f"(log sd {p.misfit_sd:.3f}, {MISFIT_LEVEL:.0%} of it)"
        )
    else:
        lines.append("    no kernel fit: the model's misfit is not in them")
    drawn, pinned = p.priors.get("drawn", []), p.priors.get("pinned", {})
    lines.append(
        f"    unknowns drawn from their priors: {len(drawn)}"
        + (f" ({', '.join(drawn)})" if drawn else " (priors pinned: the simulation's noise only)")
    )
    lines += [
        f"    pinned: {k} = {pin['value']:g} ({pin['by']}{_range(pin)})"
        for k, pin in pinned.items()
    ]
    return lines


def _range(pin: dict[str, Any]) -> str:
    """A pinned prior's range, and whether the pin lies outside it ("" without one)."""
    if "range" not in pin:
        return ""
    where = "outside its" if not pin.get("inside_range", True) else "its"
    return f"; {where} prior's range {pin['range'][0]:g}-{pin['range'][1]:g}"


def locks(p: Prediction) -> list[str]:
    """The locks' tallies (the nominal replicate), the calibration and the engine."""
    lines = [f"  lock wait fraction: {p.lock_wait_fraction.value:.3f}"]
    for name, st in p.locks.items():
        extra = {k: v for k, v in st.items() if k not in ("wait_s", "hold_s", "acquisitions")}
        parts = [f"{st['acquisitions']:7d} acquisitions"] if "acquisitions" in st else []
        parts += [f"{k[:-2]} {st[k]:.4f} s" for k in ("wait_s", "hold_s") if k in st]
        more = f"; {words(extra)}" if extra else ""
        lines.append(f"    {name:>14s}: {', '.join(parts)}{more}")
    lines.append(f"  calibration: {p.calibration}")
    lines.append(
        f"  kernel: {p.kernel}; engine: {p.engine['name']}; answered by: " + "; ".join(p.level)
    )
    lines += [f"    {k.replace('_', ' ')}: {words(v)}" for k, v in p.engine.items() if k != "name"]
    return lines


def breakdown(p: Prediction) -> list[str]:
    """The nominal replicate's launch by mechanism, mean and slowest container (ms)."""
    b = p.breakdown
    if b is None:
        return []
    lines = ["  launch breakdown (ms, nominal replicate):   mean   slowest"]
    for c, v in b.mean_s.items():
        if v or b.slowest_s[c]:
            lines.append(
                f"    {c.replace('_', ' '):<36s} {v * 1e3:9.3f} {b.slowest_s[c] * 1e3:9.3f}"
            )
    base = f"{b.base_s * 1e3:9.3f}"
    lines.append(f"    {'base (fixed, not simulated)':<36s} {base} {base}")
    if b.ns_write_s:
        held = ", ".join(f"{c.replace('_', ' ')} {v:.3f}" for c, v in b.ns_write_s.items() if v)
        lines.append(
            f"  namespace_sem held for writing (s), what the lock waits waited for: {held}"
        )
    return lines


def sensitivity(p: Prediction) -> list[str]:
    """The unknowns ranked by how far apart the launch p99s at their two ends are."""
    if not p.sensitivity:
        return []
    lines = [
        "  unknowns ranked by their effect on the launch p99 (s): each prior at its low and "
        "high end, the others nominal, replicate 0's seed",
        f"    (another seed alone moves it {p.sensitivity_noise_s:.3f} s: smaller swings are "
        "noise)",
        f"    {'#':>2s}  {'prior':<36s} {'low .. high':>20s} {'at low':>8s} {'at high':>8s} "
        f"{'swing':>7s}  to pin it",
    ]
    for i, r in enumerate(p.sensitivity, 1):
        rng = f"{r.prior.low:g} .. {r.prior.high:g}"
        lines.append(
            f"    {i:>2d}  {r.prior.key:<36s} {rng:>20s} {r.launch_p99_low_s:8.3f} "
            f"{r.launch_p99_high_s:8.3f} {r.swing_s:7.3f}  {r.prior.measure}"
        )
    return lines


def profile(p: Prediction) -> list[str]:
    """Where the nominal replicate's CPU time went, by kernel site, as perf would show it."""
    if p.profile is None:
        return []
    d = p.profile.to_dict()
    lines = [
        f"  profile (nominal replicate, {d['cpus']} CPUs over {d['span_s']:.3f} s, "
        f"{d['busy_fraction']:.0%} busy): CPU time by kernel site"
    ]
    for site, s in d["cpu_s"].items():
        if s:
            mark = "  (contested line)" if site in d["contested_sites"] else ""
            lines.append(f"    {site:<20s} {s:10.3f} s {d['cpu_share'][site]:7.1%}{mark}")
    lines.append(f"    on contested lines: {d['contested_share']:.1%} of the CPU time")
    off = ", ".join(f"{k.replace('_', ' ')} {v:.3f} s" for k, v in d["off_cpu_s"].items() if v)
    if off:
        lines.append(f"    off the CPU (all containers): {off}")
    return lines


def render(p: Prediction, *, with_profile: bool = False) -> str:
    """The whole human output: the answer first, then the details."""
    lines = answer(p) + details(p) + breakdown(p) + sensitivity(p)
    if with_profile:
        lines += profile(p)
    return "\n".join(lines) + "\n"
