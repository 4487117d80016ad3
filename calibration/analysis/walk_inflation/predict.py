"""mount_setattr's and move_mount's extra time beside one stat walker: measured (walk_bench on
the 2-vCPU Emerald Rapids VM) against three prices of the mount_lock line's transfers.

    python -m calibration.analysis.walk_inflation.predict [WALK_BENCH_CSV]

Each exclusive access of mount_lock's line (a spinlock take, the counter's increment at a
write section's end, a locked reader's take: docs/kernel-audit.md C18) must first take the
copy a walker read since the previous exclusive access: one transfer from the walker's CPU,
`cohsim.machine.sharers.fetch_ns` on this host's machine model confined to its 2 vCPUs. The
accesses counted, per op, from the audit's table of mount_lock acquisitions (Linux 6.18):

- mount_setattr (MOUNT_ATTR_IDMAP): one write section outside namespace_sem: its take and the
  release after the walker read the odd counter;
- move_mount: one write section inside namespace_sem (take, release) and 4 + 2S locked
  readers inside it plus one outside (S = 0 here: no slave namespace), each a take.

Prices:

1. *before*: what the launch model charged until the line's fetches were priced (the level-2
   writer wait behind one spinner, once a section: 38.7 ns, 26.3 before level 2 answered an
   upgrade of a shared copy after the point's invalidation; the locked readers not at all);
2. *model*: what both engines charge now (cohsim.kernel.linetake with the walker as the one
   busy CPU, walking every measured mean call time): each section's take and each locked
   reader nested in the write hold (the kernel model's `mount_lock_readers`: 4 for move_mount;
   its one locked reader outside the hold is not priced) fetch the line with the chance that the
   walker read it since the task's previous access (two reads a call,
   cohsim.kernel.linetake.READS_PER_WALK), the op's p50 without a walker spread evenly over its
   accesses (an assumption); the release after the section the walker spun through waits
   behind it as level 2 says;
3. *every*: every access of the audit's count pays a whole transfer (the walker always read in
   between: an upper bound).

Nothing here is fitted; the measured figures are medians over the 9 rounds of the per-round
differences (stat walker - no walker) and, as a control for what is not the walk (the
unmounts' grace-period IPIs reach the walker's CPU too), of the fstat walker's.
"""

from __future__ import annotations

import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from cohsim.kernel.costs import load_kernel
from cohsim.kernel.linecosts import LineCosts
from cohsim.kernel.linetake import LineTakes
from cohsim.machine.catalog import Catalog
from cohsim.machine.sharers import fetch_ns

REPO = Path(__file__).resolve().parents[3]
CSV = REPO / "calibration/data/devvm-2cpu-intel-xeon-f6m207/walk/walk_bench.csv"
#: the host's machine model (the 16-vCPU VM of the same CPU), confined to the 2 vCPUs
HOST, VCPUS = "devvm-16cpu-intel-xeon-f6m207", 2
#: exclusive accesses per op (docs/kernel-audit.md, "mount_lock acquisitions per op"):
#: (write sections, locked-reader takes)
ACCESSES = {"mount_setattr": (1, 0), "move_mount": (1, 5)}


def _rows(path: Path) -> dict[tuple[str, str, int, str], dict[str, float]]:
    """(walk, op, layers, metric) -> {round: value} of the one-mounter runs."""
    out: dict[tuple[str, str, int, str], dict[str, float]] = defaultdict(dict)
    with path.open() as f:
        for r in csv.DictReader(f):
            if r["mounters"] != "1" or r["repeat"] == "all":
                continue
            key = (r["walk"], r["op"], int(r["layers"]), r["metric"])
            out[key][r["repeat"]] = float(r["value"])
    return out


def _paired(a: dict[str, float], b: dict[str, float]) -> float:
    return statistics.median(a[k] - b[k] for k in a if k in b)


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else CSV
    rows = _rows(path)
    m = Catalog().get(HOST).with_cores(VCPUS)
    transfer = fetch_ns(m, 1)
    kernel = load_kernel()
    release_now = LineCosts(m).writer_ns(1)
    print(f"host model {m.name} on {m.vcpus} vCPUs: a transfer from the walker {transfer:.1f} ns;")
    print(f"level 2's writer wait behind one spinner {release_now:.1f} ns")
    print(
        f"{'op':14} {'layers':>6} {'p50 alone':>9} {'stat-none':>9} {'fstat-none':>10}"
        f" {'before':>6} {'model':>6} {'every':>6}"
    )
    for op, (writes, readers) in ACCESSES.items():
        for layers in (1, 10, 50):
            alone = statistics.median(rows[("none", op, layers, "p50_ns")].values())
            stat = _paired(
                rows[("stat", op, layers, "p50_ns")], rows[("none", op, layers, "p50_ns")]
            )
            ctrl = _paired(
                rows[("fstat", op, layers, "p50_ns")], rows[("none", op, layers, "p50_ns")]
            )
            call = statistics.median(rows[("stat", "stat", layers, "mean_ns")].values())
            gap = alone / (2 * writes + readers)
            takes = LineTakes(m, call)  # the walker: one busy CPU, a walk every call
            nested = kernel.op(op).mount_lock_readers
            before = writes * release_now
            # each write section: its take and its release behind the spinning walker (level 2)
            model = writes * (takes.ns(0, 1.0, gap) + release_now)
            model += nested * takes.ns(0, 1.0, gap)
            every = (2 * writes + readers) * transfer
            print(
                f"{op:14} {layers:6d} {alone:9.0f} {stat:+9.0f} {ctrl:+10.0f}"
                f" {before:+6.0f} {model:+6.0f} {every:+6.0f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
