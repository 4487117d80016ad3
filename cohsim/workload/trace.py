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
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

#: Syscalls that can take the mount locks (close/openat/open/read only on fds or paths that matter).
MOUNT_SYSCALLS: frozenset[str] = frozenset(
    {
        "open_tree", "mount_setattr", "move_mount", "mount", "umount2", "umount",
        "fsopen", "fsconfig", "fsmount", "close", "openat", "open", "read", "unshare", "setns",
        "pivot_root", "clone", "clone3",
    }
)  # fmt: skip
#: kept only with a new mount namespace: a child's copy of the mount table (copy_mnt_ns())
_CLONES = ("clone", "clone3")
_CREATES = ("clone", "clone3", "fork", "vfork")  #: calls that return a new thread's id

#: Flags the simulator cares about, by canonical name.
FLAGS_OF_INTEREST: tuple[str, ...] = (
    "OPEN_TREE_CLONE", "AT_RECURSIVE", "AT_EMPTY_PATH", "MOUNT_ATTR_IDMAP", "MOUNT_ATTR_RDONLY",
    "MNT_DETACH", "MNT_FORCE", "MOVE_MOUNT_F_EMPTY_PATH", "MS_BIND", "MS_REC", "MS_REMOUNT",
    "MS_PRIVATE", "MS_SLAVE", "MS_SHARED", "MS_RDONLY", "CLONE_NEWNS", "CLONE_NEWUSER",
    "FSCONFIG_SET_FD", "FSCONFIG_CMD_CREATE",
)  # fmt: skip
_INTEREST = frozenset(FLAGS_OF_INTEREST)
_PREFIXES = ("", "MNT_", "MOVE_MOUNT_", "MOUNT_ATTR_", "OPEN_TREE_", "AT_", "MS_", "CLONE_",
             "FSCONFIG_")  # fmt: skip

# Numeric flag values (include/uapi/linux/mount.h, fcntl.h, fs.h, sched.h), for perf trace,
# which prints most flags as numbers. Keyed by syscall; the value decodes its flags argument.
_NUMERIC: Mapping[str, tuple[tuple[int, str], ...]] = {
    "open_tree": ((0x1, "OPEN_TREE_CLONE"), (0x1000, "AT_EMPTY_PATH"), (0x8000, "AT_RECURSIVE")),
    "mount_setattr": ((0x1000, "AT_EMPTY_PATH"), (0x8000, "AT_RECURSIVE")),
    "umount2": ((0x1, "MNT_FORCE"), (0x2, "MNT_DETACH")),
    "umount": ((0x1, "MNT_FORCE"), (0x2, "MNT_DETACH")),
    "mount": (
        (0x1, "MS_RDONLY"),
        (0x20, "MS_REMOUNT"),
        (0x1000, "MS_BIND"),
        (0x4000, "MS_REC"),
        (0x40000, "MS_PRIVATE"),
        (0x80000, "MS_SLAVE"),
        (0x100000, "MS_SHARED"),
    ),
    "move_mount": ((0x4, "MOVE_MOUNT_F_EMPTY_PATH"),),
    "unshare": ((0x20000, "CLONE_NEWNS"), (0x10000000, "CLONE_NEWUSER")),
    "setns": ((0x20000, "CLONE_NEWNS"), (0x10000000, "CLONE_NEWUSER")),
}
_FSCONFIG_CMDS = {5: "FSCONFIG_SET_FD", 6: "FSCONFIG_CMD_CREATE"}

# Kernel parameter names (perf trace prints ``name: value`` and leaves out zero arguments, so
# its arguments are found by name; strace's by position).
_PARAMS: Mapping[str, tuple[str, ...]] = {
    "open_tree": ("dfd", "filename", "flags"),
    "mount_setattr": ("dfd", "path", "flags", "uattr", "usize"),
    "move_mount": ("from_dfd", "from_pathname", "to_dfd", "to_pathname", "flags"),
    "mount": ("dev_name", "dir_name", "type", "flags", "data"),
    "umount2": ("name", "flags"),
    "umount": ("name", "flags"),
    "fsopen": ("_fs_name", "flags"),
    "fsconfig": ("fd", "cmd", "_key", "_value", "aux"),
    "fsmount": ("fs_fd", "flags", "attr_flags"),
    "close": ("fd",),
    "read": ("fd", "buf", "count"),
    "openat": ("dfd", "filename", "flags", "mode"),
    "open": ("filename", "flags", "mode"),
    "unshare": ("unshare_flags",),
    "setns": ("fd", "flags"),
}
_FLAG_ARG = {"open_tree": 2, "mount_setattr": 2, "move_mount": 4, "mount": 3, "umount2": 1,
             "umount": 1, "unshare": 0, "setns": 1, "fsconfig": 1}  # fmt: skip
