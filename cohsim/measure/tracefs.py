"""The one reader of tracefs text dumps (the `trace` file of ftrace), as recorded by
calibration/bench/wake_trace.sh and mount_trace.sh: plain text, gzip or xz.

A tracepoint line is `COMM-PID [CPU] FLAGS SECONDS: EVENT: REST`; syscall events write
`EVENT(ARGS)` or `EVENT -> RET` instead of `EVENT: REST`, and their REST is then `(ARGS)` or
`-> RET`. FLAGS are ftrace's irqs-off / need-resched / hardirq-softirq / preempt-depth /
migrate-disable columns, e.g. `dNh2.`. Lines of another layout (comments, stack frames) are
not events.

    for e in tracefs.read("trace-common-parent-2w-1L.txt.xz", idle_exits=True):
        if e.name == "sched_switch":
            nxt = int(tracefs.fields(e.rest)["next_pid"])

Two options for the traces of a small VM:
- `stacks`: a `stacktrace` trigger's output (a `<stack trace>` line, then one ` => f` line a
  frame, innermost first) becomes one more event, named `stack`, its rest the frames
  joined by " < ".
- `idle_exits`: some VMs never record a `sched_switch` out of one CPU's idle task (the
  2-vCPU devvm records none out of CPU 1's, in every trace taken there). When a task's
  event (not a stack) shows up on a CPU whose last recorded switch went to the idle task,
  the switch to it is put back just before that event: at its wake-up aimed at that CPU
  plus IDLE_EXIT_US, or at the event itself if no such wake-up came first. The inserted
  switch ends its rest with `inferred=1` and has line number 0.
"""

from __future__ import annotations

import gzip
import lzma
import re
from collections.abc import Iterable, Iterator
from typing import IO, NamedTuple

from cohsim.errors import CohsimError
from cohsim.units import US_PER_S

#: one tracepoint line: comm, pid, CPU, flags, timestamp (s), event, the rest
LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+): (\w+):? ?(.*)$")
_match = LINE.match
_STACK = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+): <stack trace>$")
_FIELD = re.compile(r"(\w+)=(\S+)")
_WAKEUP = re.compile(r" pid=(\d+) .*target_cpu=(\d+)")

#: us from a wake-up aimed at an idle CPU to that CPU's switch to the woken task, for the
#: switches `idle_exits` puts back: the median of the recorded ones on the devvm (1-2 us)
IDLE_EXIT_US = 1.0


class TraceEvent(NamedTuple):
    """One tracepoint event of a trace."""

    comm: str
    pid: int
    cpu: int
    flags: str
    time_s: float  #: the trace's timestamp, seconds
    name: str  #: the tracepoint's name (`sched_switch`, `sys_umount`, ...) or `stack`
    rest: str  #: the text after the name
    line: int  #: 1-based line number in the dump (0 for an inserted switch)

    @property
    def t_us(self) -> float:
        """The timestamp in microseconds."""
        return self.time_s * US_PER_S


_new = tuple.__new__  # a NamedTuple without its keyword-argument constructor: reading is hot


def fields(rest: str) -> dict[str, str]:
    """The `key=value` pairs of an event's rest (scheduler and lock events)."""
    return dict(_FIELD.findall(rest))


def parse(line: str, n: int = 0) -> TraceEvent | None:
    """One tracepoint line as a TraceEvent (line number `n`), or None for any other line."""
    m = LINE.match(line)
    if not m:
        return None
    comm, pid, cpu, flags, ts, name, rest = m.groups()
    return _new(TraceEvent, (comm, int(pid), int(cpu), flags, float(ts), name, rest, n))


def _plain(lines: Iterable[str]) -> Iterator[TraceEvent]:
    for n, line in enumerate(lines, start=1):
        m = _match(line)
        if m is not None:
            comm, pid, cpu, flags, ts, name, rest = m.groups()
            yield _new(TraceEvent, (comm, int(pid), int(cpu), flags, float(ts), name, rest, n))


def _with_stacks(lines: Iterable[str]) -> Iterator[TraceEvent]:
    pending: tuple[TraceEvent, list[str]] | None = None
    for n, line in enumerate(lines, start=1):
        if pending is not None:
            if line.startswith(" => "):
                pending[1].append(line[4:].strip())
                continue
            head, frames = pending
            pending = None
            yield head._replace(rest=" < ".join(frames))
        m = _match(line)
        if m is not None:
            comm, pid, cpu, flags, ts, name, rest = m.groups()
            yield _new(TraceEvent, (comm, int(pid), int(cpu), flags, float(ts), name, rest, n))
        elif m := _STACK.match(line):
            comm, pid, cpu, flags, ts = m.groups()
            pending = (TraceEvent(comm, int(pid), int(cpu), flags, float(ts), "stack", "", n), [])
    if pending is not None:
        head, frames = pending
        yield head._replace(rest=" < ".join(frames))


def events(
    lines: Iterable[str], *, stacks: bool = False, idle_exits: bool = False
) -> Iterator[TraceEvent]:
    """Every tracepoint event of a dump's lines, in order (the options: module docstring)."""
    raw = _with_stacks(lines) if stacks else _plain(lines)
    return _with_idle_exits(raw) if idle_exits else raw


def _with_idle_exits(raw: Iterator[TraceEvent]) -> Iterator[TraceEvent]:
    idle: dict[int, bool] = {}  # CPU -> its last recorded switch went to the idle task
    woken: dict[int, dict[int, float]] = {}  # idle CPU -> {pid: wake-up aimed at it, us}
    for e in raw:
        t = e.t_us
        if idle.get(e.cpu) and e.pid != 0 and e.name != "stack":
            t_in = min(woken[e.cpu].get(e.pid, t) + IDLE_EXIT_US, t)
            yield TraceEvent(
                "<idle>", 0, e.cpu, e.flags, t_in / US_PER_S, "sched_switch",
                f"prev_comm=swapper/{e.cpu} prev_pid=0 prev_prio=120 prev_state=R ==> "
                f"next_comm={e.comm} next_pid={e.pid} next_prio=120 inferred=1", 0,
            )  # fmt: skip
            idle[e.cpu] = False
        if e.name == "sched_wakeup":
            m = _WAKEUP.search(e.rest)
            if m and idle.get(int(m.group(2))):
                woken[int(m.group(2))][int(m.group(1))] = t
        elif e.name == "sched_switch":
            idle[e.cpu] = " next_pid=0 " in e.rest
            woken[e.cpu] = {}
        yield e


def open_text(path: str) -> IO[str]:
    """A dump as text, plain, gzip or xz (told by its first bytes); a missing file is a
    CohsimError naming it."""
    try:
        with open(path, "rb") as f:
            magic = f.read(6)
    except FileNotFoundError:
        raise CohsimError("no such file", path) from None
    except OSError as exc:
        raise CohsimError(f"cannot read the trace: {exc}", path) from None
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="utf-8")
    if magic == b"\xfd7zXZ\x00":
        return lzma.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def read(path: str, *, stacks: bool = False, idle_exits: bool = False) -> Iterator[TraceEvent]:
    """`events` of the dump at `path`; a file that cannot be read or decompressed (at any
    point) is a CohsimError naming it."""
    try:
        with open_text(path) as f:
            yield from events(f, stacks=stacks, idle_exits=idle_exits)
    except (OSError, EOFError, UnicodeDecodeError, lzma.LZMAError) as exc:
        raise CohsimError(f"cannot read the trace: {exc}", path) from None
