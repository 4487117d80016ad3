"""calibration/analysis/runc_strace/summary.py on the committed runc straces: its output is the
committed summary.txt, the README's per-process counts are in it, and runc's work is the same
with and without image layers, and cohsim parses and prices runc's namespace steps."""

from __future__ import annotations

import re

from analysis_runner import REPO, run

from cohsim.kernel.classify import ThreadState, classify
from cohsim.workload.parse import parse_trace

DATA = REPO / "calibration/data/devvm-2cpu-amd-epyc-f25m1/runc-strace"


def _per_stage(out: str) -> dict[str, dict[tuple[str, str], int]]:
    """log name -> (stage, call) -> count, from the summary's per-process blocks."""
    runs: dict[str, dict[tuple[str, str], int]] = {}
    for block in out.split("== ")[1:]:
        name = block.split(":", 1)[0]
        counts = re.findall(r"^   (\w+)\s+(\w+)\s+(\d+)\s+\d+\s+\d+$", block, re.M)
        runs[name] = {(st, call): int(n) for st, call, n in counts}
    return runs


def test_summary_is_committed_and_matches_the_readme() -> None:
    out = run("runc_strace.summary")
    assert out == (DATA / "summary.txt").read_text()
    readme = (DATA / "README.md").read_text()
    # every per-process count line of the summary is quoted in the README
    for line in re.findall(r"^   \w+\s+\w+\s+\d+\s+\d+\s+\d+$", out, re.M):
        assert line.strip() in readme, line
    runs = _per_stage(out)
    plain, userns, overlay = (runs[n] for n in ("plain.strace", "userns.strace.gz",
                                                "overlay.strace.gz"))  # fmt: skip
    for r in (plain, userns, overlay):
        # one copy of the table, one pivot_root, one detach of the old root per container
        assert r[("init2", "pivot_root")] == 1 and r[("init2", "umount2")] == 1
        assert r[("init0", "mount")] == 2 and r[("init0", "umount2")] == 1  # host namespace
    assert plain[("init1", "unshare")] == 1 and userns[("init1", "unshare")] == 2
    assert overlay == plain  # the layers are containerd's mounts, not runc's
    assert userns[("init2", "mount")] == plain[("init2", "mount")] + 6  # device binds


def test_cohsim_parses_the_plain_runc_trace() -> None:
    """The whole log parses, strictly (umask's octal results, `= 022`, included), and keeps
    runc's namespace steps: the unshare that copies the mount table and the pivot_root."""
    trace = parse_trace(DATA / "plain.strace")
    events = [e for t in trace.threads for e in t.events]
    assert trace.malformed_skipped == 0
    assert {"unshare", "pivot_root", "umount2", "mount"} <= {e.name for e in events}
    (unshare,) = [e for e in events if e.name == "unshare"]
    (pivot,) = [e for e in events if e.name == "pivot_root"]
    assert "CLONE_NEWNS" in unshare.flags and pivot.path == "."
    assert unshare.start_ns < pivot.start_ns


def test_the_namespace_copy_is_priced() -> None:
    """runc's unshare is a copy of the mount table (cohsim.kernel ops.ns_copy), not free work;
    its old-root detach is still a plain detach (issue 19)."""
    trace = parse_trace(DATA / "plain.strace")
    (unshare,) = [e for t in trace.threads for e in t.events if e.name == "unshare"]
    assert classify(unshare, ThreadState()) != "other"
