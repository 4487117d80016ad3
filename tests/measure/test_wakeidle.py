"""Reading the wake-up latency table from scheduler traces (cohsim.measure.wakeidle, the
`cohsim bench wake-idle` command): samples from a trace, clear errors for bad input, and the
committed measurement reproduced from its committed traces."""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from cohsim.calibrate import load_bench
from cohsim.cli.app import main
from cohsim.errors import CohsimError
from cohsim.measure.wakeidle import samples_from_trace

ROOT = Path(__file__).resolve().parents[2]
IDLE = ROOT / "calibration/data/devvm-2cpu-intel-xeon-f6m167/mount-wake-long/wake-idle"


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
