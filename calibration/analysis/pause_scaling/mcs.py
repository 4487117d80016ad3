"""Level 2's classic MCS lock against pause_bench's on the 16-vCPU Emerald Rapids-class VM.

    python -m calibration.analysis.pause_scaling.mcs [des|markov]

Data: calibration/data/devvm-16cpu-intel-xeon-f6m207/pause-mcs/ (`cs100/`, `another-lease/`:
pause_bench --lock mcs, CS 100 ns, compact, 3 repeats; its README). Model: level 2's `mcs`
(cohsim.lock: the holder hands over at its release, two line transfers) and, beside it, its
`qspinlock` (the kernel's, whose queue's hand-over overlaps the critical section), on the
machine file as it is (models/servers/devvm-16cpu-intel-xeon-f6m207.toml), CS 100 ns, no think
time, 4,000 acquisitions, seed 0.

Per thread count: the time per acquisition (1 / acquisitions per second) and the p50 wait
(pause_bench's latency; the model's with the measured clock-read pair added, as
pause_scaling.heldout does), measured (median of the repeats, each folder) and modelled, and
model / measured. pause_bench's loop adds its clock reads and histogram to every acquisition
(210 ns a cycle at one thread, with the 100 ns section), part of them inside the hold, which
level 2 does not simulate: the time per acquisition is compared as it is, an upper bound on
the model's error.
"""

from __future__ import annotations

import statistics
import sys

from calibration.analysis.pause_scaling.heldout import DATA, HOST, measured
from cohsim.lock.handoff import simulate
from cohsim.machine.catalog import Catalog

FOLDERS = ("cs100", "another-lease")
THREADS = (2, 4, 8, 16)
CS_NS = 100.0


def rows(model: str) -> list[tuple[str, int, float, float, float, float]]:
    """(lock, threads, per-acquisition model, measured, p50 model, measured), the measured
    figures the folders' medians' mean; the clock-read pair, the folders' timer_overhead_ns
    medians' mean."""
    machine = Catalog().get(HOST)
    meas = {f: measured(DATA / "pause-mcs" / f) for f in FOLDERS}
    timer = statistics.fmean(
        statistics.median(v["timer_overhead_ns"] for v in m.values() if "timer_overhead_ns" in v)
        for m in meas.values()
    )
    out = []
    for lock in ("mcs", "qspinlock"):
        for n in THREADS:
            h = simulate(machine, n, lock=lock, cs_ns=CS_NS, acquisitions=4000, seed=0, model=model)
            per = statistics.fmean(1e9 / meas[f][("mcs", n)]["acquisitions_per_s"] for f in FOLDERS)
            p50 = statistics.fmean(meas[f][("mcs", n)]["p50_ns"] for f in FOLDERS)
            out.append((lock, n, 1e9 / h.acquisitions_per_s, per, h.p50_ns + timer, p50))
    return out


def main(argv: list[str]) -> int:
    model = argv[0] if argv else "des"
    print(f"level 2 ({model}) against pause_bench --lock mcs (pause-mcs/{', '.join(FOLDERS)})")
    print(
        "lock        n   per acquisition ns: model / measured        p50 wait ns: model / measured"
    )
    for lock, n, pm, pe, qm, qe in rows(model):
        per = f"{pm:7.0f} / {pe:7.0f}  x{pm / pe:.2f}"
        print(f"{lock:10s} {n:3d}   {per}          {qm:7.0f} / {qe:7.0f}  x{qm / qe:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
