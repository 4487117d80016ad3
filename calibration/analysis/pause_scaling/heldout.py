"""Level 2 on the 16-vCPU VM: fit the transfer on 1-2 threads, predict 4, 8 and 16.

    python -m calibration.analysis.pause_scaling.heldout [des|markov]

(des by default, 4,000 acquisitions a point, seed 0; markov answers the predictions with the
analytic chain, which has no fairness and no tail: its p99 is its p50.)

Data: calibration/data/devvm-16cpu-intel-xeon-f6m207/ (its README): `pause/` (ttas and ticket,
1, 2, 4, 8, 16 threads, compact, 3 repeats) and `pause-every-thread-count/` (1..16).
Machine: models/servers/devvm-16cpu-intel-xeon-f6m207.toml (one mesh LLC domain, 16 cores).

Two versions of the model, nothing tuned to the held-out counts:

- `machine`: the machine file as it is (same_llc_ns 51.2 from the pairs matrix, its PAUSE);
- `fit`: cohsim.calibrate.lockfit.fit_lock on the `pause/` runs with 1-2 threads only (what
  `cohsim calibrate` does with them): the measured PAUSE and a fitted same_llc_ns, from which
  params_from_machine derives the home agent's service time (same_llc_ns / 2).

Per held-out count and lock: p50, p99 and mean latency (the measured clock-read pair added, as
fit_lock does: pause_bench's latencies include it), acquisitions/s and fairness (fewest / most
acquisitions of a thread; the simulation's holds) against the median of the 3 repeats, as
model / measured. The error of a (version, lock, metric) is the mean |log(model / measured)|
over 4, 8, 16 threads, printed as a factor (not for fairness, which is 0 in the model).

Then three diagnostics. The one-thread cycle: the model's acquire + critical section against
pause_bench's whole loop (its clock reads and histogram are outside both, and level 2
simulates think_ns = 0). The ticket hand-off: time per acquisition (1 / throughput) against
threads, a least-squares line over 4..16 threads in `pause-every-thread-count/` and through
the model's 4, 8, 16; the slope is what each extra waiter costs a hand-off. (des only) The ttas
race: the machine version's fairness with that loop given as think_ns, the time a releaser
spends before it tries again, against the measured fairness.
"""

from __future__ import annotations

import math
import statistics
import sys
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

from cohsim.calibrate import load_bench
from cohsim.calibrate.lockfit import fit_lock
from cohsim.lock.handoff import simulate
from cohsim.lock.params import params_from_machine
from cohsim.machine.catalog import Catalog
from cohsim.machine.model import Machine
from cohsim.measure.programs import read_bench_csv

REPO = Path(__file__).resolve().parents[3]
HOST = "devvm-16cpu-intel-xeon-f6m207"
DATA = REPO / "calibration/data" / HOST
HELD_OUT = (4, 8, 16)
LOCKS = ("ttas", "ticket")
METRICS = ("p50_ns", "p99_ns", "mean_ns", "acquisitions_per_s", "fairness_min_over_max")
SHORT = {"p50_ns": "p50", "p99_ns": "p99", "mean_ns": "mean", "acquisitions_per_s": "acq/s"}
SHORT["fairness_min_over_max"] = "fair"
CS_NS = 100.0  #: pause_bench's --cs-ns in both folders (the README's commands)
ACQUISITIONS = 4000
SEED = 0
Measured = dict[tuple[str, int], dict[str, float]]


def measured(folder: Path) -> Measured:
    """(lock, threads) -> metric -> median over the repeats."""
    vals: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    for r in read_bench_csv(folder / "pause_bench.csv", "pause"):
        vals[(r["lock"], int(r["threads"]), r["metric"])].append(float(r["value"]))
    out: Measured = defaultdict(dict)
    for (lock, n, metric), v in vals.items():
        out[(lock, n)][metric] = statistics.median(v)
    return dict(out)


def versions(machine: Machine) -> tuple[dict[str, Machine], float, dict[str, float]]:
    """The two versions of the machine; the clock-read pair (ns); the fit's figures."""
    runs = [r for r in load_bench([DATA / "pause"]).pause if r.threads <= 2]
    fit = fit_lock(machine, runs, SEED)
    llc, pause = fit.parameters["same_llc_ns"], fit.parameters["pause_ns"]
    fitted = replace(
        machine,
        microarch=replace(machine.microarch, pause_cycles=pause.value * machine.microarch.freq_ghz),
        coherence=replace(machine.coherence, same_llc_ns=llc.value),
    )
    timer = statistics.median(r.timer_overhead_ns for r in runs)
    info = {"same_llc_ns": llc.value, "stderr": llc.stderr, "pause_ns": pause.value}
    return {"machine": machine, "fit": fitted}, timer, info


def predict(
    machine: Machine, lock: str, threads: int, model: str, timer: float, think: float = 0.0
) -> dict[str, float]:
    """pause_bench's metrics as level 2 answers them (latencies with the clock-read pair)."""
    h = simulate(
        machine,
        threads,
        lock=lock,
        cs_ns=CS_NS,
        think_ns=think,
        acquisitions=ACQUISITIONS,
        seed=SEED,
        model=model,
        record=model == "des",
    )
    out = {
        "p50_ns": h.p50_ns + timer,
        "p99_ns": h.p99_ns + timer,
        "mean_ns": h.mean_ns + timer,
        "acquisitions_per_s": h.acquisitions_per_s,
        "fairness_min_over_max": math.nan,
    }
    if h.record is not None:
        held = Counter(t for t, _, _ in h.record.holds)
        counts = [held.get(i, 0) for i in range(threads)]
        out["fairness_min_over_max"] = min(counts) / max(counts)
    return out


