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

What the benchmark is, as far as the files show. MCTOP's repository holds the results only,
not the benchmark's source; its lock set (TAS, TTAS, TICKET, MCS, CLH) and header (`num_locks`,
`duration` in ms, `critical` in cycles) follow libslock's stress test (the same lab's lock
library, github.com/tudordavid/libslock, bmarks/stress_test.c: -l, -d, -a). From the data:

- Throughput counts every thread: read as per-thread figures, lpd48core's MCS at 48 threads
  would be 48 x 0.70 = 34 M acquisitions/s, one per 30 ns, shorter than one 1,000-cycle
  critical section at any clock.
- Placement: a socket's cores, then the next socket's, then the SMT siblings, as pause_bench's
  `compact`. TAS, whose releaser hands over inside its core when a sibling spins, stops falling
  exactly where siblings begin: after 20 threads on xeon (2 x 10 cores), rising after 48 on
  quad (4 x 12) and at 100 on diassrv8 (8 x 10); MCS drops there (0.68 -> 0.53 M/s on
  diassrv8 at 80 -> 100), the siblings slowing the holders' sections.
- Back-off: the three settings change TAS and TTAS by a median 2 % (at most 8-13 %, within
  the runs' spread) and TICKET by 48 % (at most 65 %), MCS and CLH by 8-10 % (up to 30-38 %):
  the settings do not reach TTAS. Whether it backs off on its own the files do not settle:
  libslock's TTAS (src/ttas.c, ttas_lock) spins on plain loads without PAUSE, and after a
  failed test-and-set waits a random delay below a per-thread limit that doubles from 1 to
  MAX_DELAY = 1,000 cycles (include/ttas.h) and is never reset. The model's ttas has no
  back-off, and no_backoff is compared. Nothing in it lets a releaser or its SMT sibling keep
  the lock: the line goes to the request queued first (cohsim/lock/line.py, the upgrade's
  answer; the data README's "What the distance still says").
- Work between a release and the next acquire: THINK_CYCLES, an assumption (prior 300-3,000
  cycles). Not zero: TTAS is slower than MCS at the smallest count on all four machines (xeon
  1.97 against 2.11 M/s, quad 1.45 / 1.74, lpd48core 0.65 / 0.76, diassrv8 0.41 / 0.76), where
  with none the releaser re-takes the line still in its cache before any waiter's re-read
  arrives (the DES then gives TTAS 1,066 cycles an acquisition against MCS's 1,178 at 10 threads
  of xeon). The lower end is the time a waiter needs to see the release and issue its atomic
  (2-3 transfers, about 300 cycles); above about 3,000 the model's smallest counts (6
  threads of lpd48core at ~1,200 cycles an acquisition) would no longer keep the lock busy,
  while the measured MCS curve there stays flat from 6 to 48 threads (0.97-0.92).

Other assumptions: PAUSE 10 cycles (calibration/data/reference/pause_latency.csv, Intel before
Skylake; the Opteron's is not in the data: an assumption, prior 5-40 cycles). MCS
(libslock's classic queue, which hands over at its release) is compared with the model's
classic `mcs` (before session 38 with its qspinlock, whose queue's hand-over overlaps the
section), TTAS and TICKET with ttas and ticket; TAS, CLH and
the back-off variants have no model and are left out.

The Opteron's L3 keeps no record of its cores' lines (VICTIM_L3, LockParams.domain_merges):
AMD Family 10h's L3 is a victim cache ("first access to an address ... will bring the line
straight into L1 data cache. Thus the L3 is non-inclusive. Only after it is evicted from L1 and
then from L2, will it come into L3", AMD as quoted in forum.canardpc.com's "Bulldozer et
innovations" thread), and with HT Assist on, 1 MB of each die's 6 MB L3 is the probe filter at
the line's home node (HP's DL585 G7 technology brief; Conway et al., "Cache Hierarchy and
Memory Subsystem of the AMD Opteron Processor", IEEE Micro 2010): lpd48core.mct's L3 of 5,118
KB is that 5 MB, so the filter was on. A die therefore answers no neighbour's read: every
miss goes to the home node.

The comparison is of shape, as the data README advises (the throughput unit is not stated):
throughput relative to the smallest thread count, model over measured, per point; the error of
a curve is the mean |log(model / measured)| of its relative throughputs, printed as a factor.
Nothing is fitted: LockParams are level 2's defaults for the machine built (the Opteron's with
domain_merges False).
"""

from __future__ import annotations

import csv
import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from cohsim.lock.handoff import simulate
from cohsim.lock.params import LockParams, params_from_machine
from cohsim.machine.model import Machine
from cohsim.machine.parts import Coherence, Microarch, Topology

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "calibration/data/reference/lock-scaling"
#: results tag -> (.mct file, sockets): sockets from the data README (the paper's machines)
MACHINES = {
    "lpd48core": ("lpd48core.mct", 4),
    "xeon": ("lpdxeon2680.mct", 2),
    "quad": ("lpdquad.mct", 4),
    "diassrv8": ("diassrv8.mct", 8),
}
LOCKS = {"TTAS": "ttas", "TICKET": "ticket", "MCS": "mcs"}
CRITICAL_CYCLES = 1000.0  #: the results files' header, `critical: 1000`
PAUSE_CYCLES = 10.0  #: see the module docstring
THINK_CYCLES = 1000.0  #: work between a release and the next acquire: see the module docstring
#: results tags whose LLC keeps no record of its cores' lines (see the module docstring)
VICTIM_L3 = ("lpd48core",)


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


def lock_params(tag: str, machine: Machine) -> LockParams:
    """Level 2's defaults for the machine, with the Opteron's victim L3 (no merging)."""
    p = params_from_machine(machine)
    return replace(p, domain_merges=False) if tag in VICTIM_L3 else p


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
        params = lock_params(tag, machine)
        for lock, kind in LOCKS.items():
            curve = data[(tag, lock)]
            threads = sorted(curve)
            sim = [
                simulate(
                    machine,
                    t,
                    lock=kind,
                    cs_ns=CRITICAL_CYCLES,
                    think_ns=THINK_CYCLES,
                    model=model,
                    params=params,
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
