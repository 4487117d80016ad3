"""calibration/analysis/walk_inflation/busy_cpus.py on the 16-vCPU walk_bench runs: the unmounts'
grace periods grow by about 2 us per busy CPU, the mount ops' extra beside walkers exceeds what
the model charges, and the data's README quotes the tables as printed."""

from __future__ import annotations

import re

from analysis_runner import REPO, run

README = REPO / "calibration/data/devvm-16cpu-intel-xeon-f6m207/walk/README.md"


def _grouped(n: int) -> str:
    return f"{n:,}"


def test_grace_period_per_busy_cpu_and_readme() -> None:
    out = run("walk_inflation.busy_cpus")
    rows = re.findall(
        r"\n(m1(?:-second-sitting)?)\s+1\s+(\d+) (umount2\S*)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", out
    )
    assert len(rows) == 8
    readme = README.read_text()
    for name, layers, op, alone, a, b, se in rows:
        if op == "umount2":  # one grace period: about 2 us a busy CPU, measured twice
            assert 1500 < int(b) < 2500 and int(se) < 400, (name, layers, b, se)
        assert int(a) > int(alone)  # the first busy CPU costs more than the next ones
        cells = " | ".join(_grouped(int(v)) for v in (alone, a, b, se))
        assert f"| {name} | {layers} | {op} | {cells} |" in readme


def test_mount_ops_extra_beyond_the_model() -> None:
    out = run("walk_inflation.busy_cpus")
    measured = {
        (name, int(layers), op): [int(v) for v in rest.split()]
        for name, layers, op, rest in re.findall(
            r"\n(m1(?:-second-sitting)?)\s+(\d+) (\w+)\s+\d+((?:\s+[+-]\d+){5})", out
        )
    }
    model = {
        (int(layers), op): [int(v) for v in rest.split()]
        for layers, op, rest in re.findall(r"\nmodel\s+(\d+) (\w+)\s+\d+((?:\s+[+-]\d+){5})", out)
    }
    assert len(measured) == 16 and len(model) == 4
    readme = README.read_text()
    for (layers, op), charged in model.items():
        for name in ("m1", "m1-second-sitting"):
            seen = measured[(name, layers, op)]
            # from 2 walkers on, the measured extra is more than twice the model's
            assert all(s > 2 * c > 0 for s, c in zip(seen[1:], charged[1:], strict=True))
    for (name, layers, op), seen in measured.items():
        if layers == 10:
            cells = " | ".join(f"{v:+,}" for v in seen)
            assert f"| {name} | 10 | {op} |" in readme and cells in readme, (name, op)
