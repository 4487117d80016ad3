"""The mount-table work of one `runc run`, from an unfiltered `strace -f -tt -T` log.

    python -m calibration.analysis.runc_strace.summary [LOG.strace[.gz] ...]

Default: the committed logs in calibration/data/devvm-2cpu-amd-epyc-f25m1/runc-strace/.
Per log: every call that touches the mount table or takes the mount locks, in order (clone /
clone3 / unshare / setns with CLONE_NEWNS, mount, umount2, pivot_root, chroot, the new mount
API, and the opens of a mountinfo file with their read() chunks), each with the process that
made it (runc's own stages: `run` the command, `init0` runc init's parent stage, `init1` the
child stage that unshares, `init2` the container's init), its flags, result and duration
(-T); then the counts and summed durations per call kind. `unfinished ... resumed` pairs are
joined; threads (CLONE_THREAD) are counted with their process.
"""

from __future__ import annotations

import gzip
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "calibration/data/devvm-2cpu-amd-epyc-f25m1/runc-strace"
LOGS = ("plain.strace", "userns.strace.gz", "overlay.strace.gz")

LINE = re.compile(r"^(\d+) +(\d\d:\d\d:\d\d\.\d+) (.*)$")
CALL = re.compile(r"^(\w+)\((.*)$")
RESUMED = re.compile(r"^<\.\.\. (\w+) resumed>(.*)$")
TAIL = re.compile(r"\) += (-?\w+)(?: [A-Z]\w+ \(.*?\))? <([\d.]+)>$")
MOUNT_CALLS = {
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "mount_setattr",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
}
MOUNTINFO = re.compile(r'"(/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/mountinfo)"')


@dataclass
class Call:
    pid: int
    t: float
    name: str
    args: str
    ret: str = "?"
    dur: float = 0.0


@dataclass
class Event:
    call: Call
    kind: str
    reads: list[int] = field(default_factory=list)
    read_us: float = 0.0
    chunk: int = 0  #: the buffer size of the first read()


