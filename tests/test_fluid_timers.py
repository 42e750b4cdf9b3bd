"""Retransmission timers beyond the end of a flow's delay line wait apart
(:mod:`uno.fluid.timers`): each enters its line at its step, and the run is the one in which
every timer was filed in the lines."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import uno
from uno.fluid import columns as C
from uno.fluid.arrays import ring_pool
from uno.fluid.timers import drain_far_timers, file_far_timer, rescale_far_timers


def _lines(n_flows: int, length: int, longest: int):
    """``n_flows`` lines of ``length`` slots (growing to ``longest``), each taken, and a
    calendar of ``longest`` steps."""
    pool = ring_pool(np.full(n_flows, longest, dtype=np.int64),
                     np.full(n_flows, length, dtype=np.int64))  # fmt: skip
    pool.ptr[:] = np.arange(n_flows) * length
    pool.top[0] = n_flows * length
    ring = np.zeros((n_flows * (length + 2 * longest), C.N_R))
    calendar = np.zeros((longest, 1), dtype=np.uint64)
    fs = np.zeros((n_flows, C.N_FS))
    return pool, ring, calendar, fs


@pytest.mark.parametrize("twin", [False, True])
def test_each_timer_enters_its_line_at_its_step(twin):
    """Timers beyond the line's end go to the heap, and so do a flow's later ones while it
    has any there; each enters its flow's slot at its own step, no sooner, and a finished
    flow's (no line) are dropped."""
    file = file_far_timer.py_func if twin else file_far_timer
    drain = drain_far_timers.py_func if twin else drain_far_timers
    pool, ring, calendar, fs = _lines(3, 16, 64)
    rng = np.random.default_rng(5)
    expected = {}
    assert not file(pool, 0, 0, 15, 1.0)  # (within the line: the line holds it)
    for i in range(40):
        f, lag = int(rng.integers(0, 3)), int(rng.integers(16, 60))
        assert file(pool, f, 0, lag, float(i + 1))
        expected[(f, lag)] = expected.get((f, lag), 0.0) + i + 1
    assert file(pool, 1, 0, 3, 0.5)  # (flow 1 has timers apart: this one follows them)
    expected[(1, 3)] = 0.5
    pool.ptr[2] = -1  # flow 2 finished: its timers are dropped
    for k in range(64):
        drain(k, fs, ring, pool, calendar)
        for f in (0, 1):
            got = ring[pool.ptr[f] + k % 16, C.R_TIMEOUT]
            assert got == expected.get((f, k), 0.0), (f, k)
            assert bool(int(calendar[k, 0]) >> f & 1) == ((f, k) in expected)
            ring[pool.ptr[f] + k % 16, C.R_TIMEOUT] = 0.0  # (the step reads it)
        assert not ring[:, C.R_TIMEOUT].any()
    assert pool.far_meta[0] == 0 and (pool.far_count == 0).all()


@pytest.mark.parametrize("twin", [False, True])
def test_timers_apart_move_with_the_steps_size(twin):
    """When the step grows 4-fold a timer apart moves to the coarse step holding its step, and
    back to the first fine step of that span when it shrinks; the heap stays ordered (steps
    that meet, by filing)."""
    file = file_far_timer.py_func if twin else file_far_timer
    rescale = rescale_far_timers.py_func if twin else rescale_far_timers
    pool, ring, calendar, fs = _lines(2, 16, 64)
    for f, lag, nbytes in ((0, 43, 1.0), (1, 41, 2.0), (0, 17, 3.0), (1, 30, 4.0)):
        file(pool, f, 0, lag, nbytes)
    rescale(pool, 4, False)
    rows = sorted((int(step), int(f), nbytes) for step, _, f, nbytes in pool.far[:4])
    assert rows == [(4, 0, 3.0), (7, 1, 4.0), (10, 0, 1.0), (10, 1, 2.0)]
    for k in range(10):
        drain_far_timers(k, fs, ring, pool, calendar)
    assert pool.far[0, [0, 1, 2]].tolist() == [10, 0, 0]  # (the first filed of step 10)
    drain_far_timers(10, fs, ring, pool, calendar)
    got = {(f, k): ring[pool.ptr[f] + k % 16, C.R_TIMEOUT] for f in (0, 1) for k in (4, 7, 10)}
    assert got == {(0, 4): 3.0, (1, 4): 0.0, (0, 7): 0.0, (1, 7): 4.0, (0, 10): 1.0, (1, 10): 2.0}
    file(pool, 0, 0, 20, 5.0)
    rescale(pool, 4, True)
    assert pool.far[0, 0] == 80


def test_timers_apart_change_no_run_and_keep_the_lines_short():
    """The default incast in the fluid engine (its flows' timeouts, inter-DC ones included):
    the same flows table as with every timer filed in the lines (no room apart), and fewer
    rows of the ring handed out."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = to_run_config(uno.compose(["engine.kind=fluid", "engine.progress=false",
                                     "engine.sample_interval_us=0"]))  # fmt: skip
    apart, inline = build_simulation(cfg), build_simulation(cfg)
    inline.ring_pool = inline.ring_pool._replace(far=np.zeros((0, 4)))
    a, b = apart.run(), inline.run()
    assert a.flows["timeouts"].sum() > 0
    assert apart.ring_pool.far_meta[1] > 0 and apart.ring_pool.far_meta[0] == 0
    assert apart.ring_pool.top[0] < inline.ring_pool.top[0]
    pd.testing.assert_frame_equal(a.tables["flows"], b.tables["flows"])
