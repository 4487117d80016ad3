"""What a prediction reports: every contract field in its JSON document."""

from __future__ import annotations

import json

from cohsim.predict import SCHEMA, predict
from cohsim.workload.runtime import runtime_mount_ops

SMALL = dict(containers=12, layers=4, replicates=2, jobs=1)


def test_prediction_reports_every_contract_field():
    p = predict(arch="chiplet", **SMALL)
    d = p.to_dict()
    for key in (
        "containers",
        "layers",
        "mount_ops",
        "syscalls",
        "launch_s",
        "failures",
        "lock_wait_fraction",
        "machine",
        "calibration",
        "level",
    ):
        assert key in d
    assert d["schema"] == SCHEMA == 1
    assert d["machine"] == "m7a.24xlarge" and "m7a.24xlarge" in d["machine_note"]
    assert d["mount_ops"] == 12 * (2 * (1 + 4 + 4) + runtime_mount_ops("runc"))
    assert set(d["mountinfo_read_at_peak_s"]) == {"host", "container"}
    assert set(d["systemd"]) == {"rereads", "longest_reread_s", "max_lag_s"}
    assert d["systemd"]["rereads"] >= 1 and d["systemd"]["max_lag_s"] > 0
    for stat in ("p50", "p95", "p99", "max"):
        v = d["launch_s"][stat]
        assert v["low"] <= v["value"] <= v["high"] and v["unit"] == "s"
    assert d["launch_s"]["p50"]["value"] <= d["launch_s"]["max"]["value"]
    assert any("level 2" in x for x in d["level"]) and any("level 3" in x for x in d["level"])
    json.dumps(d)


def test_the_peak_peer_group_is_reported_by_both_engines():
    """/ and the per-layer binds that joined its peer group: at most one a layer of every
    container, all alive at once in the closed form's cohort; a bind-free strategy's group
    stays smaller."""
    n, layers = SMALL["containers"], SMALL["layers"]
    des = predict(arch="chiplet", **SMALL)
    closed = predict(arch="chiplet", engine="analytic", **SMALL)
    assert 1 < des.peak_peer_group <= 1 + n * layers
    assert closed.peak_peer_group == 1 + n * layers
    assert des.to_dict()["peak_peer_group"] == des.peak_peer_group
    common = predict(arch="chiplet", strategy="common-parent", engine="analytic", **SMALL)
    assert common.peak_peer_group < closed.peak_peer_group
