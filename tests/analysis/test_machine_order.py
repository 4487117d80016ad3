"""calibration/analysis/machine_order on a tiny case (analytic engine, 30 containers x 10
layers, two priors, two seeds, a 1 s deadline so that R6's search ends below its ceiling): the
report has its tables, and every relation it prints (R1-R6, at nominal, per seed and at each
end, the flips marked) follows from the launch p50s and safe bursts it printed. Whether the
relations hold is the model's business, not this test's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from analysis_runner import run

PRIORS = ("cpu.smt_slowdown", "percpu.mlp")
LABELS = (
    "r5.metal",
    "m7i.metal-24xl",
    "m7i.metal-24xl+smt-off",
    "m7i.metal-48xl",
    "m7a.24xlarge",
)
R5, M7I, OFF, M48, M7A = LABELS
NAMES = ("R1", "R2", "R3", "R4", "R5", "R6")
TOL = 0.05  # margins recomputed from 4-decimal p50s: within 0.05 % of the printed ones


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict]:
    out = tmp_path_factory.mktemp("machine_order") / "order.json"
    args = ["--containers", "30", "--layers", "10", "--priors", ",".join(PRIORS)]
    text = run(
        "machine_order.sensitivity", *args, "--seeds", "0,1", "--deadline", "1", "--json", out
    )
    return text, json.loads(Path(out).read_text())


def _section(text: str, title: str) -> list[list[str]]:
    """The rows (split on blanks) of the table under the `== title...` line, header dropped."""
    block = text.split(f"== {title}", 1)[1].split("\n\n", 1)[0]
    return [line.split() for line in block.splitlines()[2:]]


def _expected(n: dict[str, float], small: dict[str, float]) -> dict[str, float]:
    """R1-R5's margins (%), written out again from the relations' definitions."""
    return {
        "R1": (n[R5] / max(n[M7I], n[M7A]) - 1) * 100,
        "R2": (min(n[R5], n[M7I]) / n[M7A] - 1) * 100,
        "R3": (n[M7I] / n[OFF] - 1) * 100,
        "R4": (n[M48] / n[M7I] - 1) * 100,
        "R5": 25 - (max(small.values()) / min(small.values()) - 1) * 100,
    }


def _margin(cell: str) -> tuple[float, bool]:
    """A margin cell: its number and whether it is marked as a flip."""
    return float(cell.rstrip("!")), cell.endswith("!")


def test_nominal_relations_follow_from_the_printed_p50s(result: tuple[str, dict]) -> None:
    text, _ = result
    rows = {r[0]: (float(r[1]), float(r[2])) for r in _section(text, "launch p50 at the nominal")}
    assert tuple(rows) == LABELS
    want = _expected({k: v[0] for k, v in rows.items()}, {k: v[1] for k, v in rows.items()})
    printed = _section(text, "the relations at the nominal priors")
    by_name = {r[0]: r for r in printed if r[0] in NAMES}
    assert tuple(by_name) == NAMES
    for k, m in want.items():
        margin = float(by_name[k][2])
        assert margin == pytest.approx(m, abs=TOL), k
        if abs(m) > TOL:
            assert by_name[k][1] == ("yes" if m > 0 else "no"), k
    line = text.split("safe burst at", 1)[1].splitlines()[0]
    bursts = dict(re.findall(r"([\w.+-]+) (\d+)[,;]", line))
    r6 = (min(int(bursts[M7I]), int(bursts[M7A])) / int(bursts[R5]) - 1) * 100
    assert float(by_name["R6"][2]) == pytest.approx(r6, abs=0.01)
    assert by_name["R6"][1] == ("yes" if r6 > 0 else "no")


def test_each_end_row_follows_from_its_p50s(result: tuple[str, dict]) -> None:
    text, _ = result
    margins = _section(text, "the relations with each prior at an end")
    at_n = _section(text, "launch p50 with each prior at an end (s), 30")
    at_20 = _section(text, "launch p50 with each prior at an end (s), 20")
    sb = _section(text, "safe burst with each prior at an end")
    assert [r[:2] for r in margins[1:]] == [[p, e] for p in PRIORS for e in ("low", "high")]
    assert [r[:2] for r in at_n] == [r[:2] for r in at_20] == [r[:2] for r in sb]
    assert [r[0] for r in margins] == [r[0] for r in at_n]
    nominal = {k: _margin(c)[0] > 0 for k, c in zip(NAMES, margins[0][3:], strict=True)}
    nominal["R5"] = _margin(margins[0][7])[0] >= 0
    for m, n, small, burst in zip(margins, at_n, at_20, sb, strict=True):
        want = _expected(dict(zip(LABELS, map(float, n[2:]), strict=True)),
                         dict(zip(LABELS, map(float, small[2:]), strict=True)))  # fmt: skip
        r5, m7i, m7a = map(int, burst[2:])
        want["R6"] = (min(m7i, m7a) / r5 - 1) * 100
        for k, cell in zip(NAMES, m[3:], strict=True):
            value, flip = _margin(cell)
            assert value == pytest.approx(want[k], abs=TOL), (m[:2], k)
            holds = value >= 0 if k == "R5" else value > 0
            assert flip == (holds != nominal[k]), (m[:2], k)


def test_the_flip_summary_names_the_marked_ends(result: tuple[str, dict]) -> None:
    text, _ = result
    marked = {
        (k, r[0], r[1])
        for r in _section(text, "the relations with each prior at an end")[1:]
        for k, cell in zip(NAMES, r[3:], strict=True)
        if cell.endswith("!")
    }
    block = text.split("== where the relations flip", 1)[1].split("\n\n", 1)[0]
    listed, current = set(), None
    for line in block.splitlines()[1:]:
        if line[:2] in {n[:2] for n in NAMES} and line.split()[0] in NAMES:
            current = line.split()[0]
        elif line.startswith("   "):
            listed.add((current, *line.split()[:2]))
    assert listed == marked
    assert re.search(r"== run: \d+ predictions \(analytic engine", text)


def test_the_json_holds_what_was_printed(result: tuple[str, dict]) -> None:
    text, doc = result
    assert doc["schema"] == 1
    prov = doc["provenance"]
    assert prov["cohsim_version"] and prov["arguments"]["containers"] == 30
    assert prov["arguments"]["layers"] == 10 and prov["arguments"]["engine"] == "analytic"
    assert set(doc["relations"]) == set(NAMES)
    rows = {r[0]: r for r in _section(text, "launch p50 at the nominal")}
    p50 = doc["nominal"]["launch_p50_s"]
    for label in LABELS:
        assert f"{p50['at_containers'][label]:.4f}" == rows[label][1]
        assert f"{p50['at_20'][label]:.4f}" == rows[label][2]
    assert [(e["prior"], e["end"]) for e in doc["ends"]] == [
        (p, e) for p in PRIORS for e in ("low", "high")
    ]
    for e in doc["ends"]:
        assert set(e["relations"]) == set(NAMES)
        flips = [k for k in NAMES if e["relations"][k]["holds"]
                 != doc["nominal"]["relations"][k]["holds"]]  # fmt: skip
        assert e["flips"] == flips
        assert set(e["flips_between"]) <= set(flips)


def test_each_seeds_margins_follow_from_its_p50s(result: tuple[str, dict]) -> None:
    text, doc = result
    rows = _section(text, "R1-R5 at the nominal priors from each seed alone")
    assert [r[:2] for r in rows] == [["seed", "0"], ["seed", "1"]]
    per_seed = doc["nominal"]["launch_p50_s_per_seed"]
    for i, row in enumerate(rows):
        n = {k: per_seed[f"{k}@30"][i] for k in LABELS}
        small = {k: per_seed[f"{k}@20"][i] for k in LABELS}
        want = _expected(n, small)
        for k, cell in zip(NAMES, row[2:], strict=False):
            assert _margin(cell)[0] == pytest.approx(want[k], abs=0.01), (i, k)
            assert doc["nominal"]["margin_pct_per_seed"][k][i] == pytest.approx(want[k], abs=1e-3)
