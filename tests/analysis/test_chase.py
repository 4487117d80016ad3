"""calibration/analysis/chase/levels.py on the committed chase_bench runs of the two Emerald
Rapids VMs: the plateaus and the peer walk in L2 loads that the 16-vCPU chase README reports."""

from __future__ import annotations

import re

from analysis_runner import REPO, run

README = REPO / "calibration/data/devvm-16cpu-intel-xeon-f6m207/chase/README.md"


def test_levels_as_the_readme_says() -> None:
    out = run("chase.levels")
    readme = README.read_text()
    bands = out.split("2. ")[1].split("3. ")[0]
    l2 = re.search(r"L2 \(64K-256K\)\n\s+emr-16\s+local\s+([\d.]+)-\s*([\d.]+)", bands)
    assert l2 and f"**{l2[1]}-{l2[2]} ns**" in readme
    memory = re.search(r"memory \(16M-256M\)\n\s+emr-16\s+local\s+([\d.]+)-\s*([\d.]+)", bands)
    assert memory and f"**{float(memory[1]):.0f}-{float(memory[2]):.0f} ns**" in readme
    # the 16-vCPU VM's L2 is slower than the 2-vCPU VM's, its memory too
    two = re.search(r"L2 \(64K-256K\)\n.*\n\s+emr-2\s+local\s+([\d.]+)-\s*([\d.]+)", bands)
    assert two and float(two[2]) < float(l2[1])
    # a small ring costs 2.5-3 L2 loads a peer on both VMs
    walks = out.split("3. ")[1]
    for line in walks.strip().splitlines()[1:]:
        loads = [float(x) for x in re.findall(r"= ([\d.]+)", line)]
        assert all(2.4 <= x <= 3.1 for x in loads[:2]), line
    assert "20 ns = 3.0 | 17 = 2.5 | 33 = 4.8 | 66 = 9.7 | 72 = 10.6 | 86 = 12.7" in readme
    assert "| 16 vCPUs | " in readme


def test_levels_of_named_files() -> None:
    csv = REPO / "calibration/data/devvm-16cpu-intel-xeon-f6m207/chase/chase_bench.csv"
    out = run("chase.levels", csv)
    assert "3. " not in out and re.search(r"\n\s+16K\s+2\.0 \|\s+103\.3", out)
