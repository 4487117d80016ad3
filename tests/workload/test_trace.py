"""Trace parsing: every reference example, every edge case, malformed lines, mount_ops."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cohsim.errors import CohsimError
from cohsim.workload.parse import parse_text, parse_trace
from cohsim.workload.summary import summarize
from cohsim.workload.trace import Trace

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "calibration" / "data" / "reference" / "trace-format-examples"
DATA = Path(__file__).resolve().parents[1] / "data" / "traces"


def by_tid(trace: Trace) -> dict[int, list[str]]:
    return {t.tid: [e.name for e in t.events] for t in trace.threads}


# ----------------------------------------------------------------- reference examples


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.txt")), ids=lambda p: p.name)
def test_every_reference_example_parses(path: Path) -> None:
    trace = parse_trace(path)
    assert trace.syscalls > 0
    assert trace.malformed_skipped == 0
    assert all(e.start_ns >= 0 for e in trace.events)
    assert min(e.start_ns for e in trace.events) == 0


def test_per_layer_example_in_detail() -> None:
    trace = parse_trace(EXAMPLES / "strace_f_tt_T_containerd_like_per_layer_3layers.txt")
    assert trace.format == "strace-tt"
    assert [t.tid for t in trace.threads] == [11434]  # 11435 only exits
    assert trace.counts_by_name() == {
        "mount": 1, "mount_setattr": 3, "move_mount": 3, "open_tree": 3, "umount2": 4,
    }  # fmt: skip
    # 3 binds + 1 overlay + 3 bind unmounts + the overlay's unmount
    assert trace.mount_ops == 8
    first = trace.events[0]
    assert (first.start_ns, first.duration_ns, first.ret) == (0, 26_000, 6)
    assert first.path == "/tmp/strace_demo/snapshots/1/fs"
    assert first.flags == ("OPEN_TREE_CLONE", "AT_EMPTY_PATH")
    setattr_ = trace.events[1]
    assert setattr_.start_ns == 124_000
    assert setattr_.flags == ("AT_EMPTY_PATH", "MOUNT_ATTR_IDMAP")
    assert (setattr_.fd, setattr_.fd_source) == (6, "open_tree")
    umounts = [e for e in trace.events if e.name == "umount2"]
    assert [("MNT_DETACH" in e.flags) for e in umounts] == [True, True, True, False]
    assert umounts[-1].path == "/tmp/strace_demo/merged"
    assert trace.span_ns == 1_135_000  # 28.999037 -> 29.000127 + 45 us


def test_common_parent_example() -> None:
    trace = parse_trace(EXAMPLES / "strace_f_tt_T_containerd_like_common_parent_3layers.txt")
    ev = trace.events
    assert ev[0].flags == ("OPEN_TREE_CLONE", "AT_RECURSIVE", "AT_EMPTY_PATH")
    assert set(ev[1].flags) >= {"MOUNT_ATTR_IDMAP", "MOUNT_ATTR_RDONLY", "MS_PRIVATE"}
    assert ev[3].args.endswith('"lowerdir=/tmp/strace_demo/ovl-id"...')
    assert ev[4].name == "openat" and ev[4].path == "/proc/self/mountinfo"
    einval = ev[6]
    assert (einval.ret, einval.errno, einval.ok, einval.mount_op) == (-1, "EINVAL", False, False)
    assert trace.mount_ops == 4  # bind, overlay, bind unmount, overlay unmount


def test_ttt_example_epoch_timestamps() -> None:
    trace = parse_trace(EXAMPLES / "strace_f_ttt_T_idmap_bind_2layers.txt")
    assert trace.format == "strace-ttt"
    assert [e.start_ns for e in trace.events][:3] == [0, 108_000, 155_000]
    assert trace.mount_ops == 4


def test_perf_example() -> None:
    trace = parse_trace(EXAMPLES / "perf_trace_idmap_bind_2layers.txt")
    assert trace.format == "perf"
    assert [t.tid for t in trace.threads] == [11226]
    ev = trace.events
    assert (ev[0].start_ns, ev[0].duration_ns, ev[0].ret) == (0, 35_000, 7)
    assert ev[0].flags == ("OPEN_TREE_CLONE",)  # 524289 = OPEN_TREE_CLONE | O_CLOEXEC
    assert ev[0].path is None  # perf prints a pointer
    assert ev[1].flags == ("AT_EMPTY_PATH",) and ev[1].fd_source == "open_tree"
    assert ev[2].flags == ("MOVE_MOUNT_F_EMPTY_PATH",)
    assert trace.mount_ops == 4


def test_forced_format_wrong_for_the_file_names_line_1() -> None:
    with pytest.raises(CohsimError) as exc:
        parse_trace(EXAMPLES / "perf_trace_idmap_bind_2layers.txt", format="strace")
    assert exc.value.where.endswith("perf_trace_idmap_bind_2layers.txt:1")
    with pytest.raises(CohsimError) as exc:
        parse_trace(EXAMPLES / "strace_f_ttt_T_idmap_bind_2layers.txt", format="perf")
    assert exc.value.where.endswith("strace_f_ttt_T_idmap_bind_2layers.txt:1")


# ----------------------------------------------------------------- edge cases


def test_interleaved_unfinished_resumed_errors_signals() -> None:
    trace = parse_trace(DATA / "interleaved_tt_T.strace")
    assert by_tid(trace) == {
        5000: ["open_tree", "mount_setattr", "move_mount", "close", "mount", "openat", "read",
               "umount2"],
        5001: ["open_tree", "mount_setattr", "move_mount", "close", "umount2"],
    }  # fmt: skip
    # write, close(9), openat(/etc/passwd), read(7), exit_group
    assert trace.unknown_skipped == 5
    t5000, t5001 = trace.threads
    resumed = t5001.events[0]  # unfinished at .000110, resumed with <0.000040>
    assert (resumed.start_ns, resumed.duration_ns, resumed.ret) == (10_000, 40_000, 4)
    assert resumed.path == "/snap/2/fs"
    move = t5000.events[2]
    assert (move.start_ns, move.duration_ns, move.path) == (60_000, 40_000, "/tmp/ovl (a)=b/0")
    assert move.mount_op
    # attr_clr flags are not set flags
    assert t5001.events[1].flags == (
        "AT_EMPTY_PATH", "MOUNT_ATTR_IDMAP", "MOUNT_ATTR_RDONLY", "MS_PRIVATE",
    )  # fmt: skip
    failed = t5001.events[2]
    assert (failed.ret, failed.errno, failed.path) == (-1, "ENOENT", '/tmp/ovl"x"/1')
    # the clone on fd 4 was never attached: a detached clone, counted on its open_tree
    assert resumed.mount_op
    assert t5001.events[3].fd_source == "open_tree"
    assert t5000.events[6].fd_source == "mountinfo"
    assert t5000.events[7].errno == "EBUSY" and not t5000.events[7].mount_op
    assert trace.mount_ops == 4  # move_mount, mount, detached clone, umount2
    assert trace.syscalls == 13


def test_think_times_are_gaps_between_end_and_next_start() -> None:
    trace = parse_trace(DATA / "interleaved_tt_T.strace")
    t5000 = trace.threads[0]
    # open_tree .000100 + 20us ends .000120; mount_setattr starts .000130
    assert t5000.think_times_ns()[0] == 10_000
    assert len(trace.think_times_ns()[5001]) == 4


def test_relative_timestamps_without_tid() -> None:
    trace = parse_trace(DATA / "nopid_r_T.strace")
    assert trace.format == "strace-r"
    assert [t.tid for t in trace.threads] == [0]
    assert [(e.name, e.start_ns) for e in trace.events] == [
        ("unshare", 0), ("mount", 100_000), ("open_tree", 150_000), ("move_mount", 190_000),
        ("umount2", 290_000),
    ]  # fmt: skip
    assert trace.events[0].flags == ("CLONE_NEWNS",)
    assert trace.events[1].flags == ("MS_REC", "MS_PRIVATE")
    assert trace.unknown_skipped == 1  # execve
    assert trace.mount_ops == 3


def test_pid_brackets_epoch_without_durations() -> None:
    trace = parse_trace(DATA / "pid_brackets_ttt_noT.strace")
    assert trace.format == "strace-ttt"
    assert by_tid(trace) == {0: ["open_tree", "umount2"], 4242: ["fsopen", "fsconfig"]}
    assert all(e.duration_ns is None for e in trace.events)
    fsconfig = trace.threads[1].events[1]
    assert (fsconfig.path, fsconfig.flags, fsconfig.fd_source) == (
        "lowerdir+", ("FSCONFIG_SET_FD",), "fsopen",
    )  # fmt: skip
    umount = trace.threads[0].events[1]
    assert umount.ret is None and umount.ok  # "= ?": outcome unknown
    assert trace.mount_ops == 2  # the never-attached clone and the umount2


def test_perf_unfinished_continued_and_comm_with_slash() -> None:
    trace = parse_trace(DATA / "perf_continued.txt")
    assert by_tid(trace) == {
        901: ["open_tree", "move_mount", "umount2", "openat"],
        902: ["mount_setattr"],
        903: ["umount2"],
    }
    ot = trace.threads[0].events[0]
    assert (ot.start_ns, ot.duration_ns, ot.ret) == (0, 35_000, 7)
    assert trace.threads[0].events[2].flags == ("MNT_DETACH",)
    assert trace.threads[0].events[3].path == "/proc/self/mountinfo"
    assert trace.threads[1].events[0].errno == "EINVAL"
    orphan = trace.threads[2].events[0]
    assert (orphan.start_ns, orphan.duration_ns) == (300_000, None)
    assert trace.unknown_skipped == 1  # poll
    assert trace.mount_ops == 3


def test_empty_and_blank_input() -> None:
    trace = parse_text("\n\n   \n", source="blank")
    assert (trace.syscalls, trace.mount_ops, trace.span_ns, trace.threads) == (0, 0, 0, ())


def test_unknown_format_name() -> None:
    with pytest.raises(CohsimError, match="unknown trace format"):
        parse_text("", format="ltrace")


# ----------------------------------------------------------------- malformed input

MALFORMED = [
    ("truncated_line.strace", 3, "no closing parenthesis"),
    ("foreign_text.strace", 2, "no timestamp"),
    ("no_return.strace", 2, "no return value"),
    ("resumed_mismatch.strace", 3, "umount2 resumed but open_tree was unfinished"),
    ("no_timestamps.strace", 1, "no timestamp"),
    ("bad_perf.txt", 2, "no closing parenthesis"),
]


@pytest.mark.parametrize(("name", "line", "what"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_line_names_file_and_line(name: str, line: int, what: str) -> None:
    with pytest.raises(CohsimError) as exc:
        parse_trace(DATA / name)
    assert exc.value.where == f"{DATA / name}:{line}"
    assert what in exc.value.what
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize(("name", "line", "what"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_lenient_skips_and_counts(name: str, line: int, what: str) -> None:
    trace = parse_trace(DATA / name, lenient=True)
    assert trace.malformed_skipped >= 1


def test_lenient_keeps_the_good_lines() -> None:
    trace = parse_trace(DATA / "truncated_line.strace", lenient=True)
    assert trace.malformed_skipped == 1
    assert [e.name for e in trace.events] == ["open_tree", "mount_setattr", "umount2"]


def test_missing_file() -> None:
    with pytest.raises(CohsimError, match="cannot read trace") as exc:
        parse_trace(DATA / "nope.strace")
    assert exc.value.where.endswith("nope.strace")


def test_summary_has_duration_stats() -> None:
    s = summarize(parse_trace(EXAMPLES / "strace_f_tt_T_containerd_like_per_layer_3layers.txt"))
    assert s["mount_ops"] == 8 and s["threads"] == 1
    assert s["duration_stats"]["umount2"] == {
        "count": 4, "min_ns": 26_000, "p50_ns": 31_000, "p95_ns": 61_000, "mean_ns": 40_750,
        "max_ns": 61_000, "total_ns": 163_000,
    }  # fmt: skip


def test_replace_source_is_the_only_difference_between_identical_parses() -> None:
    a = parse_trace(DATA / "interleaved_tt_T.strace")
    b = parse_text((DATA / "interleaved_tt_T.strace").read_text(), source="x")
    assert a != b and a == dataclasses.replace(b, source=a.source)


def test_decorated_fds_resumed_args_and_killed_calls() -> None:
    text = "\n".join(
        [
            '1 00:00:00.000000 openat(AT_FDCWD</root>, "/proc/1234/mountinfo", O_RDONLY) '
            "= 8</proc/1234/mountinfo> <0.000010>",
            "1 00:00:00.000020 read(8</proc/1234/mountinfo>,  <unfinished ...>",
            '2 00:00:00.000025 umount("/x") = 0 <0.000001>',
            '1 00:00:00.000050 <... read resumed>"22 1 0:21 / / rw"..., 1024) = 1024 <0.000030>',
            "1 00:00:00.000060 read(8</proc/1234/mountinfo>,  <unfinished ...>",
            "1 00:00:00.000070 <... read resumed> <unfinished ...>) = ?",
            "1 00:00:00.000080 setns(5</proc/9/ns/mnt>, CLONE_NEWNS) = 0 <0.000002>",
            "2 00:00:00.000090 mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, -1, 0) = 0x7f3c00000000",
            "2 00:00:00.000095 futex(0x1, FUTEX_WAIT, 0, NULL) = ? ERESTARTSYS (To be restarted)",
        ]
    )
    trace = parse_text(text)
    assert by_tid(trace) == {1: ["openat", "read", "read", "setns"], 2: ["umount"]}
    read = trace.threads[0].events[1]
    assert (read.start_ns, read.duration_ns, read.ret, read.fd_source) == (
        20_000, 30_000, 1024, "mountinfo",
    )  # fmt: skip
    assert read.args == '8</proc/1234/mountinfo>,  "22 1 0:21 / / rw"..., 1024'
    killed = trace.threads[0].events[2]
    assert (killed.ret, killed.duration_ns) == (None, None)
    assert trace.threads[0].events[3].flags == ("CLONE_NEWNS",)
    assert (trace.unknown_skipped, trace.mount_ops) == (2, 1)


def test_midnight_wrap_keeps_time_increasing() -> None:
    text = (
        '1 23:59:59.999990 umount2("/a", 0) = 0 <0.000005>\n'
        '1 00:00:00.000010 umount2("/b", 0) = 0 <0.000005>\n'
    )
    assert [e.start_ns for e in parse_text(text).events] == [0, 20_000]


def test_return_values_in_octal_and_hex() -> None:
    """strace prints umask's old mask in octal (`= 022`) and pointers in hex; a real runc trace
    has both. A leading zero means octal; a digit octal lacks is a malformed line."""
    text = (
        "100 12:00:00.000001 umask(022) = 022 <0.000010>\n"
        "100 12:00:00.000002 brk(NULL) = 0x55d0c0de0000 <0.000010>\n"
        '100 12:00:00.000003 umount2("/a", MNT_DETACH) = 0 <0.000010>\n'
    )
    trace = parse_text(text, source="t")
    assert trace.malformed_skipped == 0 and [e.name for e in trace.events] == ["umount2"]
    bad = text.replace("= 022", "= 09")
    with pytest.raises(CohsimError, match="bad return value '09'") as exc:
        parse_text(bad, source="t")
    assert exc.value.where == "t:1" and "\n" not in str(exc.value)
    assert parse_text(bad, source="t", lenient=True).malformed_skipped == 1


def test_runtime_namespace_steps_are_kept() -> None:
    """A container runtime's own steps on the mount table: the unshare that copies it, and
    pivot_root (its new root as the path); an unrelated syscall is still skipped."""
    text = (
        "7 12:00:00.000001 unshare(CLONE_NEWNS|CLONE_NEWUTS) = 0 <0.000600>\n"
        '7 12:00:00.000700 pivot_root(".", ".") = 0 <0.000050>\n'
        "7 12:00:00.000800 getpid() = 7 <0.000001>\n"
    )
    trace = parse_text(text, source="t")
    assert [(e.name, e.path) for e in trace.events] == [("unshare", None), ("pivot_root", ".")]
    assert "CLONE_NEWNS" in trace.events[0].flags and trace.unknown_skipped == 1


# ----------------------------------------------------------------- inputs that broke the parser

_GOOD = '1 12:00:00.000001 umount2("/a", MNT_DETACH) = 0 <0.000010>\n'


def _with(line: str) -> str:
    """A trace of a good line, `line` (line 2), and another good line."""
    return _GOOD + line + "\n" + _GOOD.replace(".000001", ".000100")


#: strings with an escape strace never writes (issue 30: each was a ValueError traceback)
BAD_STRINGS = ["/var/lib/x\\unts/0", "/p\\9", "/p\\xZZ", "/p\\x5", "/p\\777", "/p\\a"]


@pytest.mark.parametrize("path", BAD_STRINGS)
def test_unknown_escape_is_a_malformed_line(path: str) -> None:
    text = _with(f'1 12:00:00.000050 umount2("{path}", 0) = 0 <0.000010>')
    with pytest.raises(CohsimError, match="unknown string escape") as exc:
        parse_text(text, source="t")
    assert exc.value.where == "t:2" and "\n" not in str(exc.value)
    trace = parse_text(text, source="t", lenient=True)
    assert trace.malformed_skipped == 1 and trace.syscalls == 2


def test_every_escape_strace_writes_in_a_path() -> None:
    path = '/a\\\\b\\"c\\t\\n\\x41\\101\\0012\\303\\251'
    trace = parse_text(f'1 12:00:00.000001 umount2("{path}", MNT_DETACH) = 0 <0.000010>\n')
    assert trace.events[0].path == '/a\\b"c\t\nAA\x012é'


def test_flags_with_a_leading_zero_are_octal() -> None:
    """issue 30: `umount2("/p", 007)` was a ValueError traceback (int("007", 0)); strace prints
    a number with a leading zero in octal, so 007 is MNT_FORCE|MNT_DETACH (and 4)."""
    trace = parse_text(_with('1 12:00:00.000050 umount2("/p", 007) = 0 <0.000010>'))
    assert trace.events[1].flags == ("MNT_DETACH", "MNT_FORCE")
    with pytest.raises(CohsimError, match="bad number '08'") as exc:
        parse_text(_with('1 12:00:00.000050 umount2("/p", 08) = 0'), source="t")
    assert exc.value.where == "t:2"


HUGE = "9" * 5000  # past Python's 4,300-digit limit on int(str): a ValueError before
BAD_NUMBERS = [
    ("tid", f'{HUGE} 12:00:00.000050 umount2("/p", 0) = 0', "thread id"),
    ("tid 33 bits", '8589934592 12:00:00.000050 umount2("/p", 0) = 0', "thread id"),
    ("flags", f'1 12:00:00.000050 umount2("/p", {HUGE}) = 0', "longer than any 64-bit"),
    ("fd", f"1 12:00:00.000050 close({HUGE}) = 0", "fd"),
    ("return", f'1 12:00:00.000050 umount2("/p", 0) = {HUGE}', "bad return value"),
    ("duration", f'1 12:00:00.000050 umount2("/p", 0) = 0 <{HUGE}.0>', "out of range"),
    ("clock", '1 12:61:00.000050 umount2("/p", 0) = 0', "no time of day"),
]


@pytest.mark.parametrize(
    ("line", "what"), [b[1:] for b in BAD_NUMBERS], ids=[b[0] for b in BAD_NUMBERS]
)
def test_numbers_out_of_range_are_malformed_lines(line: str, what: str) -> None:
    with pytest.raises(CohsimError, match=what) as exc:
        parse_text(_with(line), source="t")
    assert exc.value.where == "t:2" and len(str(exc.value)) < 300
    assert parse_text(_with(line), source="t", lenient=True).malformed_skipped == 1


@pytest.mark.parametrize("style", ["ttt", "r"])
def test_timestamps_past_the_clock_are_malformed_lines(style: str) -> None:
    stamp = "1795305658.000001" if style == "ttt" else "0.000001"
    line = f'1 {HUGE}.000001 umount2("/p", 0) = 0'
    text = f'1 {stamp} umount2("/a", 0) = 0\n{line}\n1 {stamp} umount2("/b", 0) = 0\n'
    with pytest.raises(CohsimError, match="out of range") as exc:
        parse_text(text, source="t")
    assert exc.value.where == "t:2"
    assert parse_text(text, source="t", lenient=True).syscalls == 2


def test_bad_arguments_of_an_unfinished_call_name_the_line_it_started_on() -> None:
    start = '2 12:00:00.000020 umount2("/x\\u", 0 <unfinished ...>'
    for end in ("", "2 12:00:00.000030 +++ exited with 0 +++"):
        text = _with(start) + end
        with pytest.raises(CohsimError, match="unknown string escape") as exc:
            parse_text(text, source="t")
        assert exc.value.where == "t:2"
        assert parse_text(text, source="t", lenient=True).malformed_skipped == 1
