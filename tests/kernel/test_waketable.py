"""The wake-up latency table by idle duration (cohsim.kernel.waketable): the quantile table and
its CSV form, and its use in the launch simulation. Reading it from scheduler traces:
tests/measure/test_wakeidle.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cohsim.calibrate import load_bench
from cohsim.errors import CohsimError
from cohsim.kernel import waketable
from cohsim.kernel.simulation.cpus import CPUs
from cohsim.kernel.waketable import table_from_rows, table_from_samples

ROOT = Path(__file__).resolve().parents[2]
IDLE = ROOT / "calibration/data/devvm-2cpu-intel-xeon-f6m167/mount-wake-long/wake-idle"


def t_bin(idle: float) -> int:
    return max(i for i, e in enumerate(waketable.EDGES_NS) if idle >= e)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 3e6), st.floats(1e3, 5e6)), min_size=waketable.MIN_SAMPLES),
    st.floats(0, 3e6),
    st.floats(0, 0.999),
    st.floats(0, 0.999),
)
def test_draw_is_a_quantile_function(
    samples: list[tuple[float, float]], idle: float, u: float, v: float
) -> None:
    """Non-decreasing in u, inside the bin's range, and the table survives its CSV form."""
    counts = [0] * len(waketable.EDGES_NS)
    for i, _ in samples:
        counts[t_bin(i)] += 1
    if max(counts) < waketable.MIN_SAMPLES:
        with pytest.raises(CohsimError, match="fewer than"):
            table_from_samples(samples)
        return
    t = table_from_samples(samples)
    lo, hi = sorted((u, v))
    assert t.draw(idle, lo) <= t.draw(idle, hi) + 1e-6
    vals = t.values_ns[t._bin(idle)]
    assert vals[0] - 1e-6 <= t.draw(idle, u) <= vals[-1] + 1e-6
    back = table_from_rows(list(enumerate(t.rows(2), start=2)), "x.csv")
    assert back.edges_ns == t.edges_ns and back.samples == t.samples
    assert back.draw(idle, u) == pytest.approx(t.draw(idle, u), abs=1.0)


def test_median_and_mean_of_one_bin() -> None:
    samples = [(5_000.0, float(w)) for w in range(1_000, 11_000, 1_000)]  # 1..10 us
    t = table_from_samples(samples)
    assert t.draw(5_000, 0.5) == pytest.approx(5_500)
    assert t.mean(5_000) == pytest.approx(5_500, rel=0.01)
    assert t.draw(2e6, 0.5) == t.draw(5_000, 0.5)  # empty bins borrow the populated one


def test_bad_table_rows_name_the_line() -> None:
    row = {"bench": "wake", "lock": "sched-trace", "threads": "2", "placement": "idle-x",
           "metric": "q0.5", "value": "7", "unit": "ns", "repeat": "0"}  # fmt: skip
    with pytest.raises(CohsimError, match="idle-LO-HI") as e:
        table_from_rows([(7, row)], "w.csv")
    assert e.value.where == "w.csv:7"
    with pytest.raises(CohsimError, match="not a number"):
        table_from_rows([(3, {**row, "placement": "idle-0-10000", "value": "x"})], "w.csv")


def test_cpus_report_how_long_the_granted_cpu_was_idle() -> None:
    from cohsim.kernel.simulation.clock import Environment

    env = Environment()
    cpus = CPUs(env, 2)

    def proc():
        assert cpus.acquire() is None and cpus.last_idle_ns == 0
        yield env.timeout(100)
        cpus.release()  # CPU idle from 100
        yield env.timeout(50)
        assert cpus.acquire() is None
        assert cpus.last_idle_ns == 50  # the one that idled last
        assert cpus.acquire() is None
        assert cpus.last_idle_ns == 150  # the other one, idle since the start

    env.process(proc())
    env.run()


def test_launch_with_a_table_is_deterministic_and_slower_than_no_wake() -> None:
    from cohsim.calibrate import simulate_run
    from cohsim.kernel.costs import load_kernel
    from cohsim.kernel.linecosts import LineCosts
    from cohsim.machine.catalog import Catalog

    m = Catalog().get("devvm-2cpu-intel-xeon-f6m167")
    costs = LineCosts(m, seed=0)
    table = load_bench([IDLE]).wake_idle
    k = load_kernel("linux-6.18")
    kt = replace(k, wake_table=table)
    kw = {"containers": 2, "think_ns": 100.0, "seed": 3, "costs": costs}
    a = simulate_run(m, kt, "common-parent", 4, 10, **kw)
    b = simulate_run(m, kt, "common-parent", 4, 10, **kw)
    none = simulate_run(m, k.with_values(wake_ns=0.0), "common-parent", 4, 10, **kw)
    assert a == b
    assert a.stride_ns > none.stride_ns