_MOUNTINFO = re.compile(r"^/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/(?:mountinfo|mounts)$")
_NAMED = re.compile(r"^([a-z_][a-z0-9_]*): ?(.*)$", re.S)  # perf's "name: value"
_INT = re.compile(r"^-?\d+")
_ATTR_SET = re.compile(r"attr_set=([^,}]*)")
_PRIVATE = re.compile(r"propagation=(MS_PRIVATE)\b")
_NUMBER = re.compile(r"0x[0-9a-fA-F]+|\d+")
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)")
_SPECIAL = frozenset('"()[]{}/')
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
    flags: tuple[str, ...] = ()  #: flags of interest present, in `FLAGS_OF_INTEREST` order
    path: str | None = None  #: main path (target, source or key; see `_derive_thread`)
    fd: int | None = None  #: the fd the call operates on (close, read, move_mount, fsconfig...)
    fd_source: str | None = None  #: what opened `fd`: open_tree, fsopen, fsmount, mountinfo
    mount_op: bool = False  #: counts as one mount operation (see `mount_ops`)

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


def assemble(
    calls: Iterable[RawCall],
    *,
    source: str,
    format: str,
    unknown_skipped: int = 0,
    malformed_skipped: int = 0,
    meta: Iterable[tuple[str, str]] = (),
) -> Trace:
    """Group calls by thread (in the given order), keep the mount-relevant ones, derive fields.

    Times are shifted so that the first kept event starts at 0.
    """
    by_tid: dict[int, list[RawCall]] = {}
    parents: list[tuple[int, int]] = []
    for c in calls:
        by_tid.setdefault(c.tid, []).append(c)
        if c.name in _CREATES and c.errno is None and c.ret is not None and c.ret > 0:
            parents.append((c.ret, c.tid))
    kept: list[tuple[int, list[SyscallEvent]]] = []
    unknown = unknown_skipped
    parsed_args: dict[tuple[str, str], _Args] = {}  # containers repeat the same argument text
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
                        e.errno, e.flags, e.path, e.fd, e.fd_source, e.mount_op)  # fmt: skip


#: which argument is a call's `path` (openat/open, read and close are handled apart)
_PATH_ARG = {
    "open_tree": 1,
    "move_mount": 3,
    "mount": 1,
    "umount2": 0,
    "umount": 0,
    "fsopen": 0,
    "fsconfig": 2,
    "pivot_root": 0,
}


def _derive_thread(
    calls: list[RawCall], parsed_args: dict[tuple[str, str], _Args]
) -> tuple[list[SyscallEvent], int]:
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
        if c.name not in MOUNT_SYSCALLS or (c.name in _CLONES and "NEWNS" not in c.args):
            unknown += 1
            continue
        a = parsed_args.get((c.name, c.args))
        if a is None:
            a = parsed_args[c.name, c.args] = _Args(c.name, c.args)
        ok = c.errno is None and (c.ret is None or c.ret >= 0)
        newfd = c.ret if ok and c.ret is not None else None
        path: str | None = None
        fd: int | None = None
        src: str | None = None
        name = c.name
        if name in ("openat", "open"):
            path = a.path(1 if name == "openat" else 0)
            if newfd is not None:
                fds.pop(newfd, None)
                _settle(pending, newfd, marks)
            if path is None or not _MOUNTINFO.match(path):
                unknown += 1
                continue
            if newfd is not None:
                fds[newfd] = ("mountinfo", path)
        elif name in ("read", "close"):
            fd = a.fd(0)
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
            arg = _PATH_ARG.get(name)
            if arg is not None:
                path = a.path(arg)
            if name in ("mount_setattr", "move_mount", "fsconfig", "fsmount", "setns"):
                fd = a.fd(0)
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
                                flags, path, fd, src, False))  # fmt: skip
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
                        e.flags, e.path, e.fd, e.fd_source, True)  # fmt: skip


