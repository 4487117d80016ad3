"""Level 2 against MCTOP's many-core lock measurements: throughput vs threads, shape only.

    python -m calibration.analysis.lock_scaling.compare [markov|des]

(markov by default; des runs the discrete-event simulation, 600 acquisitions a point, seed 1.)

Data: calibration/data/reference/lock-scaling/ (MCTOP, EuroSys 2017, MIT licence; its README).
Per machine, the machine is built from its own measured latency levels (the `.mct` file's
context-pair latencies, CPU cycles): SMT siblings (each context's one nearest partner), the
NUMA node's contexts (the grouping with as many groups as the file's `#Nodes`), and where two
nodes share a socket (lpd48core: two Opteron dies per package), the socket's. Each class's
latency is the median over its pairs. Time is in cycles throughout (freq_ghz = 1), so the
benchmark's `critical: 1000` is a 1,000-"ns" critical section and no clock rate is needed.

Assumptions (the files do not say): the threads fill the machine as pause_bench's `compact`
does (a socket's cores, then the next socket's, then the siblings); no work between
acquisitions (think 0); PAUSE 10 cycles (calibration/data/reference/pause_latency.csv, Intel
before Skylake; the Opteron's is not in the data: an assumption, prior 5-40 cycles). MCS is
compared with the model's qspinlock (its MCS queue), TTAS and TICKET with ttas and ticket; TAS,
CLH and the back-off variants have no model and are left out.

The comparison is of shape, as the data README advises (the throughput unit is not stated):
throughput relative to the smallest thread count, model over measured, per point; the error of
a curve is the mean |log(model / measured)| of its relative throughputs, printed as a factor.
Nothing is fitted: LockParams are level 2's defaults for the machine built.
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

import numpy as np

from cohsim.lock.handoff import simulate
from cohsim.machine.model import Coherence, Machine, Microarch, Topology

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "calibration/data/reference/lock-scaling"
#: results tag -> (.mct file, sockets): sockets from the data README (the paper's machines)
MACHINES = {
    "lpd48core": ("lpd48core.mct", 4),
    "xeon": ("lpdxeon2680.mct", 2),
    "quad": ("lpdquad.mct", 4),
    "diassrv8": ("diassrv8.mct", 8),
}
LOCKS = {"TTAS": "ttas", "TICKET": "ticket", "MCS": "qspinlock"}
CRITICAL_CYCLES = 1000.0  #: the results files' header, `critical: 1000`
PAUSE_CYCLES = 10.0  #: see the module docstring


def read_mct(path: Path) -> tuple[int, int, bool, np.ndarray]:
    """(contexts, nodes, smt, latency matrix in cycles) of an MCTOP description."""
    lines = path.read_text().splitlines()
    head = lines[0].split()
    n, nodes, smt = int(head[2]), int(head[4]), head[6] == "1"
    lat = np.zeros((n, n))
    for line in lines[1 : 1 + n * n]:
        a, b, v = line.split()
        lat[int(a), int(b)] = float(v)
    return n, nodes, smt, np.maximum(lat, lat.T)


def _groups(lat: np.ndarray, below: float) -> np.ndarray:
    """Connected components of 'latency <= below' (a label per context)."""
    n = len(lat)
    label = -np.ones(n, dtype=int)
    for s in range(n):
        if label[s] >= 0:
            continue
        stack, label[s] = [s], s
        while stack:
            i = stack.pop()
            for j in np.nonzero((lat[i] <= below) & (label < 0))[0]:
                label[j] = s
                stack.append(int(j))
    return label


def _grouping(lat: np.ndarray, count: int) -> np.ndarray:
    """The coarsest grouping by a latency threshold with `count` groups."""
    for below in np.unique(lat)[::-1]:
        label = _groups(lat, float(below))
        if len(np.unique(label)) == count:
            return label
    raise ValueError(f"no latency threshold gives {count} groups")


def build(tag: str) -> tuple[Machine, dict[str, float]]:
    """The Machine of a results tag, from its measured levels; and the levels (cycles)."""
    mct, sockets = MACHINES[tag]
    n, nodes, smt, lat = read_mct(DATA / "mctop" / mct)
    off = ~np.eye(n, dtype=bool)
    sib = np.zeros((n, n), dtype=bool)
    if smt:
        near = np.where(off, lat, np.inf).argmin(axis=1)
        sib[np.arange(n), near] = True
    node, sock = _grouping(lat, nodes), _grouping(lat, sockets)
    same_node = (node[:, None] == node[None, :]) & off & ~sib
    same_sock = (sock[:, None] == sock[None, :]) & ~(node[:, None] == node[None, :])
    levels = {"same_llc": float(np.median(lat[same_node]))}
    if smt:
        levels["smt"] = float(np.median(lat[sib]))
    if nodes > sockets:
        levels["cross_llc"] = float(np.median(lat[same_sock]))
    levels["cross_socket"] = float(np.median(lat[sock[:, None] != sock[None, :]]))
    cores = n // (2 if smt else 1)
    topo = Topology(
        interconnect="chiplet" if nodes > sockets else "mesh",
        sockets=sockets,
        cores_per_socket=cores // sockets,
        threads_per_core=2 if smt else 1,
        llc_domain_cores=cores // nodes,
        numa_nodes=nodes,
    )
    coh = Coherence(
        same_llc_ns=levels["same_llc"],
        smt_ns=levels.get("smt"),
        cross_llc_ns=levels.get("cross_llc"),
        cross_socket_ns=levels["cross_socket"],
    )
    micro = Microarch(uarch=f"MCTOP {tag}", pause_cycles=PAUSE_CYCLES, freq_ghz=1.0)
    return Machine(name=f"mctop-{tag}", topology=topo, microarch=micro, coherence=coh), levels


def measured() -> dict[tuple[str, str], dict[int, float]]:
    """(tag, lock) -> threads -> median throughput, no back-off."""
    out: dict[tuple[str, str], dict[int, float]] = {}
    with open(DATA / "mctop_lock_throughput.csv", newline="") as f:
        for row in csv.DictReader(f):
            if row["backoff"] == "no_backoff" and row["lock"] in LOCKS:
                key = (row["results_file_tag"], row["lock"])
                out.setdefault(key, {})[int(row["threads"])] = float(row["median_throughput"])
    return out


def compare(model: str = "markov") -> list[tuple[str, str, list[int], list[float], list[float]]]:
    """Per (tag, lock): threads, measured and simulated throughput relative to the first."""
    rows = []
    data = measured()
    for tag in MACHINES:
        machine, _ = build(tag)
        for lock, kind in LOCKS.items():
            curve = data[(tag, lock)]
            threads = sorted(curve)
            sim = [
                simulate(
                    machine,
                    t,
                    lock=kind,
                    cs_ns=CRITICAL_CYCLES,
                    model=model,
                    seed=1,
                    acquisitions=600,
                )
                for t in threads
            ]
            meas = [curve[t] / curve[threads[0]] for t in threads]
            mod = [r.acquisitions_per_s / sim[0].acquisitions_per_s for r in sim]
            rows.append((tag, lock, threads, meas, mod))
    return rows


def error(meas: list[float], mod: list[float]) -> float:
    """Mean |log(model / measured)| over a curve's points after the first, as a factor."""
    logs = [abs(math.log(b / a)) for a, b in zip(meas[1:], mod[1:], strict=True)]
    return math.exp(sum(logs) / len(logs))


def main(argv: list[str]) -> int:
    model = argv[0] if argv else "markov"
    for tag in MACHINES:
        m, levels = build(tag)
        t = m.topology
        lv = ", ".join(f"{k} {v:.0f}" for k, v in levels.items())
        print(
            f"{tag}: {t.sockets} sockets x {t.cores_per_socket} cores x {t.threads_per_core}, "
            f"{t.llc_domains} LLC domains ({t.interconnect}); levels (cycles): {lv}"
        )
    print(f"\nthroughput relative to the first thread count, measured / {model}")
    errors = []
    for tag, lock, threads, meas, mod in compare(model):
        pts = "  ".join(f"{n}: {a:.2f}/{b:.2f}" for n, a, b in zip(threads, meas, mod, strict=True))
        err = error(meas, mod)
        errors.append(err)
        print(f"{tag:10s} {lock:7s} error x{err:.2f}   {pts}")
    print(f"\nall curves: median error x{float(np.median(errors)):.2f}, worst x{max(errors):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
