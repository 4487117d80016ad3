"""calibration/analysis/gp_chain on a committed trace: the chained grace periods' gap in its
parts, and the workers' time off the CPU a sequence."""

from __future__ import annotations

from analysis_runner import CP2, number, run


def test_chain_parts_splits_each_chained_gap() -> None:
    out = run("gp_chain.chain_parts", CP2)
    assert number(r"(\d+) chained gaps", out) == 324
    for part in ("A kthread done", "B waiter woken", "C waiter running", "D kthread woken"):
        assert number(part + r".*?n=(\d+)", out) == 324
    assert number(r"B waiter woken -> running: n=\d+ median ([\d.]+)", out) <= 2  # quick at 2


def test_off_cpu_counts_only_the_workers() -> None:
    out = run("gp_chain.off_cpu", CP2)
    assert number(r"(\d+) sequences", out) == 403
    total = number(r"sequences, ([\d.]+) us a sequence", out)
    assert 50 < total < 200  # no run-long parent wait (session 11's correction)
    assert "woken by the grace-period kthread" in out
