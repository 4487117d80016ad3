"""`cohsim kernel op|mountinfo` as a user runs it."""

from __future__ import annotations

import json

import pytest

from cohsim.cli.app import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_op_in_words_and_json(capsys):
    argv = ["kernel", "op", "move_mount", "--mounts", "5000", "--ring", "2000", "--slaves", "50",
            "--instance", "m7i.metal-24xl"]  # fmt: skip
    code, out, _ = run(capsys, *argv)
    assert code == 0 and "namespace_sem write hold" in out
    assert "(grows with ring)" in out and "(grows with slaves)" in out and "total, alone" in out
    code, out, _ = run(capsys, *argv, "--json")
    doc = json.loads(out)
    assert doc["question"]["ring"] == 2000 and doc["question"]["cpus"] == 96
    hold = doc["sections"]["namespace_sem write hold"]
    assert hold["ns"] == pytest.approx(sum(p["ns"] for p in hold["parts"]), abs=0.01)


def test_mountinfo_and_pins(capsys):
    code, out, _ = run(capsys, "kernel", "mountinfo", "--mounts", "5000", "--ring", "2000")
    assert code == 0 and "in a runtime's own namespace" in out and "ring x ring" in out
    base = ["kernel", "op", "move_mount", "--ring", "10", "--slaves", "5", "--json"]
    few = json.loads(run(capsys, *base, "--set", "propagation.service_namespaces=0")[1])
    many = json.loads(run(capsys, *base, "--set", "propagation.service_namespaces=30")[1])
    assert many["total_ns"] > few["total_ns"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["op", "mov_mount"], "closest: move_mount"),
        (["op", "move_mount", "--ring", "5", "--binds", "5"], "binds under /"),
        (["op", "move_mount", "--set", "nope=1"], "not a prior"),
    ],
)
def test_bad_questions_are_one_line_exit_2(capsys, argv, message):
    code, out, err = run(capsys, "kernel", *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err


def test_a_negative_count_is_a_usage_error():
    with pytest.raises(SystemExit) as e:
        main(["kernel", "mountinfo", "--mounts", "-1"])
    assert e.value.code == 2
