"""Where mount_bench's workers spend their CPU time, from `perf record -a -g` profiles (us a
sequence, sampled).

    python perf_callees.py PERF.data SEQUENCES [FUNCTION ...]

Reads `perf script` (perf must be installed). Only samples of tasks named mount_bench count.
For each FUNCTION (default: the overlay mount's and the unmounts' entry points and
`ovl_fill_super`), the time of the samples whose call chain holds it, and for
`ovl_fill_super` which of its callees the samples fall in. A sample is 1 / the sampling
frequency (read from the file's header) of CPU time.
"""

from __future__ import annotations

import collections
import re
import subprocess
import sys
from collections.abc import Iterator

DEFAULT = ("__x64_sys_mount", "ovl_fill_super", "__x64_sys_umount", "task_work_run")


def frequency(path: str) -> int:
    head = subprocess.run(
        ["perf", "report", "-i", path, "--header-only"], capture_output=True, text=True, check=True
    ).stdout
    return int(re.search(r"sample_freq \} = (\d+)", head).group(1))


def samples(path: str) -> Iterator[tuple[str, list[str]]]:
    """(comm, frames innermost first) per sample."""
    out = subprocess.run(
        ["perf", "script", "-i", path, "-F", "comm,tid,ip,sym"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    comm, frames = None, []
    for line in out.splitlines() + [""]:
        if not line.strip():
            if comm is not None:
                yield comm, frames
            comm, frames = None, []
        elif not line[0].isspace():
            comm, frames = line.split()[0], []
        else:
            parts = line.split()
            frames.append(parts[1] if len(parts) > 1 else "?")


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 1
    path, n = argv[0], int(argv[1])
    funcs = argv[2:] or list(DEFAULT)
    us = 1e6 / frequency(path) / n
    total = 0
    inside = collections.Counter()
    callee = collections.Counter()
    for comm, frames in samples(path):
        if comm != "mount_bench":
            continue
        total += 1
        for f in funcs:
            if f in frames:
                inside[f] += 1
        if "ovl_fill_super" in frames:
            i = frames.index("ovl_fill_super")
            callee[frames[i - 1] if i else "(itself)"] += 1
    print(f"{path}: {total * us:.1f} us of mount_bench CPU time a sequence")
    for f in funcs:
        print(f"  {f}: {inside[f] * us:.1f}")
    print("  ovl_fill_super's callees: " + ", ".join(
        f"{k} {v * us:.1f}" for k, v in callee.most_common(8)
    ))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