class _Args:
    """Positional (strace) or named (perf ``key: value``) access to one call's arguments."""

    def __init__(self, name: str, text: str) -> None:
        self.name = name
        self.tokens = split_args(text)
        self.named: dict[str, str] = {}
        for tok in self.tokens:
            m = _NAMED.match(tok)
            if m and not tok.startswith('"'):
                self.named[m.group(1)] = m.group(2)
        self.flags = self._flags()

    def get(self, i: int) -> str | None:
        if self.named:
            params = _PARAMS.get(self.name, ())
            return self.named.get(params[i]) if i < len(params) else None
        return self.tokens[i] if i < len(self.tokens) else None

    def path(self, i: int) -> str | None:
        tok = self.get(i)
        if tok is None or tok in ("", "NULL") or tok.startswith("0x"):
            return None
        if tok.startswith('"'):
            end = _string_end(tok, 0)
            text = _unescape(tok[1 : end - 1])
            return text or None
        return tok.split("<", 1)[0] if self.named else None

    def fd(self, i: int) -> int | None:
        m = _INT.match(self.get(i) or "")
        return int(m.group(0)) if m else None

    def _flags(self) -> tuple[str, ...]:
        found: set[str] = set()
        if self.name in _FLAG_ARG:
            found |= self._decode(self.get(_FLAG_ARG[self.name]))
        if self.name in _CLONES:  # flags=... or {flags=...}; perf: clone_flags: NEWNS|...
            text = "".join(self.tokens)
            found |= {f for f in ("CLONE_NEWNS", "CLONE_NEWUSER") if f[6:] in text}
        if self.name == "mount_setattr":
            m = _ATTR_SET.search(self.get(3) or "")
            if m:
                found |= {n for n in m.group(1).split("|") if n in _INTEREST}
            m = _PRIVATE.search(self.get(3) or "")
            if m:
                found.add("MS_PRIVATE")
        return tuple(f for f in FLAGS_OF_INTEREST if f in found)

    def _decode(self, value: str | None) -> set[str]:
        out: set[str] = set()
        for part in (value or "").split("|"):
            part = part.strip()
            if _NUMBER.fullmatch(part):
                n = int(part, 0)
                if self.name == "fsconfig":
                    out |= {_FSCONFIG_CMDS[n]} if n in _FSCONFIG_CMDS else set()
                else:
                    out |= {flag for bit, flag in _NUMERIC.get(self.name, ()) if n & bit}
            else:
                out |= {p + part for p in _PREFIXES if p + part in _INTEREST}
        return out


# Argument text as tokens: a quoted string (possibly cut short), a comment, one bracket or
# comma, or a run of anything else.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|/\*.*?(?:\*/|$)|[()\[\]{},]|[^"()\[\]{},/]+|/', re.S)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?', re.S)


def split_args(text: str) -> list[str]:
    """Split argument text at top-level commas (quotes, brackets and comments respected)."""
    if _SPECIAL.isdisjoint(text):  # the common case: plain numbers and flags
        return [t.strip() for t in text.split(",")] if text.strip() else []
    tokens: list[str] = []
    depth, start = 0, 0
    for m in _TOKEN.finditer(text):
        ch = m.group(0)
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            tokens.append(text[start : m.start()].strip())
            start = m.end()
    last = text[start:].strip()
    if last or tokens:
        tokens.append(last)
    return tokens


def _string_end(text: str, i: int) -> int:
    """Index just past the quoted string starting at text[i] (end of text if unterminated)."""
    m = _STRING.match(text, i)
    return m.end() if m else len(text)


def _unescape(s: str) -> str:
    simple = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "v": "\v", "f": "\f"}

    def repl(m: re.Match[str]) -> str:
        body = m.group(1)
        if body in simple:
            return simple[body]
        if body.startswith("x"):
            return chr(int(body[1:], 16))
        return chr(int(body, 8))

    return _ESCAPE.sub(repl, s)
