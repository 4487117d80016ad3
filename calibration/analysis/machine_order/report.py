"""The machine-order study as text tables and as JSON (calibration.analysis.machine_order.
sensitivity runs it; `Study` is what it computed).

Tables: the launch p50s at nominal, the relations at nominal with their margins, one row per
(prior, end) with every relation's margin (`!` marks one that flips from nominal), the p50s
and safe bursts behind those rows, then per relation the ends where it flips and where
between nominal and that end it does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from calibration.analysis.machine_order.relations import (
    CONFIGS,
    P50_RELATIONS,
    TEXT,
    TRIO,
    Relation,
)
from calibration.analysis.machine_order.runs import Bursts, seed_relations
from cohsim import provenance

if TYPE_CHECKING:
    from calibration.analysis.machine_order.sensitivity import End, Study

SCHEMA = 1  #: the JSON document's layout; bumped when it changes
NAMES = tuple(TEXT)  #: R1 .. R6


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], first: int = 38) -> list[str]:
    """Left-aligned first column, the others right-aligned (at least one blank between)."""
    rows = [list(r) for r in rows]
    widths = [max(10, *(len(r[i]) + 1 for r in [head, *rows])) for i in range(1, len(head))]

    def line(cells: Sequence[str]) -> str:
        rest = "".join(c.rjust(w) for c, w in zip(cells[1:], widths, strict=True))
        return (cells[0].ljust(first) + rest).rstrip()

    return [line(head), *map(line, rows)]


def _margin(r: Relation | None, flips: bool = False) -> str:
    if r is None:
        return "-"
    if r.undetermined:
        return "capped" + ("!" if flips else "")
    return f"{r.margin_pct:+.2f}" + ("!" if flips else "")


def _holds(r: Relation) -> str:
    return "?" if r.undetermined else "yes" if r.holds else "no"


def _burst(b: Bursts | None, label: str) -> str:
    if b is None:
        return "-"
    sb = b.bursts[label]
    return f">={sb.value}" if sb.capped else str(sb.value)


def _header(s: Study) -> list[str]:
    a = s.args
    seeds = ",".join(map(str, a.seeds))
    return [
        f"Machine order under the kernel model's priors ({s.kernel.name}): per-layer, "
        f"{a.containers} containers x {a.layers} layers, launched at once",
        f"engine {a.engine}; seeds {seeds} (launch p50: their mean); one replicate each, "
        "every prior nominal but the one at its end",
        f"calibration: {s.runner.calibration}",
        "",
    ]


def _range(s: Study, label: str, containers: int) -> str:
    """The seeds' lowest and highest launch p50 at nominal."""
    xs = s.runner.per_seed[(label, containers, ())]
    return f"{min(xs):.3f}-{max(xs):.3f}"


def _nominal(s: Study) -> list[str]:
    a, p = s.args, s.nominal
    out = ["== launch p50 at the nominal priors (s; with several seeds, their mean and range)"]
    rows = [
        [c.label, f"{p.at_n[c.label]:.4f}", f"{p.at_20[c.label]:.4f}"]
        + ([_range(s, c.label, a.containers), _range(s, c.label, 20)] if len(a.seeds) > 1 else [])
        for c in CONFIGS
    ]
    head = ["configuration", f"{a.containers} ctr", "20 ctr"]
    if len(a.seeds) > 1:
        head += [f"range {a.containers}", "range 20"]
    out += _table(head, rows)
    out += ["", "== the relations at the nominal priors (margin: % by which it holds)"]
    rel = s.nominal_relations()
    rows = [[k, _holds(rel[k]), _margin(rel[k]), TEXT[k]] for k in NAMES]
    rows.insert(0, ["rel", "holds", "margin", "relation"])
    out += [f"{k:<4} {h:<5} {m:>8}  {t}" for k, h, m, t in rows]
    sb = ", ".join(f"{c.label} {_burst(s.nominal_bursts, c.label)}" for c in TRIO)
    out += [
        f"     R1-R4 at {a.containers} containers; R6: safe burst at {a.deadline:g} s "
        f"({sb}; analytic engine, seed {a.seeds[0]})",
        "",
    ]
    return out + (_per_seed(s) if len(a.seeds) > 1 else [])


def _per_seed(s: Study) -> list[str]:
    """R1-R5's margins from each seed's p50s alone: the noise the mean's margins stand on."""
    by_seed = seed_relations(s.runner, s.args.containers)
    out = ["== R1-R5 at the nominal priors from each seed alone (margin, %)"]
    rows = [[f"seed {seed}", *(_margin(r[k]) for k in P50_RELATIONS)]
            for seed, r in zip(s.args.seeds, by_seed, strict=True)]  # fmt: skip
    return [*out, *_table(["", *P50_RELATIONS], rows, first=12), ""]


