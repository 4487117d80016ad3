"""The report as one self-contained HTML document: `render`.

One file a planner can mail to a colleague: no network, no file beside it. The style sheet
and the one script are inline, the pictures are PNG data: URIs (cohsim.report.figures), and
every text from the model is escaped. Sections: the question; the ranked table (the same
cells as `cohsim plan`'s, cohsim.plan.table); launch against containers; where the time
goes (namespace_sem's holders, and the launch by mechanism where the engine reports it);
what each fix would buy; the uncertainty and what would narrow it; provenance.

The script runs on load and writes into the attributes of a hidden `#image-check` how many of
the document's images decoded (complete, with a natural width): a browser test reads them
from the rendered DOM; a reader sees nothing of it.
"""

from __future__ import annotations

from html import escape
from typing import Any

from cohsim import __version__, provenance
from cohsim.plan import PRICE_NOTE
from cohsim.plan.burst import SafeBurst
from cohsim.plan.table import (
    COLUMNS,
    answer,
    cells,
    engine_text,
    engines_text,
    percent_span,
    replicates_text,
    span,
)
from cohsim.report.content import Detail, Fix, ReportData
from cohsim.report.figures import figure, plot_curves, plot_fixes, plot_holders

STYLE = """
body { font-family: sans-serif; margin: 2em auto; padding: 0 1.5em; max-width: 1400px; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; }
th { background: #f0f0f0; }
tr:nth-child(even) td { background: #fafafa; }
img { max-width: 100%; border: 1px solid #ddd; }
.note { color: #555; font-size: 0.9em; }
code { background: #f4f4f4; padding: 0 0.2em; }
"""

CHECK = """
window.addEventListener("load", function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  var p = document.getElementById("image-check");
  p.setAttribute("data-loaded", String(ok));
  p.setAttribute("data-total", String(imgs.length));
});
"""


def _table(headers: list[str], rows: list[list[str]], ident: str = "", cls: str = "") -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    row_cls = f' class="{cls}"' if cls else ""
    body = "".join(
        f"<tr{row_cls}>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows
    )
    id_attr = f' id="{ident}"' if ident else ""
    return f"<table{id_attr}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _img(uri: str, alt: str) -> str:
    return f'<p><img src="{uri}" alt="{escape(alt)}"></p>'


def title(data: ReportData) -> str:
    o = data.plan.options
    return (
        f"cohsim plan: {o.burst.containers} containers x {o.burst.layers} layers, "
        f"each up within {o.burst.deadline_s:g} s"
    )


def _question(data: ReportData) -> str:
    p, o = data.plan, data.plan.options
    return (
        f"<h1>{escape(title(data))}</h1>"
        f"<p>Which instance type should run {o.burst.containers} containers of a "
        f"{o.burst.layers}-layer image ({escape(o.strategy)}), all launched at once, each up "
        f"within {o.burst.deadline_s:g} s? {len(p.rows)} candidates compared, "
        f'<b id="engines">{escape(engines_text(p))}</b> '
        f"({p.points} points in {p.rounds} rounds; seed "
        f"{o.seed}, {escape(replicates_text(p))}).</p>"
        f'<p id="answer"><b>{escape(answer(p))}</b></p>'
        f'<p class="note">Ranked by {escape(o.sort)}. Safe burst: the most containers '
        f"launched at once whose launch p99 meets the deadline, [with the p99's high end, "
        f"with its low end]; + marks the search's ceiling ({o.max_burst}). "
        f"{escape(PRICE_NOTE)}.</p>"
    )


def _ranking(data: ReportData) -> str:
    rows = [cells(i, r) for i, r in enumerate(data.plan.rows, 1)]
    return (
        "<h2>Ranked candidates</h2>"
        + _table([h for h, _ in COLUMNS], rows, ident="ranking", cls="candidate")
        + '<p class="note">The engine column says which engine gave each row\'s numbers; a '
        "row confirmed by the simulation shows the simulation's figures at the question's "
        "count, the analytic screen's p50 and p99 beside them, and the screen's safe "
        "burst.</p>"
    )


