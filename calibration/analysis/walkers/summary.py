"""The path walks of one container start, by process and phase, per ms of CPU, and when they
happen against runc's own mount calls (data: calibration/data/devvm-2cpu-intel-xeon-f6m207/
walkers/, recorded by measure.sh and containerd.sh beside this file).

    python -m calibration.analysis.walkers.summary [DATA_DIR]

Walks are counted from the strace logs (calibration.analysis.walkers.walks says which calls
walk and how often); CPU and untraced timing from the perf recordings (task-clock samples and
the path syscalls' tracepoints, no ptrace) and `perf stat`. Every figure is the median over the
repeats of a workload; roles and phases are calibration.analysis.walkers.trace's.
"""

from __future__ import annotations

import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

from calibration.analysis.runc_strace.summary import calls
from calibration.analysis.walkers.trace import (
    CTRD_PHASES,
    MARKS,
    PHASES,
    ROLES,
    open_log,
    read_ctrd_perf,
    read_ctrd_strace,
    read_perf,
    read_strace,
)
from calibration.analysis.walkers.walks import PATH_SYSCALLS, walks

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "calibration/data/devvm-2cpu-intel-xeon-f6m207/walkers"
WORKLOADS = ("true", "true-userns", "bb-script", "deb-true", "deb-script", "deb-python")
RUNC = ("run", "init0", "init1", "init2")
SHORT = {
    "pre-mount": "pre",
    "host-binds": "binds",
    "ns-setup": "ns",
    "post-pivot": "pivot",
    "handoff": "hand",
    "entry": "entry",
    "teardown": "tear",
}


def med(xs) -> float:
    xs = list(xs)
    return statistics.median(xs) if xs else 0.0


def _repeats(d: Path, pattern: str) -> dict[str, list[Path]]:
    """workload -> its files, in repeat order."""
    out: dict[str, list[Path]] = defaultdict(list)
    for p in sorted(
        d.glob(pattern), key=lambda p: (p.name.split(".")[0], int(p.name.split(".")[1]))
    ):
        out[p.name.split(".")[0]].append(p)
    return out


def perf_stat(path: Path) -> tuple[float, Counter]:
    """task-clock ms and the path syscalls' counts of one `perf stat -x,` file."""
    ms, counts = 0.0, Counter()
    for line in path.read_text().splitlines():
        f = line.split(",")
        if len(f) > 2 and f[2] == "task-clock":
            ms = float(f[0])
        elif len(f) > 2 and f[2].startswith("syscalls:sys_enter_"):
            counts[f[2][len("syscalls:sys_enter_") :]] = int(f[0]) if f[0].isdigit() else 0
    return ms, counts


def strace_c(path: Path) -> Counter:
    """calls per syscall of one `strace -c` summary."""
    out = Counter()
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) >= 5 and f[-1].isidentifier() and f[3].isdigit():
            out[f[-1]] = int(f[3])
    return out


def _is_path_call(name: str) -> bool:
    return name in PATH_SYSCALLS or name == "umount"


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]


