"""Reading traces: `strace -f` with `-tt`, `-ttt` or `-r` (with or without `-T`, tids and
`<unfinished ...>` / `<... resumed>` pairs) and `perf trace` output, into a
`cohsim.workload.trace.Trace`.

The format is detected from the first meaningful lines unless forced. Unknown syscalls are
counted and skipped; a malformed line is a CohsimError naming the file and line, unless
`lenient` (then it is skipped and counted). That includes the arguments of the calls kept
(cohsim.workload.args: a string escape strace never writes, a number past 64 bits; an
unfinished call's are blamed on the line it started on), a thread id past 32 bits and a time
past the 64-bit ns clock. The events go through `cohsim.workload.trace.assemble`, the same
builder the synthesiser uses, so derived fields agree between parsed and synthesised traces.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from cohsim.errors import CohsimError
from cohsim.units import NS_PER_MS, NS_PER_S_INT, S_PER_DAY
from cohsim.workload.args import SPECIAL, TOKEN, ArgumentError, number
from cohsim.workload.trace import ArgsCache, RawCall, Trace, args_of, assemble, relevant

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
        return sign * number(digits)
    except ArgumentError:
        raise _Malformed(f"bad return value {_short(text)}") from None


_DAY_NS = S_PER_DAY * NS_PER_S_INT
#: the latest time a trace may give: the simulation's clock is a signed 64-bit count of ns
#: (292 years; an epoch timestamp of today is 1.7e18 ns)
_MAX_NS = 2**63 - 1


def _decimal_ns(text: str, unit_ns: int) -> int:
    """Exact integer ns of a decimal number of units (no float rounding); a time past
    `_MAX_NS` is malformed."""
    whole, _, frac = text.partition(".")
    digits = len(str(unit_ns)) - 1
    if len(whole.lstrip("0")) > 19:
        raise _Malformed(f"time {_short(text)} is out of range")
    ns = int(whole or "0") * unit_ns + int((frac + "0" * digits)[:digits] or "0")
    if ns > _MAX_NS:
        raise _Malformed(f"time {_short(text)} is out of range")
    return ns


def _tid(text: str) -> int:
    """A thread id (Linux's are below 2**22; anything past 32 bits is not one)."""
    if len(text) > 10 or int(text) >= 2**32:
        raise _Malformed(f"thread id {_short(text)} is out of range")
    return int(text)


def _short(text: str, n: int = 24) -> str:
    """`text` quoted, cut to `n` characters (an error message stays one short line)."""
    return repr(text if len(text) <= n else text[: n - 3] + "...")


def _find_close(text: str, i: int) -> int:
    """Index of the ``)`` closing an argument list whose text starts at i, or -1."""
    j = text.find(")", i)
    if j >= 0 and SPECIAL.isdisjoint(text[i:j]):
        return j
    depth = 0
    for m in TOKEN.finditer(text, i):
        ch = m.group(0)
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return m.start() if ch == ")" else -1
            depth -= 1
    return -1


class _Malformed(Exception):
    """A line that is not what strace or perf prints; `line`, where the fault is on an
    earlier line than the one being read (an unfinished call's)."""

    def __init__(self, what: str, line: int = 0) -> None:
        super().__init__(what)
        self.line = line


@dataclass
class _Pending:
    start_ns: int
    name: str
    args: str
    line: int  #: where the call started


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
        self.lineno = 0  # the line being read
        self.args: ArgsCache = {}  # every kept call's arguments, read as its line is

    def run(self, lines: list[str]) -> Trace:
        kind = self.format if self.format != "auto" else _detect(lines)
        handle = self._perf_line if kind == "perf" else self._strace_line
        for self.lineno, line in enumerate(lines, 1):
            s = line.strip()
            if s:
                self._guarded(partial(handle, s), s, kind)
        for tid in sorted(self.pending):  # never resumed nor exited: the file ends
            self._guarded(partial(self._flush, tid), "", kind)
        label = "perf" if kind == "perf" else f"strace-{self.style}" if self.style else "strace"
        return assemble(self.calls, source=self.source, format=label,
                        malformed_skipped=self.malformed, args_cache=self.args)  # fmt: skip

    def _guarded(self, handle: Callable[[], None], s: str, kind: str) -> None:
        """`handle()`, which reads line `s`; a malformed line is a CohsimError naming it, or
        with `lenient` is counted and skipped."""
        try:
            handle()
        except _Malformed as exc:
            if not self.lenient:
                where = f"{self.source}:{exc.line or self.lineno}"
                snippet = f": {_short(s, 60)}" if s and not exc.line else ""
                raise CohsimError(f"malformed {kind} line ({exc}){snippet}", where) from None
            self.malformed += 1

    # ---- strace
    def _strace_line(self, s: str) -> None:
        if s.startswith("strace: ") or _PERSONALITY.fullmatch(s):
            return
        m = _STRACE_PREFIX.match(s)
        assert m is not None  # every group is optional
        tid = _tid(m.group("pid") or m.group("tid") or "0")
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
        value = _decimal_ns(num or "0", NS_PER_S_INT)
        style = "tt" if clock else ("ttt" if value >= 10**6 * NS_PER_S_INT else "r")
        if self.style is None:
            self.style = style
        elif (style == "tt") != (self.style == "tt"):
            raise _Malformed("timestamp style changes within the trace")
        if clock:
            h, mi, sec = clock.split(":")
            ns = (int(h) * 60 + int(mi)) * 60 * NS_PER_S_INT + _decimal_ns(sec, NS_PER_S_INT)
            if int(h) > 23 or int(mi) > 59 or int(sec.split(".")[0]) > 60:
                raise _Malformed(f"no time of day: {clock}")
            if ns + self.day < self.now - _DAY_NS // 2:
                self.day += _DAY_NS  # the trace ran past midnight
            self.now = ns + self.day
        elif self.style == "r":
            if self.now + value > _MAX_NS:
                raise _Malformed("the time since the first line is out of range")
            self.now += value
        else:
            self.now = value
        return self.now

    # ---- perf trace
    def _perf_line(self, s: str) -> None:
        m = _PERF_LINE.match(s)
        if m is None:
            raise _Malformed("not a perf trace syscall line")
        tid = _tid(m.group("tid") or "0")
        if m.group("ts") != "?":
            self.now = _decimal_ns(m.group("ts"), NS_PER_MS)
        dur = _decimal_ns(m.group("dur"), NS_PER_MS) if m.group("dur") else None
        body = m.group("body")
        c = _CONTINUED.match(body)
        if c is not None:
            pend = self.pending.pop(tid, None)
            if pend is not None and pend.name != c.group("name"):
                raise _Malformed(f"{c.group('name')} continued but {pend.name} was unfinished")
            start, args, line = (pend.start_ns, pend.args, pend.line) if pend else (self.now, "", 0)
            self._emit(tid, start, c.group("name"), args, c.group("tail"), dur, line)
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
                    self.pending[tid] = (
                        _Pending(pend.start_ns, name, prefix, pend.line)
                        if pend
                        else _Pending(ts, name, prefix, self.lineno)
                    )
                    return
                raise _Malformed("no closing parenthesis")
            args = (pend.args if pend else "") + rest[:close]
            dur = self._ret(rest[close + 1 :])[2]
            start = pend.start_ns if pend else ts - (dur or 0)
            self._emit(tid, start, name, args, rest[close + 1 :], None, pend.line if pend else 0)
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
        self.pending[tid] = _Pending(ts, name, args, self.lineno)

    def _ret(self, tail: str) -> tuple[int | None, str | None, int | None]:
        m = _RET.match(tail)
        if m is None:
            raise _Malformed("no return value" if "=" not in tail else "bad return value")
        ret = None if m.group("ret") == "?" else _int_ret(m.group("ret"))
        dur = _decimal_ns(m.group("dur"), NS_PER_S_INT) if m.group("dur") else None
        return ret, m.group("errno"), dur

    def _emit(
        self, tid: int, start: int, name: str, args: str, tail: str, dur: int | None, line: int = 0
    ) -> None:
        """One whole call, started on `line` (0: this line)."""
        ret, err, strace_dur = self._ret(tail)
        args = args.strip()
        if args.endswith(_UNFINISHED):  # killed inside the call: "... <unfinished ...>) = ?"
            args = args[: -len(_UNFINISHED)].strip()
        self._read_args(name, args, 0)
        self.calls.append(RawCall(tid, start, dur if dur is not None else strace_dur, name, args,
                                  ret, err, line or self.lineno))  # fmt: skip

    def _flush(self, tid: int) -> None:
        """The thread's unfinished call, if any, as a call that never returned."""
        pend = self.pending.pop(tid, None)
        if pend is not None:
            args = pend.args.strip()
            self._read_args(pend.name, args, pend.line)
            self.calls.append(RawCall(tid, pend.start_ns, None, pend.name, args, None, None,
                                      pend.line))  # fmt: skip

    def _read_args(self, name: str, args: str, line: int) -> None:
        """Read a kept call's arguments now, so that bad ones name their line (`line`, where
        it is not this one)."""
        if relevant(name, args):
            try:
                args_of(name, args, self.args)
            except ArgumentError as exc:
                raise _Malformed(exc.what, line if line != self.lineno else 0) from None


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
