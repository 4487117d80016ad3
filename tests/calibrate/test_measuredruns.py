"""measuredruns: reading the tidy bench CSVs of mount_bench, pause_bench and wake_bench."""

from __future__ import annotations

import pytest
from conftest import DATA

from cohsim.calibrate.measuredruns import BenchData, WakeRun, group_runs, load_bench, medians
from cohsim.errors import CohsimError

DEVVM = DATA / "devvm-2cpu-intel-xeon-f6m167"
MOUNT_HEADER = "bench,strategy,workers,layers,syscall,metric,value,unit,repeat\n"
WAKE_HEADER = "bench,lock,threads,placement,metric,value,unit,repeat\n"


def wake_rows(repeat: int, same: float, cross: float) -> str:
    """One wake_bench repeat as the program writes it (only the rows the loader reads)."""
    return (
        f"wake,futex,2,same-cpu,p50_ns,{same},ns,{repeat}\n"
        f"wake,futex,2,same-cpu,mean_ns,{same * 1.1},ns,{repeat}\n"
        f"wake,futex,2,cross-cpu,p50_ns,{cross},ns,{repeat}\n"
        f"wake,futex,2,derived,wake_ns,{max(0.0, (cross - same) / 2)},ns,{repeat}\n"
    )


def assert_one_line_error(path, text, message):
    """`text` written to `path` does not load: one line, matching `message`, naming the file."""
    path.write_text(text)
    with pytest.raises(CohsimError, match=message) as exc:
        load_bench([path])
    assert str(path) in str(exc.value) and "\n" not in str(exc.value)


@pytest.fixture(scope="module")
def data():
    return load_bench([DEVVM / "pause", DEVVM / "mount"])


def test_reads_the_committed_devvm_data(data):
    assert len(data.mount) == 135  # 3 strategies x 3 workers x 3 layers x 5 repeats
    assert len(data.pause) == 20  # ttas/ticket x 1/2 threads x 5 repeats
    assert len(data.digests) == 2 and all(d.startswith("sha256:") for d in data.digests.values())
    run = next(r for r in data.mount if r.key == ("per-layer", 4, 50) and r.repeat == 0)
    assert run.containers == 20 and run.sequences_per_container == 2
    assert run.baseline_mounts == 21
    assert run.calls_per_sequence == 4 * 50 + 1 + 50 + 1
    assert run.stride_ns > run.sequence_mean_ns > 0
    p = next(r for r in data.pause if r.lock == "ticket" and r.threads == 2 and r.repeat == 0)
    assert p.p50_ns == pytest.approx(711.75, rel=1e-6) and p.pause_ns > 10


def test_select_and_medians(data):
    sub = data.select(workers=[1], repeats=[0, 1, 2])
    assert {r.workers for r in sub.mount} == {1} and {r.repeat for r in sub.mount} == {0, 1, 2}
    med = medians(sub.mount)
    assert len(med) == 9 and all(s > 0 and c > 0 for s, c in med.values())


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "unexpected CSV header"),
        ("bench,strategy,workers\n", "unexpected CSV header"),
        (MOUNT_HEADER, "no data rows"),
        (
            MOUNT_HEADER + "mount,per-layer,1,1,run,wall_s,fast,s,0\n",
            ":2: value 'fast' is not a number",
        ),
        (
            MOUNT_HEADER + "mount,per-layer,one,1,run,wall_s,1,s,0\n",
            ":2: workers 'one' is not an integer",
        ),
        (MOUNT_HEADER + "disk,per-layer,1,1,run,wall_s,1,s,0\n", ":2: unknown bench 'disk'"),
        (MOUNT_HEADER + "mount,per-layer,1,1,run,wall_s,1,s,0\n", "has no run,containers row"),
        (MOUNT_HEADER + "mount,per-layer,1,1,run,wall_s,1,s\n", ":2: 8 fields, expected 9"),
        (MOUNT_HEADER + "mount,per-layer,1,1,run,wall_s,nan,s,0\n", "is not finite"),
    ],
)
def test_bad_csv_is_one_line_naming_the_file(tmp_path, text, message):
    assert_one_line_error(tmp_path / "mount_bench.csv", text, message)


def test_reads_a_wake_file_and_directory(tmp_path):
    path = tmp_path / "wake_bench.csv"
    path.write_text(WAKE_HEADER + wake_rows(1, 4000, 16000) + wake_rows(0, 5000, 15000))
    for given in (path, tmp_path):
        data = load_bench([given])
        assert data.wake == (
            WakeRun(0, 5000.0, 5000.0, 15000.0),
            WakeRun(1, 6000.0, 4000.0, 16000.0),
        )
        assert data.mount == () and data.pause == ()
        assert list(data.digests) == [str(path)] and data.digests[str(path)].startswith("sha256:")
    assert data.select(repeats=[1]).wake == (data.wake[1],)
    assert data.select(workers=[1]).wake == data.wake  # workers select mount runs only
    # the positional three-field form still builds (calibration's synthetic data uses it)
    assert BenchData((), (), {"x": "sha256:0"}).wake == ()


