"""One `runc run` as its processes and phases, from an `strace -f -tt -T` log or a `perf script`
listing (calibration/analysis/walkers/measure.sh records both).

Processes (roles): `run` the `runc run` command; `init0` runc init's parent stage (the process
that execs `/proc/self/exe init`, in the host's namespaces); `init1` its child, which unshares
the namespaces; `init2` the container's init (runc's rootfs set-up) until it execs the
entrypoint; `entry` the entrypoint from that exec on, with every process it starts.

Phases, by the time a call starts, against runc's own mount calls:

1. `pre-mount`: before runc's first mount call (init0's bind of its own binary, host namespace);
2. `host-binds`: from there to init1's unshare(CLONE_NEWNS);
3. `ns-setup`: from the unshare to init2's pivot_root (the rootfs bind, proc, /dev, cgroups);
4. `post-pivot`: from pivot_root to init2's last mount call (readonly paths, masks);
5. `handoff`: from there to the entrypoint's exec (runc's exec fifo, capabilities, seccomp);
6. `entry`: from the exec to the entrypoint's last call;
7. `teardown`: after it (runc run deletes the container: cgroups, state directory).

A log of `strace -p` starts with a line from each thread that was there when strace attached:
the pids first seen within ATTACH_S of the first line are taken for threads of the first.
Inside a PID namespace strace prints a fork's result as the child's pid in that namespace, not
the pid its own lines carry; such children are matched to the first unclaimed new pid whose
first line comes after the fork started.
"""

from __future__ import annotations

import gzip
import lzma
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from calibration.analysis.runc_strace.summary import MOUNT_CALLS, Call, calls
from calibration.analysis.walkers.walks import EXECS, walks

PHASES = ("pre-mount", "host-binds", "ns-setup", "post-pivot", "handoff", "entry", "teardown")
ROLES = ("run", "init0", "init1", "init2", "entry")
FORKS = ("clone", "clone3", "vfork", "fork")
ATTACH_S = 0.005
#: marks of the phases: first mount, unshare, pivot_root, last mount, exec, entry's end
MARKS = ("mount0", "unshare", "pivot", "mount_last", "exec", "end")


@dataclass
class Run:
    """One recorded `runc run`: its calls with their role, the phase marks (s), and each
    call's walks."""

    calls: list[Call]
    role: list[str]
    marks: dict[str, float]
    walks: list[list[str]] = field(default_factory=list)

    def phase(self, t: float) -> str:
        m = self.marks
        for name, mark in zip(
            PHASES[:5], ("mount0", "unshare", "pivot", "mount_last", "exec"), strict=True
        ):
            if t < m[mark]:
                return name
        if t == m["mount_last"]:
            return "post-pivot"
        return "entry" if t <= m["end"] else "teardown"


def _tree(cs: list[Call]) -> tuple[dict[int, int], dict[int, int]]:
    """pid -> tgid, and tgid -> parent tgid, from the forks (threads join their process)."""
    seen: dict[int, float] = {}
    for c in cs:
        seen.setdefault(c.pid, c.t)
    forks = [c for c in cs if c.name in FORKS and c.ret.isdigit()]
    # threads that were there when strace attached (-p) show up at once
    tgid: dict[int, int] = {p: cs[0].pid for p, t in seen.items() if t - cs[0].t < ATTACH_S}
    parent: dict[int, int] = {}
    claimed = {int(c.ret) for c in forks if int(c.ret) in seen} | set(tgid)
    unclaimed = sorted((t, p) for p, t in seen.items() if p not in claimed)
    for c in sorted(forks, key=lambda c: c.t):
        child = int(c.ret)
        if child not in seen or seen[child] < c.t:  # a pid in the container's namespace
            later = [(t, p) for t, p in unclaimed if t >= c.t]
            if not later:
                continue
            unclaimed.remove(later[0])
            child = later[0][1]
        own = tgid.setdefault(c.pid, c.pid)
        if "CLONE_THREAD" in c.args:
            tgid[child] = own
        else:
            tgid[child] = child
            parent[child] = own
    for p in seen:
        tgid.setdefault(p, p)
    return tgid, parent


