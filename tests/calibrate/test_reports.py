"""calibration/reports/: each report's cheapest mode run as its docstring says (`python -m`
from the repository root), and its pure functions, without the refits (minutes each; the
figures they print are in calibration/fits/README.md and the 16-vCPU host's README, and the
slow tests of test_heldout.py, test_many_core.py and test_many_core_cpus.py hold those).

- in_sample: one strategy's shapes simulated with the committed 2-vCPU fit (seconds);
- held_out: the split's checks, and what it prints of a held-out result (its refit stood in
  for: `held_out` replaced);
- unmount_overlap: the whole report (2 strategies x 2 seeds of a 2-worker run, seconds);
- many_core: the fit's parameters (`--groups none`, with and without `--transfer`), the data
  each group reads, the tables from given checks; one group end to end is slow.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import DATA, REPO

from calibration.reports import held_out, many_core
from cohsim.calibrate import BOUND, Checked, HeldOut, load_fit

TWO_CPU = "devvm-2cpu-intel-xeon-f6m167"
FIT = REPO / "calibration" / "fits" / f"{TWO_CPU}.json"
MOUNT = DATA / TWO_CPU / "mount-wake-long" / "mount"


def report(module: str, *args: object) -> str:
    """The report's stdout; a failure shows its stderr."""
    cmd = [sys.executable, "-m", f"calibration.reports.{module}", *map(str, args)]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# ----- in_sample ---------------------------------------------------------------------------

_IN_SAMPLE = re.compile(
    r"^(\S+)\s+(\d)w\s+(\d+)L  sequence\s+([\d.]+) us measured,\s+([\d.]+) simulated "
    r"\(([+-]\d+)%\) \|((?: \S+ [\d.]+/[\d.]+)+)$",
    re.M,
)


def test_in_sample_one_strategy() -> None:
    """The fit, the data folder and a strategy named as the docstring says: that strategy's
    nine shapes (1, 2, 4 workers x 1, 10, 50 layers), each op measured / simulated; the
    1-worker shapes, which the fit saw, within 10 %."""
    out = report("in_sample", FIT, MOUNT, "lowerdir-plus")
    rows = _IN_SAMPLE.findall(out)
    assert len(rows) == len(out.splitlines()) == 9
    assert {r[0] for r in rows} == {"lowerdir-plus"}
    assert sorted((int(r[1]), int(r[2])) for r in rows) == [
        (w, layers) for w in (1, 2, 4) for layers in (1, 10, 50)
    ]
    for s, w, layers, measured, simulated, pct, ops in rows:
        assert int(pct) == round(100 * (float(simulated) / float(measured) - 1))
        assert "fsconfig_create" in ops and "umount_overlay" in ops
        if w == "1":
            assert abs(int(pct)) <= 10, (s, w, layers, pct)


# ----- held_out ----------------------------------------------------------------------------


