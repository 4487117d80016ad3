"""Output paths that cannot be written: one error line naming the path, exit 1, before any
work, and nothing left behind. A negative seed is refused where the flags are read."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from cohsim.cli.app import main
from cohsim.cli.outputs import check_dir, check_file, writing
from cohsim.errors import CohsimError

PREDICT = ["predict", "--arch", "mesh", "--containers", "2", "--layers", "2"]

#: every command that writes a file, with the flag that names it
WRITERS = {
    "predict": [*PREDICT, "--plot", "{}.png"],
    "replay": ["replay", "missing.strace", "--arch", "mesh", "--plot", "{}.png"],
    "show": ["show", "m7a.24xlarge", "--plot", "{}.png"],
    "c2c": ["c2c", "m7a.24xlarge", "--plot", "{}.svg"],
    "pause-bench": ["pause-bench", "--instance", "r5.metal", "--threads", "1", "--plot", "{}.pdf"],
    "trace synth": ["trace", "synth", "--strategy", "per-layer", "--out", "{}.txt"],
    "calibrate": ["calibrate", "missing-data", "--out", "{}.json"],
    "bench pause": ["bench", "pause", "--out", "{}"],
    "bench wake-idle": ["bench", "wake-idle", "missing.trace", "--out", "{}"],
    "plan": ["plan", "--instances", "r5.metal", "--html", "{}.html"],
    "sweep --csv": ["sweep", "--instances", "r5.metal", "--csv", "{}.csv"],
    "sweep --cache": ["sweep", "--instances", "r5.metal", "--cache", "{}"],
}
#: the writers whose output is a directory
DIR_WRITERS = {"bench pause", "bench wake-idle", "sweep --cache"}


def _run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("cohsim: error: ") and "Traceback" not in err
    return err


def _argv(command: str, stem: str) -> tuple[list[str], str]:
    """The command's arguments with its output named from `stem`, and that output path."""
    argv = [a.format(stem) for a in WRITERS[command]]
    return argv, next(a for a in argv if a.startswith(stem))


@pytest.mark.parametrize("command", sorted(WRITERS))
@pytest.mark.parametrize("where", ["in /proc", "under a file", "a directory"])
def test_an_unwritable_output_is_one_line_and_leaves_nothing(capsys, tmp_path, command, where):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory\n")
    if where == "in /proc":
        argv, target = _argv(command, "/proc/cohsim-out")
    elif where == "under a file":
        argv, target = _argv(command, f"{blocker}/out")
    elif command in DIR_WRITERS:  # a file where the output directory should be
        argv, target = _argv(command, str(blocker))
    else:  # a directory where the output file should be
        argv, target = _argv(command, str(tmp_path / "out"))
        os.mkdir(target)
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = _run(capsys, argv)
    assert code == 1 and out == ""
    assert f"cohsim: error: {target}: " in _one_line(err)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not Path(target).exists() or where == "a directory"


def test_a_plot_that_cannot_be_written_is_refused_before_the_prediction_runs(capsys):
    code, out, err = _run(capsys, [*PREDICT, "--plot", "/proc/x.png"])
    assert code == 1 and out == ""
    assert _one_line(err) == (
        "cohsim: error: /proc/x.png: cannot write a file in /proc (No such file or directory)\n"
    )


@pytest.mark.parametrize("command", sorted(WRITERS))
@pytest.mark.parametrize("root", ["tmp", "/"])
def test_a_missing_folder_is_refused_and_nothing_is_made(capsys, tmp_path, command, root):
    """An output whose folder does not exist (a mistyped path, even at /) is one line and exit
    1: no folder is made for it. An output directory (bench --out DIR) is made one level deep,
    so its parent must exist."""
    base = tmp_path if root == "tmp" else Path("/")
    missing = base / f"cohsim-missing-{os.getpid()}"
    argv, target = _argv(command, str(missing / "deeper" / "out"))
    code, out, err = _run(capsys, argv)
    assert code == 1 and out == ""
    assert f"cohsim: error: {target}: " in _one_line(err)
    assert "no such directory" in err
    assert not missing.exists()


def test_a_bench_output_directory_is_made_in_its_existing_parent(tmp_path):
    check_dir(str(tmp_path / "results"))  # one level: fine
    with pytest.raises(CohsimError, match="no such directory"):
        check_dir(str(tmp_path / "new" / "results"))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_outputs_have_a_plain_files_mode(capsys, tmp_path, umask):
    """A plot, a trace and an HTML report: all 0666 less the umask, as a plain write gives
    (PNGs were 0600)."""
    trace = ["trace", "synth", "--strategy", "per-layer", "--containers", "2", "--layers", "2"]
    old = os.umask(umask)
    try:
        assert _run(capsys, ["show", "m7a.24xlarge", "--plot", str(tmp_path / "t.png")])[0] == 0
        assert _run(capsys, [*trace, "--out", str(tmp_path / "t.strace")])[0] == 0
    finally:
        os.umask(old)
    for name in ("t.png", "t.strace"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o666 & ~umask, name


@pytest.mark.parametrize(
    "argv",
    [
        [*PREDICT, "--seed", "-1"],
        ["replay", "missing.strace", "--arch", "mesh", "--seed", "-1"],
        ["pause-bench", "--instance", "r5.metal", "--seed", "-1"],
        ["trace", "synth", "--strategy", "per-layer", "--out", "{}", "--seed", "-1"],
        ["calibrate", "missing-data", "--out", "{}", "--seed", "-1"],
    ],
)
def test_a_negative_seed_is_a_usage_error(capsys, tmp_path, argv):
    out_file = tmp_path / "out.json"
    argv = [str(out_file) if a == "{}" else a for a in argv]
    with pytest.raises(SystemExit) as e:
        main(argv)
    out, err = capsys.readouterr()
    assert e.value.code == 2 and out == "" and "Traceback" not in err
    lines = err.splitlines()
    assert lines[0].startswith("usage: cohsim ")
    assert [x for x in lines if "error:" in x] == [lines[-1]]
    assert lines[-1].endswith("error: argument --seed: '-1' is not a non-negative integer")
    assert list(tmp_path.iterdir()) == []


def test_the_checks_and_writing(tmp_path):
    check_file(str(tmp_path / "b.txt"))
    check_dir(str(tmp_path / "new"))
    with pytest.raises(CohsimError, match="no such directory"):
        check_file(str(tmp_path / "a" / "b.txt"))
    assert list(tmp_path.iterdir()) == []  # checking writes nothing
    with pytest.raises(CohsimError, match="is a directory"):
        check_file(str(tmp_path))
    with pytest.raises(CohsimError, match=f"{tmp_path}/x: cannot write: No such file"):
        with writing(tmp_path / "x"):
            open(tmp_path / "missing" / "x", "w")  # noqa: SIM115


def test_every_command_is_registered_by_the_module_app_names():
    """app.COMMANDS (a command line imports only its own cli module) lists every command the
    whole parser has, each registered by the module it names."""
    import argparse

    from cohsim.cli import app

    def commands(parser: argparse.ArgumentParser) -> list[str]:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return list(sub.choices)

    assert commands(app.build_parser()) == list(app.COMMANDS)
    for name in app.COMMANDS:
        assert name in commands(app.build_parser(name))
        assert app._command(["--json", name, "x"]) == name
    assert app._command(["--version"]) is None
