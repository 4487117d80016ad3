"""One exit-code rule in every command (cohsim.cli.args): a flag's value malformed or out of
range on its own is argparse's usage error, exit 2, before anything runs; input that needs a
file, the catalog or another flag to judge is one error line, exit 1. Each command is run with
one bad value of each kind. (`plan`, `sweep`, `pause-bench`, `trace synth` and `c2c` exited 1
on a bad count, strategy, lock, placement, arrival or home.)"""

from __future__ import annotations

import pytest

from cohsim.cli import app
from cohsim.cli.app import main

SYNTH_OUT = ["--out", "t.strace"]
#: per command, one flag value that is bad on its own: usage error, exit 2
USAGE = {
    "machines": ["machines", "--bogus"],
    "show": ["show", "m7a.24xlarge", "--bogus"],
    "c2c": ["c2c", "m7a.24xlarge", "--home", "north"],
    "pause-bench": ["pause-bench", "--instance", "r5.metal", "--threads", "-5"],
    "pause-bench --lock": ["pause-bench", "--instance", "r5.metal", "--lock", "clh"],
    "pause-bench --placement": ["pause-bench", "--instance", "r5.metal", "--placement", "all"],
    "pause-bench --cs-ns": ["pause-bench", "--instance", "r5.metal", "--cs-ns", "-1"],
    "predict": ["predict", "--arch", "mesh", "--containers", "-5"],
    "replay": ["replay", "missing.strace", "--arch", "mesh", "--layers", "0"],
    "plan": ["plan", "--containers", "-5"],
    "plan --deadline": ["plan", "--deadline", "-1"],
    "plan --workers": ["plan", "--workers", "0"],
    "sweep": ["sweep", "--containers", "-5"],
    "sweep --layers": ["sweep", "--layers", "2,x"],
    "sweep --strategy": ["sweep", "--strategy", "fast"],
    "calibrate": ["calibrate", "missing-data", "--out", "fit.json", "--seed", "-5"],
    "trace parse": ["trace", "parse", "missing.strace", "--format", "ltrace"],
    "trace synth": ["trace", "synth", "--strategy", "per-layer", "--containers", "-5", *SYNTH_OUT],
    "trace synth --arrival": [
        "trace",
        "synth",
        "--strategy",
        "per-layer",
        "--arrival",
        "stagger:-1",
        *SYNTH_OUT,
    ],
    **{
        f"bench {b}": ["bench", b, "--repeats", "0", "--out", "o"]
        for b in ("pause", "mount", "wake", "ns", "prop", "walk", "chase", "corun")
    },
    "bench wake-idle": ["bench", "wake-idle", "--out", "o"],  # no trace named
    "kernel": ["kernel", "mountinfo", "--mounts", "-1"],
}

#: per command, bad input that is not a flag's form: one error line, exit 1
INPUT = {
    "machines": None,  # nothing it reads can be wrong
    "show": ["show", "m7a.24xlarg"],
    "c2c": ["c2c", "m7a.24xlarg"],
    "pause-bench": ["pause-bench", "--instance", "m7i.metal-24xl", "--threads", "97"],
    "predict": ["predict", "--instance", "m7a.24xlarg", "--containers", "5"],
    "replay": ["replay", "missing.strace", "--arch", "mesh"],
    "plan": ["plan", "--instances", "m7a.24xlarg"],
    "sweep": ["sweep", "--instances", "m7a.24xlarg"],
    "calibrate": ["calibrate", "missing-data", "--out", "fit.json"],
    "trace": ["trace", "parse", "missing.strace"],
    "bench": ["bench", "wake-idle", "missing.trace", "--out", "o"],
    "kernel": ["kernel", "op", "move_mount", "--instance", "m7a.24xlarg"],
}


def test_every_command_is_covered():
    assert {k.split()[0] for k in USAGE} == set(app.COMMANDS) == set(INPUT)


@pytest.mark.parametrize("name", sorted(USAGE))
def test_a_bad_value_is_a_usage_error_exit_2(capsys, tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(USAGE[name])
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and out == "" and "Traceback" not in err
    lines = err.splitlines()
    assert lines[0].startswith("usage: cohsim ")
    assert [x for x in lines if "error:" in x] == [lines[-1]]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", sorted(k for k, v in INPUT.items() if v))
def test_other_bad_input_is_one_line_exit_1(capsys, tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COHSIM_CACHE", "off")
    assert main(INPUT[name]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("cohsim: error: ")
    assert list(tmp_path.iterdir()) == []