def _ends(s: Study) -> list[str]:
    out = ["== the relations with each prior at an end, the others nominal "
           "(margin, %; ! flips from nominal)"]  # fmt: skip
    head = ["prior", "end", "value", *NAMES]
    nominal = s.nominal_relations()
    rows = [["(nominal)", "-", "-", *(_margin(nominal[k]) for k in NAMES)]]
    for e in s.ends:
        rel = e.relations()
        cells = [_margin(rel.get(k), k in e.flips) for k in NAMES]
        rows.append([e.prior.key, e.end, f"{e.value:.4g}", *cells])
    out += _table(head, rows)
    for n, title in ((s.args.containers, f"{s.args.containers} containers"), (20, "20 ctr")):
        out += ["", f"== launch p50 with each prior at an end (s), {title}"]
        rows = []
        for e in [None, *s.ends]:
            p = s.nominal if e is None else e.point
            vals = p.at_n if n == s.args.containers else p.at_20
            name = ["(nominal)", "-"] if e is None else [e.prior.key, e.end]
            rows.append([*name, *(f"{vals[c.label]:.4f}" for c in CONFIGS)])
        out += _table(["prior", "end", *(c.short for c in CONFIGS)], rows)
    if s.args.burst_ends and s.ends:
        out += ["", f"== safe burst with each prior at an end (containers, {s.args.deadline:g} s)"]
        rows = [["(nominal)", "-", *(_burst(s.nominal_bursts, c.label) for c in TRIO)]]
        rows += [[e.prior.key, e.end, *(_burst(e.bursts, c.label) for c in TRIO)] for e in s.ends]
        out += _table(["prior", "end", *(c.short for c in TRIO)], rows)
    return [*out, ""]


def _flips(s: Study) -> list[str]:
    out = ["== where the relations flip (one prior at a time over its range)"]
    nominal = s.nominal_relations()
    for k in NAMES:
        r = nominal[k]
        state = {"yes": "holds", "no": "does not hold", "?": "undetermined"}[_holds(r)]
        ends = [e for e in s.ends if k in e.flips]
        tail = "; flips at:" if ends else "; the same at every end tested"
        if not s.ends:
            tail = " (no prior at its ends tested)"
        if k == "R6" and not s.args.burst_ends:
            tail = " (tested at nominal only)"
        out.append(f"{k} {state} at nominal ({_margin(r)} %){tail}")
        for e in ends:
            line = (
                f"   {e.prior.key} {e.end} ({e.value:.4g}; nominal {e.nominal:.4g}): "
                f"{_margin(e.relations()[k])} %"
            )
            if k in e.crossings:
                lo, hi = e.crossings[k]
                line += f"; flips between {lo:.6g} and {hi:.6g}"
            out.append(line)
    still = _inert(s)
    if still:
        out.append(f"no launch p50 moves at either end of: {', '.join(still)}")
    return [*out, ""]


def _inert(s: Study) -> list[str]:
    """The priors whose ends move no configuration's launch p50 (by 1e-9 relative)."""
    moved: dict[str, bool] = {}
    base = {**s.nominal.at_n, **{k + "@20": v for k, v in s.nominal.at_20.items()}}
    for e in s.ends:
        here = {**e.point.at_n, **{k + "@20": v for k, v in e.point.at_20.items()}}
        move = any(abs(here[k] / base[k] - 1.0) > 1e-9 for k in base)
        moved[e.prior.key] = moved.get(e.prior.key, False) or move
    return [k for k, m in moved.items() if not m]


def text(s: Study) -> str:
    """The whole report."""
    r = s.runner
    run = [
        f"== run: {r.predictions} predictions ({s.args.engine} engine; R6 analytic), "
        f"{s.wall_s:.1f} s"
    ]
    lines = _header(s) + _nominal(s) + (_ends(s) if s.ends else []) + _flips(s) + run
    return "\n".join(lines) + "\n"


def _end_doc(e: End) -> dict[str, Any]:
    return {
        "prior": e.prior.key,
        "end": e.end,
        "value": e.value,
        "nominal": e.nominal,
        "shape": e.prior.shape,
        "launch_p50_s": _p50s(e.point),
        "relations": {k: r.to_dict() for k, r in e.relations().items()},
        "safe_burst": e.bursts.to_dict()["safe_burst"] if e.bursts else None,
        "flips": list(e.flips),
        "flips_between": {k: list(v) for k, v in e.crossings.items()},
    }


def _p50s(p: Any) -> dict[str, dict[str, float]]:
    return {
        "at_containers": {k: round(v, 6) for k, v in p.at_n.items()},
        "at_20": {k: round(v, 6) for k, v in p.at_20.items()},
    }


def document(s: Study) -> dict[str, Any]:
    """The numbers as one JSON document."""
    a = s.args
    arguments = {k: (list(v) if isinstance(v, tuple) else v) for k, v in sorted(vars(a).items())}
    return {
        "schema": SCHEMA,
        "provenance": provenance.stamp(
            arguments=arguments,
            kernel=s.kernel.name,
            calibration=s.runner.calibration,
            strategy="per-layer",
            configurations=[c.label for c in CONFIGS],
        ),  # fmt: skip
        "relations": TEXT,
        "nominal": {
            "launch_p50_s": _p50s(s.nominal),
            "launch_p50_s_per_seed": {
                f"{label}@{n}": [round(x, 6) for x in xs]
                for (label, n, pins), xs in sorted(s.runner.per_seed.items())
                if not pins and n in (a.containers, 20)
            },
            "relations": {k: r.to_dict() for k, r in s.nominal_relations().items()},
            "margin_pct_per_seed": {
                k: [round(r[k].margin_pct, 4) for r in seed_relations(s.runner, a.containers)]
                for k in P50_RELATIONS
            },
            "safe_burst": s.nominal_bursts.to_dict()["safe_burst"],
        },
        "ends": [_end_doc(e) for e in s.ends],
        "predictions": s.runner.predictions,
        "wall_s": round(s.wall_s, 3),
    }


def write_json(s: Study, path: str) -> None:
    provenance.write_atomic(path, provenance.dumps(document(s)))
