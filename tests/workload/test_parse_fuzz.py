"""The trace parser never fails but with cohsim's own error: a fuzz of mutated real traces.

Issue 30 found 4 tracebacks in 8,000 fuzzed parses (unknown string escapes, a flag with a
leading zero); on that code this fuzz finds those and numbers past int()'s 4,300 digits (a
thread id, a timestamp, an fd). Here hypothesis mutates windows of the repository's own
strace and perf trace files (tests/data/traces, the reference examples, the recorded
mount_bench and runc straces): characters replaced, lines cut short, escapes strace never
writes, digit runs (leading zeros, 64 bits and past them, 5,000 digits), unicode, fields and
lines swapped, timestamps jumped.
Every input is parsed strictly and leniently with its format detected, and leniently as the
other format; a parse either gives a trace, which the summary, the process trees, the
classifier and the replay's span check then read without failing, or is a CohsimError of one
line.

Hypothesis picks a window of a trace file and a seed; the seed draws `VARIANTS` inputs from
the window, each edited 1 to 4 times (drawing each edit through hypothesis cost a millisecond
an input; this way 10,500 inputs take about 6 s of CPU). The examples are derandomized (the
same inputs every run, nothing kept in .hypothesis) and counted: 7,500 strace and 3,000 perf
trace inputs, 31,500 parses, in four tests that xdist can spread. A failure names its input.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cohsim.errors import CohsimError
from cohsim.kernel.classify import ThreadState, classify, layers_of
from cohsim.predict import check_span
from cohsim.workload.parse import parse_text
from cohsim.workload.summary import summarize
from cohsim.workload.trace import Trace, longest_stretch
from cohsim.workload.trees import by_process_tree

Corpus = tuple[tuple[str, ...], ...]  #: each trace file's lines
ROOT = Path(__file__).resolve().parents[2]
_SOURCES = [
    *sorted((ROOT / "tests" / "data" / "traces").iterdir()),
    *sorted((ROOT / "calibration" / "data" / "reference" / "trace-format-examples").glob("*.txt")),
    *sorted((ROOT / "calibration" / "data" / "devvm-2cpu-intel-xeon-f6m167" / "strace").iterdir()),
    ROOT / "calibration" / "data" / "devvm-2cpu-amd-epyc-f25m1" / "runc-strace" / "plain.strace",
]
_LINES_PER_FILE = 400  # the start of the longer recordings: every kind of line they have


def _corpus(perf: bool) -> Corpus:
    """Each source file's lines (the perf trace files, or the strace ones)."""
    files = [p for p in _SOURCES if ("perf" in p.name) == perf and p.is_file()]
    return tuple(
        tuple(p.read_text(encoding="utf-8", errors="replace").splitlines()[:_LINES_PER_FILE])
        for p in files
    )


STRACE, PERF = _corpus(perf=False), _corpus(perf=True)
VARIANTS = 10  #: inputs made from each window hypothesis picks
STRACE_EXAMPLES = 250  #: windows per strace test (three tests)
PERF_EXAMPLES = 300  #: windows of the perf trace files

#: what a replaced character becomes: the grammar's punctuation, digits, controls, unicode
_CHARS = '\\"(),{}<>[]=.:|/ -_0123456789xaZ?+\t\x00\x7f\x85é€\u2028\ufffd'
#: escapes strace writes and ones it never does (issue 30: \u, \9, \xZZ)
_ESCAPES = ("\\u", "\\9", "\\xZZ", "\\x4", "\\777", "\\", "\\0", "\\n", '\\"', "\\x41", "\\303")
#: numbers: leading zeros (octal, 08), 64 bits and past them, past int()'s 4,300 digits
_NUMBERS = ("0", "007", "08", "0755", "-1", "0x", "0x7fffffffffffffff",
            "18446744073709551616", "9" * 25, "9" * 5000, "4295305658", "2500000000.000000",
            "1e9", ".5", "00:00:99")  # fmt: skip
_DIGITS = re.compile(r"\d+")


_KINDS = ("char", "cut", "escape", "number", "digits", "text", "fields", "lines")
_UNICODE = "aé€\u2028\x85\ufffd\U0001f600\x00\x1b"


