"""Synthesised containerd workloads, and writing any trace back as strace text.

`synthesize` builds the syscall sequence containerd issues to set up idmapped rootfs mounts,
for each mount strategy below, as a `cohsim.workload.trace.Trace` — the same type a parsed
strace gives, assembled by the same code, so `mount_ops` and every derived field agree.

Strategies (one *pass*; each container runs two passes, see below):

``per-layer`` (containerd 2.0/2.1, ``doPrepareIDMappedOverlay``)
    per layer ``open_tree(CLONE)``, ``mount_setattr(IDMAP)``, ``move_mount`` to
    ``tmpmounts/ovl-idmappedN/i``, ``close``; one overlay ``mount``; ``umount2(MNT_DETACH)`` per
    layer. mount_ops per pass: L binds + 1 overlay + L unmounts.
``common-parent`` (containerd 2.2, PR #12092)
    one recursive idmapped clone of the snapshots directory (RDONLY|IDMAP, MS_PRIVATE), moved to
    one tmp dir, ``close``; the overlay ``mount``; cleanup as ``UnmountRecursive``: ``openat`` +
    ``read`` of /proc/self/mountinfo, then ``umount2(..., 0)`` until ``EINVAL``.
    mount_ops per pass: 1 bind + 1 overlay + 1 unmount (the EINVAL one changes nothing).
``lowerdir-plus`` (Linux >= 6.7)
    ``fsopen("overlay")``; per layer a detached idmapped ``open_tree(CLONE)`` + ``mount_setattr``,
    handed over with ``fsconfig(FSCONFIG_SET_FD, "lowerdir+")`` and closed; ``FSCONFIG_CMD_CREATE``,
    ``fsmount``, ``move_mount`` of the overlay. No named bind mounts. mount_ops per pass: L detached
    clones (created and dissolved, never attached) + 1 overlay attach.

The two passes (the shim reading user info from the image through a temporary mount under
``tmpmounts/containerd-mountN``, then the real rootfs under ``/run/containerd/.../rootfs``) run
**in sequence on one thread per container**: the second needs the first's answer, and one thread
carries that dependency without cross-thread ordering. The temporary mount's own unmount and
the rootfs teardown happen outside launch and are not emitted (nor counted in `mount_ops`).
Only mount-relevant syscalls are emitted (no close of the mountinfo or fsopen fds).

Times: by default every event of a container starts at its arrival with no duration (the
simulator decides costs). ``think_ns``/``duration_ns`` add exponential think times and
durations drawn from seeded numpy Generators (child streams of one SeedSequence), rounded
to whole microseconds, strace's resolution. Same arguments, same trace, same bytes.
"""

from __future__ import annotations

import errno as errno_mod
import os
from collections.abc import Iterator

import numpy as np

from cohsim.errors import CohsimError
from cohsim.units import NS_PER_S_INT, NS_PER_US, US_PER_S_INT, per_s_to_gap_ns
from cohsim.workload.runtime import RUNTIMES, runtime_calls, runtime_mount_ops
from cohsim.workload.trace import RawCall, SyscallEvent, Trace, assemble

STRATEGIES: tuple[str, ...] = ("per-layer", "common-parent", "lowerdir-plus")
STYLES: tuple[str, ...] = ("tt", "ttt", "r")

SNAPSHOTS = "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots"
TMPMOUNTS = "/var/lib/containerd/tmpmounts"
TASKS = "/run/containerd/io.containerd.runtime.v2.task/k8s.io"
FIRST_TID = 4001  #: tid of container 0's thread; container k gets FIRST_TID + k
USERNS_FD, FD_A, FD_B = 6, 7, 8  # userns fd (opened before tracing starts) and working fds
_STRACE_STRLEN = 32  # strace's default -s: longer strings print as "first 32"...
_IDMAP_ATTR = "{attr_set=MOUNT_ATTR_IDMAP, attr_clr=0, propagation=0 /* MS_??? */, userns_fd=%d}"
_PARENT_ATTR = (
    "{attr_set=MOUNT_ATTR_RDONLY|MOUNT_ATTR_IDMAP, attr_clr=0, propagation=MS_PRIVATE, "
    "userns_fd=%d}"
)

_Call = tuple[str, str, int, str | None]  # name, args, ret, errno


