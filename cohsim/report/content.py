"""What a plan's report shows beyond the ranked table, computed from the plan: `gather`.

The table (cohsim.plan) answers "which machine"; a colleague reading the report also asks how
the answer moves with the load, where the time goes, what the alternatives to buying a larger
machine would buy, and how sure the figures are. `gather` computes, with the plan's own
evaluator (the same points, cached) and options:

- `curves`: the launch p50 and p99 (with interval) against the container count for the top
  `curve_top` distinct results: the points the search already evaluated, and a grid from a
  tenth of the question's count to past the largest safe burst. Rows whose results are the
  same at every count searched (instance types on the same hardware; within 1 %, the
  figure's resolution) make one curve, which names them all;
- `fixes`: for each of the top `top` rows, the same search for the row with each fix applied
  where it applies -- the layers' common parent mapped once (common-parent), lowerdirs passed
  as fds (lowerdir-plus), SMT off, one socket -- with its p99 at the question's count, and
  the launch p99 of each replicate at that count as it is and with the fix: the replicates
  share their draws of the unknowns (the same seed), so the two compare draw by draw. (The
  ends of each point's interval are not paired: each is extrapolated from its own draws'
  spread, so a fix whose time above the fixed launch cost is small but spread wide can show
  a worse pessimistic end than the row as it is, although it is faster in every draw.);
  In a two-stage plan (cohsim.plan.api) a fix of a confirmed row is searched as its row
  was, by the screen, and answered at the question's count by the simulation, as its row
  is (the screen's answer kept beside), so that the two compare like with like;
- `details`: one full prediction (cohsim.predict) of each of the top rows at the question's
  count, by the engine that answered the row: what held namespace_sem and, where the
  engine reports it, the launch by mechanism;
  the first with the unknowns ranked by their effect on the p99 (`explain`);
- `priors`: the kernel model's priors (what each is, and the measurement that would pin it).

The full predictions (the top rows' and each fix's at the question's count, whose replicates
give the fixes' draws, and the details) are asked at once, after the curves and before the
fixes' confirmation, and kept in the sweep cache with the plan's points
(cohsim.plan.pointdetail: keyed by every input and the code, the same bytes read back; each
also leaves the sweep's row of its point, which the confirmation then reads): a second report
of the same question predicts nothing. The first row's ranked prediction gives its draws too
(the ranking adds runs; it changes no replicate).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from cohsim.kernel.costs import load_kernel
from cohsim.kernel.priors import Prior
from cohsim.machine.catalog import Catalog
from cohsim.plan import Candidate, Outcome, Plan, PlanRow, Probe, SafeBurst
from cohsim.plan.api import CONFIRM_ENGINE, search
from cohsim.plan.outcome import Evaluate
from cohsim.plan.pointdetail import Ask, PointDetail, details
from cohsim.predict.intervals import Interval

#: the container counts of a curve, as fractions of the question's count
CURVE_FRACTIONS = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)


@dataclass(frozen=True)
class Curve:
    """One candidate's outcomes by container count, and the candidates whose results are
    the same (`same`: drawn as this one curve)."""

    candidate: Candidate
    points: dict[int, Outcome]
    same: tuple[Candidate, ...] = ()

    @property
    def label(self) -> str:
        """The candidate's label, or every machine of the merged curve and their strategy."""
        if not self.same:
            return self.candidate.label
        machines = ", ".join(c.machine_label for c in (self.candidate, *self.same))
        return f"{machines} {self.candidate.strategy}"


@dataclass(frozen=True)
class Fix:
    """A top row with one fix applied: its p99 at the question's count and its safe burst,
    and each replicate's launch p99 at that count as it is and with the fix (s; the same
    draws of the unknowns, in the same order)."""

    base: PlanRow
    name: str  #: "common-parent", "lowerdir-plus", "SMT off", "one socket"
    candidate: Candidate
    at: Outcome
    burst: SafeBurst
    draws_as_is_s: tuple[float, ...] = ()
    draws_fixed_s: tuple[float, ...] = ()
    #: a confirmed row's fix: the screen's answer at the question's count (`at` is then the
    #: simulation's, as the row's is)
    screen: Outcome | None = None


