"""A plan as text: the question, the answer in one sentence (`answer`), who answered, and
the ranked table (`cohsim plan` without `--json`). The same figures as `Plan.to_dict`,
rounded for reading: seconds to 0.01 s, intervals in brackets; the chance of missing the
deadline in percent; one whole mountinfo read at the peak in milliseconds, in the host's
namespace and in a container's (before its old root goes: what a health check inside it
waits)."""

from __future__ import annotations

from cohsim.plan.api import PRICE_NOTE, SORTS, Plan, PlanRow
from cohsim.plan.burst import SafeBurst
from cohsim.predict.intervals import Interval

#: (header, width) of each column, in order
COLUMNS = (
    ("#", 3),
    ("machine", 24),
    ("vCPUs", 5),
    ("strategy", 13),
    ("launch p50 s", 20),
    ("launch p99 s", 20),
    ("miss % [interval]", 17),
    ("safe burst", 19),
    ("/vCPU", 6),
    ("peak mounts", 11),
    ("read ms host/ctr", 16),
    ("engine", 20),
    ("screen p50 / p99 s", 18),
    ("dominant", 0),
)


def span(iv: Interval, digits: int = 2) -> str:
    """'value [low, high]'."""
    return f"{iv.value:.{digits}f} [{iv.low:.{digits}f}, {iv.high:.{digits}f}]"


def percent_span(iv: Interval) -> str:
    """A share as 'value [low, high]' in percent, 3 significant digits."""
    return f"{100 * iv.value:.3g} [{100 * iv.low:.3g}, {100 * iv.high:.3g}]"


def mechanism(name: str) -> str:
    """The dominant mechanism, "-" where nothing held namespace_sem."""
    return name or "-"


def burst_text(b: SafeBurst) -> str:
    """'value [low, high]', + on a figure at the search's ceiling."""

    def n(x: int) -> str:
        return f"{x}+" if x >= b.max_burst else str(x)

    return f"{n(b.value)} [{n(b.low)}, {n(b.high)}]"


def engine_text(row: PlanRow) -> str:
    """Which engine gave the row's numbers: one name, or for a confirmed row the
    simulation's at the question's count and the screen's safe burst ("des, burst analytic")."""
    if row.burst_engine == row.at.engine:
        return row.at.engine
    return f"{row.at.engine}, burst {row.burst_engine}"


def screen_text(row: PlanRow) -> str:
    """A confirmed row's screen at the question's count, 'p50 / p99' in s ('-': none)."""
    if row.screen is None:
        return "-"
    return f"{row.screen.launch_p50.value:.2f} / {row.screen.launch_p99.value:.2f}"


def engines_text(plan: Plan) -> str:
    """Who answered, in words."""
    o = plan.options
    confirmed = sum(r.stage == "confirmed" for r in plan.rows)
    if not confirmed:
        return f"answered by the {', '.join(plan.engines) or o.engine} engine"
    screen = next(r.screen.engine for r in plan.rows if r.screen is not None)
    sim = plan.rows[0].at.engine
    return (
        f"two stages: every candidate screened by the {screen} engine, the top {confirmed} "
        f"confirmed by the {sim} engine at {o.burst.containers} containers (their safe bursts "
        "are the screen's)"
    )


def replicates_text(plan: Plan) -> str:
    """How many replicates a point of each engine ran, in words."""
    counts = plan.options.replicates_by_engine
    if len(set(counts.values())) == 1:
        return f"{next(iter(counts.values()))} replicates a point"
    return "replicates a point: " + ", ".join(f"{n} {e}" for e, n in counts.items())


def cells(rank: int, row: PlanRow) -> list[str]:
    """One row's cells, as the table prints them."""
    c, at = row.candidate, row.at
    return [
        str(rank),
        c.machine_label,
        str(c.vcpus),
        c.strategy,
        span(at.launch_p50),
        span(at.launch_p99),
        percent_span(at.miss_chance),
        burst_text(row.burst),
        f"{row.burst_per_vcpu:.2f}",
        str(at.peak_mount_table),
        f"{at.read_host_s * 1e3:.1f} / {at.read_container_s * 1e3:.1f}",
        engine_text(row),
        screen_text(row),
        mechanism(at.dominant),
    ]


def answer(plan: Plan) -> str:
    """The answer in one sentence: the first row in words and units, and the rows tied
    with it on the ranking's column."""
    o = plan.options
    if not plan.rows:
        return "no candidate"
    first = plan.rows[0]
    c, at, key = first.candidate, first.at, SORTS[o.sort][0]
    ties = [r.candidate.machine_label for r in plan.rows[1:] if key(r) == key(first)]
    held = at.dominant.split(": ", 1)[-1]
    return (
        f"answer (first by {o.sort}): {c.machine_label}, {c.vcpus} vCPUs, {c.strategy}"
        + (f" (tied with {', '.join(ties)})" if ties else "")
        + f": a safe burst of {burst_text(first.burst)} containers within "
        f"{o.burst.deadline_s:g} s at p99 ({first.burst_per_vcpu:.2f} a vCPU); at "
        f"{o.burst.containers} containers the launch "
        f"p50 is {span(at.launch_p50)} s, the p99 {span(at.launch_p99)} s, the chance of "
        f"missing the deadline {percent_span(at.miss_chance)} %"
        + (f"; namespace_sem is held longest by {held}" if at.dominant else "")
        + f" ({engine_text(first)})"
    )


def render(plan: Plan) -> str:
    """The plan as lines of text: the question, the answer, how it was answered, the table."""
    o = plan.options
    lines = [
        f"Which machine for {o.burst.containers} containers x {o.burst.layers} layers "
        f"({o.strategy}), launched at once, each up within {o.burst.deadline_s:g} s?",
        f"  {answer(plan)}",
        f"  {engines_text(plan)}; {len(plan.rows)} "
        f"candidates, {plan.points} points in {plan.rounds} rounds; seed {o.seed}, "
        f"{replicates_text(plan)}",
        f"  ranked by {o.sort} ('safe burst': the most containers launched at once whose "
        f"p99 meets the deadline, [at the p99's high end, at its low end]; + at the "
        f"ceiling {o.max_burst})",
        f"  {PRICE_NOTE}",
        "",
    ]
    widths = [w for _, w in COLUMNS]

    def line(values: list[str]) -> str:
        return "  ".join(v.ljust(w) if w else v for v, w in zip(values, widths, strict=True))

    lines.append(line([h for h, _ in COLUMNS]).rstrip())
    for i, row in enumerate(plan.rows, 1):
        lines.append(line(cells(i, row)).rstrip())
    return "\n".join(lines) + "\n"
