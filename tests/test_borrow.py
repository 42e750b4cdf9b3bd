"""Borrowed arrays (uno.core.borrow): the same data without the owner's reference count."""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.core.borrow import borrowed


@njit
def _write_through_view(a, b):
    a, b = borrowed(a), borrowed(b)
    row = b[1, 1:]  # a view of a borrowed array is borrowed too
    row[:] += 1.0
    a[2] = 7
    return a.sum() + b.sum()


def test_a_borrowed_array_reads_and_writes_the_callers_data():
    a = np.arange(5, dtype=np.int64)
    b = np.zeros((3, 4))
    total = _write_through_view(a, b)
    assert a.tolist() == [0, 1, 7, 3, 4]
    assert b[1].tolist() == [0.0, 1.0, 1.0, 1.0] and b.sum() == 3.0
    assert total == 15 + 3.0


def test_borrowed_is_the_identity_in_python():
    a = np.ones(3)
    assert borrowed(a) is a
    assert _write_through_view.py_func(np.zeros(3, dtype=np.int64), np.zeros((2, 2))) == 8.0