@dataclass(frozen=True)
class Detail:
    """A top row's full prediction at the question's count (what the report reads of it)."""

    row: PlanRow
    prediction: PointDetail


@dataclass(frozen=True)
class ReportData:
    """Everything the report shows."""

    plan: Plan
    curves: tuple[Curve, ...]
    fixes: tuple[Fix, ...]
    details: tuple[Detail, ...]
    priors: dict[str, Prior]


def fixes_of(c: Candidate, catalog: Catalog) -> list[tuple[str, Candidate]]:
    """Each fix that changes `c`, with the candidate it gives (vCPUs counted again)."""
    topo = catalog.get(c.instance).topology
    out = [
        (s, replace(c, strategy=s)) for s in ("common-parent", "lowerdir-plus") if c.strategy != s
    ]
    if c.smt and topo.threads_per_core > 1:
        per_core = topo.threads_per_core
        out.append(("SMT off", replace(c, smt=False, vcpus=c.vcpus // per_core)))
    if c.sockets is None and topo.sockets > 1:
        out.append(("one socket", replace(c, sockets=1, vcpus=c.vcpus // topo.sockets)))
    return out


def curve_counts(row: PlanRow, containers: int) -> list[int]:
    """The counts a curve adds to the searched ones: fractions of the question's count, and
    a third past the largest safe burst."""
    counts = {max(1, round(containers * f)) for f in CURVE_FRACTIONS}
    counts.add(min(row.burst.max_burst, max(1, round(row.burst.high * 4 / 3))))
    return sorted(counts)


#: results within this share of each other at every count are one curve (the figure's
#: resolution: a log axis half a page high)
SAME = 0.01


def _close(a: Interval, b: Interval) -> bool:
    return all(
        abs(x - y) <= SAME * max(abs(x), abs(y))
        for x, y in ((a.value, b.value), (a.low, b.low), (a.high, b.high))
    )


def same_result(a: PlanRow, b: PlanRow) -> bool:
    """Whether two rows' searches found the same: the strategy, the safe burst, the counts
    probed, and the launch p50 and p99 within `SAME` at each."""
    pa, pb = a.burst.probes, b.burst.probes
    return (
        a.candidate.strategy == b.candidate.strategy
        and (a.burst.value, a.burst.low, a.burst.high) == (b.burst.value, b.burst.low, b.burst.high)
        and pa.keys() == pb.keys()
        and all(
            _close(pa[n].launch_p50, pb[n].launch_p50)
            and _close(pa[n].launch_p99, pb[n].launch_p99)
            for n in pa
        )
    )


def distinct(rows: Sequence[PlanRow], top: int) -> list[tuple[PlanRow, tuple[Candidate, ...]]]:
    """The first `top` distinct results among `rows` (in order): each group's first row,
    and the candidates of the later rows with the same result (`same_result`)."""
    groups: list[list[PlanRow]] = []
    for row in rows:
        group = next((g for g in groups if same_result(g[0], row)), None)
        if group is None:
            groups.append([row])
        else:
            group.append(row)
    return [(g[0], tuple(r.candidate for r in g[1:])) for g in groups[:top]]


def _curves(plan: Plan, evaluate: Evaluate, top: int) -> tuple[Curve, ...]:
    o = plan.options
    groups = distinct(plan.rows, top)
    rows = [row for row, _ in groups]
    wanted = [
        (i, n)
        for i, row in enumerate(rows)
        for n in curve_counts(row, o.burst.containers)
        if n not in row.burst.probes
    ]
    outs = (
        evaluate([Probe(rows[i].candidate, n, o.burst.layers) for i, n in wanted]) if wanted else []
    )
    points = [dict(r.burst.probes) for r in rows]
    for (i, n), out in zip(wanted, outs, strict=True):
        points[i][n] = out
    return tuple(
        Curve(r.candidate, dict(sorted(p.items())), same)
        for (r, same), p in zip(groups, points, strict=True)
    )


def engine_of(plan: Plan, row: PlanRow) -> str:
    """The engine that answered `row` at the question's count: the simulation for a
    confirmed row, else the screen's (or the one engine)."""
    return CONFIRM_ENGINE if row.stage == "confirmed" else plan.options.screen_engine


def asks_of(
    plan: Plan, top: int, catalog: Catalog
) -> tuple[list[tuple[PlanRow, str, Candidate]], list[Ask]]:
    """The top rows' fixes, and the full predictions the report asks for: each top row's
    (the first with the priors ranked: its draws are the same, `explain` only adds runs) and
    each fix's, by the engine that answered its row."""
    o = plan.options
    named = [
        (row, name, c) for row in plan.rows[:top] for name, c in fixes_of(row.candidate, catalog)
    ]
    rows = [
        Ask(Probe(row.candidate, o.burst.containers, o.burst.layers), engine_of(plan, row), i == 0)
        for i, row in enumerate(plan.rows[:top])
    ]
    fixed = [
        Ask(Probe(c, o.burst.containers, o.burst.layers), engine_of(plan, row))
        for row, _, c in named
    ]
    return named, rows + fixed


def _fixes(
    plan: Plan,
    evaluate: Evaluate,
    confirm: Evaluate,
    named: list[tuple[PlanRow, str, Candidate]],
    draws: dict[tuple[Candidate, str], tuple[float, ...]],
) -> tuple[Fix, ...]:
    """Each fix searched as its row was (the screen's search), and answered at the
    question's count by the engine that answered its row: like with like."""
    o = plan.options
    bursts = search(o, [c for _, _, c in named], evaluate)
    confirmed = [i for i, (row, _, _) in enumerate(named) if row.stage == "confirmed"]
    sims = confirm([Probe(named[i][2], o.burst.containers, o.burst.layers) for i in confirmed])
    at = {
        i: (out, bursts[i].probes[o.burst.containers])
        for i, out in zip(confirmed, sims, strict=True)
    }
    fixes = []
    for i, ((row, name, c), b) in enumerate(zip(named, bursts, strict=True)):
        e = engine_of(plan, row)
        out, screen = at.get(i, (b.probes[o.burst.containers], None))
        fixes.append(Fix(row, name, c, out, b, draws[row.candidate, e], draws[c, e], screen=screen))
    return tuple(fixes)


def gather(
    plan: Plan,
    evaluate: Evaluate,
    *,
    confirm: Evaluate | None = None,
    top: int = 3,
    curve_top: int = 5,
    catalog: Catalog | None = None,
    cache: Path | str | None = None,
) -> ReportData:
    """The report's content for `plan` (see the module's docstring): `evaluate` the screen's
    evaluator (or the one engine's), `confirm` the confirmation's (None: `evaluate`); the
    full predictions kept in the sweep cache `cache` (as cohsim.sweep.SweepOptions.cache:
    None the default folder, "off" none), a progress bar where the plan shows one."""
    catalog = catalog or Catalog()
    o = plan.options
    named, asks = asks_of(plan, top, catalog)
    curves = _curves(plan, evaluate, curve_top)
    sweeps = {e: replace(o.sweep_for(e), cache=cache) for e in {a.engine for a in asks}}
    got = details(asks, sweeps, catalog, progress=o.progress)
    draws = {(a.probe.candidate, a.engine): d.draws_s for a, d in zip(asks, got, strict=True)}
    n = len(plan.rows[:top])
    return ReportData(
        plan=plan,
        curves=curves,
        fixes=_fixes(plan, evaluate, confirm or evaluate, named, draws),
        details=tuple(Detail(r, d) for r, d in zip(plan.rows[:n], got[:n], strict=True)),
        priors={p.key: p for p in load_kernel(None).priors},
    )