def expected_mount_ops(strategy: str, containers: int, layers: int, runtime: str = "runc") -> int:
    """Closed form of `cohsim.workload.trace.mount_ops` for a synthesised workload (2 passes
    each, then the runtime's own mounts)."""
    per_pass = {"per-layer": 1 + 2 * layers, "common-parent": 3, "lowerdir-plus": 1 + layers}
    if strategy not in per_pass:
        raise CohsimError(f"unknown strategy {strategy!r} ({', '.join(STRATEGIES)})", "--strategy")
    if runtime not in RUNTIMES:
        raise CohsimError(f"unknown runtime {runtime!r} ({', '.join(RUNTIMES)})", "--runtime")
    return containers * (2 * per_pass[strategy] + runtime_mount_ops(runtime))


def synthesize(
    strategy: str,
    containers: int,
    layers: int,
    *,
    seed: int,
    arrival: str = "burst",
    think_ns: int | None = None,
    duration_ns: int | None = None,
    runtime: str = "runc",
) -> Trace:
    """containerd's mount syscalls for ``containers`` containers of a ``layers``-layer image,
    each followed by its runtime's (cohsim.workload.runtime.RUNTIMES: ``runc``, ``shared-ns``,
    ``host-ns``; ``none``: containerd's only).

    ``arrival``: ``burst`` (all at t=0), ``stagger:NS`` (container k at k*NS ns, to the us) or
    ``poisson:RATE`` (exponential gaps at RATE containers/s, the first at 0).
    ``think_ns`` / ``duration_ns``: means of exponential think times / durations (None: none).
    """
    expected_mount_ops(strategy, containers, layers, runtime)  # validates strategy and runtime
    if containers < 1 or layers < 1:
        raise CohsimError("containers and layers must be at least 1", "--containers/--layers")
    if (think_ns is not None and think_ns < 0) or (duration_ns is not None and duration_ns < 0):
        raise CohsimError(
            "think and duration means must not be negative", "--think-ns/--duration-ns"
        )
    names_rng, arrival_rng, time_rng = (
        np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3)
    )
    starts = arrivals(arrival, containers, arrival_rng)
    build = {"per-layer": _per_layer, "common-parent": _common_parent, "lowerdir-plus": _lowerdir}
    calls: list[RawCall] = []
    for k in range(containers):
        tid = FIRST_TID + k
        cid = "".join(f"{int(x):02x}" for x in names_rng.integers(0, 256, 32))
        shim = f"{TMPMOUNTS}/containerd-mount{int(names_rng.integers(0, 2**32))}"
        upper = f"{SNAPSHOTS}/{layers + 1 + k}"
        seq: list[_Call] = []
        for target, rw in ((shim, False), (f"{TASKS}/{cid}/rootfs", True)):
            tmp = f"{TMPMOUNTS}/ovl-idmapped{int(names_rng.integers(0, 2**32))}"
            seq.extend(build[strategy](layers, target, tmp, upper if rw else None))
        seq.extend(runtime_calls(runtime, cid, f"{TASKS}/{cid}/rootfs"))
        calls.extend(timed(tid, starts[k], seq, time_rng, think_ns, duration_ns))
    meta = (("strategy", strategy), ("containers", str(containers)), ("layers", str(layers)),
            ("seed", str(seed)), ("arrival", arrival), ("runtime", runtime))  # fmt: skip
    source = f"synth:{strategy}:containers={containers}:layers={layers}:seed={seed}"
    return assemble(calls, source=source, format="synth", meta=meta)


def timed(
    tid: int,
    start_ns: int,
    seq: list[_Call],
    rng: np.random.Generator,
    think_ns: int | None,
    duration_ns: int | None,
) -> Iterator[RawCall]:
    """One thread's calls from `start_ns` on, each with its drawn duration and the think
    time after it (`draw_us`; none where the mean is None), in that order from `rng`."""
    now = start_ns
    for name, args, ret, err in seq:
        dur = draw_us(rng, duration_ns)
        yield RawCall(tid, now, dur, name, args, ret, err)
        now += (dur or 0) + (draw_us(rng, think_ns) or 0)


