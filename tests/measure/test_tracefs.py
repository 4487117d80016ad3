"""The tracefs text reader (cohsim.measure.tracefs): tracepoint and syscall lines, stack-trace
triggers, the idle-task switches a VM does not record, compressed dumps and bad files."""

from __future__ import annotations

import gzip
import lzma
from pathlib import Path

import pytest

from cohsim.errors import CohsimError
from cohsim.measure import tracefs

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "calibration/data/devvm-2cpu-intel-xeon-f6m167/mount-trace"

SWITCH_TO_IDLE = (
    "     mount_bench-12      [001] d..2.   10.000100: sched_switch: prev_comm=mount_bench "
    "prev_pid=12 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120"
)
WAKEUP = (
    "          <idle>-0       [000] dNh2.   10.000200: sched_wakeup: comm=mount_bench pid=12 "
    "prio=120 target_cpu=001"
)
SYSCALL = "     mount_bench-12      [001] .....   10.000250: sys_umount(name: 0x7ffd, flags: 0x2)"
RETURN = "     mount_bench-12      [001] .....   10.000260: sys_umount -> 0x0"
STACK = [
    "     mount_bench-13      [000] d..2.   10.000300: <stack trace>",
    " => __schedule",
    " => schedule",
    " => synchronize_rcu_expedited",
]


def test_a_tracepoint_line_and_its_fields() -> None:
    e = tracefs.parse(WAKEUP, 7)
    assert e is not None
    assert (e.comm, e.pid, e.cpu, e.flags, e.name, e.line) == (
        "<idle>",
        0,
        0,
        "dNh2.",
        "sched_wakeup",
        7,
    )
    assert e.time_s == 10.0002 and e.t_us == pytest.approx(10_000_200.0)
    assert tracefs.fields(e.rest) == {
        "comm": "mount_bench", "pid": "12", "prio": "120", "target_cpu": "001"
    }  # fmt: skip


def test_syscall_lines_and_other_lines() -> None:
    enter, ret = tracefs.parse(SYSCALL), tracefs.parse(RETURN)
    assert enter is not None and enter.name == "sys_umount" and enter.rest.startswith("(name:")
    assert ret is not None and ret.name == "sys_umount" and ret.rest == "-> 0x0"
    for other in ("# tracer: nop", "", STACK[0], STACK[1]):
        assert tracefs.parse(other) is None


def test_stacks_are_one_event_when_asked() -> None:
    lines = [*STACK, RETURN]
    assert [e.name for e in tracefs.events(lines)] == ["sys_umount"]
    stack, ret = tracefs.events(lines, stacks=True)
    assert stack.name == "stack" and stack.pid == 13 and stack.line == 1
    assert stack.rest == "__schedule < schedule < synchronize_rcu_expedited"
    assert ret.name == "sys_umount" and ret.line == 5


def test_idle_exits_put_back_the_unrecorded_switch() -> None:
    """CPU 1 went idle and its switch back to the woken task is missing: it is put back at
    the wake-up + IDLE_EXIT_US, before the task's next event, and only when asked."""
    lines = [SWITCH_TO_IDLE, WAKEUP, SYSCALL, RETURN]
    assert len(list(tracefs.events(lines))) == 4
    evs = list(tracefs.events(lines, idle_exits=True))
    assert [e.name for e in evs] == [
        "sched_switch", "sched_wakeup", "sched_switch", "sys_umount", "sys_umount"
    ]  # fmt: skip
    put = evs[2]
    assert put.cpu == 1 and put.line == 0 and put.rest.endswith("inferred=1")
    assert tracefs.fields(put.rest)["next_pid"] == "12"
    assert put.t_us == pytest.approx(10_000_200.0 + tracefs.IDLE_EXIT_US)


def test_compressed_dumps_read_alike(tmp_path: Path) -> None:
    text = "\n".join(["# tracer: nop", SWITCH_TO_IDLE, WAKEUP, SYSCALL, RETURN]) + "\n"
    (tmp_path / "t.txt").write_text(text)
    (tmp_path / "t.gz").write_bytes(gzip.compress(text.encode()))
    (tmp_path / "t.xz").write_bytes(lzma.compress(text.encode()))
    got = [list(tracefs.read(str(tmp_path / n))) for n in ("t.txt", "t.gz", "t.xz")]
    assert got[0] == got[1] == got[2] and len(got[0]) == 4 and got[0][0].line == 2


def test_bad_files_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CohsimError, match="no such file"):
        list(tracefs.read(str(tmp_path / "missing.txt")))
    broken = tmp_path / "broken.xz"
    broken.write_bytes(lzma.compress(b"x" * 100)[:20])
    with pytest.raises(CohsimError, match="cannot read the trace") as e:
        list(tracefs.read(str(broken)))
    assert e.value.where == str(broken)


def test_a_committed_trace_reads_whole() -> None:
    """The committed devvm trace: every switch out of CPU 1's idle task is missing, and the
    reader puts one back for each task that ran there after it idled."""
    path = str(TRACES / "unmount-breakdown/trace-common-parent-2w-1L.txt.xz")
    evs = list(tracefs.read(path, idle_exits=True))
    switches = [e for e in evs if e.name == "sched_switch"]
    out_of_idle = [e for e in switches if tracefs.fields(e.rest)["prev_pid"] == "0"]
    assert {e.cpu for e in out_of_idle if e.line} == {0}  # recorded: CPU 0's only
    put_back = [e for e in out_of_idle if e.line == 0]
    assert put_back and {e.cpu for e in put_back} == {1}
    assert sum(e.name == "sys_umount" for e in evs) > 1_000
