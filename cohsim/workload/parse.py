"""Reading traces: `strace -f` with `-tt`, `-ttt` or `-r` (with or without `-T`, tids and
`<unfinished ...>` / `<... resumed>` pairs) and `perf trace` output, into a
`cohsim.workload.trace.Trace`.

The format is detected from the first meaningful lines unless forced. Unknown syscalls are
counted and skipped; a malformed line is a CohsimError naming the file and line, unless
`lenient` (then it is skipped and counted). The events go through
`cohsim.workload.trace.assemble`, the same builder the synthesiser uses, so derived fields agree
between parsed and synthesised traces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from cohsim.errors import CohsimError
from cohsim.units import NS_PER_MS, NS_PER_S_INT
from cohsim.workload.trace import _SPECIAL, _TOKEN, RawCall, Trace, assemble

_PERSONALITY = re.compile(r"\[ Process PID=\d+ runs in .* mode\. \]")


def parse_trace(path: str | Path, *, format: str = "auto", lenient: bool = False) -> Trace:
    """Read and parse a trace file (grammar in `parse_text`)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise CohsimError(f"cannot read trace: {exc.strerror or exc}", str(path)) from None
    return parse_text(text, source=str(path), format=format, lenient=lenient)


def parse_text(
    text: str, *, source: str = "<text>", format: str = "auto", lenient: bool = False
) -> Trace:
    """Parse trace text; ``format`` is auto, strace or perf.

    A line that is neither a syscall, a signal/exit notice nor a ``strace:`` message is a
    `CohsimError` naming ``source:line``, unless ``lenient`` (then it is counted and skipped).
    """
    return _Parser(source, format, lenient).run(text.splitlines())


# --------------------------------------------------------------------------- parsers

_STRACE_PREFIX = re.compile(
    r"^(?:\[pid\s+(?P<pid>\d+)\]\s*|(?P<tid>\d+)\s+)?"
    r"(?:(?P<clock>\d{1,2}:\d{2}:\d{2}(?:\.\d+)?)|(?P<num>\d+\.\d+))?\s*(?P<body>.*)$"
)
_PERF_LINE = re.compile(
    r"^\s*(?P<ts>\d+\.\d+|\?)\s+\(\s*(?:(?P<dur>\d+\.\d+)\s*ms)?\s*\):\s*"
    r"(?:(?P<comm>.*?)/(?P<tid>\d+))?\s+(?P<body>(?:\.\.\.\s*\[continued\]|[A-Za-z_]\w*\().*)$"
)
_CALL = re.compile(r"^(?P<name>[A-Za-z_]\w*)\(")
_RESUMED = re.compile(r"^<\.\.\.\s+(?P<name>\w+)\s+resumed>\s?(?P<rest>.*)$")
_CONTINUED = re.compile(r"^\.\.\.\s*\[continued\]:\s*(?P<name>\w+)\(\)\)?(?P<tail>.*)$")
_RET = re.compile(
    r"^\s*=\s*(?P<ret>\?|-?\d+|0x[0-9a-fA-F]+)(?:<[^>]*>)?"
    r"(?:\s+(?P<errno>E[A-Z0-9]+))?"
    r"(?:\s+\(.*\)|\s+[A-Za-z][\w ]*?)?"
    r"(?:\s+<(?P<dur>\d+\.\d+)>)?\s*$"
)
_UNFINISHED = "<unfinished ...>"


def _int_ret(text: str) -> int:
    """A return value as strace prints it: decimal, hex (`0x...`), or octal with a leading 0
    (umask's old mask, `= 022`)."""
    sign, digits = (-1, text[1:]) if text.startswith("-") else (1, text)
    try:
        if digits.startswith("0x"):
            return sign * int(digits, 16)
        return sign * int(digits, 8 if len(digits) > 1 and digits.startswith("0") else 10)
    except ValueError:
        raise _Malformed(f"bad return value {text!r}") from None


_DAY_NS = 86_400_000_000_000


def _decimal_ns(text: str, unit_ns: int) -> int:
    """Exact integer ns of a decimal number of units (no float rounding)."""
    whole, _, frac = text.partition(".")
    digits = len(str(unit_ns)) - 1
    return int(whole) * unit_ns + int((frac + "0" * digits)[:digits] or "0")