def log_error(pairs: list[tuple[float, float]]) -> float:
    """Mean |log(model / measured)| as a factor."""
    logs = [abs(math.log(a / b)) for a, b in pairs]
    return math.exp(sum(logs) / len(logs))


def handoff_line(threads: list[int], per_acq_ns: list[float]) -> tuple[float, float]:
    """(intercept, slope) of time per acquisition against threads, least squares."""
    slope, intercept = np.polyfit(np.array(threads, float), np.array(per_acq_ns), 1)
    return float(intercept), float(slope)


def held_out(
    model: str,
) -> tuple[
    dict[str, Machine], float, dict[str, float], dict[tuple[str, str, int], dict[str, float]]
]:
    """The versions, the clock pair, the fit, and (version, lock, threads) -> predictions."""
    machine = Catalog().get(HOST)
    vers, timer, info = versions(machine)
    preds = {
        (name, lock, n): predict(m, lock, n, model, timer)
        for name, m in vers.items()
        for lock in LOCKS
        for n in (2, *HELD_OUT)
    }
    return vers, timer, info, preds


def _cell(metric: str, a: float, b: float) -> str:
    if math.isnan(a):
        return f"{'-':>8s}/{b:<8.3g}      "
    if metric == "fairness_min_over_max":
        return f"{a:8.3f}/{b:<8.3f} x{max(a, 1e-4) / max(b, 1e-4):<5.2g}"
    return f"{a:8.4g}/{b:<8.4g} x{a / b:<5.2f}"


def main(argv: list[str]) -> int:
    model = argv[0] if argv else "des"
    meas, every = measured(DATA / "pause"), measured(DATA / "pause-every-thread-count")
    vers, timer, info, preds = held_out(model)
    print(
        f"fit_lock on pause/ 1-2 threads: same_llc_ns {info['same_llc_ns']:.1f} +- "
        f"{info['stderr']:.1f} (machine file {vers['machine'].coherence.same_llc_ns:.1f}), "
        f"pause_ns {info['pause_ns']:.2f}; clock-read pair {timer:.1f} ns"
    )
    for name, m in vers.items():
        p = params_from_machine(m)
        print(
            f"  {name:8s} same_llc_ns {m.coherence.same_llc_ns:6.1f}  llc_service_ns "
            f"{p.llc_service_ns:5.1f}  pause_ns {m.microarch.pause_ns:5.2f}"
        )
    print(f"\nmodel ({model}) / measured (median of 3 repeats, pause/); 2 threads fitted")
    print("version  lock    n " + "".join(f"{SHORT[k]:>11s}{'':13s}" for k in METRICS))
    for name in vers:
        for lock in LOCKS:
            for n in (2, *HELD_OUT):
                pr, me = preds[(name, lock, n)], meas[(lock, n)]
                cells = "  ".join(_cell(k, pr[k], me[k]) for k in METRICS)
                print(f"{name:8s} {lock:6s} {n:2d}  {cells}")
    print(f"\nheld-out error (4, 8, 16 threads), mean |log(model / measured)| ({model})")
    for name in vers:
        for lock in LOCKS:
            errs = []
            for k in METRICS[:4]:  # fairness: the table's column (0 has no log)
                pairs = [(preds[(name, lock, n)][k], meas[(lock, n)][k]) for n in HELD_OUT]
                errs.append(f"{SHORT[k]} x{log_error(pairs):.2f}")
            print(f"{name:8s} {lock:6s} error " + "  ".join(errs))
    one = simulate(vers["fit"], 1, lock="ttas", cs_ns=CS_NS, acquisitions=500, model=model)
    cycle_meas = 1e9 / meas[("ttas", 1)]["acquisitions_per_s"]
    cycle_mod = 1e9 / one.acquisitions_per_s
    loop = cycle_meas - cycle_mod
    print(
        f"\none thread, ttas: cycle {cycle_meas:.0f} ns measured, {cycle_mod:.0f} ns model: "
        f"loop outside acquire + critical section {loop:.0f} ns"
    )
    ks = list(range(4, 17))
    line_meas = handoff_line(ks, [1e9 / every[("ticket", k)]["acquisitions_per_s"] for k in ks])
    per_k = "  ".join(
        f"{k}: {1e9 / every[('ticket', k)]['acquisitions_per_s']:.0f}" for k in (2, 3, 4, 8, 16)
    )
    print(f"ticket ns per acquisition, pause-every-thread-count/: {per_k}")
    print(
        f"ticket hand-off line, measured 4..16: {line_meas[0]:.0f} + {line_meas[1]:.1f} ns "
        "x threads"
    )
    for name in vers:
        ys = [1e9 / preds[(name, "ticket", n)]["acquisitions_per_s"] for n in HELD_OUT]
        a, b = handoff_line(list(HELD_OUT), ys)
        pts = "  ".join(f"{n}: {y:.0f}" for n, y in zip(HELD_OUT, ys, strict=True))
        print(f"ticket hand-off line, {name:8s} 4,8,16: {a:.0f} + {b:.1f} ns x threads   ({pts})")
    if model == "des":
        fair = "fairness_min_over_max"
        race = [
            predict(vers["machine"], "ttas", n, model, timer, loop)[fair] for n in (2, *HELD_OUT)
        ]
        print(
            f"ttas fairness, machine with the {loop:.0f} ns loop as think_ns: "
            + "  ".join(f"{n}: {f:.3f}" for n, f in zip((2, *HELD_OUT), race, strict=True))
        )
        print(
            "ttas fairness, measured:                        "
            + "  ".join(f"{n}: {meas[('ttas', n)][fair]:.3f}" for n in (2, *HELD_OUT))
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
