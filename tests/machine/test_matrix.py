"""The matrix reader and the matrix index."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import C2C_DIR

from cohsim.errors import CohsimError
from cohsim.machine.matrix import matrix_index, read_matrix


def test_every_matrix_reads_as_a_symmetric_positive_matrix():
    files = sorted(C2C_DIR.glob("*.csv"))
    assert len(files) == 17
    for f in files:
        m = read_matrix(f)
        off = ~np.eye(len(m), dtype=bool)
        assert np.allclose(m, m.T, equal_nan=True)
        assert (m[off] > 0).all() and np.isnan(np.diag(m)).all()


def test_index_names_every_matrix_once():
    index = matrix_index(C2C_DIR)
    assert sorted(i.path.name for i in index) == sorted(f.name for f in C2C_DIR.glob("*.csv"))


def test_known_values():
    m = read_matrix(C2C_DIR / "aws_c5.metal_xeon-8275CL_2s.csv")
    assert m.shape == (96, 96)
    assert m[1, 0] == pytest.approx(43.02042555555555)


@pytest.mark.parametrize(
    "text, message",
    [
        (",,\n1.0,,\n2.0,3.0\n", r":3: row has 2 fields, expected 3 \(ragged"),
        (",,\n1.0,,\n2.0,fast,\n", r":3: column 2 is not a number: 'fast'"),
        (",,\n1.0,5.0,\n2.0,3.0,\n", r":2: column 2 is on or above the diagonal"),
        (",,\n,,\n2.0,3.0,\n", r":2: column 1 is empty below the diagonal"),
        (",,\n1.0,,\n-2.0,3.0,\n", r":3: column 1 must be a positive latency"),
        ("1.0\n", r"at least 2 rows"),
    ],
)
def test_bad_matrices_name_file_and_row(tmp_path, text, message):
    p = tmp_path / "bad.csv"
    p.write_text(text)
    with pytest.raises(CohsimError, match=message) as err:
        read_matrix(p)
    assert str(err.value).startswith(str(p))


def test_missing_matrix(tmp_path):
    with pytest.raises(CohsimError, match="no such file"):
        read_matrix(tmp_path / "none.csv")