def read_strace(path) -> Run:
    """The log as a Run: roles, marks and walks per call."""
    cs = calls(open_log(path))
    tgid, parent = _tree(cs)
    run = tgid[cs[0].pid]
    init0 = next(tgid[c.pid] for c in cs if c.name == "execve" and '"runc", "init"' in c.args)
    kids = {p: [k for k, q in parent.items() if q == p] for p in set(parent.values())}
    init1 = min(kids[init0])
    init2 = min(kids[init1])
    below: set[int] = set()
    todo = list(kids.get(init2, []))
    while todo:
        p = todo.pop()
        below.add(p)
        todo += kids.get(p, [])
    exec_t = min(c.t for c in cs if tgid[c.pid] == init2 and c.name in EXECS and c.ret == "0")
    role = []
    for c in cs:
        g = tgid[c.pid]
        if g == init2:
            role.append("entry" if c.t >= exec_t else "init2")
        elif g in below:
            role.append("entry")
        else:
            role.append({run: "run", init0: "init0", init1: "init1"}.get(g, "other"))
    mount_t = [c.t for c in cs if c.name in MOUNT_CALLS]
    # (`runc exec` has no unshare, pivot_root or mounts of init2: those marks are then never)
    marks = {
        "mount0": min(mount_t),
        "unshare": min(
            (c.t for c in cs if c.name == "unshare" and "CLONE_NEWNS" in c.args), default=math.inf
        ),
        "pivot": min((c.t for c in cs if c.name == "pivot_root"), default=math.inf),
        "mount_last": max(
            (c.t for c, r in zip(cs, role, strict=True) if r == "init2" and c.name in MOUNT_CALLS),
            default=math.inf,
        ),
        "exec": exec_t,
        "end": max(c.t for c, r in zip(cs, role, strict=True) if r == "entry"),
        "start": cs[0].t,
    }
    out = Run(cs, role, marks)
    out.walks = [walks(c.name, c.args) for c in cs]
    _interpreters(out)
    return out


def _interpreters(run: Run) -> None:
    """Add the kernel's walk of the ELF interpreter to every exec of a dynamically linked
    program: the new program's first path call is then glibc's loader checking
    /etc/ld.so.preload (static programs and Go's do not)."""
    nxt: dict[int, int] = {}  # pid -> index of its last successful exec awaiting its first call
    for i, c in enumerate(run.calls):
        if c.pid in nxt and run.walks[i] and c.name not in EXECS:
            j = nxt.pop(c.pid)
            if c.name == "access" and '"/etc/ld.so.preload"' in c.args:
                run.walks[j] = run.walks[j] + [f"{run.calls[j].name}:interp"]
        if c.name in EXECS and c.ret == "0":
            nxt[c.pid] = i


def open_log(path: Path | str) -> list[str]:
    """A log's lines, xz- or gzip-compressed or plain."""
    path = Path(path)
    opener = {".xz": lzma.open, ".gz": gzip.open}.get(path.suffix, open)
    with opener(path, "rt") as f:
        return f.read().splitlines()


# ----- perf script listings ----------------------------------------------------------------

PERF = re.compile(r"^\s*(.+?)\s+(\d+)/(\d+)\s+([\d.]+):\s+(?:(\d+)\s+)?([\w:-]+):\s*(.*)$")


@dataclass
class PerfRun:
    """One `perf record` of a `runc run`: task-clock samples and path syscalls by role and
    phase (the same marks as the strace log's, from the tracepoints)."""

    samples: list[tuple[float, str, float]]  #: (time, role, CPU ms) of each task-clock sample
    syscalls: list[tuple[float, str, str, str]]  #: (time, role, syscall, fields)
    marks: dict[str, float]
    phase = Run.phase


