"""The real benchmarks: build `pause_bench` / `mount_bench` / `wake_bench` / `ns_bench` /
`prop_bench` / `walk_bench` / `chase_bench` / `corun_bench` from C.

`pause_bench` measures lock hand-off on this host's cores (the data level 2 is calibrated on);
`mount_bench` runs containerd's idmapped-rootfs syscall sequences on this host's kernel (the data
level 3 is calibrated on); `wake_bench` measures how long a task that slept in the kernel takes
to run again on an idle CPU (the wake-up latency after every sleep of level 3); `ns_bench`
times a container's mount-namespace copy and teardown against the mount table's size
(`cohsim.measure.nsbench`); `prop_bench` times mount propagation into live slave namespaces and
mountinfo reads (`cohsim.measure.propbench`); `walk_bench` times path walkers against
containerd's mount sequence (`cohsim.measure.walkbench`); `chase_bench` times dependent loads
against the working set's size, warm in the reader's caches and written by another CPU
(`cohsim.measure.chasebench`); `corun_bench` times CPU work alone and with the other CPUs busy
(`cohsim.measure.corunbench`). All are C
programs shipped with cohsim (`calibration/bench/`, the data package `cohsim._bench` when
installed); this module compiles them with the system C compiler into a cache keyed by a
digest of source, compiler and flags, runs them, and writes under an output directory:

- ``<bench>.csv``: the program's tidy CSV, unchanged (columns in `PAUSE_COLUMNS` /
  `MOUNT_COLUMNS` / `WAKE_COLUMNS` / `NS_COLUMNS` / `PROP_COLUMNS` / `WALK_COLUMNS` /
  `CHASE_COLUMNS` / `CORUN_COLUMNS`, every metric
  documented in calibration/bench/README.md);
- ``<bench>.json``: the sidecar -- host facts (`cohsim.measure.hostinfo`), compiler, the exact
  command lines, wall time, the CSV's digest and cohsim provenance;
- for ``mount --strace FILE``: the strace log of a traced rerun.

Every file is written atomically (complete or absent); a failed run writes nothing.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cohsim import provenance
from cohsim.errors import CohsimError
from cohsim.io import bench_source_dir
from cohsim.measure import hostinfo
from cohsim.measure.chasebench import CHASE_COLUMNS, CHASE_DONE_METRIC, chase_expected_runs
from cohsim.measure.corunbench import CORUN_COLUMNS, CORUN_DONE_METRIC, corun_expected_runs
from cohsim.measure.nsbench import NS_COLUMNS, NS_DONE_METRIC, NS_RUN_KEYS
from cohsim.measure.propbench import (
    PROP_COLUMNS,
    PROP_DONE_METRIC,
    prop_expected_runs,
)
from cohsim.measure.summary import summarize as summarize  # re-exported: programs.summarize
from cohsim.measure.walkbench import (
    WALK_COLUMNS,
    WALK_DONE_METRIC,
    walk_expected_runs,
)

#: Version of the sidecar and `--json` summary layouts.
SCHEMA = 1
#: the sidecar's `kind`: a tag of its format, as every committed sidecar carries it (the name this
#: module had before it moved to cohsim.measure), not an import path
SIDECAR_KIND = "cohsim.bench.runner"
BENCHES = ("pause", "mount", "wake", "ns", "prop", "walk", "chase", "corun")
PAUSE_COLUMNS = ("bench", "lock", "threads", "placement", "metric", "value", "unit", "repeat")
MOUNT_COLUMNS = (
    "bench",
    "strategy",
    "workers",
    "layers",
    "syscall",
    "metric",
    "value",
    "unit",
    "repeat",
)
#: wake_bench writes pause_bench's columns (bench "wake", lock "futex", threads 2).
WAKE_COLUMNS = PAUSE_COLUMNS
CFLAGS = ("-O2", "-pthread")
_COLUMNS = {
    "pause": PAUSE_COLUMNS,
    "mount": MOUNT_COLUMNS,
    "wake": WAKE_COLUMNS,
    "ns": NS_COLUMNS,
    "prop": PROP_COLUMNS,
    "walk": WALK_COLUMNS,
    "chase": CHASE_COLUMNS,
    "corun": CORUN_COLUMNS,
}
#: A row whose metric is this marks one finished (lock, threads, repeat),
#: (strategy, workers, layers, repeat) or wake repeat: progress is counted on it.
_DONE_METRIC = {
    "pause": "mutex_violations",
    "mount": "final",
    "wake": "wake_ns",
    "ns": NS_DONE_METRIC,
    "prop": PROP_DONE_METRIC,
    "walk": WALK_DONE_METRIC,
    "chase": CHASE_DONE_METRIC,
    "corun": CORUN_DONE_METRIC,
}
#: `--repeats` when the command line gives none (the C programs' own defaults).
_DEFAULT_REPEATS = {
    "pause": "3",
    "mount": "1",
    "wake": "5",
    "ns": "5",
    "prop": "5",
    "walk": "3",
    "chase": "5",
    "corun": "5",
}
_INSTALL_HINT = (
    "install a C compiler (Debian/Ubuntu: apt-get install gcc; Fedora/RHEL: dnf install gcc; "
    "Alpine: apk add build-base) or point $CC at one"
)


@dataclass(frozen=True)
class Compiler:
    """The C compiler a benchmark is built with."""

    command: tuple[str, ...]  #: argv prefix, e.g. ("cc",) or ("ccache", "gcc")
    path: str  #: resolved path of the first word
    version: str  #: first line of `--version`
    flags: tuple[str, ...] = CFLAGS  #: flags added to every build


@dataclass(frozen=True)
class BenchRun:
    """What one `run_bench` wrote and measured."""

    bench: str
    csv_path: Path
    sidecar_path: Path
    strace_path: Path | None
    rows: tuple[dict[str, str], ...]
    sidecar: dict[str, Any]


def find_compiler(env: Mapping[str, str] | None = None) -> Compiler:
    """The compiler named by $CC (default ``cc``); a CohsimError naming a package if none."""
    env = os.environ if env is None else env
    words = shlex.split(env.get("CC", "") or "cc")
    exe = shutil.which(words[0], path=env.get("PATH")) if words else None
    if not exe:
        raise CohsimError(
            f"no C compiler found (looked for {words[0] if words else 'cc'!r}); " + _INSTALL_HINT
        )
    try:
        res = subprocess.run(
            [exe, *words[1:], "--version"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            env=dict(env),
        )
    except OSError as exc:
        raise CohsimError(f"C compiler {exe} cannot run ({exc}); " + _INSTALL_HINT) from exc
    version = (
        (res.stdout or res.stderr).splitlines()[0].strip() if (res.stdout or res.stderr) else ""
    )
    return Compiler(command=(exe, *words[1:]), path=exe, version=version)


def cache_root(env: Mapping[str, str] | None = None) -> Path:
    """Where built benchmarks are kept: $XDG_CACHE_HOME/cohsim/bench (~/.cache by default)."""
    env = os.environ if env is None else env
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(base) / "cohsim" / "bench"


def source_path(bench: str) -> Path:
    """The C source of `bench` (one of `BENCHES`)."""
    if bench not in BENCHES:
        raise CohsimError(f"unknown benchmark {bench!r} (expected one of {', '.join(BENCHES)})")
    path = bench_source_dir() / f"{bench}_bench.c"
    if not path.is_file():
        raise CohsimError("benchmark source missing from the installed package", str(path))
    return path


def build(bench: str, *, env: Mapping[str, str] | None = None, cache: Path | None = None) -> Path:
    """Compile `bench` (once per source+compiler digest) and return the executable's path."""
    env = os.environ if env is None else env
    src = source_path(bench)
    compiler = find_compiler(env)
    h = hashlib.sha256(src.read_bytes())
    for header in sorted(src.parent.glob("*.h")):  # shared code the source includes
        h.update(header.read_bytes())
    for part in (*compiler.command, compiler.version, *compiler.flags):
        h.update(b"\0" + part.encode())
    out_dir = (cache or cache_root(env)) / f"{bench}_bench-{h.hexdigest()[:16]}"
    exe = out_dir / f"{bench}_bench"
    if exe.is_file() and os.access(exe, os.X_OK):
        return exe
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f".{bench}_bench.{os.getpid()}.tmp"
    cmd = [*compiler.command, *compiler.flags, "-o", str(tmp), str(src)]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, check=False, env=dict(env))
        if res.returncode != 0:
            first = next((ln for ln in res.stderr.splitlines() if "error" in ln), "")
            raise CohsimError(
                f"compiling {src.name} with {compiler.path} failed: "
                f"{first.strip() or res.stderr.strip()[:200]}",
                str(src),
            )
        os.replace(tmp, exe)  # atomic: a half-built binary is never found in the cache
    finally:
        tmp.unlink(missing_ok=True)
    return exe


