"""The report's document (cohsim.report): self-contained, every section, atomic writing."""

from __future__ import annotations

import re

import pytest
from reportdata import build

from cohsim.errors import CohsimError
from cohsim.report import render, write_report
from cohsim.report.content import fixes_of


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return build(tmp_path_factory.getbasetemp())


def test_the_document_needs_nothing_outside_itself(report):
    path, data = report
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert not re.search(r"https?://|<link|<iframe|@import|url\(", text)
    sources = re.findall(r'src="([^"]*)"', text)
    assert len(sources) == 3 and all(s.startswith("data:image/png;base64,") for s in sources)
    assert "<script src" not in text


def test_every_section_is_there(report):
    path, data = report
    text = path.read_text(encoding="utf-8")
    assert "<title>cohsim plan: 10 containers x 5 layers, each up within 0.6 s</title>" in text
    for heading in ("Ranked candidates", "Launch latency against the burst", "Where the time goes",
                    "What each fix would buy", "How sure, and what would narrow it",
                    "Provenance"):  # fmt: skip
        assert f"<h2>{heading}</h2>" in text
    assert text.count('<tr class="candidate">') == len(data.plan.rows) == 2
    assert "no price column" in text and "analytic" in text
    # the fixes of the top row (r5.metal): both strategies, SMT off, one socket
    assert [(f.base.candidate.instance, f.name) for f in data.fixes] == [
        ("r5.metal", "common-parent"), ("r5.metal", "lowerdir-plus"),
        ("r5.metal", "SMT off"), ("r5.metal", "one socket"),
    ]  # fmt: skip
    fixes = text.split('id="fixes"', 1)[1].split("</table>", 1)[0]
    assert fixes.count("<tr>") == 1 + 4 and "<td>one socket</td>" in fixes
    # the unknowns ranked for the top candidate, each with the measurement that pins it
    assert 'id="sensitivity"' in text and "wc -l /proc/self/mountinfo" in text
    for d in data.details:
        assert d.row.at.digest in text
    # where each top candidate's CPUs spent the burst, by kernel site
    profile = text.split("by kernel site", 1)[1].split("</table>", 1)[0]
    assert "namespace sem spin" in profile and "on contested lines" in profile
    assert all(d.row.candidate.label in profile for d in data.details)


def test_the_same_content_renders_to_the_same_bytes(report):
    path, data = report
    assert render(data) == path.read_text(encoding="utf-8")


def test_fixes_apply_only_where_the_hardware_allows(catalog, report):
    _, data = report
    m7a = next(r.candidate for r in data.plan.rows if r.candidate.instance == "m7a.metal-48xl")
    # one thread per core: no SMT to turn off; two sockets
    assert [n for n, _ in fixes_of(m7a, catalog)] == [
        "common-parent",
        "lowerdir-plus",
        "one socket",
    ]
    m7a_1s = dict(fixes_of(m7a, catalog))["one socket"]
    assert (m7a_1s.vcpus, m7a_1s.sockets) == (96, 1)
    r5 = next(r.candidate for r in data.plan.rows if r.candidate.instance == "r5.metal")
    by = dict(fixes_of(r5, catalog))
    assert (by["SMT off"].vcpus, by["SMT off"].smt) == (48, False)
    assert (by["one socket"].vcpus, by["one socket"].sockets) == (48, 1)


def test_an_unwritable_path_is_one_error_and_no_file(tmp_path, report):
    _, data = report
    (tmp_path / "file").write_text("x")
    target = tmp_path / "file" / "r.html"
    with pytest.raises(CohsimError, match="cannot write the report"):
        write_report(target, data)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