def runc_report(d: Path) -> list[str]:
    straces = _repeats(d / "strace", "*.strace*")
    perfs = _repeats(d / "perf", "*.txt*")
    stats = _repeats(d / "perf-stat", "*.csv")
    cs = _repeats(d / "strace-c", "*.txt")
    out: list[str] = []
    overview = [
        [
            "workload",
            "n",
            "walks",
            "runc",
            "entry",
            "teardown",
            "<=last mount",
            "after",
            "path calls",
            "-c calls",
            "perf calls",
            "CPU ms",
        ]
    ]
    cpu_rows = [
        [
            "workload",
            "role",
            "walks",
            "sampled ms",
            "CPU ms",
            "walks/CPU-ms",
            "us CPU/walk",
            "path calls/CPU-ms",
        ]
    ]
    time_rows = [["workload"] + [f"{SHORT[p]} ms" for p in PHASES[:6]] + ["entry end"]]
    dens_rows = [["workload"] + [f"{SHORT[p]}" for p in PHASES] + ["all"]]
    phase_rows = [["workload"] + [SHORT[p] for p in PHASES] + ["after mounts", "walks/CPU-ms"]]
    kinds_by: dict[str, Counter] = {}
    ordered = {"strace": [0, 0], "perf": [0, 0]}  # logs whose phase marks are in time order, all
    for w in WORKLOADS:
        runs = [read_strace(p) for p in straces[w]]
        cell: dict[tuple[str, str], list[int]] = defaultdict(list)
        kinds: list[Counter] = []
        pathcalls = []
        for r in runs:
            c: Counter = Counter()
            k: Counter = Counter()
            for call, role, ws in zip(r.calls, r.role, r.walks, strict=True):
                c[(role, r.phase(call.t))] += len(ws)
                for x in ws:
                    k[("runc" if role in RUNC else role, x)] += 1
            for role in ROLES:
                for ph in PHASES:
                    cell[(role, ph)].append(c[(role, ph)])
            kinds.append(k)
            pathcalls.append(sum(1 for call in r.calls if _is_path_call(call.name)))
        totals = [sum(cell[(ro, ph)][i] for ro in ROLES for ph in PHASES) for i in range(len(runs))]
        runc = [
            sum(cell[(ro, ph)][i] for ro in RUNC for ph in PHASES[:6]) for i in range(len(runs))
        ]
        entry = [sum(cell[("entry", ph)][i] for ph in PHASES) for i in range(len(runs))]
        tear = [sum(cell[(ro, "teardown")][i] for ro in ROLES) for i in range(len(runs))]
        before = [
            sum(cell[(ro, ph)][i] for ro in ROLES for ph in PHASES[:4]) for i in range(len(runs))
        ]
        after = [
            sum(cell[(ro, ph)][i] for ro in ROLES for ph in PHASES[4:6]) for i in range(len(runs))
        ]
        st = [perf_stat(p) for p in stats[w]]
        c_calls = [sum(n for s, n in strace_c(p).items() if _is_path_call(s)) for p in cs[w]]
        prs = [read_perf(p) for p in perfs[w]]
        for key, recs in (("strace", runs), ("perf", prs)):
            for rec in recs:
                ts = [rec.marks[m] for m in ("start",) + MARKS]
                ordered[key][0] += ts == sorted(ts)
                ordered[key][1] += 1
        perf_calls = [
            sum(1 for s in pr.syscalls if s[2] not in ("unshare", "getcwd", "connect"))
            for pr in prs
        ]
        cpu_ms = med(s[0] for s in st)
        overview.append(
            [
                w,
                f"{len(runs)}/{len(prs)}",
                f"{med(totals):.0f}",
                f"{med(runc):.0f}",
                f"{med(entry):.0f}",
                f"{med(tear):.0f}",
                f"{med(before):.0f}",
                f"{med(after):.0f}",
                f"{med(pathcalls):.0f}",
                f"{med(c_calls):.0f}",
                f"{med(perf_calls):.0f}",
                f"{cpu_ms:.1f}",
            ]
        )
        # the headline matrix: role x phase
        out.append(
            f"== {w}: walks per container start by process (rows) and phase (columns),"
            f" median of {len(runs)}"
        )
        rows = [["role"] + [SHORT[p] for p in PHASES] + ["total"]]
        for ro in ROLES:
            per = [med(cell[(ro, ph)]) for ph in PHASES]
            tot = med(sum(cell[(ro, ph)][i] for ph in PHASES) for i in range(len(runs)))
            rows.append([ro] + [f"{v:.0f}" for v in per] + [f"{tot:.0f}"])
        rows.append(
            ["all"]
            + [
                f"{med(sum(cell[(ro, ph)][i] for ro in ROLES) for i in range(len(runs))):.0f}"
                for ph in PHASES
            ]
            + [f"{med(totals):.0f}"]
        )
        out += _table(rows)
        out.append("")
        # CPU per role (perf record samples), walks per CPU-ms
        role_cpu = {
            ro: med(sum(ms for _t, r, ms in pr.samples if r == ro) for pr in prs) for ro in ROLES
        }
        # sampling every 250 us costs CPU itself: scale each role's samples to perf stat's total
        sampled = med(sum(ms for _t, _r, ms in pr.samples) for pr in prs)
        scale = cpu_ms / sampled
        role_calls = {
            ro: med(sum(1 for s in pr.syscalls if s[1] == ro) for pr in prs) for ro in ROLES
        }
        groups = [("runc", RUNC), ("entry", ("entry",))] + [(ro, (ro,)) for ro in RUNC]
        for name, members in groups:
            nw = med(
                sum(cell[(ro, ph)][i] for ro in members for ph in PHASES) for i in range(len(runs))
            )
            raw = sum(role_cpu[ro] for ro in members)
            cpu = raw * scale
            ncalls = sum(role_calls[ro] for ro in members)
            rate = nw / cpu if cpu else 0.0
            cpu_rows.append(
                [
                    w,
                    name,
                    f"{nw:.0f}",
                    f"{raw:.1f}",
                    f"{cpu:.1f}",
                    f"{rate:.1f}",
                    f"{1000 / rate:.0f}" if rate else "-",
                    f"{ncalls / cpu:.1f}" if cpu else "-",
                ]
            )
        total_calls = med(len(pr.syscalls) for pr in prs)
        cpu_rows.append(
            [
                w,
                "all",
                f"{med(totals):.0f}",
                f"{sampled:.1f}",
                f"{cpu_ms:.1f}",
                f"{med(totals) / cpu_ms:.1f}",
                f"{1000 * cpu_ms / med(totals):.0f}",
                f"{total_calls / cpu_ms:.1f}",
            ]
        )
        # untraced timing of the phases (perf): when each starts, ms after runc's exec
        marks = ("mount0", "unshare", "pivot", "mount_last", "exec")
        starts = [0.0] + [med((pr.marks[m] - pr.marks["start"]) * 1e3 for pr in prs) for m in marks]
        end = med((pr.marks["end"] - pr.marks["start"]) * 1e3 for pr in prs)
        time_rows.append([w] + [f"{s:.1f}" for s in starts] + [f"{end:.1f}"])
        # path calls per ms of wall time in each phase (perf, untraced)
        dens = []
        for ph in PHASES:
            per = []
            for pr in prs:
                m = pr.marks
                bounds = {
                    "pre-mount": (m["start"], m["mount0"]),
                    "host-binds": (m["mount0"], m["unshare"]),
                    "ns-setup": (m["unshare"], m["pivot"]),
                    "post-pivot": (m["pivot"], m["mount_last"]),
                    "handoff": (m["mount_last"], m["exec"]),
                    "entry": (m["exec"], m["end"]),
                }.get(ph)
                if bounds is None:
                    continue
                n = sum(1 for s in pr.syscalls if pr.phase(s[0]) == ph)
                per.append(n / max((bounds[1] - bounds[0]) * 1e3, 1e-3))
            dens.append(f"{med(per):.1f}" if per else "-")
        total_dens = med(
            len(pr.syscalls) / ((pr.marks["end"] - pr.marks["start"]) * 1e3) for pr in prs
        )
        dens_rows.append([w] + dens + [f"{total_dens:.1f}"])
        # CPU by phase (perf samples scaled to perf stat) and the strace walks in it
        cpu_ph = {
            ph: scale * med(sum(ms for t, _r, ms in pr.samples if pr.phase(t) == ph) for pr in prs)
            for ph in PHASES
        }
        walk_ph = {
            ph: med(sum(cell[(ro, ph)][i] for ro in ROLES) for i in range(len(runs)))
            for ph in PHASES
        }
        after = ("handoff", "entry")
        cpu_after = sum(cpu_ph[ph] for ph in after)
        walks_after = sum(walk_ph[ph] for ph in after)
        phase_rows.append(
            [w]
            + [f"{walk_ph[ph]:.0f}/{cpu_ph[ph]:.1f}" for ph in PHASES]
            + [f"{walks_after:.0f}/{cpu_after:.1f}", f"{walks_after / cpu_after:.1f}"]
        )
        agg: Counter = Counter()
        for k in kinds:
            agg.update(k)
        kinds_by[w] = Counter({key: v / len(kinds) for key, v in agg.items()})
    out.append(
        "== per workload: walks per container start (median); path calls: strace -tt, strace -c,"
        " perf; CPU: perf stat task-clock"
    )
    out.append(
        "   runc = run+init0+init1+init2 before teardown; <=last mount = phases pre..pivot"
        " (all processes); after = handoff + entry"
    )
    out += _table(overview)
    out.append("")
    out.append(
        "== walks per ms of CPU, by process: CPU from perf record's task-clock samples (untraced),"
        " scaled to perf stat's total (sampling inflates it)"
    )
    out += _table(cpu_rows)
    out.append("")
    out.append("== when: each phase's start, ms after runc's exec (perf, untraced, median)")
    out += _table(time_rows)
    out.append("")
    out.append(
        "== path calls per ms of wall time in each phase (perf tracepoints, untraced, median)"
    )
    out += _table(dens_rows)
    out.append("")
    out.append(
        "== phase marks in time order: {}/{} strace logs, {}/{} perf recordings".format(
            *ordered["strace"], *ordered["perf"]
        )
    )
    out.append("")
    out.append(
        "== walks / CPU ms in each phase (all processes; CPU from perf samples scaled to perf"
        " stat); after mounts = handoff + entry"
    )
    out += _table(phase_rows)
    out.append("")
    out.append(
        "== walks by kind (mean per start): runc's processes for `true`, the entrypoint for"
        " the others"
    )
    for w in WORKLOADS:
        who = "runc" if w == "true" else "entry"
        ks = sorted(((v, k[1]) for k, v in kinds_by[w].items() if k[0] == who), reverse=True)
        out.append(f"   {w} ({who}): " + ", ".join(f"{name} {v:.0f}" for v, name in ks if v >= 0.5))
    return out


