"""The 16-vCPU host's fit against its bursts confined to 2, 4, 8 and 16 CPUs
(calibration/data/devvm-16cpu-intel-xeon-f6m207/burst/cpus, `taskset -c 0-(N-1)`), each run
simulated on the host's machine with only those CPUs (`Machine.with_cores`).

The tolerances are what was measured (README there, "Bursts on 2-16 CPUs";
`python -m calibration.reports.many_core --groups none --cpus`), misses included: they hold
the model where it is, so a change that moves these predictions shows here. The model gets
the CPU dependence wrong: at 16 workers it is faster on 2 CPUs than on 16 (the runs were
slower, lowerdir-plus too since session 29), and at 100 workers it slows down less than the
runs (0.80-1.33x against 1.27-1.79x).
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import DATA, REPO

from cohsim.calibrate import check_runs, load_bench, load_fit
from cohsim.machine.catalog import Catalog

HOST = "devvm-16cpu-intel-xeon-f6m207"
CPUS = DATA / HOST / "burst" / "cpus"

#: (strategy, CPUs) -> predicted / measured - 1 of the worker time per sequence, 16
#: one-container workers x 10 layers, at the fit's nominal point (samples=0): as measured
#: since this host's machine file prices its list walks as its ring measured them
#: (cohsim.kernel.walk) and its fit was made again with its untraced wake-up pace; the
#: earlier figures in the comments. +/- 0.15.
#: per-layer on 16 CPUs is one fragile trajectory: with level 2's old line costs +0.401, but
#: +0.1 ns on the writer's line cost alone gave -0.125, +1 ns -0.151, -1 ns -0.158; the new
#: costs -0.159; with the walks (160 binds: 70 lines' walk where the line priced 160) +0.378
_MEASURED = {
    ("per-layer", 2): -0.323,  # -0.323 walks alone; -0.350 before
    ("per-layer", 16): +0.220,  # +0.378 walks alone; -0.159 before
    ("common-parent", 2): -0.314,  # -0.369; -0.348
    ("common-parent", 16): +0.287,  # +0.175; +0.229
    ("lowerdir-plus", 2): -0.301,  # -0.374; -0.374
    ("lowerdir-plus", 16): -0.048,  # -0.208; -0.208
}
#: strategy -> time at 2 CPUs / time at 16, 16 workers x 10 layers: (measured, predicted;
#: with the walks alone 0.53, 0.75, 0.88; before them 0.83, 0.74, 0.88; session 35's
#: predictions 0.56, 0.65, 0.95)
RATIO16 = {"per-layer": (1.08, 0.60), "common-parent": (1.39, 0.74), "lowerdir-plus": (1.12, 0.82)}


def test_with_cores_confines_the_host():
    host = Catalog().get(HOST)
    two = host.with_cores(2)
    assert two.vcpus == 2 and host.vcpus == 16
    assert (two.microarch, two.coherence) == (host.microarch, host.coherence)


def test_sixteen_workers_on_2_and_16_cpus():
    fit = load_fit(REPO / "calibration" / "fits" / f"{HOST}.json")
    host = Catalog().get(HOST)
    got = {}
    for n in (2, 16):
        runs = [
            r for r in load_bench([CPUS / f"{n}-cpus"]).mount if (r.workers, r.layers) == (16, 10)
        ]
        assert len(runs) == 9 and all(r.sampled and r.containers == 1 for r in runs)
        for c in check_runs(fit, runs, samples=0, machine=host.with_cores(n)):
            got[(c.key[0], n)] = c
            lo, hi = _MEASURED[(c.key[0], n)] - 0.15, _MEASURED[(c.key[0], n)] + 0.15
            assert lo < c.error() < hi, (c.key, n, c.error())
    for s in ("per-layer", "common-parent", "lowerdir-plus"):
        two, sixteen = got[(s, 2)], got[(s, 16)]
        measured = two.measured["stride_ns"] / sixteen.measured["stride_ns"]
        predicted = two.predicted["stride_ns"]["value"] / sixteen.predicted["stride_ns"]["value"]
        # the miss as it stands: the runs are slower on 2 CPUs; the model is faster there
        m0, p0 = RATIO16[s]
        assert measured == pytest.approx(m0, abs=0.01)
        assert predicted == pytest.approx(p0, abs=0.15), (s, measured, predicted)


#: per CPU count: (median abs. error %, interval coverage %) of the report's summary lines,
#: within the host, as measured (README); and per 100 x 50 shape, (measured, predicted)
#: time at 2 CPUs / time at 16
# since this host's list walks and its fit made again with its untraced wake-up pace (before:
# 36.1/44, 22.9/78, 15.5/86, 21.1/81; ratios 1.66/0.58, 1.27/0.52, 1.79/0.90); before level
# 2's upgrade fix 43.8/19, 31.3/61, 24.4/83, 17.5/69
SUMMARY = {2: (31.2, 36), 4: (28.6, 69), 8: (30.4, 83), 16: (22.3, 86)}
RATIOS = {"common-parent": (1.66, 0.38), "lowerdir-plus": (1.27, 0.63), "per-layer": (1.79, 0.87)}


@pytest.mark.slow
def test_the_cpus_table_as_measured():
    cmd = [sys.executable, "-m", "calibration.reports.many_core", "--groups", "none", "--cpus"]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr  # about 3.5 min on 2 CPUs
    pattern = (
        r"(\d+) CPUs: 12 shapes: median \|error\| ([\d.]+)%.*?coverage \d+/\d+ runs \((\d+)%\)"
    )
    got = {int(n): (float(m), int(c)) for n, m, c in re.findall(pattern, proc.stdout)}
    assert set(got) == set(SUMMARY)
    for n, (m0, c0) in SUMMARY.items():
        assert abs(got[n][0] - m0) < 5 and got[n][1] > c0 - 10, (n, got[n])
    for s, (m0, p0) in RATIOS.items():
        line = re.search(rf"{s}\s+100 50 .*?([\d.]+)\s+([\d.]+)$", proc.stdout, re.M)
        assert line, s
        assert float(line[1]) == pytest.approx(m0, abs=0.01)
        assert float(line[2]) == pytest.approx(p0, abs=0.15), (s, line[2])