def read_perf(path: Path | str) -> PerfRun:
    """The `perf script -F comm,pid,tid,time,period,event,trace` listing as a PerfRun."""
    rows = []
    period: list[float] = []
    for line in open_log(path):
        m = PERF.match(line)
        if m:
            rows.append(
                (int(m.group(2)), int(m.group(3)), float(m.group(4)), m.group(6), m.group(7))
            )
            period.append(float(m.group(5) or 0) / 1e6)
    pids = {r[0] for r in rows}
    parent: dict[int, int] = {}
    execs: dict[int, list[tuple[float, str]]] = {}
    for pid, _tid, t, ev, f in rows:
        if ev == "sched:sched_process_fork":
            child = int(re.search(r"child_pid=(\d+)", f).group(1))
            if child in pids and child != pid:
                parent.setdefault(child, pid)
        elif ev == "sched:sched_process_exec":
            execs.setdefault(pid, []).append((t, re.search(r"filename=(\S+)", f).group(1)))
    run = next(p for p, e in execs.items() if e[0][1].endswith("/runc"))
    init0 = next(p for p, e in execs.items() if p != run and e[0][1] == "/proc/self/exe")
    kids: dict[int, list[int]] = {}
    for k, p in parent.items():
        kids.setdefault(p, []).append(k)
    init1 = min(kids[init0])
    init2 = min(kids[init1])
    below: set[int] = set()
    todo = list(kids.get(init2, []))
    while todo:
        p = todo.pop()
        below.add(p)
        todo += kids.get(p, [])
    exec_t = execs[init2][0][0]
    names = {run: "run", init0: "init0", init1: "init1"}

    def role(pid: int, t: float) -> str:
        if pid == init2:
            return "entry" if t >= exec_t else "init2"
        return "entry" if pid in below else names.get(pid, "other")

    samples, sys_ = [], []
    for (pid, _tid, t, ev, f), ms in zip(rows, period, strict=True):
        r = role(pid, t)
        if ev == "task-clock":
            samples.append((t, r, ms))
        elif ev.startswith("syscalls:sys_enter_"):
            sys_.append((t, r, ev[len("syscalls:sys_enter_") :], f))
    mount = {"mount", "umount"}
    marks = {
        "mount0": min(t for t, _r, s, _f in sys_ if s in mount),
        "unshare": min(
            t for t, _r, s, f in sys_ if s == "unshare" and int(f.split()[-1], 16) & 0x20000
        ),
        "pivot": min(t for t, _r, s, _f in sys_ if s == "pivot_root"),
        "mount_last": max(
            t for t, r, s, _f in sys_ if r == "init2" and s in mount | {"pivot_root"}
        ),
        "exec": exec_t,
        "end": max(t for pid, _tid, t, _ev, _f in rows if role(pid, t) == "entry"),
        "start": execs[run][0][0],
    }
    return PerfRun(samples, sys_, marks)


# ----- containerd: `strace -f -p containerd` during one `ctr run --rm` ----------------------

#: a containerd trace's phases, by the time a call starts (marks in brackets)
CTRD_PHASES = (
    "create",  # from the trace's start to the shim's overlay mount of the rootfs [rootfs]
    "rootfs",  # from there to runc init's first mount call [mount0]
    "runc-mounts",  # runc's mount calls, from the first to init2's last [mount_last]
    "handoff",  # from there to the entrypoint's exec [exec]
    "entry",  # the entrypoint [end]
    "teardown",  # after it: runc delete, the rootfs's unmount, shim delete, snapshot removal
)
CTRD_MARKS = ("rootfs", "mount0", "mount_last", "exec", "end")


def _label(c: Call) -> str | None:
    """The process kind an exec makes, from its argv."""
    if c.name not in EXECS or c.ret != "0":
        return None
    argv = c.args
    if "containerd-shim" in argv:
        for sub in ("start", "delete"):
            if f'"{sub}"]' in argv:
                return f"shim {sub}"
        return "shim"
    if '"runc", "init"' in argv:
        return "runc init"
    if "runc" in argv.split("[", 1)[0] or '["runc"' in argv:
        m = re.search(r'"(create|start|delete|kill|state)"', argv)
        return f"runc {m.group(1)}" if m else "runc"
    if c.name == "execveat":
        return None  # runc init re-executing itself through its fd
    return "entry"


@dataclass
class CtrdRun:
    """One traced `ctr run`: every call of containerd and what it started, with the kind of
    process that made it, the phase marks and each call's walks."""

    calls: list[Call]
    role: list[str]
    marks: dict[str, float]
    walks: list[list[str]] = field(default_factory=list)

    def phase(self, t: float) -> str:
        for name, mark in zip(CTRD_PHASES, CTRD_MARKS, strict=False):
            if t < self.marks[mark] or (mark == "end" and t <= self.marks[mark]):
                return name
        return "teardown"