def _edit(lines: list[str], rng: random.Random) -> None:
    """One edit of a window of lines, in place."""
    kind = rng.choice(_KINDS)
    i = rng.randrange(len(lines))
    s = lines[i]
    at = rng.randrange(len(s) + 1)
    if kind == "char":
        lines[i] = s[:at] + rng.choice(_CHARS) + s[at + 1 :]
    elif kind == "cut":
        lines[i] = s[:at]
    elif kind in ("escape", "number", "text"):
        if kind == "text":
            piece = "".join(rng.choice(_UNICODE) for _ in range(rng.randrange(1, 6)))
        else:
            piece = rng.choice(_ESCAPES if kind == "escape" else _NUMBERS)
        lines[i] = s[:at] + piece + s[at:]
    elif kind == "digits":  # one run of digits (a tid, a time, an fd, flags) replaced
        runs = list(_DIGITS.finditer(s))
        if runs:
            m = rng.choice(runs)
            lines[i] = s[: m.start()] + rng.choice(_NUMBERS) + s[m.end() :]
    elif kind == "fields":
        parts = re.split(r"(, | )", s)
        j, k = rng.randrange(len(parts)), rng.randrange(len(parts))
        parts[j], parts[k] = parts[k], parts[j]
        lines[i] = "".join(parts)
    else:  # a line dropped, doubled, or two swapped
        j = rng.randrange(len(lines))
        op = rng.randrange(3)
        if op == 0 and len(lines) > 1:
            del lines[j]
        elif op == 1:
            lines.insert(j, s)
        else:
            lines[i], lines[j] = lines[j], lines[i]


def variants(corpus: Corpus, file: int, start: int, size: int, seed: int) -> list[str]:
    """`VARIANTS` inputs from one window of `size` lines of a trace file: each the window
    edited 1 to 4 times, the edits drawn from `seed`."""
    lines = corpus[file % len(corpus)]
    window = lines[start % len(lines) : start % len(lines) + size]
    rng = random.Random(seed)
    out = []
    for _ in range(VARIANTS):
        edited = list(window)
        for _ in range(rng.randint(1, 4)):
            _edit(edited, rng)
        out.append("\n".join(edited) + rng.choice(("\n", "", "\r\n")))
    return out


def check(text: str) -> None:
    """`text` read strictly and leniently (its format detected), and leniently as the other
    format: each gives a trace that reads back, or is one CohsimError line."""
    other = "strace" if _looks_perf(text) else "perf"
    for format, lenient in (("auto", False), ("auto", True), (other, True)):
        try:
            trace = parse_text(text, source="fuzz", format=format, lenient=lenient)
        except CohsimError as exc:
            assert "\n" not in str(exc) and str(exc).startswith("fuzz:"), str(exc)
            continue
        except Exception as exc:  # the input, to reproduce it
            raise AssertionError(f"{type(exc).__name__} on {text!r}") from exc
        _read_back(trace, text)


def _looks_perf(text: str) -> bool:
    return "):" in text.split("\n", 1)[0]


def _read_back(trace: Trace, text: str) -> None:
    try:
        summarize(trace)
        longest_stretch(trace)
        for t in by_process_tree(trace).threads:
            state = ThreadState()
            for e in t.events:
                classify(e, state)
            layers_of(t.events)
        check_span(trace, "fuzz")
    except CohsimError as exc:
        assert "\n" not in str(exc), str(exc)
    except Exception as exc:
        raise AssertionError(f"{type(exc).__name__} reading back {text!r}") from exc


def _fuzz(corpus: Corpus, examples: int) -> int:
    """`check` every variant of `examples` windows hypothesis picks (derandomized: the same
    every run); how many inputs it checked."""
    ran = 0
    window = st.tuples(
        st.integers(0, len(corpus) - 1), st.integers(0, 10**6), st.integers(1, 12),
        st.integers(0, 2**32 - 1),
    )  # fmt: skip

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(at=window)
    def one(at: tuple[int, int, int, int]) -> None:
        nonlocal ran
        for text in variants(corpus, *at):
            ran += 1
            check(text)

    one()
    return ran


@pytest.mark.parametrize("part", range(3))
def test_mutated_strace_never_fails_but_with_cohsim_error(part: int) -> None:
    corpus = STRACE[part::3]  # a third of the files each: the parts differ
    assert _fuzz(corpus, STRACE_EXAMPLES) == STRACE_EXAMPLES * VARIANTS


def test_mutated_perf_trace_never_fails_but_with_cohsim_error() -> None:
    assert _fuzz(PERF, PERF_EXAMPLES) == PERF_EXAMPLES * VARIANTS


def test_at_least_10000_inputs() -> None:
    assert (3 * STRACE_EXAMPLES + PERF_EXAMPLES) * VARIANTS >= 10_000


@pytest.mark.parametrize(
    "text",
    [
        '1 00:00:00.000001 umount2("/var/lib/x\\unts/0", 0) = 0',
        '1 00:00:00.000001 umount2("/p\\9", 0) = 0',
        '1 00:00:00.000001 umount2("/p\\xZZ", 0) = 0',
        '1 00:00:00.000001 umount2("/p", 007) = 0',
        '1 1795305658.000001 umount2("/a", 0) = 0\n1 4295305658.000001 umount2("/b", 0) = 0',
    ],
)
def test_the_inputs_issue_30_found(text: str) -> None:
    check(text)