#: containerd traces' process kinds, and the groups perf can tell apart
CTRD_ROLES = (
    "containerd",
    "shim start",
    "shim",
    "runc create",
    "runc init",
    "runc start",
    "entry",
    "runc delete",
    "shim delete",
)
PERF_KIND = {
    "containerd": "containerd",
    "shim start": "shim",
    "shim": "shim",
    "shim delete": "shim",
    "runc create": "runc",
    "runc start": "runc",
    "runc delete": "runc",
    "runc init": "runc init",
    "entry": "entry",
}


def containerd_report(d: Path) -> list[str]:
    out: list[str] = []
    images = ("bb1", "bb5")
    start_by: dict[str, dict[str, float]] = {}
    for img in images:
        runs = [read_ctrd_strace(p) for p in sorted(d.glob(f"strace/containerd.{img}.*.strace*"))]
        n = len(runs)
        cell: dict[tuple[str, str], list[int]] = defaultdict(list)
        mounts: Counter = Counter()
        for r in runs:
            c: Counter = Counter()
            for call, role, ws in zip(r.calls, r.role, r.walks, strict=True):
                c[(role, r.phase(call.t))] += len(ws)
                if call.name in ("mount", "umount2") and role in ("containerd", "shim"):
                    mounts[(role, r.phase(call.t), call.name, len(ws))] += 1
            for ro in CTRD_ROLES + ("other",):
                for ph in CTRD_PHASES:
                    cell[(ro, ph)].append(c[(ro, ph)])
        out.append(
            f"== containerd {img} ({img[2:]} layer(s)): walks per `ctr run --rm` by process (rows)"
            f" and phase (columns), median of {n}"
        )
        rows = [["process"] + list(CTRD_PHASES) + ["start", "total"]]
        start_by[img] = {}
        for ro in CTRD_ROLES + ("other",):
            tot = [sum(cell[(ro, ph)][i] for ph in CTRD_PHASES) for i in range(n)]
            if not any(tot):
                continue
            start = [sum(cell[(ro, ph)][i] for ph in CTRD_PHASES[:5]) for i in range(n)]
            start_by[img][ro] = med(start)
            rows.append(
                [ro]
                + [f"{med(cell[(ro, ph)]):.0f}" for ph in CTRD_PHASES]
                + [f"{med(start):.0f}", f"{med(tot):.0f}"]
            )
        col = [
            med(sum(cell[(ro, ph)][i] for ro in CTRD_ROLES + ("other",)) for i in range(n))
            for ph in CTRD_PHASES
        ]
        start_all = [
            sum(cell[(ro, ph)][i] for ro in CTRD_ROLES + ("other",) for ph in CTRD_PHASES[:5])
            for i in range(n)
        ]
        tot_all = [
            sum(cell[(ro, ph)][i] for ro in CTRD_ROLES + ("other",) for ph in CTRD_PHASES)
            for i in range(n)
        ]
        start_by[img]["all"] = med(start_all)
        rows.append(
            ["all"] + [f"{v:.0f}" for v in col] + [f"{med(start_all):.0f}", f"{med(tot_all):.0f}"]
        )
        out += _table(rows)
        marks = [
            med((r.marks[m] - r.marks["start"]) * 1e3 for r in runs)
            for m in ("rootfs", "mount0", "mount_last", "exec", "end")
        ]
        out.append(
            "   phase starts under strace, ms after attach: rootfs {:.0f}, runc-mounts {:.0f},"
            " handoff {:.0f}, entry {:.0f}, teardown {:.0f}".format(*marks)
        )
        out.append(
            "   mount calls of containerd and the shim (process, phase, call, walks each: count"
            " over all runs): "
            + "; ".join(f"{k[0]} {k[1]} {k[2]} {k[3]}: {v}" for k, v in sorted(mounts.items()))
        )
        # ctr, the client
        ctr = []
        for p in sorted(d.glob(f"strace/ctr.{img}.*.strace*")):
            cr = read_ctrd_strace_client(p)
            ctr.append(cr)
        out.append(f"   ctr (the client, its own strace): {med(ctr):.0f} walks per run")
        # strace -c: path calls of containerd and all it started, per run
        c_calls = [
            sum(v for k, v in strace_c(p).items() if _is_path_call(k))
            for p in sorted(d.glob(f"strace-c/containerd.{img}.*.txt"))
        ]
        out.append(f"   strace -c: {med(c_calls):.0f} path calls per run (start and teardown)")
        # CPU by kind (perf record, untraced): walks per CPU-ms over the whole run
        perfs = [read_ctrd_perf(p) for p in sorted(d.glob(f"perf/containerd.{img}.*.txt*"))]
        rows = [
            ["kind", "walks", "CPU ms (sampled)", "walks/CPU-ms", "us CPU/walk", "perf path calls"]
        ]
        for kind in ("containerd", "shim", "runc", "runc init", "entry"):
            members = [ro for ro, k in PERF_KIND.items() if k == kind]
            w = med(
                sum(cell[(ro, ph)][i] for ro in members for ph in CTRD_PHASES) for i in range(n)
            )
            cpu = med(pc.get(kind, 0.0) for pc, _ in perfs)
            ncalls = med(ps.get(kind, 0) for _, ps in perfs)
            rate = w / cpu if cpu else 0.0
            rows.append(
                [
                    kind,
                    f"{w:.0f}",
                    f"{cpu:.1f}",
                    f"{rate:.1f}",
                    f"{1000 / rate:.0f}" if rate else "-",
                    f"{ncalls:.0f}",
                ]
            )
        out += ["   " + line for line in _table(rows)]
        out.append("")
    out.append("== per extra image layer (bb5 - bb1) / 4, walks per container start, by process")
    out.append(
        "   "
        + ", ".join(
            f"{ro} {(start_by['bb5'].get(ro, 0) - start_by['bb1'].get(ro, 0)) / 4:+.1f}"
            for ro in CTRD_ROLES + ("all",)
            if ro in start_by["bb1"] or ro in start_by["bb5"]
        )
    )
    return out


