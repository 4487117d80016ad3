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

Inside a PID namespace strace prints a fork's result as the child's pid in that namespace, not
the pid its own lines carry; such children are matched to the first unclaimed new pid whose
first line comes after the fork started.
"""

from __future__ import annotations

import gzip
import lzma
import re
from dataclasses import dataclass, field
from pathlib import Path

from calibration.analysis.runc_strace.summary import MOUNT_CALLS, Call, calls
from calibration.analysis.walkers.walks import EXECS, walks

PHASES = ("pre-mount", "host-binds", "ns-setup", "post-pivot", "handoff", "entry", "teardown")
ROLES = ("run", "init0", "init1", "init2", "entry")
FORKS = ("clone", "clone3", "vfork", "fork")
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
    tgid: dict[int, int] = {cs[0].pid: cs[0].pid}
    parent: dict[int, int] = {}
    claimed = {int(c.ret) for c in forks if int(c.ret) in seen} | {cs[0].pid}
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
    marks = {
        "mount0": min(mount_t),
        "unshare": min(c.t for c in cs if c.name == "unshare" and "CLONE_NEWNS" in c.args),
        "pivot": min(c.t for c in cs if c.name == "pivot_root"),
        "mount_last": max(
            c.t for c, r in zip(cs, role, strict=True) if r == "init2" and c.name in MOUNT_CALLS
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