def seconds(hms: str) -> float:
    h, m, s = hms.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def open_log(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return f.read().splitlines()


def calls(lines: list[str]) -> list[Call]:
    """Every completed call, in start order, with its unfinished half joined to its result."""
    out: list[Call] = []
    pending: dict[int, Call] = {}
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        pid, t, rest = int(m.group(1)), seconds(m.group(2)), m.group(3)
        r = RESUMED.match(rest)
        if r:
            c = pending.pop(pid, None)
            if c is None:
                continue
            rest = c.args + r.group(2)
        else:
            cm = CALL.match(rest)
            if not cm:
                continue  # signals, exits
            c = Call(pid, t, cm.group(1), "")
            rest = cm.group(2)
            if rest.endswith("<unfinished ...>"):
                c.args = rest[: -len("<unfinished ...>")].rstrip()
                pending[pid] = c
                out.append(c)
                continue
            out.append(c)
        tm = TAIL.search(rest)
        if tm:
            c.args, c.ret, c.dur = rest[: tm.start()], tm.group(1), float(tm.group(2))
        else:
            c.args = rest
    return out


def stages(cs: list[Call]) -> dict[int, str]:
    """pid -> runc stage: `run` (the command's process), `initK` (K processes below the one
    that exec'd `runc init`: init0 its parent stage, init1 the child, init2 the container's
    init), from the process tree of the clone results (threads join their process)."""
    tgid: dict[int, int] = {}
    parent: dict[int, int] = {}
    init_root: int | None = None
    first = cs[0].pid
    for c in cs:
        tgid.setdefault(c.pid, c.pid)
        if c.name in ("clone", "clone3", "vfork", "fork") and c.ret.isdigit():
            child = int(c.ret)
            if "CLONE_THREAD" in c.args:
                tgid[child] = tgid[c.pid]
            else:
                tgid[child] = child
                parent[child] = tgid[c.pid]
        if c.name == "execve" and '"runc", "init"' in c.args and init_root is None:
            init_root = tgid[c.pid]
    names: dict[int, str] = {}
    for pid, g in tgid.items():
        depth, p = 0, g
        while p != init_root and p in parent:
            p, depth = parent[p], depth + 1
        if g == first:
            names[pid] = "run"
        elif p == init_root and init_root is not None:
            names[pid] = f"init{depth}"
        else:
            names[pid] = "other"
    return names


def ns_flags(args: str) -> bool:
    return "CLONE_NEWNS" in args


def events(cs: list[Call]) -> list[Event]:
    """The mount-relevant calls; mountinfo reads folded into the open that started them."""
    tgid: dict[int, int] = {}
    for c in cs:
        tgid.setdefault(c.pid, c.pid)
        if c.name in ("clone", "clone3") and c.ret.isdigit():
            child = int(c.ret)
            tgid[child] = tgid[c.pid] if "CLONE_THREAD" in c.args else child
    out: list[Event] = []
    open_fds: dict[tuple[int, str], Event] = {}
    for c in cs:
        g = tgid.get(c.pid, c.pid)
        if c.name in MOUNT_CALLS:
            out.append(Event(c, c.name))
        elif c.name in ("unshare", "setns") or (c.name in ("clone", "clone3") and ns_flags(c.args)):
            out.append(Event(c, c.name))
        elif c.name in ("open", "openat") and MOUNTINFO.search(c.args) and c.ret.isdigit():
            e = Event(c, "mountinfo")
            open_fds[(g, c.ret)] = e
            out.append(e)
        elif c.name in ("read", "pread64"):
            fd = c.args.split(",", 1)[0]
            e = open_fds.get((g, fd))
            if e is not None:
                e.reads.append(int(c.ret) if c.ret.lstrip("-").isdigit() else -1)
                e.read_us += c.dur * 1e6
                size = re.search(r", (\d+)$", c.args)
                if size and not e.chunk:
                    e.chunk = int(size.group(1))
        elif c.name == "close":
            open_fds.pop((g, c.args.strip()), None)
    return out


def brief(e: Event) -> str:
    c = e.call
    if e.kind == "mountinfo":
        path = MOUNTINFO.search(c.args).group(1)
        return (
            f"open {path}; {len(e.reads)} read() of {e.chunk} B: "
            f"{'+'.join(map(str, e.reads))} B, {e.read_us:.0f} us in read"
        )
    args = c.args
    if c.name in ("clone", "clone3"):
        fl = re.search(r"flags=([\w|]+)", args)
        args = f"flags={fl.group(1) if fl else '?'}"
    elif c.name == "mount":
        parts = [p.strip() for p in args.split(", ")]
        if len(parts) >= 4:
            src, dst, fs, fl = parts[0], parts[1], parts[2], parts[3]
            fs = fs if fs.startswith('"') else "-"
            args = f"{src} -> {dst} {fs} {fl}"
    return f"{c.name}({args})"


def summarise(path: Path) -> str:
    cs = calls(open_log(path))
    names = stages(cs)
    evs = events(cs)
    t0 = cs[0].t
    rows = [f"== {path.name}: {len(cs)} calls, {cs[-1].t - t0:.3f} s from first to last"]
    rows.append(f"{'#':>3} {'t ms':>7} {'pid':>6} {'stage':6} {'us':>6} {'ret':>6}  call")
    for i, e in enumerate(evs, 1):
        c = e.call
        rows.append(
            f"{i:>3} {(c.t - t0) * 1e3:7.2f} {c.pid:>6} {names.get(c.pid, '?'):6} "
            f"{c.dur * 1e6:6.0f} {c.ret:>6}  {brief(e)}"
        )
    count: dict[tuple[str, str], list[float]] = defaultdict(list)
    for e in evs:
        count[(names.get(e.call.pid, "?"), e.kind)].append(e.call.dur * 1e6)
    rows.append("-- per stage and call: count, sum us, max us")
    for (stage, kind), ds in sorted(count.items()):
        rows.append(f"   {stage:6} {kind:12} {len(ds):4} {sum(ds):8.0f} {max(ds):6.0f}")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or [DATA / n for n in LOGS]
    for p in paths:
        print(summarise(p))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
