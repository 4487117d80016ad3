"""Running a sweep: rows in the points' order, the same bytes whoever computes them, and each
point computed once and kept."""

from __future__ import annotations

import pytest
from tinygrid import MACHINES, RUN, options, tiny_points

from cohsim.errors import CohsimError
from cohsim.predict import predict
from cohsim.predict.options import RunOptions
from cohsim.sweep import SweepOptions, SweepPoint, csv_text, json_text, run_points, run_sweep
from cohsim.sweep import runner as sweep_runner


@pytest.fixture(scope="module")
def points() -> list[SweepPoint]:
    return tiny_points()


def test_rows_follow_the_points_and_the_predictions(points, catalog):
    shuffled = [points[3], points[0], points[2], points[1]]
    rows = run_points(shuffled, options(workers=1))
    assert [(r.instance, r.containers) for r in rows] == [
        (p.instance, p.containers) for p in shuffled
    ]
    p = predict(instance=MACHINES[1], containers=6, layers=2, options=RunOptions(
        seed=3, replicates=2, jobs=1))  # fmt: skip
    r = rows[0]
    assert (r.instance, r.containers, r.layers, r.seed, r.replicates) == (MACHINES[1], 6, 2, 3, 2)
    assert r.launch_p99_s == round(p.launch_s["p99"].value, 6)
    assert r.launch_p99_lo_s <= r.launch_p99_s <= r.launch_p99_hi_s
    assert r.mount_p50_s == round(p.mount_s["p50"].value, 6)
    assert r.peak_mount_table == p.peak_mount_table
    assert r.vcpus == catalog.get(MACHINES[1]).topology.vcpus and r.variant == "base"
    assert r.dominant.startswith("namespace_sem: ") and r.engine == "des"
    assert r.level == "; ".join(p.level) and len(r.digest) == 64


def test_one_worker_and_two_give_the_same_bytes(points):
    """In this process (1 worker) and on a local Dask cluster of 2: the same CSV and JSON."""
    one = run_sweep(points, options(workers=1))
    two = run_sweep(points, options(workers=2))
    assert one.computed == two.computed == len(points)
    assert csv_text(one.rows) == csv_text(two.rows)
    assert json_text(one.rows, options()) == json_text(two.rows, options(workers=2))


def test_a_second_run_computes_nothing(points, tmp_path, monkeypatch):
    first = run_sweep(points, options(tmp_path, workers=1))
    assert (first.computed, first.cached) == (4, 0)
    assert len(list(tmp_path.glob("*.json"))) == 4

    def refuse(task, catalog=None):
        raise AssertionError(f"computed {task.point} again")

    monkeypatch.setattr(sweep_runner, "compute", refuse)
    again = run_sweep(points, options(tmp_path, workers=1))
    assert (again.computed, again.cached) == (0, 4)
    assert csv_text(again.rows) == csv_text(first.rows)


def test_extending_a_grid_computes_only_the_new_points(points, tmp_path, monkeypatch):
    run_sweep(points[:2], options(tmp_path, workers=1))
    computed = []
    real = sweep_runner.compute
    monkeypatch.setattr(
        sweep_runner, "compute", lambda t, c: (computed.append(t.point), real(t, c))[1]
    )
    wider = run_sweep(points, options(tmp_path, workers=1))
    assert (wider.computed, wider.cached) == (2, 2)
    assert computed == points[2:]
    assert csv_text(wider.rows) == csv_text(run_points(points, options(workers=1)))


def test_a_point_twice_is_computed_once(points, tmp_path):
    s = run_sweep([points[0], points[1], points[0]], options(tmp_path, workers=1))
    assert s.computed == 2 and s.rows[0] == s.rows[2]


def test_a_stale_or_broken_cache_file_is_computed_again(points, tmp_path):
    first = run_sweep(points[:1], options(tmp_path, workers=1))
    (f,) = tmp_path.glob("*.json")
    f.write_text('{"schema": 1, "digest": "')
    again = run_sweep(points[:1], options(tmp_path, workers=1))
    assert again.computed == 1 and again.rows == first.rows


def test_an_unreachable_scheduler_is_one_error(points):
    opts = SweepOptions(run=RUN, cache="off", scheduler="tcp://127.0.0.1:9", connect_timeout_s=1)
    with pytest.raises(CohsimError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        run_points(points, opts)


def test_bad_options_are_refused():
    with pytest.raises(CohsimError, match="workers must be at least 1"):
        SweepOptions(workers=0)
    with pytest.raises(CohsimError, match="unknown runtime"):
        SweepOptions(runtime="crun")
    with pytest.raises(CohsimError, match="unknown instance"):
        run_points([SweepPoint("nosuch.metal", 2, 2)], options())


def test_a_scheduler_without_workers_is_one_error(points):
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as cluster:
        opts = SweepOptions(run=RUN, cache="off", scheduler=cluster.scheduler_address,
                            connect_timeout_s=1)  # fmt: skip
        with pytest.raises(CohsimError, match="has no workers"):
            run_points(points, opts)


def test_a_row_carries_the_peak_peer_group():
    from cohsim.predict import predict
    from cohsim.sweep import SweepPoint
    from cohsim.sweep.row import row_of

    pt = SweepPoint("xeon-gold-6242-1s", 3, 2)
    p = predict(instance=pt.instance, containers=3, layers=2, replicates=1, engine="analytic")
    row = row_of(pt, p, vcpus=16, sockets=1, engine="analytic", digest="x")
    assert row.peak_peer_group == p.peak_peer_group > 1