def _curves(data: ReportData) -> str:
    o = data.plan.options
    uri = figure(plot_curves, data.curves, o.burst.deadline_s, o.burst.containers)
    return (
        "<h2>Launch latency against the burst</h2>"
        + _img(uri, "launch p50 and p99 against containers for the top distinct results")
        + '<p class="note">Points (from the screen\'s engine, '
        + escape(o.screen_engine)
        + "): those the safe-burst search evaluated, and a grid from a "
        "tenth of the question's count to past the largest safe burst. Candidates whose "
        "results are the same at every count searched (within 1 %, the figure's resolution: "
        "the same or nearly the same hardware) are one curve, which names them all.</p>"
    )


def _launch_by_mechanism(d: Detail) -> str:
    b = d.prediction.breakdown
    if b is None or not b.mean_s:
        return ""
    rows = [
        [c.replace("_", " "), f"{v * 1e3:.1f}", f"{b.slowest_s.get(c, 0.0) * 1e3:.1f}"]
        for c, v in b.mean_s.items()
        if v or b.slowest_s.get(c)
    ]
    rows.append(["base (fixed)", f"{b.base_s * 1e3:.1f}", f"{b.base_s * 1e3:.1f}"])
    return f"<h3>{escape(d.row.candidate.label)}: launch by mechanism (ms)</h3>" + _table(
        ["mechanism", "mean container", "slowest container"], rows
    )


def _breakdown(data: ReportData) -> str:
    if not data.details:
        return ""
    uri = figure(plot_holders, data.details, size=(9.0, 1.5 + 0.6 * len(data.details)))
    rows = []
    for d in data.details:
        b = d.prediction.breakdown
        held = b.ns_write_s if b else {}
        rows.append(
            [d.row.candidate.label, d.row.at.dominant or "-"]
            + [", ".join(f"{k.replace('_', ' ')} {v:.3f} s" for k, v in held.items())]
        )
    engine: dict[str, Any] = d.prediction.engine if isinstance(d.prediction.engine, dict) else {}
    missing = engine.get("not_modelled", "")
    return (
        "<h2>Where the time goes</h2>"
        + _img(uri, "namespace_sem write holds by mechanism for the top candidates")
        + _table(["candidate", "dominant", "namespace_sem held for writing"], rows)
        + "".join(_launch_by_mechanism(d) for d in data.details)
        + (
            f'<p class="note">Not modelled by this engine: {escape(missing)}.</p>'
            if missing
            else ""
        )
    )


def _profile(data: ReportData) -> str:
    """Where each top candidate's CPUs spent the burst, by kernel site: what `perf report`
    would show there, and the share on contested lines (cohsim.kernel.result.Profile)."""
    profiles = [(d.row.candidate.label, d.prediction.profile) for d in data.details]
    shown = [(label, p.to_dict()) for label, p in profiles if p is not None]
    if not shown:
        return ""
    sites = [s for s in shown[0][1]["cpu_s"] if any(d["cpu_s"][s] for _, d in shown)]
    rows = [[s.replace("_", " ")] + [f"{d['cpu_share'][s]:.1%}" for _, d in shown] for s in sites]
    rows.append(["on contested lines"] + [f"{d['contested_share']:.1%}" for _, d in shown])
    rows.append(["CPU seconds in all"] + [f"{d['cpu_total_s']:.2f}" for _, d in shown])
    return (
        "<h3>Where the CPUs' time goes, by kernel site (share of CPU time)</h3>"
        + _table(["site"] + [label for label, _ in shown], rows)
        + '<p class="note">Hold it against a perf profile of the node during a burst: the '
        "writers spinning on namespace_sem show as osq_lock and rwsem_spin_on_owner, the "
        "walks on mount_lock's counter as path_init.</p>"
    )


