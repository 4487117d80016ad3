"""The wake-up latency table by idle duration (cohsim.kernel.waketable): reading scheduler traces,
the quantile table and its CSV form, the committed measurement, and its use in the launch
simulation."""

from __future__ import annotations

import lzma
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cohsim.calibrate import load_bench
from cohsim.cli.app import main
from cohsim.errors import CohsimError
from cohsim.kernel import waketable
from cohsim.kernel.runqueue import CPUs
from cohsim.kernel.waketable import samples_from_trace, table_from_rows, table_from_samples

ROOT = Path(__file__).resolve().parents[2]
IDLE = ROOT / "calibration/data/devvm-2cpu-intel-xeon-f6m167/session3/wake-idle"


def _ev(comm: str, pid: int, cpu: int, t_us: float, name: str, rest: str) -> str:
    return f"{comm:>16}-{pid:<7} [{cpu:03d}] d..2. {t_us / 1e6:12.6f}: {name}: {rest}"


def _switch(cpu: int, t: float, prev: tuple[str, int], nxt: tuple[str, int]) -> str:
    return _ev(
        prev[0], prev[1], cpu, t, "sched_switch",
        f"prev_comm={prev[0]} prev_pid={prev[1]} prev_prio=120 prev_state=S ==> "
        f"next_comm={nxt[0]} next_pid={nxt[1]} next_prio=120",
    )  # fmt: skip


def _waking(cpu: int, t: float, waker: tuple[str, int], pid: int, target: int) -> str:
    return _ev(
        waker[0], waker[1], cpu, t, "sched_waking",
        f"comm=w pid={pid} prio=120 target_cpu={target:03d}",
    )  # fmt: skip


IDLE_TASK = ("<idle>", 0)
A, B = ("a", 11), ("b", 12)

# CPU 1 goes idle at 100 us; CPU 0 wakes task b onto it at 130 us (idle 30 us); b runs at
# 142 us (wake 12 us). Then a same-CPU wake and a wake onto a busy CPU: neither is a sample.
TRACE = [
    "# tracer: nop",
    _switch(1, 100.0, B, IDLE_TASK),
    _waking(0, 130.0, A, 12, 1),
    _ev("<idle>", 0, 1, 141.0, "sched_wakeup", "comm=b pid=12 prio=120 target_cpu=001"),
    _switch(1, 142.0, IDLE_TASK, B),
    _waking(0, 150.0, A, 13, 0),
    _waking(0, 160.0, A, 14, 1),
    _switch(1, 170.0, B, ("c", 14)),
    "     mount_bench-11      [000] .....   0.000200: sys_umount -> 0x0",
]


def test_samples_from_trace_measures_idle_and_wake() -> None:
    samples = samples_from_trace(TRACE, "t")
    assert len(samples) == 1
    idle, wake = samples[0]
    assert idle == pytest.approx(30_000, abs=1)
    assert wake == pytest.approx(12_000, abs=1)


def test_not_a_scheduler_trace_is_one_clear_error() -> None:
    with pytest.raises(CohsimError, match="no sched_switch"):
        samples_from_trace(["hello", "world"], "f.txt")
    bad = [_ev("a", 1, 0, 1.0, "sched_waking", "comm=x pid=zz target_cpu=001")]
    with pytest.raises(CohsimError, match="malformed sched_waking") as e:
        samples_from_trace(bad, "f.txt")
    assert e.value.where == "f.txt:1"


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


def test_committed_table_reproduces_from_its_traces(tmp_path: Path) -> None:
    """The committed CSV is exactly what `cohsim bench wake-idle` makes of the committed
    traces; and the measurement shows the effect: a CPU idle longer wakes slower."""
    traces = sorted(str(p) for p in IDLE.glob("trace-*.txt.xz"))
    assert len(traces) == 18
    assert main(["bench", "wake-idle", *traces, "--out", str(tmp_path), "--json"]) == 0
    assert (tmp_path / "wake_bench.csv").read_text() == (IDLE / "wake_bench.csv").read_text()
    t = load_bench([IDLE]).wake_idle
    assert t is not None and sum(t.samples) > 60_000
    p50 = [t.draw(lo, 0.5) for lo in t.edges_ns]
    assert p50[0] <= 8_000 and p50[-1] >= 30_000  # 7 us idle < 10 us; 35 us idle > 1 ms
    assert p50 == sorted(p50)


def test_wake_idle_command_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.txt.xz"
    junk.write_bytes(lzma.compress(b"not a trace\n"))
    out = tmp_path / "out"
    assert main(["bench", "wake-idle", str(junk), "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not an ftrace dump" in err[0]
    assert not out.exists()
    broken = tmp_path / "broken.txt.xz"
    broken.write_bytes(lzma.compress(b"x" * 100)[:20])
    assert main(["bench", "wake-idle", str(broken), "--out", str(out)]) == 1
    assert "cannot read the trace" in capsys.readouterr().err


def test_cpus_report_how_long_the_granted_cpu_was_idle() -> None:
    import simpy

    env = simpy.Environment()
    cpus = CPUs(env, 2)

    def proc() -> simpy.events.ProcessGenerator:
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
