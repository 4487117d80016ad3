"""Syscall traces: what containers ask the kernel's mount code to do, and when.

A `Trace` is the workload of level 3 (cohsim.kernel.simulation.launch): per thread, the ordered
mount-relevant syscalls with their start times (integer ns from the trace's first event)
and, where the trace has them, their durations. A trace parsed from a real ``strace`` or
``perf trace`` log and a workload synthesised by `cohsim.workload.synth` are the same type, built by
the same `assemble` function, so everything derived (flags, paths, `mount_ops`) means the same
for both.

Only mount-relevant syscalls are kept (`MOUNT_SYSCALLS`); ``close`` only when it closes an
``open_tree`` fd, ``openat``/``open``/``read`` only on ``/proc/*/mountinfo`` (those readers take
``namespace_sem``). File descriptors are tracked per thread, as strace shows them. Every other
syscall is counted in `Trace.unknown_skipped` and dropped.

Formats (autodetected from the first meaningful line, or forced):
``strace`` with ``-tt`` (``HH:MM:SS.micro``), ``-ttt`` (epoch seconds) or ``-r`` (delta since the
previous line), with or without a leading tid (``1234 `` or ``[pid 1234] ``; lines without one
get tid 0), with or without ``-T`` durations, with ``<unfinished ...>``/``<... resumed>`` pairs;
and ``perf trace`` (``<ms> (<dur> ms): comm/tid name(args) = ret``, ``...``/``[continued]`` pairs).
A call's argument text (strings, numbers, flags) is read by cohsim.workload.args.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from cohsim.workload.args import CLONES, Args

#: Syscalls that can take the mount locks (close/openat/open/read only on fds or paths that matter).
MOUNT_SYSCALLS: frozenset[str] = frozenset(
    {
        "open_tree", "mount_setattr", "move_mount", "mount", "umount2", "umount",
        "fsopen", "fsconfig", "fsmount", "close", "openat", "open", "read", "unshare", "setns",
        "pivot_root", "clone", "clone3",
    }
)  # fmt: skip
_CREATES = ("clone", "clone3", "fork", "vfork")  #: calls that return a new thread's id
#: the `Args` of calls already read, by (name, argument text): containers repeat the same text
ArgsCache = dict[tuple[str, str], Args]
_MOUNTINFO = re.compile(r"^/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/(?:mountinfo|mounts)$")
_MOUNT_TABLE_CHANGES = frozenset({"mount", "move_mount", "umount2", "umount"})


@dataclass(frozen=True)
class SyscallEvent:
    """One syscall of one thread, as the trace shows it, plus what the simulator derives."""

    tid: int  #: thread id (0 when the trace has no tid column)
    start_ns: int  #: start time, ns since the trace's first event
    duration_ns: int | None  #: time in the kernel (strace -T, perf); None when not recorded
    name: str  #: syscall name, e.g. ``open_tree``
    args: str  #: argument text exactly as traced (strace or perf style)
    ret: int | None  #: return value; None for ``= ?`` or a call that never returned
    errno: str | None  #: ``EINVAL`` etc. when the call failed
    flags: tuple[
        str, ...
    ] = ()  #: flags of interest present, in cohsim.workload.args.FLAGS_OF_INTEREST order
    path: str | None = None  #: main path (target, source or key; see `_derive_thread`)
    fd: int | None = None  #: the fd the call operates on (close, read, move_mount, fsconfig...)
    fd_source: str | None = None  #: what opened `fd`: open_tree, fsopen, fsmount, mountinfo
    mount_op: bool = False  #: counts as one mount operation (see `mount_ops`)
    #: the line of the trace file the call starts on (0: not from a file)
    line: int = field(default=0, compare=False)

    @property
    def ok(self) -> bool:
        """The call did not fail (a call with unknown outcome counts as done)."""
        return self.errno is None and (self.ret is None or self.ret >= 0)

    @property
    def end_ns(self) -> int:
        """Start plus duration (plus zero when the duration is unknown)."""
        return self.start_ns + (self.duration_ns or 0)


@dataclass(frozen=True)
class ThreadTrace:
    """The events of one thread, in the order it issued them."""

    tid: int
    events: tuple[SyscallEvent, ...]

    def think_times_ns(self) -> tuple[int, ...]:
        """Gap between each syscall's end and the next one's start (len(events) - 1 values)."""
        ev = self.events
        return tuple(b.start_ns - a.end_ns for a, b in zip(ev, ev[1:], strict=False))


@dataclass(frozen=True)
class Trace:
    """A workload: mount-relevant syscalls per thread (parsed or synthesised)."""

    threads: tuple[ThreadTrace, ...]
    source: str  #: file name, or ``synth:<strategy>:...``
    format: str  #: strace-tt, strace-ttt, strace-r, perf, or synth
    unknown_skipped: int = 0  #: syscalls that are not mount-relevant, dropped
    malformed_skipped: int = 0  #: malformed lines dropped (lenient parsing only)
    meta: tuple[tuple[str, str], ...] = field(default=(), compare=False)  #: e.g. seed, strategy
    #: (child, parent) for every thread or process the trace saw created (clone, clone3,
    #: fork, vfork returning the child's id): the process trees (cohsim.workload.trees)
    parents: tuple[tuple[int, int], ...] = field(default=(), compare=False)

    @property
    def events(self) -> tuple[SyscallEvent, ...]:
        """All events ordered by start time, ties by tid then issue order."""
        keyed = [(e.start_ns, t.tid, i, e) for t in self.threads for i, e in enumerate(t.events)]
        return tuple(k[3] for k in sorted(keyed, key=lambda k: k[:3]))

    @property
    def syscalls(self) -> int:
        """Number of mount-relevant syscalls."""
        return sum(len(t.events) for t in self.threads)

    @property
    def mount_ops(self) -> int:
        """Mount-table changes: see `mount_ops`."""
        return mount_ops(self)

    @property
    def span_ns(self) -> int:
        """From the first event's start to the last event's end."""
        ends = [e.end_ns for t in self.threads for e in t.events]
        return max(ends, default=0)

    def think_times_ns(self) -> dict[int, tuple[int, ...]]:
        """Per-thread think times (tid -> gaps)."""
        return {t.tid: t.think_times_ns() for t in self.threads}

    def counts_by_name(self) -> dict[str, int]:
        """Syscall name -> number of calls (sorted by name)."""
        out: dict[str, int] = {}
        for t in self.threads:
            for e in t.events:
                out[e.name] = out.get(e.name, 0) + 1
        return dict(sorted(out.items()))


def mount_ops(trace: Trace) -> int:
    """Mount operations in a trace: the number of events with ``mount_op`` set.

    One mount operation is one change of the mount table that holds the mount locks:
    a successful ``mount`` or ``move_mount`` (an attachment: an overlay mount, or an idmapped
    bind put in place), a successful ``umount``/``umount2`` (a detachment; the ``EINVAL`` that ends
    containerd 2.2's unmount loop is not one), and a detached ``open_tree(OPEN_TREE_CLONE)`` that
    its thread never attaches with ``move_mount`` (created and later dissolved on close, as
    lowerdir+ layers are; counted on the open_tree so that it does not depend on close being
    traced). Per container: per-layer 2 x (1 + 2L), common-parent 2 x 3, lowerdir-plus 2 x (1 + L).
    """
    counted: dict[int, int] = {}  # threads sharing one events tuple (a burst) count it once
    total = 0
    for t in trace.threads:
        n = counted.get(id(t.events))
        if n is None:
            n = counted[id(t.events)] = sum(e.mount_op for e in t.events)
        total += n
    return total


@dataclass(frozen=True)
class Stretch:
    """The longest part of a trace's span that one thing accounts for (`longest_stretch`)."""

    ns: int
    event: SyscallEvent  #: the call after the gap, or the long call itself
    gap: bool  #: a gap before `event` in which no thread was in a call; else `event` lasting


def longest_stretch(trace: Trace) -> Stretch | None:
    """The longest gap in which no thread is in a call, or the longest call, whichever is
    longer (the earliest of equals; None for a trace without calls): where a trace whose span
    is too long has its clock step."""
    best: Stretch | None = None
    reach = 0  # the latest end of the calls started so far
    for e in trace.events:
        if best is None or e.start_ns - reach > best.ns:
            best = Stretch(max(0, e.start_ns - reach), e, True)
        if (e.duration_ns or 0) > best.ns:
            best = Stretch(e.duration_ns or 0, e, False)
        reach = max(reach, e.end_ns)
    return best


# --------------------------------------------------------------------------- assembly


@dataclass(frozen=True)
class RawCall:
    """A syscall as a parser reads it or a synthesiser emits it, before derivation."""

    tid: int
    start_ns: int
    duration_ns: int | None
    name: str
    args: str
    ret: int | None
    errno: str | None
    line: int = 0  #: the line of the trace file the call starts on (0: not from a file)


def relevant(name: str, args: str) -> bool:
    """The call is one `assemble` reads the arguments of (`MOUNT_SYSCALLS`; a clone only with a
    new mount namespace)."""
    return name in MOUNT_SYSCALLS and (name not in CLONES or "NEWNS" in args)


def args_of(name: str, args: str, cache: ArgsCache) -> Args:
    """The call's `Args`, made once per argument text (an ArgumentError where they are not
    what strace or perf prints)."""
    a = cache.get((name, args))
    if a is None:
        a = cache[name, args] = Args(name, args)
    return a


def assemble(
    calls: Iterable[RawCall],
    *,
    source: str,
    format: str,
    unknown_skipped: int = 0,
    malformed_skipped: int = 0,
    meta: Iterable[tuple[str, str]] = (),
    args_cache: ArgsCache | None = None,
) -> Trace:
    """Group calls by thread (in the given order), keep the mount-relevant ones, derive fields.

    Times are shifted so that the first kept event starts at 0. A caller that has read the
    calls' arguments already (a parser naming the line of a bad one) passes its `args_cache`.
    """
    by_tid: dict[int, list[RawCall]] = {}
    parents: list[tuple[int, int]] = []
    for c in calls:
        by_tid.setdefault(c.tid, []).append(c)
        if c.name in _CREATES and c.errno is None and c.ret is not None and c.ret > 0:
            parents.append((c.ret, c.tid))
    kept: list[tuple[int, list[SyscallEvent]]] = []
    unknown = unknown_skipped
    parsed_args = args_cache if args_cache is not None else {}
    for tid in sorted(by_tid):
        events, skipped = _derive_thread(by_tid[tid], parsed_args)
        unknown += skipped
        if events:
            kept.append((tid, events))
    origin = min((ev[0].start_ns for _, ev in kept), default=0)
    threads = tuple(ThreadTrace(tid, tuple(_shift(e, origin) for e in ev)) for tid, ev in kept)
    return Trace(threads, source, format, unknown, malformed_skipped, tuple(meta), tuple(parents))


def _shift(e: SyscallEvent, origin: int) -> SyscallEvent:
    if origin == 0:
        return e
    return SyscallEvent(e.tid, e.start_ns - origin, e.duration_ns, e.name, e.args, e.ret,
                        e.errno, e.flags, e.path, e.fd, e.fd_source, e.mount_op,
                        e.line)  # fmt: skip


def _derive_thread(calls: list[RawCall], parsed_args: ArgsCache) -> tuple[list[SyscallEvent], int]:
    """Keep one thread's mount-relevant calls and derive flags, path, fd and mount_op.

    ``path`` is: open_tree's source, move_mount's target, mount's target, umount's target,
    openat/open's file, fsopen's filesystem type, fsconfig's key, read/close's fd path,
    pivot_root's new root.
    """
    fds: dict[int, tuple[str, str | None]] = {}  # fd -> (what opened it, path)
    pending: dict[int, int] = {}  # open_tree clone fd -> index in out, until moved
    out: list[SyscallEvent] = []
    marks: set[int] = set()
    unknown = 0
    for c in calls:
        if not relevant(c.name, c.args):
            unknown += 1
            continue
        a = args_of(c.name, c.args, parsed_args)
        ok = c.errno is None and (c.ret is None or c.ret >= 0)
        newfd = c.ret if ok and c.ret is not None else None
        path: str | None = None
        fd: int | None = None
        src: str | None = None
        name = c.name
        if name in ("openat", "open"):
            path = a.path_of
            if newfd is not None:
                fds.pop(newfd, None)
                _settle(pending, newfd, marks)
            if path is None or not _MOUNTINFO.match(path):
                unknown += 1
                continue
            if newfd is not None:
                fds[newfd] = ("mountinfo", path)
        elif name in ("read", "close"):
            fd = a.fd0
            entry = fds.get(fd) if fd is not None else None
            if name == "close" and fd is not None:
                fds.pop(fd, None)
                _settle(pending, fd, marks)
            want = "mountinfo" if name == "read" else "open_tree"
            if entry is None or entry[0] != want:
                unknown += 1
                continue
            src, path = entry
        else:
            path = a.path_of
            if name in ("mount_setattr", "move_mount", "fsconfig", "fsmount", "setns"):
                fd = a.fd0
                if fd is not None and fd in fds:
                    src = fds[fd][0]
                    if src == "open_tree" and path is None and name != "fsconfig":
                        path = fds[fd][1]
            if newfd is not None and name in ("open_tree", "fsopen", "fsmount"):
                fds[newfd] = (name, path)
                _settle(pending, newfd, marks)
        flags = a.flags
        index = len(out)
        if ok and name in _MOUNT_TABLE_CHANGES:
            marks.add(index)
            if name == "move_mount" and fd is not None:
                pending.pop(fd, None)
        if name == "open_tree" and newfd is not None and "OPEN_TREE_CLONE" in flags:
            pending[newfd] = index
        out.append(SyscallEvent(c.tid, c.start_ns, c.duration_ns, name, c.args, c.ret, c.errno,
                                flags, path, fd, src, False, c.line))  # fmt: skip
    marks.update(pending.values())  # clones never attached by the end of the trace
    out = [_with_mark(e) if i in marks else e for i, e in enumerate(out)]
    return out, unknown


def _settle(pending: dict[int, int], fd: int, marks: set[int]) -> None:
    """An open_tree clone's fd is closed or reused without a move_mount: a detached clone."""
    index = pending.pop(fd, None)
    if index is not None:
        marks.add(index)


def _with_mark(e: SyscallEvent) -> SyscallEvent:
    return SyscallEvent(e.tid, e.start_ns, e.duration_ns, e.name, e.args, e.ret, e.errno,
                        e.flags, e.path, e.fd, e.fd_source, True, e.line)  # fmt: skip