def parse_int_list(text: str, flag: str, low: int = 1) -> list[int]:
    """``"1,2,4"`` -> [1, 2, 4]; a CohsimError naming `flag` otherwise."""
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        values = []
    if not values or any(v < low for v in values):
        raise CohsimError(f"{flag}: {text!r} is not a comma-separated list of integers >= {low}")
    return values


def read_bench_csv(path: str | os.PathLike[str], bench: str | None = None) -> list[dict[str, str]]:
    """Rows of a benchmark CSV (all values as text), after checking its header."""
    text = Path(path).read_text(encoding="utf-8")
    return _parse_csv(text, bench, str(path))


def _parse_csv(text: str, bench: str | None, where: str) -> list[dict[str, str]]:
    reader = csv.reader(io.StringIO(text))
    header = tuple(next(reader, ()))
    kinds = [b for b in BENCHES if _COLUMNS[b] == header]  # pause and wake share a header
    if not kinds or (bench and bench not in kinds):
        raise CohsimError(f"unexpected CSV header {','.join(header)!r}", where)
    rows = []
    for lineno, rec in enumerate(reader, start=2):
        if len(rec) != len(header):
            raise CohsimError(f"{len(rec)} fields, expected {len(header)}", f"{where}:{lineno}")
        row = dict(zip(header, rec, strict=True))
        if bench and len(kinds) > 1 and row["bench"] != bench:
            raise CohsimError(f"bench {row['bench']!r} in a {bench} CSV", f"{where}:{lineno}")
        rows.append(row)
    return rows


