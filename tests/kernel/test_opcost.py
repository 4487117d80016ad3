"""An op's costs (cohsim.kernel.opcost): a copy with changes is what dataclasses.replace makes."""

from __future__ import annotations

import dataclasses

import pytest

from cohsim.kernel.costs import load_kernel


def test_a_changed_op_is_the_replaced_one_and_a_wrong_name_is_refused():
    op = load_kernel().op("umount")
    changes = {"cpu_ns": op.cpu_ns * 1.7, "ns_write_ns": 0.0}
    new = op.changed(changes)
    assert new == dataclasses.replace(op, **changes) and new is not op
    assert new.takes_ns_write is op.takes_ns_write  # decided when the file was read: kept
    assert op.changed({}) == op
    with pytest.raises(TypeError):
        op.changed({"cpu_nss": 1.0})
