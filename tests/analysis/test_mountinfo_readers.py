"""calibration/analysis/mountinfo_readers/summary.py on the committed strace logs: every
reader's read() sizes are replayed exactly by the model of seq_read_iter(), and the README
quotes the figures the script prints."""

from __future__ import annotations

import re

from analysis_runner import REPO, run

README = REPO / "calibration/data/devvm-2cpu-amd-epyc-f25m1/mountinfo-readers/README.md"


def test_replay_matches_every_log_and_the_readme() -> None:
    out = run("mountinfo_readers.summary")
    rows = re.findall(
        r"^(cat|findmnt|mount|python3) +(host|1000) +(\d+) +(\d+) +(\d+) .*$", out, re.M
    )
    assert len(rows) == 8
    assert "DIFFERS" not in out and out.count("matches") == 8 and "note:" not in out
    got = {(r, t): (int(lines), int(nbytes), int(reads)) for r, t, lines, nbytes, reads in rows}
    # 1,000 extra bind mounts: cat's 128 KiB reads come back a page at a time at most, libmount's
    # stdio reads ask for 1 KiB
    assert got[("cat", "1000")] == (1021, 73468, 20)
    assert got[("findmnt", "1000")] == got[("mount", "1000")] == (1021, 73468, 73)
    readme = README.read_text()
    for line in out.splitlines()[2:]:
        assert line.split()[:5] and " ".join(line.split()[:5]) in " ".join(readme.split()), line