def _progress(total: int, enabled: bool, desc: str) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    # delay: only runs longer than a second show a bar; stderr only, stdout stays clean.
    return tqdm(total=total, desc=desc, unit="run", file=sys.stderr, delay=1.0, leave=False)


def _expected_runs(bench: str, args: Sequence[str]) -> int:
    def value(flag: str, default: str) -> str:
        return args[args.index(flag) + 1] if flag in args else default

    count = int(value("--repeats", _DEFAULT_REPEATS[bench]))
    keys: tuple[tuple[str, str], ...]
    if bench == "pause":
        keys = (("--lock", "ttas,ticket"), ("--threads", "1"))
    elif bench == "wake":
        keys = ()
    elif bench == "ns":
        keys = NS_RUN_KEYS
    elif bench == "prop":
        return prop_expected_runs(args, count)
    elif bench == "walk":
        return walk_expected_runs(args, count)
    elif bench == "chase":
        return chase_expected_runs(args, count)
    elif bench == "corun":
        return corun_expected_runs(count)
    else:
        keys = (("--strategy", "per-layer"), ("--workers", "1"), ("--layers", "10"))
    for flag, default in keys:
        count *= len(value(flag, default).split(","))
    return count


def _read_output(
    proc: subprocess.Popen[str],
    bench: str,
    bar: Any,
    on_line: Callable[[str], None] | None,
    strace_tmp: Path | None,
) -> tuple[str, str, int]:
    """The benchmark's stdout (ticking the progress bar), its stderr and its exit status; on
    an interruption the benchmark is stopped and the strace log's temp file removed."""
    assert proc.stdout is not None and proc.stderr is not None
    out_lines: list[str] = []
    try:
        for line in proc.stdout:
            out_lines.append(line)
            if bar is not None and line.split(",")[-4:-3] == [_DONE_METRIC[bench]]:
                bar.update(1)
            if on_line is not None:
                on_line(line)
        err = proc.stderr.read()
        rc = proc.wait()
    except BaseException:
        proc.terminate()  # the benchmarks undo their mounts on SIGTERM
        proc.wait()
        if strace_tmp is not None:
            strace_tmp.unlink(missing_ok=True)
        raise
    finally:
        if bar is not None:
            bar.close()
    return "".join(out_lines), err, rc