def test_wake_beside_pause_and_mount():
    data = load_bench([DEVVM / "pause", DEVVM / "mount", DEVVM / "wake"])
    assert len(data.pause) == 20 and len(data.mount) == 135 and len(data.wake) == 5
    assert len(data.digests) == 3
    assert [w.repeat for w in data.wake] == [0, 1, 2, 3, 4]
    for w in data.wake:
        assert w.cross_p50_ns > w.same_p50_ns > 0
        assert w.wake_ns == pytest.approx((w.cross_p50_ns - w.same_p50_ns) / 2)
    assert data.select(repeats=[0, 1]).wake == data.wake[:2]


@pytest.mark.parametrize(
    "text, message",
    [
        ("bench,lock,threads,metric,value,unit,repeat\n", "unexpected CSV header"),
        (WAKE_HEADER, "no data rows"),
        (WAKE_HEADER + "wake,futex,2,same-cpu,p50_ns,quick,ns,0\n", ":2: value 'quick' is not"),
        (WAKE_HEADER + "wake,futex,2,same-cpu,p50_ns,1,ns,first\n", ":2: repeat 'first' is not"),
        (WAKE_HEADER + "wake,futex,2,same-cpu,p50_ns,inf,ns,0\n", ":2: value 'inf' is not finite"),
        (WAKE_HEADER + "wake,futex,2,same-cpu,p50_ns,1,ns\n", ":2: 7 fields, expected 8"),
        (WAKE_HEADER + "wake,futex,2,sideways,p50_ns,1,ns,0\n", ":2: unknown placement"),
        (WAKE_HEADER + wake_rows(0, 1, 3) + "pause,none,1,compact,pause_ns,1,ns,0\n", ":6: bench"),
        (WAKE_HEADER + wake_rows(0, 1, 3).replace("derived", "cross-cpu"), "no futex,wake_ns row"),
        (
            WAKE_HEADER
            + "".join(ln for ln in wake_rows(0, 1, 3).splitlines(True) if "same" not in ln),
            "run same-cpu/0 has no futex,p50_ns row",
        ),
    ],
)
def test_bad_wake_csv_is_one_line_naming_the_file(tmp_path, text, message):
    assert_one_line_error(tmp_path / "wake_bench.csv", text, message)


def test_missing_paths_and_empty_directories(tmp_path):
    with pytest.raises(CohsimError, match="no such file"):
        load_bench([tmp_path / "nope"])
    with pytest.raises(CohsimError, match=r"no \*_bench.csv"):
        load_bench([tmp_path])


def test_group_runs_by_shape(data):
    groups = group_runs(data.mount)
    assert list(groups) == sorted(groups) and len(groups) == 27
    assert all(len(v) == 5 and {r.key for r in v} == {k} for k, v in groups.items())


#: one committed CSV of each bench `cohsim bench` runs that calibrate does not fit
OTHER_BENCHES = {
    "ns": DATA / "devvm-2cpu-amd-epyc-f25m1" / "ns-copy" / "ns_bench.csv",
    "prop": DATA / "devvm-2cpu-amd-epyc-f25m1" / "prop-and-read" / "prop_bench.csv",
    "walk": DATA / "devvm-2cpu-intel-xeon-f6m207" / "walk" / "walk_bench.csv",
    "chase": DATA / "devvm-2cpu-intel-xeon-f6m207" / "chase" / "repeat" / "chase_bench.csv",
}


def results_dir(tmp_path, *benches):
    """A `results/` folder as the README's `cohsim bench ... --out results/` commands leave it:
    pause_bench's output beside every other bench's (with their sidecars)."""
    results = tmp_path / "results"
    results.mkdir()
    for name in ("pause_bench.csv", "pause_bench.json"):
        (results / name).write_bytes((DEVVM / "pause" / name).read_bytes())
    for bench in benches:
        csv = OTHER_BENCHES[bench]
        (results / csv.name).write_bytes(csv.read_bytes())
        (results / f"{bench}_bench.json").write_text("{}\n")
    return results


def test_other_benches_in_a_results_dir_are_skipped_with_the_reason(tmp_path):
    """`cohsim bench mount|ns|prop|walk|chase --out results/` then `cohsim calibrate
    results/`: the pause (and mount, wake) data are read, every other bench's file is listed
    as skipped with why, not refused as an unknown bench."""
    results = results_dir(tmp_path, *OTHER_BENCHES)
    data = load_bench([results])
    assert len(data.pause) == len(load_bench([DEVVM / "pause"]).pause)
    assert list(data.digests) == [str(results / "pause_bench.csv")]
    assert [w for w, _ in data.skipped] == sorted(
        str(results / f"{b}_bench.csv") for b in OTHER_BENCHES
    )
    for _, why in data.skipped:
        assert "not" in why and "\n" not in why
    assert data.select(repeats=[0]).skipped == data.skipped


def test_only_unfitted_benches_is_nothing_to_fit(tmp_path):
    results = results_dir(tmp_path, "ns", "prop")
    (results / "pause_bench.csv").unlink()
    with pytest.raises(CohsimError, match="nothing to fit: no pause_bench") as exc:
        load_bench([results])
    assert "ns_bench.csv" in str(exc.value) and "\n" not in str(exc.value)