def test_held_out_refuses_an_unknown_split(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        held_out.main(["sideways"])
    assert exc.value.code == 2
    assert "unknown split 'sideways'" in capsys.readouterr().err


def test_held_out_prints_each_split(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report reads the mount, wake and wake-idle runs and prints, per split, the summary
    and one line per held-out shape (the host's own error where the split has it)."""
    seen = []

    def fake(data, host, split):  # the refit this stands in for takes minutes
        seen.append((host, split, len(data.mount), bool(data.wake and data.wake_idle)))
        errors = {("per-layer", 4, 1): 0.25, ("common-parent", 4, 10): -0.05}
        host_err = {("per-layer", 4, 1): BOUND + 0.1} if split == "repeats" else {}
        return HeldOut(split, errors, coverage=0.5, runs=10, host=host_err)

    monkeypatch.setattr(held_out, "held_out", fake)
    assert held_out.main(["--mount", str(MOUNT), "workers", "repeats"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [s[:2] for s in seen] == [(TWO_CPU, "workers"), (TWO_CPU, "repeats")]
    assert all(n > 0 and wake for _, _, n, wake in seen)
    assert out[0].startswith(
        "split workers: 10 held-out runs, interval coverage 50%, worst |error| 25.0%, "
        "median 15.0% ("
    )
    assert out[1:3] == [
        "  common-parent 4 workers 10 layers    -5.0%",
        "  per-layer     4 workers  1 layers   +25.0%",
    ]
    assert (
        f"worst where the host repeats itself within {BOUND:.0%} 5.0% (1 shapes drifted)" in out[3]
    )
    assert out[5].endswith(f"host {BOUND + 0.1:+7.1%}  drifted")


# ----- unmount_overlap ---------------------------------------------------------------------


def test_unmount_overlap_as_the_traces_ran() -> None:
    """Both strategies, seeds 0 and 1, 2 workers x 100 containers x 1 layer: every unmount of
    the strategy's kinds counted (2 workers x 100 containers x 2 mounts each), the
    overlapping ones a share of them, and the phase of the two workers' unmounts."""
    out = report("unmount_overlap")
    heads = re.findall(r"^(\S+), 2 workers, 1 layer, seed (\d): ([\d.]+) us/seq$", out, re.M)
    assert [(s, int(seed)) for s, seed, _ in heads] == [
        ("common-parent", 0),
        ("common-parent", 1),
        ("per-layer", 0),
        ("per-layer", 1),
    ]
    assert all(100 < float(us) < 1000 for _, _, us in heads)
    rows = re.findall(r"^  (\S+)\s+n=\s*(\d+)  overlapping\s+(\d+) \((\d+)%\)", out, re.M)
    assert [r[0] for r in rows] == ["umount", "umount_overlay"] * 2 + [
        "umount_overlay",
        "umount_detach",
    ] * 2
    for _, n, met, pct in rows:
        assert int(n) == 400 and 0 <= int(met) <= 400
        assert int(pct) == round(100 * int(met) / 400)
    assert len(re.findall(r"^-- phase of umount(_detach)?: median distance", out, re.M)) == 4


# ----- many_core ---------------------------------------------------------------------------


def test_many_core_prints_the_fits_parameters() -> None:
    """`--groups none`: the committed fit's parameters and nothing simulated; `--transfer`
    also makes the 2-vCPU kernel's fit (no table without groups)."""
    fit = load_fit(many_core.COMMITTED)
    for args in ((), ("--transfer",)):
        out = report("many_core", "--groups", "none", *args).splitlines()
        assert len(out) == 1 and out[0].startswith(f"{many_core.HOST} fit: {{")
        for name, p in fit.parameters.items():
            assert f"'{name}': '{p.value:.4g} +/- {p.stderr:.2g}'" in out[0]


def test_many_core_refuses_an_unknown_group() -> None:
    cmd = [sys.executable, "-m", "calibration.reports.many_core", "--groups", "mount,all"]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "unknown group(s) all" in proc.stderr


def test_many_core_reads_each_groups_runs() -> None:
    """The fit's data: 1-2 workers of the three sittings, with pause and wake data; each
    group the worker counts it predicts; the bursts on 2-16 CPUs."""
    data = many_core.fit_data()
    assert {r.workers for r in data.mount} == {1, 2} and data.pause and data.wake
    workers = {g: {r.workers for r in many_core.runs_of(g)} for g in many_core.GROUPS}
    assert workers["mount"] == {4, 8, 16}
    assert {16, 200} <= workers["burst"] and workers["no-reads"] == {16, 100}
    assert all(many_core.cpus_runs(n) for n in many_core.CPUS)


def test_many_core_host_only_names_the_host() -> None:
    fit = many_core.host_only(load_fit(many_core.COMMITTED))
    kernel = fit.applies_to["kernel"]
    assert kernel["instances"] == [many_core.HOST] and "not for other instances" in kernel["caveat"]


def _checked(key: tuple[str, int, int], measured: float, predicted: float) -> Checked:
    """A check of 3 runs, 2 covered; containers/s the inverse of the worker time."""
    return Checked(
        key=key,
        containers=1,
        sampled=False,
        runs=3,
        measured={"stride_ns": measured, "containers_per_s": 1e9 / measured},
        predicted={
            "stride_ns": {"value": predicted, "low": predicted / 2, "high": predicted * 2},
            "containers_per_s": {"value": 1e9 / predicted, "low": 0.0, "high": 0.0},
        },
        covered={"stride_ns": 2, "containers_per_s": 2},
    )


def test_many_core_tables_from_given_checks() -> None:
    a = _checked(("per-layer", 16, 10), 2_000_000.0, 2_200_000.0)  # +10 %
    b = _checked(("per-layer", 100, 50), 8_000_000.0, 6_000_000.0)  # -25 %
    assert many_core.summary([a, b]) == (
        "2 shapes: median |error| 17.5%, worst -25.0%, within 15 %: 1; "
        "containers/s median |error| 21.2%; interval coverage 4/6 runs (67%)"
    )
    lines = many_core.table("title", [a, b]).splitlines()
    assert lines[0] == "title" and len(lines) == 5
    assert lines[2].split() == "per-layer 16 10 1 no 3 2000 2200 +10.0% 2/3 -9.1%".split()
    # the same shapes on 2 and 16 CPUs: 2 CPUs twice as slow measured, 1.5 times predicted
    slow = [_checked(c.key, 2 * c.measured["stride_ns"], 3 * c.predicted["stride_ns"]["value"]
                     / 2) for c in (a, b)]  # fmt: skip
    by_cpus = {2: slow, 16: [a, b]}
    assert many_core.ratio(by_cpus, a.key) == pytest.approx((2.0, 1.5))
    rows = many_core.cpus_table("cpus", by_cpus).splitlines()
    assert rows[0] == "cpus" and len(rows) == 2 + 2 + 1 + 2
    assert rows[2].split()[:3] == ["per-layer", "16", "10"]
    assert rows[2].split()[-2:] == ["2.00", "1.50"]
    assert rows[-2].startswith("   2 CPUs: 2 shapes") and rows[-1].startswith("  16 CPUs: ")


@pytest.mark.slow
def test_many_core_one_group_end_to_end() -> None:
    """The bursts without mountinfo reads, one container per worker, no parameter draws: the
    table's 12 shapes and its summary (17-27 s on 2 shared CPUs)."""
    out = report("many_core", "--groups", "no-reads", "--samples", "0", "--containers", "1")
    shapes = re.findall(r"^  (\S+)\s+(\d+)\s+(\d+)\s+1 no\s+3\s", out, re.M)
    assert len(shapes) == 12 and {int(w) for _, w, _ in shapes} == {16, 100}
    assert re.search(r"^  12 shapes: median \|error\| [\d.]+%", out, re.M)
