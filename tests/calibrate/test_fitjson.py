"""fitjson: the fit JSON read, validated, written back byte for byte, and chosen."""

from __future__ import annotations

import pytest
from conftest import REPO

from cohsim.calibrate.committed import default_fit
from cohsim.calibrate.fitparams import KERNEL_PARAMS
from cohsim.calibrate.fitresult import load_fit
from cohsim.errors import CohsimError

DEVVM = "devvm-2cpu-intel-xeon-f6m167"


def test_bad_fit_files(tmp_path):
    p = tmp_path / "f.json"
    p.write_text("{")
    with pytest.raises(CohsimError, match="invalid JSON"):
        load_fit(p)
    p.write_text('{"schema": 9}')
    with pytest.raises(CohsimError, match="schema 9"):
        load_fit(p)


def test_committed_fit_loads_and_applies():
    path = REPO / "calibration" / "fits" / f"{DEVVM}.json"
    c = load_fit(path)
    assert c.kind == "kernel+lock" and set(KERNEL_PARAMS) <= set(c.params)
    assert default_fit(DEVVM).instance == DEVVM
    other = default_fit("m7i.metal-24xl")  # the kernel part applies to every instance
    assert other is not None and other.applies_to["kernel"]["instances"] == "*"


def test_committed_fit_writes_back_the_same_bytes(tmp_path):
    path = REPO / "calibration" / "fits" / f"{DEVVM}.json"
    out = tmp_path / "again.json"
    load_fit(path).save(out)
    assert out.read_bytes() == path.read_bytes()


def test_not_an_object_and_missing_keys(tmp_path):
    p = tmp_path / "f.json"
    p.write_text("[]")
    with pytest.raises(CohsimError, match="must be a JSON object"):
        load_fit(p)
    p.write_text('{"schema": 1, "kind": "kernel"}')
    with pytest.raises(CohsimError, match="missing key instance"):
        load_fit(p)
    with pytest.raises(CohsimError, match="no such fit file"):
        load_fit(tmp_path / "nope.json")
