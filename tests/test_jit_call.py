"""uno.core.jit_call: the compiled entry for fixed argument types gives what the dispatcher
gives, and the Numba methods it relies on exist (Numba is pinned below the next release)."""

import numpy as np
from numba import njit

from uno.core.jit_call import direct_entry


@njit(cache=False)
def _scaled_sum(k, row, now_ps, flag):
    total = 0.0
    for x in row:
        total += x
    return total * k + now_ps, flag


def test_direct_entry_matches_the_dispatcher():
    row = np.arange(5, dtype=np.float64)
    entry = direct_entry(_scaled_sum, 0, row, 0, False)
    assert entry is not _scaled_sum
    for k, now_ps, flag in ((3, 10, True), (-2, 1 << 40, False)):
        assert entry(k, row, now_ps, flag) == _scaled_sum(k, row, now_ps, flag)


def test_direct_entry_writes_through_to_the_array():
    @njit(cache=False)
    def bump(row, i):
        row[i] += 1.0
        return row[i]

    row = np.zeros(3)
    entry = direct_entry(bump, row, 0)
    assert entry(row, 2) == 1.0 and row.tolist() == [0.0, 0.0, 1.0]


def test_the_controller_calls_the_law_through_one_entry():
    from uno.cc.adapter import _ack_entry

    assert _ack_entry() is _ack_entry()
    assert callable(_ack_entry())
