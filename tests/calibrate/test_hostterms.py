"""hostterms: a fit's seeds, its mount_bench kernel, and the bench terms measured from runs."""

from __future__ import annotations

import pytest
from conftest import DATA

from cohsim.calibrate.hostterms import (
    SEED_SET_STRIDE,
    BenchSim,
    fit_bench_kernel,
    measure_bench_terms,
    seed_set,
)
from cohsim.calibrate.measuredruns import load_bench
from cohsim.calibrate.mountreplay import bench_kernel
from cohsim.errors import CohsimError
from cohsim.kernel.costs import load_kernel
from cohsim.kernel.linecosts import LineCosts
from cohsim.machine.catalog import Catalog

DEVVM = "devvm-2cpu-intel-xeon-f6m167"


def test_seed_sets_one_seed_at_one_worker_and_apart_from_each_other():
    assert seed_set(3, 2, 1) == [3]
    assert seed_set(3, 2, 4) == [3, 4]
    assert seed_set(3, 2, 4, rep=2) == [3 + 2 * SEED_SET_STRIDE, 4 + 2 * SEED_SET_STRIDE]


def test_no_extra_is_the_bench_kernel():
    k = load_kernel()
    assert fit_bench_kernel(k, {}, "per-layer", 1) == bench_kernel(k)
    longer = fit_bench_kernel(k, {"per-layer": {"1": {"mount_overlay": 500.0}}}, "per-layer", 1)
    assert longer.op("mount_overlay").cpu_ns > bench_kernel(k).op("mount_overlay").cpu_ns


@pytest.fixture(scope="module")
def one_worker():
    data = load_bench([DATA / DEVVM / "mount"])
    return [r for r in data.mount if r.key == ("per-layer", 1, 1)]


def test_bench_terms_from_one_worker_runs(one_worker):
    machine = Catalog().get(DEVVM)
    costs = LineCosts(machine, seed=0)
    think, extra = measure_bench_terms(machine, load_kernel(), costs, one_worker, 1, 0)
    assert set(think) == {"per-layer"} and set(think["per-layer"]) == {"1"}
    assert think["per-layer"]["1"] >= 0 and "mountinfo_open" in extra["per-layer"]["1"]
    bench = BenchSim(machine, costs, think, extra, containers=1, seed=0, seeds=1)
    run = bench.run(load_kernel(), "per-layer", 1, 1, one_worker[0].baseline_mounts)
    measured = sorted(r.stride_ns for r in one_worker)
    # the op and sample terms make the 1-worker run what was measured (its median, roughly)
    assert measured[0] * 0.8 < run.stride_ns < measured[-1] * 1.2


def test_bench_terms_need_a_one_worker_run(one_worker):
    machine = Catalog().get(DEVVM)
    two = [r for r in load_bench([DATA / DEVVM / "mount"]).mount if r.key == ("per-layer", 2, 1)]
    with pytest.raises(CohsimError, match="no 1-worker run of per-layer at 1 layers"):
        measure_bench_terms(machine, load_kernel(), LineCosts(machine, seed=0), two, 1, 0)
