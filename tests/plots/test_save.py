"""Writing a figure: atomically, the same bytes each time, one error line when it cannot."""

from __future__ import annotations

import os
import stat

import matplotlib.pyplot as plt
import pytest

from cohsim.errors import CohsimError
from cohsim.plots.save import FORMATS, save_figure


def _figure():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    return fig


def test_writes_each_format_and_the_same_png_bytes(tmp_path):
    heads = {".png": b"\x89PNG", ".svg": b"<?xml", ".pdf": b"%PDF"}
    for suffix in FORMATS:
        save_figure(_figure(), tmp_path / f"a{suffix}")
        assert (tmp_path / f"a{suffix}").read_bytes().startswith(heads[suffix])
    save_figure(_figure(), tmp_path / "b.png")
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.pdf", "a.png", "a.svg", "b.png"]


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o002])
def test_a_plot_has_a_plain_files_mode(tmp_path, umask):
    """Like every other output (a plain write: 0666 less the umask), not mkstemp's 0600."""
    old = os.umask(umask)
    try:
        for suffix in FORMATS:
            save_figure(_figure(), tmp_path / f"a{suffix}")
            assert stat.S_IMODE((tmp_path / f"a{suffix}").stat().st_mode) == 0o666 & ~umask
    finally:
        os.umask(old)


@pytest.mark.parametrize(
    "name, message",
    [
        ("plot.txt", "plot file must end in .png, .svg, .pdf"),
        ("dir.png", "cannot write the plot: Is a directory"),
        ("file/under.png", "cannot write the plot: Not a directory"),
        ("missing/under.png", "cannot write the plot: no such directory: .*missing"),
    ],
)
def test_a_refused_write_is_one_error_and_leaves_nothing(tmp_path, name, message):
    (tmp_path / "dir.png").mkdir()
    (tmp_path / "file").write_text("")
    before = sorted(p.name for p in tmp_path.iterdir())
    fig = _figure()
    with pytest.raises(CohsimError, match=message) as e:
        save_figure(fig, tmp_path / name)
    assert str(tmp_path / name) in str(e.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not plt.fignum_exists(fig.number)  # closed either way