def gain(fix: SafeBurst, base: SafeBurst) -> str:
    """The fix's safe burst against the row's as it is, value against value (both the
    median over the same draws); a burst at the search's ceiling is a lower bound, and
    says so."""
    if fix.capped and base.capped:
        return f"both at the ceiling ({base.max_burst}+): not measured"
    if not base.value:
        return "-"
    ratio = f"x {fix.value / base.value:.2f}"
    return (
        f"{ratio} or more (the fix reaches the ceiling, {fix.max_burst}+)" if fix.capped else ratio
    )


def _burst(b: SafeBurst) -> str:
    """A safe burst's value, + at the search's ceiling."""
    return f"{b.value}+" if b.value >= b.max_burst else str(b.value)


def _slowest(draws: tuple[float, ...]) -> str:
    return f"{max(draws):.2f}" if draws else "-"


def _screen_p99(f: Fix) -> str:
    """A confirmed row's fix: the screen's p99 at the question, as is and with the fix."""
    if f.screen is None or f.base.screen is None:
        return "-"
    return f"{f.base.screen.launch_p99.value:.2f} / {f.screen.launch_p99.value:.2f}"


def _fix_rows(data: ReportData) -> list[list[str]]:
    """One row per fix: the same figures for the row as it is and with the fix."""
    return [
        [f.base.candidate.label, f.name, f.candidate.machine_label,
         f"{f.base.candidate.vcpus} / {f.candidate.vcpus}",
         f"{f.base.at.launch_p99.value:.2f}", f"{f.at.launch_p99.value:.2f}",
         _slowest(f.draws_as_is_s), _slowest(f.draws_fixed_s),
         _burst(f.base.burst), _burst(f.burst), gain(f.burst, f.base.burst),
         engine_text(f.base), _screen_p99(f)]
        for f in data.fixes
    ]  # fmt: skip


def _fixes(data: ReportData) -> str:
    if not data.fixes:
        return "<h2>What each fix would buy</h2><p>No fix applies to the top candidates.</p>"
    uri = figure(plot_fixes, data.fixes, size=(9.0, 1.5 + 0.35 * (len(data.fixes) + 3)))
    n = len(data.fixes[0].draws_as_is_s)
    headers = ["candidate", "fix", "machine with the fix", "vCPUs as is / with the fix",
               "launch p99 s at the question, as is", "with the fix",
               f"launch p99 s in the slowest of the {n} shared draws, as is", "with the fix",
               "safe burst, as is", "with the fix", "safe burst with the fix vs as is",
               "engine (both sides)", "screen's launch p99 s, as is / with the fix"]  # fmt: skip
    return (
        "<h2>What each fix would buy</h2>"
        + _img(uri, "safe burst of the top candidates with each fix")
        + _table(headers, _fix_rows(data), ident="fixes")
        + '<p class="note">Each row gives the same figures for the candidate as it is and '
        "with the fix, from the same draws of the unknowns (the replicates share their "
        "seed): the launch p99 and the safe burst at the median over the draws, and the "
        "launch p99 in the slowest simulated draw, the worst case the two share. The ends "
        "of each point's own interval (in the ranked table and under 'How sure') are not "
        "paired: each is extrapolated from its own draws' spread, so a fix whose time above "
        "the fixed launch cost is small but spread wide can show a worse pessimistic end "
        "than the candidate as it is, although it is faster in every draw. A burst marked + "
        "reached the search's ceiling: the gain is then a lower bound. The engine column "
        "says which engine gave both sides: a confirmed candidate and its fix are both "
        "answered by the simulation at the question's count (the screen's figures beside "
        "them), and both safe bursts come from the screen's search.</p>"
        '<p class="note">common-parent: the layers\' common parent mapped once (containerd '
        "2.2); lowerdir-plus: idmapped lowerdirs passed as fds (Linux 6.7+); SMT off and one "
        "socket: the same instance with fewer, less contended CPUs.</p>"
    )


