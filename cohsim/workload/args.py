"""A traced call's argument text: its tokens, strings, numbers and flags, as strace and perf
print them.

strace prints a call's arguments by position (``6, "", AT_EMPTY_PATH, {attr_set=...}, 32``);
``perf trace`` by kernel parameter name (``dfd: 7, flags: 4096``), leaving zero arguments out.
`Args` reads either, and works out once, when it is made, everything the trace builder
(cohsim.workload.trace) takes from a call: its flags of interest, its main path and the fd in
its first argument. Argument text that strace or perf cannot have printed is an
`ArgumentError` then, so that a parser that makes the `Args` of each line it keeps can name the
line (cohsim.workload.parse).

Strings: strace's ``string_quote()`` (strace src/util.c) writes ``\\\\`` and ``\\"`` for a
backslash and a quote, ``\\f \\n \\r \\t \\v`` for those controls, and every other byte that is
not printable as ``\\xHH`` (two hex digits, with ``-x``/``-xx``) or as octal ``\\N`` to
``\\NNN`` (three digits when an octal digit follows). Those escapes are decoded to bytes and
the bytes read as UTF-8 (a byte that is not UTF-8 stays visible as ``\\xHH``); any other escape
(``\\u``, ``\\9``, ``\\xZZ``, an octal value above a byte) is an ArgumentError.

Numbers: decimal, hex with ``0x``, or octal with a leading 0 (strace prints modes and umask
that way: ``0755``); perf prints most flags as decimal numbers. A number longer than any
64-bit value is an ArgumentError.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from cohsim.errors import CohsimError

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
CLONES = ("clone", "clone3")  #: their flags are read from anywhere in the arguments

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
#: which argument is a call's main path (`Args.path_of`): open_tree's source, move_mount's
#: target, mount's target, umount's target, openat/open's file, fsopen's filesystem type,
#: fsconfig's key, pivot_root's new root
PATH_ARG = {"open_tree": 1, "move_mount": 3, "mount": 1, "umount2": 0, "umount": 0,
            "fsopen": 0, "fsconfig": 2, "pivot_root": 0, "openat": 1, "open": 0}  # fmt: skip
_NAMED = re.compile(r"^([a-z_][a-z0-9_]*): ?(.*)$", re.S)  # perf's "name: value"
_INT = re.compile(r"^-?\d+")
_ATTR_SET = re.compile(r"attr_set=([^,}]*)")
_PRIVATE = re.compile(r"propagation=(MS_PRIVATE)\b")
_NUMBER = re.compile(r"0x[0-9a-fA-F]+|\d+")
#: the escapes strace writes (see the module), and a backslash before anything else
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|[\\\"fnrtv]|.?)", re.S)
_SIMPLE = {"\\": 0x5C, '"': 0x22, "f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}
SPECIAL = frozenset('"()[]{}/')  #: characters that make argument text need the tokenizer
#: the longest number a 64-bit value takes: 20 decimal digits, 16 hex, 22 octal (and a 0)
_MAX_DIGITS = 23


class ArgumentError(CohsimError):
    """Argument text that strace or perf cannot have printed (the parser adds the line)."""


def number(text: str) -> int:
    """An unsigned number as strace or perf prints it: decimal, ``0x`` hex or ``0``-octal."""
    if len(text) > _MAX_DIGITS:
        raise ArgumentError(f"number {text[:12]}... is longer than any 64-bit value")
    try:
        if text[:2] in ("0x", "0X"):
            return int(text[2:], 16)
        return int(text, 8 if len(text) > 1 and text.startswith("0") else 10)
    except ValueError:
        raise ArgumentError(f"bad number {text!r} (an octal number has digits 0-7)") from None


class Args:
    """Positional (strace) or named (perf ``key: value``) access to one call's arguments, with
    what the trace builder takes from them worked out (an ArgumentError if they cannot be)."""

    def __init__(self, name: str, text: str) -> None:
        self.name = name
        self.tokens = split_args(text)
        self.named: dict[str, str] = {}
        for tok in self.tokens:
            m = _NAMED.match(tok)
            if m and not tok.startswith('"'):
                self.named[m.group(1)] = m.group(2)
        self.flags = self._flags()  #: flags of interest, in `FLAGS_OF_INTEREST` order
        index = PATH_ARG.get(name)
        #: the main path (`PATH_ARG`), None where the call has none or it is not a string
        self.path_of = self.path(index) if index is not None else None
        self.fd0 = self.fd(0)  #: the first argument as an fd, None where it is not a number

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
            return unquote(tok) or None
        return tok.split("<", 1)[0] if self.named else None

    def fd(self, i: int) -> int | None:
        m = _INT.match(self.get(i) or "")
        if m is None:
            return None
        if len(m.group(0)) > 11:  # an int: at most 10 digits and a sign
            raise ArgumentError(f"fd {m.group(0)[:12]}... is out of range")
        return int(m.group(0))

    def _flags(self) -> tuple[str, ...]:
        found: set[str] = set()
        if self.name in _FLAG_ARG:
            found |= self._decode(self.get(_FLAG_ARG[self.name]))
        if self.name in CLONES:  # flags=... or {flags=...}; perf: clone_flags: NEWNS|...
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
                n = number(part)
                if self.name == "fsconfig":
                    out |= {_FSCONFIG_CMDS[n]} if n in _FSCONFIG_CMDS else set()
                else:
                    out |= {flag for bit, flag in _NUMERIC.get(self.name, ()) if n & bit}
            else:
                out |= {p + part for p in _PREFIXES if p + part in _INTEREST}
        return out


# Argument text as tokens: a quoted string (possibly cut short), a comment, one bracket or
# comma, or a run of anything else.
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|/\*.*?(?:\*/|$)|[()\[\]{},]|[^"()\[\]{},/]+|/', re.S)
_CLOSED = re.compile(r'"((?:[^"\\]|\\.)*)"', re.S)


def split_args(text: str) -> list[str]:
    """Split argument text at top-level commas (quotes, brackets and comments respected)."""
    if SPECIAL.isdisjoint(text):  # the common case: plain numbers and flags
        return [t.strip() for t in text.split(",")] if text.strip() else []
    tokens: list[str] = []
    depth, start = 0, 0
    for m in TOKEN.finditer(text):
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


def unquote(token: str) -> str:
    """The text of the quoted string `token` starts with (strace's ``"..."...`` cut included)."""
    m = _CLOSED.match(token)
    if m is None:
        raise ArgumentError(f"unterminated string {_short(token)}")
    return unescape(m.group(1))


def unescape(body: str) -> str:
    """A string's body with strace's escapes decoded (see the module); ArgumentError on any
    other escape."""
    if "\\" not in body:
        return body
    out = bytearray()
    at = 0
    for m in _ESCAPE.finditer(body):
        out += body[at : m.start()].encode("utf-8", "surrogatepass")
        esc = m.group(1)
        if esc in _SIMPLE:
            out.append(_SIMPLE[esc])
        elif esc[:1] == "x" and len(esc) == 3:
            out.append(int(esc[1:], 16))
        elif esc[:1] in "01234567" and esc and int(esc, 8) <= 0xFF:
            out.append(int(esc, 8))
        else:
            raise ArgumentError(
                f"unknown string escape {m.group(0)[:4]} (strace writes only "
                + r"\\ \" \f \n \r \t \v, \xHH and octal \NNN up to \377)"
            )
        at = m.end()
    out += body[at:].encode("utf-8", "surrogatepass")
    return out.decode("utf-8", "backslashreplace")


def _short(text: str, n: int = 40) -> str:
    """`text` quoted, cut to `n` characters (an error message stays one short line)."""
    return repr(text if len(text) <= n else text[: n - 3] + "...")