def _find_close(text: str, i: int) -> int:
    """Index of the ``)`` closing an argument list whose text starts at i, or -1."""
    j = text.find(")", i)
    if j >= 0 and _SPECIAL.isdisjoint(text[i:j]):
        return j
    depth = 0
    for m in _TOKEN.finditer(text, i):
        ch = m.group(0)
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return m.start() if ch == ")" else -1
            depth -= 1
    return -1


class _Malformed(Exception):
    pass


@dataclass
class _Pending:
    start_ns: int
    name: str
    args: str


class _Parser:
    """Line-by-line state of one parse: clock, unfinished calls per tid, counters."""

    def __init__(self, source: str, format: str, lenient: bool) -> None:
        if format not in ("auto", "strace", "perf"):
            raise CohsimError(f"unknown trace format {format!r} (auto, strace or perf)", source)
        self.source, self.format, self.lenient = source, format, lenient
        self.style: str | None = None  # tt, ttt, r (strace) once seen
        self.now = 0  # ns: -r running clock, or last timestamp seen
        self.day = 0
        self.pending: dict[int, _Pending] = {}
        self.calls: list[RawCall] = []
        self.unknown = 0
        self.malformed = 0

    def run(self, lines: list[str]) -> Trace:
        kind = self.format if self.format != "auto" else _detect(lines)
        handle = self._perf_line if kind == "perf" else self._strace_line
        for lineno, line in enumerate(lines, 1):
            s = line.strip()
            if not s:
                continue
            try:
                handle(s)
            except _Malformed as exc:
                if not self.lenient:
                    snippet = s if len(s) <= 60 else s[:57] + "..."
                    raise CohsimError(
                        f"malformed {kind} line ({exc}): {snippet!r}", f"{self.source}:{lineno}"
                    ) from None
                self.malformed += 1
        for tid in list(self.pending):
            self._flush(tid)
        label = "perf" if kind == "perf" else f"strace-{self.style}" if self.style else "strace"
        return assemble(self.calls, source=self.source, format=label,
                        malformed_skipped=self.malformed)  # fmt: skip

    # ---- strace
    def _strace_line(self, s: str) -> None:
        if s.startswith("strace: ") or _PERSONALITY.fullmatch(s):
            return
        m = _STRACE_PREFIX.match(s)
        assert m is not None  # every group is optional
        tid = int(m.group("pid") or m.group("tid") or 0)
        ts = self._strace_clock(m.group("clock"), m.group("num"))
        body = m.group("body")
        if body.startswith("---") and body.endswith("---"):
            return  # signal delivery
        if body.startswith("+++") and body.endswith("+++"):
            self._flush(tid)  # exited or killed: an unfinished call never returns
            return
        if not body:
            raise _Malformed("no syscall")
        self._call_body(tid, ts, body, strace=True)

    def _strace_clock(self, clock: str | None, num: str | None) -> int:
        if clock is None and num is None:
            raise _Malformed("no timestamp; record with strace -tt, -ttt or -r")
        style = "tt" if clock else ("ttt" if int((num or "0").split(".")[0]) >= 10**6 else "r")
        if self.style is None:
            self.style = style
        elif (style == "tt") != (self.style == "tt"):
            raise _Malformed("timestamp style changes within the trace")
        if clock:
            h, mi, sec = clock.split(":")
            ns = (int(h) * 3600 + int(mi) * 60) * NS_PER_S_INT + _decimal_ns(sec, NS_PER_S_INT)
            if ns + self.day < self.now - _DAY_NS // 2:
                self.day += _DAY_NS  # the trace ran past midnight
            self.now = ns + self.day
        elif self.style == "r":
            self.now += _decimal_ns(num or "0", NS_PER_S_INT)
        else:
            self.now = _decimal_ns(num or "0", NS_PER_S_INT)
        return self.now

    # ---- perf trace
    def _perf_line(self, s: str) -> None:
        m = _PERF_LINE.match(s)
        if m is None:
            raise _Malformed("not a perf trace syscall line")
        tid = int(m.group("tid") or 0)
        if m.group("ts") != "?":
            self.now = _decimal_ns(m.group("ts"), NS_PER_MS)
        dur = _decimal_ns(m.group("dur"), NS_PER_MS) if m.group("dur") else None
        body = m.group("body")
        c = _CONTINUED.match(body)
        if c is not None:
            pend = self.pending.pop(tid, None)
            if pend is not None and pend.name != c.group("name"):
                raise _Malformed(f"{c.group('name')} continued but {pend.name} was unfinished")
            start = pend.start_ns if pend else self.now
            self._emit(tid, start, c.group("name"), pend.args if pend else "", c.group("tail"), dur)
            return
        self._call_body(tid, self.now, body, strace=False, perf_dur=dur)

    # ---- shared
    def _call_body(
        self, tid: int, ts: int, body: str, *, strace: bool, perf_dur: int | None = None
    ) -> None:
        r = _RESUMED.match(body) if strace else None
        if r is not None:
            rest, name = r.group("rest"), r.group("name")
            pend = self.pending.pop(tid, None)
            if pend is not None and pend.name != name:
                raise _Malformed(f"{name} resumed but {pend.name} was unfinished")
            close = _find_close(rest, 0)
            if close < 0:
                if rest.endswith(_UNFINISHED):  # resumed and interrupted again
                    prefix = (pend.args if pend else "") + rest[: -len(_UNFINISHED)]
                    self.pending[tid] = _Pending(pend.start_ns if pend else ts, name, prefix)
                    return
                raise _Malformed("no closing parenthesis")
            args = (pend.args if pend else "") + rest[:close]
            dur = self._ret(rest[close + 1 :])[2]
            start = pend.start_ns if pend else ts - (dur or 0)
            self._emit(tid, start, name, args, rest[close + 1 :], None)
            return
        c = _CALL.match(body)
        if c is None:
            raise _Malformed("not a syscall")
        name, open_at = c.group("name"), c.end()
        close = _find_close(body, open_at)
        if close < 0:
            if strace and body.endswith(_UNFINISHED):
                self._start(tid, ts, name, body[open_at : -len(_UNFINISHED)])
                return
            raise _Malformed("no closing parenthesis")
        tail = body[close + 1 :]
        if not strace and tail.strip() == "...":
            self._start(tid, ts, name, body[open_at:close])
            return
        self._emit(tid, ts, name, body[open_at:close], tail, perf_dur)

    def _start(self, tid: int, ts: int, name: str, args: str) -> None:
        if tid in self.pending:
            raise _Malformed(
                f"thread {tid} starts {name} while {self.pending[tid].name} is unfinished"
            )
        self.pending[tid] = _Pending(ts, name, args)

    def _ret(self, tail: str) -> tuple[int | None, str | None, int | None]:
        m = _RET.match(tail)
        if m is None:
            raise _Malformed("no return value" if "=" not in tail else "bad return value")
        ret = None if m.group("ret") == "?" else _int_ret(m.group("ret"))
        dur = _decimal_ns(m.group("dur"), NS_PER_S_INT) if m.group("dur") else None
        return ret, m.group("errno"), dur

    def _emit(self, tid: int, start: int, name: str, args: str, tail: str, dur: int | None) -> None:
        ret, err, strace_dur = self._ret(tail)
        args = args.strip()
        if args.endswith(_UNFINISHED):  # killed inside the call: "... <unfinished ...>) = ?"
            args = args[: -len(_UNFINISHED)].strip()
        self.calls.append(RawCall(tid, start, dur if dur is not None else strace_dur, name, args,
                                  ret, err))  # fmt: skip

    def _flush(self, tid: int) -> None:
        pend = self.pending.pop(tid, None)
        if pend is not None:
            self.calls.append(RawCall(tid, pend.start_ns, None, pend.name, pend.args.strip(),
                                      None, None))  # fmt: skip


def _detect(lines: list[str]) -> str:
    """``perf`` or ``strace``, from the first line that looks like either."""
    for line in lines[:200]:
        s = line.strip()
        if not s or s.startswith("strace: "):
            continue
        if _PERF_LINE.match(s):
            return "perf"
        m = _STRACE_PREFIX.match(s)
        if m and (
            _CALL.match(m.group("body")) or m.group("body").startswith(("<...", "---", "+++"))
        ):
            return "strace"
    return "strace"