def _uncertainty(data: ReportData) -> str:
    rows = []
    for d in data.details:
        p99, b = d.row.at.launch_p99, d.row.burst
        rows.append(
            [d.row.candidate.label, span(p99), f"{p99.high - p99.low:.2f}",
             percent_span(d.row.at.miss_chance), f"{b.low} .. {b.high}",
             str(b.high - b.low), str(d.prediction.interval.get("method", ""))]
        )  # fmt: skip
    out = ["<h2>How sure, and what would narrow it</h2>"]
    out.append(
        _table(
            [
                "candidate",
                "launch p99 s",
                "p99 interval width s",
                "chance of missing the deadline %",
                "safe burst range",
                "width",
                "interval",
            ],
            rows,
        )  # fmt: skip
    )
    first = data.details[0].prediction if data.details else None
    if first is not None and first.sensitivity:
        out.append(
            f"<h3>The unknowns, ranked by their effect on {escape(first.machine)}'s p99</h3>"
            f'<p class="note">Each prior at its low and high end, the others nominal; another '
            f"seed alone moves the p99 {first.sensitivity_noise_s:.3f} s.</p>"
        )
        out.append(
            _table(
                ["prior", "range", "p99 at low s", "p99 at high s", "swing s", "to pin it"],
                [
                    [
                        r.prior.key,
                        f"{r.prior.low:g} .. {r.prior.high:g}",
                        f"{r.launch_p99_low_s:.3f}",
                        f"{r.launch_p99_high_s:.3f}",
                        f"{r.swing_s:.3f}",
                        r.prior.measure,
                    ]
                    for r in first.sensitivity
                ],
                ident="sensitivity",
            )  # fmt: skip
        )
    if first is not None:
        drawn = first.priors.get("drawn", [])
        out.append(
            f"<p>Priors drawn in the replicates ({len(drawn)}): the kernel model's numbers "
            "that no measurement identifies on a large machine. Pin one with a measurement "
            "(e.g. <code>--node-mounts</code>) to narrow every interval.</p>"
        )
        out.append(
            _table(
                ["prior", "range", "what it rests on", "the measurement that pins it"],
                [
                    [
                        k,
                        f"{data.priors[k].low:g} .. {data.priors[k].high:g}",
                        data.priors[k].why,
                        data.priors[k].measure,
                    ]
                    for k in drawn
                    if k in data.priors
                ],
            )  # fmt: skip
        )
    return "".join(out)


def _provenance(data: ReportData) -> str:
    p = data.plan
    doc = p.to_dict()
    first = data.details[0].prediction if data.details else None
    facts = [
        ["cohsim", __version__],
        ["engine asked / answered", f"{p.options.engine} / {', '.join(p.engines)}"],
        ["seed, replicates", f"{p.options.seed}, {replicates_text(p)}"],
        ["plan document", provenance.text_digest(provenance.dumps(doc))],
    ]
    if first is not None:
        facts += [
            ["kernel model", first.kernel],
            ["calibration (fit)", first.calibration],
            ["levels that answered", "; ".join(first.level)],
        ]
    digests = [[r.candidate.label, str(r.at.containers), r.at.digest] for r in p.rows]
    return (
        "<h2>Provenance</h2>"
        + _table(["what", "value"], facts, ident="provenance")
        + "<details><summary>digest of every row's point at the question's count</summary>"
        + _table(["candidate", "containers", "digest"], digests)
        + "</details>"
    )


def render(data: ReportData) -> str:
    """The whole document."""
    body = "".join(
        (
            _question(data),
            _ranking(data),
            _curves(data),
            _breakdown(data),
            _profile(data),
            _fixes(data),
            _uncertainty(data),
            _provenance(data),
        )
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title(data))}</title><style>{STYLE}</style></head><body>"
        f"{body}"
        '<p id="image-check" hidden></p>'
        f"<script>{CHECK}</script></body></html>\n"
    )