def arrivals(spec: str, n: int, rng: np.random.Generator) -> list[int]:
    """When each of `n` threads starts (ns): ``burst`` (all at 0), ``stagger:NS`` (thread k
    at k*NS, to the us) or ``poisson:RATE`` (exponential gaps at RATE a second, the first at
    0); anything else is a CohsimError."""
    kind, _, value = spec.partition(":")
    try:
        if kind == "burst" and not value:
            return [0] * n
        if kind == "stagger":
            return [round(k * int(value) / NS_PER_US) * NS_PER_US for k in range(n)]
        if kind == "poisson" and float(value) > 0:
            gaps = rng.exponential(per_s_to_gap_ns(float(value)), n - 1)
            return [0] + [int(x) * NS_PER_US for x in np.cumsum(np.round(gaps / NS_PER_US))]
    except ValueError:
        pass
    raise CohsimError(f"bad arrival {spec!r} (burst, stagger:NS or poisson:RATE)", "--arrival")


def draw_us(rng: np.random.Generator, mean_ns: int | None) -> int | None:
    """An exponential time of mean `mean_ns`, rounded to whole us (None: none drawn)."""
    if mean_ns is None:
        return None
    return int(round(rng.exponential(mean_ns) / NS_PER_US)) * NS_PER_US


def _q(s: str, cut: bool = False) -> str:
    """A string argument as strace prints it: escaped; a path in full, other strings (``cut``)
    cut at strace's default 32 bytes with ``...``."""
    body = (s[:_STRACE_STRLEN] if cut else s).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{body}"' + ("..." if cut and len(s) > _STRACE_STRLEN else "")


def _overlay_data(lowers: list[str], upper: str | None) -> str:
    rw = f"workdir={upper}/work,upperdir={upper}/fs," if upper else ""
    return f"index=off,{rw}lowerdir={':'.join(lowers)}"


def _idmapped_clone(fd: int, source: str, attr: str, recursive: bool) -> Iterator[_Call]:
    rec = "|AT_RECURSIVE" if recursive else ""
    yield (
        "open_tree",
        f"-9, {_q(source)}, OPEN_TREE_CLONE|OPEN_TREE_CLOEXEC|AT_EMPTY_PATH{rec}",
        fd,
        None,
    )
    yield "mount_setattr", f'{fd}, "", AT_EMPTY_PATH{rec}, {attr % USERNS_FD}, 32', 0, None


def _move(fd: int, target: str) -> _Call:
    return "move_mount", f'{fd}, "", -9, {_q(target)}, MOVE_MOUNT_F_EMPTY_PATH', 0, None


def _mount_overlay(target: str, data: str) -> _Call:
    return "mount", f'"overlay", {_q(target)}, "overlay", 0, {_q(data, cut=True)}', 0, None


def _per_layer(layers: int, target: str, tmp: str, upper: str | None) -> Iterator[_Call]:
    for i in range(layers):
        yield from _idmapped_clone(FD_A, f"{SNAPSHOTS}/{i + 1}/fs", _IDMAP_ATTR, False)
        yield _move(FD_A, f"{tmp}/{i}")
        yield "close", str(FD_A), 0, None
    yield _mount_overlay(
        target, _overlay_data([f"{tmp}/{i}" for i in reversed(range(layers))], upper)
    )
    for i in range(layers):
        yield "umount2", f"{_q(f'{tmp}/{i}')}, MNT_DETACH", 0, None


def _common_parent(layers: int, target: str, tmp: str, upper: str | None) -> Iterator[_Call]:
    yield from _idmapped_clone(FD_A, SNAPSHOTS, _PARENT_ATTR, True)
    yield _move(FD_A, tmp)
    yield "close", str(FD_A), 0, None
    lowers = [f"{tmp}/{i}/fs" for i in range(layers, 0, -1)]
    yield _mount_overlay(target, _overlay_data(lowers, upper))
    yield "openat", 'AT_FDCWD, "/proc/self/mountinfo", O_RDONLY|O_CLOEXEC', FD_A, None
    yield "read", f'{FD_A}, "22 1 0:21 / / rw,relatime shared"..., 4096', 4096, None
    yield "umount2", f"{_q(tmp)}, 0", 0, None
    yield "umount2", f"{_q(tmp)}, 0", -1, "EINVAL"