def _sidecar(
    bench: str,
    args: Sequence[str],
    exe: Path,
    compiler: Compiler,
    strace_final: Path | None,
    command_line: Sequence[str] | None,
    started: datetime,
    wall_s: float,
    err_lines: list[str],
    csv_name: str,
    text: str,
    rows: int,
) -> dict[str, Any]:
    """The run's JSON sidecar: host facts, compiler, exact command, wall time, CSV digest."""
    src = source_path(bench)
    version = subprocess.run(
        [str(exe), "--version"], capture_output=True, text=True, check=False
    ).stdout.split()[-1:] or ["?"]
    return {
        "schema": SCHEMA,
        "kind": SIDECAR_KIND,
        "bench": bench,
        "bench_version": version[0],
        "command": [f"{bench}_bench", *args]
        + (["--strace", strace_final.name] if strace_final else []),
        "cohsim_command": list(command_line) if command_line is not None else None,
        "started_utc": started.isoformat(timespec="seconds"),
        "wall_s": round(wall_s, 3),
        "host": hostinfo.collect().to_json(),
        "compiler": {
            "path": compiler.path,
            "command": list(compiler.command),
            "version": compiler.version,
            "flags": list(compiler.flags),
        },
        "info": [ln.split(": info: ", 1)[-1] for ln in err_lines if ": info: " in ln],
        "csv": {
            "file": csv_name,
            "digest": provenance.text_digest(text),
            "rows": rows,
            "columns": list(_COLUMNS[bench]),
        },
        "strace": strace_final.name if strace_final else None,
        "provenance": provenance.stamp(inputs=[src]),
    }


def same_dir(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    return Path(a).resolve() == Path(b).resolve()


def make_out_dir(out_dir: str | os.PathLike[str]) -> Path:
    """The output directory, made if missing, one level only: its parent must exist (no
    `mkdir -p` of a mistyped path); a refusal is a CohsimError naming it."""
    out = Path(out_dir)
    try:
        out.mkdir(exist_ok=True)
    except OSError as exc:
        raise CohsimError(f"cannot make the directory: {exc.strerror or exc}", str(out)) from None
    return out


def run_bench(
    bench: str,
    args: Sequence[str],
    out_dir: str | os.PathLike[str],
    *,
    strace: str | os.PathLike[str] | None = None,
    progress: bool = True,
    env: Mapping[str, str] | None = None,
    command_line: Sequence[str] | None = None,
    on_line: Callable[[str], None] | None = None,
) -> BenchRun:
    """Build and run `bench` with the C program's `args`; write CSV + sidecar under `out_dir`."""
    env = os.environ if env is None else env
    exe = build(bench, env=env)
    compiler = find_compiler(env)
    strace_final = Path(strace) if strace else None
    strace_tmp = None
    argv = [str(exe), *args]
    if strace_final is not None:
        if bench != "mount":
            raise CohsimError("--strace is only for the mount benchmark")
        if same_dir(strace_final.parent, out_dir):  # the log beside the CSV: make the folder
            make_out_dir(out_dir)
        elif not strace_final.parent.is_dir():  # no other folder is made for a named output
            raise CohsimError(f"no such directory: {strace_final.parent}", str(strace_final))
        strace_tmp = strace_final.with_name(f".{strace_final.name}.{os.getpid()}.tmp")
        argv += ["--strace", str(strace_tmp)]
    bar = _progress(_expected_runs(bench, args), progress, f"{bench}_bench")
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(env)
        )
    except OSError as exc:
        raise CohsimError(f"cannot run {exe}: {exc}", f"{bench}_bench") from exc
    text, err, rc = _read_output(proc, bench, bar, on_line, strace_tmp)
    wall_s = time.perf_counter() - t0
    err_lines = [ln for ln in err.splitlines() if ln.strip()]
    if rc != 0:
        if strace_tmp is not None:
            strace_tmp.unlink(missing_ok=True)
        problems = [ln for ln in err_lines if ": error: " in ln] or err_lines or [f"exit {rc}"]
        raise CohsimError(problems[-1].split(": error: ", 1)[-1], f"{bench}_bench")
    rows = _parse_csv(text, bench, f"{bench}_bench output")

    out = make_out_dir(out_dir)
    csv_path = out / f"{bench}_bench.csv"
    sidecar_path = out / f"{bench}_bench.json"
    sidecar = _sidecar(
        bench, args, exe, compiler, strace_final, command_line, started, wall_s, err_lines,
        csv_path.name, text, len(rows),
    )  # fmt: skip
    provenance.write_atomic(csv_path, text, make_dirs=False)
    if strace_tmp is not None and strace_final is not None:
        os.replace(strace_tmp, strace_final)  # strace made it as a plain file (umask's mode)
        sidecar["strace_digest"] = provenance.file_digest(strace_final)
    provenance.write_atomic(sidecar_path, provenance.dumps(sidecar), make_dirs=False)
    return BenchRun(bench, csv_path, sidecar_path, strace_final, tuple(rows), sidecar)
