"""calibration/analysis/gp_ipi on a committed trace: a busy other vCPU lengthens an
expedited grace period by about the IPI's round trip (10 us), and chained grace periods are
found."""

from __future__ import annotations

from analysis_runner import CP2, number, run


def test_gp_ipi_busy_other_cpu_costs_about_ten_us() -> None:
    out = run("gp_ipi.gp_ipi", CP2)
    assert number(r"difference of the medians, median over (\d+) traces", out) == 1
    assert 5 <= number(r"difference of medians \+([\d.]+) us", out) <= 20
    assert number(r"other CPU busy n=(\d+)", out) > 100


def test_chain_gaps_finds_chained_grace_periods() -> None:
    out = run("gp_ipi.chain_gaps", CP2)
    assert number(r"a mutex waiter pending: n=(\d+)", out) == 324
    assert number(r"none pending: n=(\d+)", out) > 100
