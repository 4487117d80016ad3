"""The human output of `cohsim predict` and `replay` (cohsim.cli.predict_text): the answer
first, in words and units, and nothing printed as Python writes it (issue 30, item 3)."""

from __future__ import annotations

import re

import pytest
from test_cli_predict import TRACE, run

from cohsim.cli.predict_text import sig, times, words

BURST = ["--containers", "8", "--layers", "3", "--replicates", "3"]
#: what Python's own printing of a value looks like
REPR = re.compile(r"\{'|\['|'\]|Interval\(|np\.float|numpy\.|array\(|object at 0x|\w+\(value=")


def _answer(out: str) -> list[str]:
    """The answer's lines: after the machine (and its note), before the details."""
    lines = out.splitlines()
    start = 2 if lines[1].startswith("  (") else 1
    return lines[start : start + 4]


@pytest.mark.parametrize(
    "argv",
    [
        ["predict", "--arch", "mesh", *BURST, "--profile"],
        ["predict", "--arch", "chiplet", *BURST, "--engine", "analytic"],
        ["replay", TRACE, "--instance", "c6a.metal", "--replicates", "3"],
    ],
    ids=["des", "analytic", "replay"],
)
def test_the_answer_comes_first_in_words_and_units(capsys, argv):
    code, out, _ = run(capsys, *argv)
    assert code == 0
    launch, miss, what, kind = _answer(out)
    assert re.fullmatch(
        r"  launch latency: p50 [\d.,]+ s \[[\d.,]+, [\d.,]+\], p99 [\d.,]+ s \[[\d.,]+, [\d.,]+\]",
        launch,
    )
    assert re.match(r"  chance of missing the 30 s deadline: [\d.]+ % \[[\d.]+ %, [\d.]+ %\]", miss)
    assert what.startswith("  what dominated: ") and (" s " in what or " % " in what)
    assert kind.startswith("  (intervals: 90% prediction intervals from 3 replicates")
    assert "\n  details\n" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["predict", "--arch", "mesh", *BURST, "--profile"],
        ["predict", "--arch", "chiplet", *BURST, "--engine", "analytic"],
        ["replay", TRACE, "--instance", "c6a.metal", "--replicates", "1"],
    ],
    ids=["des", "analytic", "replay"],
)
def test_nothing_is_printed_as_python_writes_it(capsys, argv):
    code, out, _ = run(capsys, *argv)
    assert code == 0
    assert not REPR.search(out), REPR.search(out)


def test_the_workload_and_the_counts_read_as_words(capsys):
    _, out, _ = run(capsys, "predict", "--arch", "mesh", *BURST)
    first = out.splitlines()[0]
    assert first == (
        "m7i.metal-24xl: 8 containers x 3 layers, per-layer strategy, runc runtime, "
        "launched all at once"
    )
    _, out, _ = run(capsys, "replay", TRACE, "--instance", "c6a.metal", "--replicates", "1")
    assert (
        "replayed from common-parent-2workers-3layers.strace (strace-tt; one container per thread"
        in out
    )


def test_figures_in_words():
    assert [sig(x) for x in (4.058, 11.503, 0.5716, 1234.5, 0.0042, 0)] == [
        "4.06", "11.5", "0.572", "1,234", "0.00420", "0",
    ]  # fmt: skip
    assert times(1, "time") == "1 time" and times(3, "time") == "3 times"
    assert words({"max_waiters": 16, "background_spin_s": 0.810838}) == (
        "max waiters 16, background spin 0.811 s"
    )
    assert words(["a", "b"]) == "a, b"


def test_the_analytic_engines_answer_does_not_call_its_base_the_whole_launch(capsys):
    """The analytic engine keeps namespace_sem's holds by mechanism but no launch breakdown by
    category: 'what dominated' read '0.500 s of the mean container's 0.500 s launch (100 %)'
    (only the fixed base counted) while its p50 was 0.539 s. It says the waits' share."""
    code, out, _ = run(capsys, "predict", "--arch", "chiplet", *BURST, "--engine", "analytic")
    line = next(x for x in out.splitlines() if "what dominated" in x)
    assert code == 0 and "of each launch, as the analytic engine counts it" in line
    assert "launch (100" not in line and "namespace_sem was held longest" in line
