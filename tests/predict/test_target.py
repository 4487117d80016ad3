"""What a prediction runs on: the machine as callers name it, and which fit applies."""

from __future__ import annotations

import pytest

from cohsim.errors import CohsimError
from cohsim.kernel.costs import load_kernel
from cohsim.predict import resolve_calibration, resolve_machine


def test_exactly_one_of_arch_and_instance(catalog):
    for arch, instance in ((None, None), ("mesh", "c5.metal")):
        with pytest.raises(CohsimError, match="exactly one of --arch and --instance"):
            resolve_machine(catalog, arch=arch, instance=instance)


def test_arch_names_its_instance_and_smt_sockets_apply(catalog):
    m, note = resolve_machine(catalog, arch="chiplet", instance=None)
    assert m.name.startswith("m7a.24xlarge") and note.startswith("--arch chiplet is m7a.24xlarge")
    one, note = resolve_machine(catalog, arch=None, instance="r5.metal", smt=False, sockets=1)
    assert note == "" and one.topology.sockets == 1 and one.topology.threads_per_core == 1


def test_calibration_none_and_the_committed_fit(catalog):
    machine, kernel = catalog.get("m7a.24xlarge"), load_kernel()
    m, k, draws, note, misfit = resolve_calibration("none", machine, kernel, 3, 0)
    assert (m, k, draws, misfit) == (machine, kernel, [], 0.0) and note.startswith("none")
    m, k, draws, note, misfit = resolve_calibration(None, machine, kernel, 3, 0)
    assert "committed fit" in note and "kernel" in note and len(draws) == 3 and misfit > 0
    assert k != kernel