def exec_report(d: Path) -> list[str]:
    """`runc exec` of /bin/true into a running container: an exec probe's walks and CPU."""
    runs = [read_strace(p) for p in sorted(d.glob("strace/exec.*.strace*"))]
    by: dict[str, list[int]] = defaultdict(list)
    for r in runs:
        c: Counter = Counter()
        for role, ws in zip(r.role, r.walks, strict=True):
            c[role] += len(ws)
        for ro in ROLES:
            by[ro].append(c[ro])
        by["all"].append(sum(c.values()))
    st = [perf_stat(p) for p in sorted(d.glob("perf-stat/exec.*.csv"))]
    cpu = med(s[0] for s in st)
    calls_ = med(sum(n for k, n in s[1].items() if k not in ("unshare", "getcwd")) for s in st)
    out = [
        f"== runc exec /bin/true into a running container (an exec probe), median of {len(runs)}"
    ]
    out.append("   walks: " + ", ".join(f"{ro} {med(v):.0f}" for ro, v in by.items()))
    out.append(
        f"   CPU (perf stat, untraced): {cpu:.1f} ms; {med(by['all']) / cpu:.1f} walks per CPU-ms;"
        f" perf path calls {calls_:.0f}"
    )
    return out


def read_ctrd_strace_client(path: Path) -> int:
    """Walks of one ctr client run (every process in its log)."""
    return sum(len(walks(c.name, c.args)) for c in calls(open_log(path)))


def main(argv: list[str]) -> int:
    d = Path(argv[0]) if argv else DATA
    print("\n".join(runc_report(d / "runc")))
    print()
    print("\n".join(exec_report(d / "exec")))
    print()
    print("\n".join(containerd_report(d / "containerd")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