def read_ctrd_strace(path: Path | str) -> CtrdRun:
    cs = calls(open_log(path))
    tgid, parent = _tree(cs)
    root = tgid[cs[0].pid]
    label: dict[int, list[tuple[float, str]]] = {root: [(0.0, "containerd")]}
    for c in cs:
        lab = _label(c)
        if lab:
            label.setdefault(tgid[c.pid], []).append((c.t, lab))

    def kind(pid: int, t: float) -> str:
        g = tgid[pid]
        while True:
            own = [lab for t0, lab in label.get(g, []) if t0 <= t]
            if own:
                return own[-1]
            if g not in parent:
                return "other"
            g = parent[g]

    role = [kind(c.pid, c.t) for c in cs]
    # runc init's stages after the entrypoint's exec: init2 is then the entrypoint
    mounts = [
        c.t for c, r in zip(cs, role, strict=True) if r == "runc init" and c.name in MOUNT_CALLS
    ]
    rootfs = min(c.t for c, r in zip(cs, role, strict=True) if r == "shim" and c.name == "mount")
    exec_t = min(c.t for c, r in zip(cs, role, strict=True) if r == "entry")
    marks = {
        "start": cs[0].t,
        "rootfs": rootfs,
        "mount0": min(mounts),
        "mount_last": max(mounts),
        "exec": exec_t,
        "end": max(c.t for c, r in zip(cs, role, strict=True) if r == "entry"),
    }
    out = CtrdRun(cs, role, marks)
    out.walks = [walks(c.name, c.args) for c in cs]
    _interpreters(out)  # type: ignore[arg-type]
    return out


def read_ctrd_perf(path: Path | str) -> tuple[dict[str, float], dict[str, int]]:
    """CPU ms and path syscalls by process kind in a `perf record -p containerd` listing:
    containerd, shim (every shim process), runc (its command-line runs), runc init (its three
    stages until the entrypoint's exec), entry. perf's exec events name the binary only, so a
    runc process is `runc init` when it execs /proc/self/exe, the entrypoint when a runc init
    process execs anything else."""
    rows = []
    for line in open_log(path):
        m = PERF.match(line)
        if m:
            rows.append(
                (int(m.group(2)), float(m.group(4)), float(m.group(5) or 0), m.group(6), m.group(7))
            )
    root = rows[0][0]
    parent: dict[int, int] = {}
    execs: dict[int, list[tuple[float, str]]] = {root: [(0.0, "containerd")]}
    pids = {r[0] for r in rows}
    for pid, t, _p, ev, f in rows:
        if ev == "sched:sched_process_fork":
            child = int(re.search(r"child_pid=(\d+)", f).group(1))
            if child in pids and child != pid:
                parent.setdefault(child, pid)
        elif ev == "sched:sched_process_exec":
            fn = re.search(r"filename=(\S+)", f).group(1)
            execs.setdefault(pid, []).append((t, fn))

    def kind(pid: int, t: float) -> str:
        g = pid
        while True:
            own = [fn for t0, fn in execs.get(g, []) if t0 <= t]
            if own:
                fn = own[-1]
                if fn == "containerd":
                    return fn
                if "containerd-shim" in fn:
                    return "shim"
                if fn == "/proc/self/exe" or fn.startswith(("/proc/self/fd/", "/dev/fd/")):
                    return "runc init"
                if fn.endswith("/runc"):
                    return "runc"
                return "entry"
            if g not in parent:
                return "other"
            g = parent[g]

    cpu: dict[str, float] = defaultdict(float)
    sys_: dict[str, int] = defaultdict(int)
    for pid, t, period, ev, _f in rows:
        k = kind(pid, t)
        if ev == "task-clock":
            cpu[k] += period / 1e6
        elif ev.startswith("syscalls:sys_enter_") and not ev.endswith(("unshare", "getcwd")):
            sys_[k] += 1
    return dict(cpu), dict(sys_)