def _lowerdir(layers: int, target: str, tmp: str, upper: str | None) -> Iterator[_Call]:
    yield "fsopen", '"overlay", FSOPEN_CLOEXEC', FD_A, None
    for i in range(layers, 0, -1):  # lowerdir+ appends: topmost layer first
        yield from _idmapped_clone(FD_B, f"{SNAPSHOTS}/{i}/fs", _IDMAP_ATTR, False)
        yield "fsconfig", f'{FD_A}, FSCONFIG_SET_FD, "lowerdir+", NULL, {FD_B}', 0, None
        yield "close", str(FD_B), 0, None
    yield "fsconfig", f"{FD_A}, FSCONFIG_CMD_CREATE, NULL, NULL, 0", 0, None
    yield "fsmount", f"{FD_A}, FSMOUNT_CLOEXEC, 0", FD_B, None
    yield _move(FD_B, target)


# --------------------------------------------------------------------------- writing


def write_strace(trace: Trace, style: str = "tt", *, origin_ns: int | None = None) -> str:
    """The trace as ``strace -f -T`` text with ``-tt``, ``-ttt`` or ``-r`` timestamps.

    Parsing the text gives back the same trace (times are written to the microsecond, strace's
    resolution; finer times are truncated). A call that overlaps a later call of another thread
    is written as an ``<unfinished ...>`` / ``<... resumed>`` pair, as strace does.
    ``origin_ns``: wall time of the first event (default 00:00:00 for tt, 1.7e9 s for ttt).
    """
    if style not in STYLES:
        raise CohsimError(f"unknown strace style {style!r} ({', '.join(STYLES)})", "--style")
    origin = (
        origin_ns
        if origin_ns is not None
        else (1_700_000_000 * NS_PER_S_INT if style == "ttt" else 0)
    )
    order = trace.events
    # next_other[i]: the first later event of another thread (its line would come between)
    next_other: list[SyscallEvent | None] = [None] * len(order)
    for i in range(len(order) - 2, -1, -1):
        same = order[i + 1].tid == order[i].tid
        next_other[i] = next_other[i + 1] if same else order[i + 1]
    lines: list[tuple[int, int, int, str]] = []  # time, resumed-first, sequence, text
    for i, e in enumerate(order):
        nxt = next_other[i]
        split = e.duration_ns is not None and nxt is not None and nxt.start_ns < e.end_ns
        head = f"{e.tid} {{ts}} {e.name}({e.args}"
        if split:
            lines.append((e.start_ns, 1, i, head + " <unfinished ...>"))
            lines.append((e.end_ns, 0, i, f"{e.tid} {{ts}} <... {e.name} resumed>) = " + _ret(e)))
        else:
            lines.append((e.start_ns, 1, i, head + ") = " + _ret(e)))
    for t in trace.threads:
        end = max(e.end_ns for e in t.events)
        lines.append((end, 2, len(order) + t.tid, f"{t.tid} {{ts}} +++ exited with 0 +++"))
    lines.sort(key=lambda x: x[:3])
    out, prev = [], 0
    for time, _, _, text in lines:
        out.append(text.replace("{ts}", _stamp(origin + time, style, time - prev), 1))
        prev = time
    return "".join(line + "\n" for line in out)


def _stamp(ns: int, style: str, delta_ns: int) -> str:
    if style == "r":
        us = delta_ns // NS_PER_US
        return f"{us // US_PER_S_INT:6d}.{us % US_PER_S_INT:06d}"
    us = ns // NS_PER_US
    if style == "ttt":
        return f"{us // US_PER_S_INT}.{us % US_PER_S_INT:06d}"
    sec = (us // US_PER_S_INT) % 86400
    return f"{sec // 3600:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}.{us % US_PER_S_INT:06d}"


def _ret(e: SyscallEvent) -> str:
    text = "?" if e.ret is None else str(e.ret)
    if e.errno is not None:
        code = getattr(errno_mod, e.errno, None)
        text += f" {e.errno} ({os.strerror(code) if isinstance(code, int) else 'Unknown error'})"
    if e.duration_ns is not None:
        us = e.duration_ns // NS_PER_US
        text += f" <{us // US_PER_S_INT}.{us % US_PER_S_INT:06d}>"
    return text
