"""Delay lines with tails (``engine.fluid_line_slots``, uno/fluid/rings.py): a line holds at
most that many steps; what is due beyond it waits in the flow's tail, slots of several steps
each spread over their steps as they come. A tail of one-step slots is the line itself, bit for
bit; a bounded line gives the run of unbounded ones within the tail's resolution, in bounded
memory."""

from __future__ import annotations

import numpy as np
import pytest

import uno
from uno.build import build_simulation
from uno.fluid import arrays
from uno.fluid import kernels as K
from uno.fluid.arrays import ring_pool, ring_rows_bound
from uno.fluid.rings import fit_lag, line_row, pour_tail, ring_give, ring_take

#: the default incast: its inter-DC flows' round trips span ~1,500 steps of 1.75 us
INCAST = ["engine.kind=fluid", "engine.sample_interval_us=0"]


def run_fluid(overrides):
    sim = build_simulation(uno.api.to_run_config(uno.compose(overrides)))
    sim.run()
    fct = sim.fs[:, K.FS_FINISH] - sim.fs[:, K.FS_START]
    return sim, fct


def test_a_tail_of_single_steps_is_the_line_itself(monkeypatch):
    """Tails whose slots are one step each hold what a longer line would, at the same steps:
    the run is the unbounded lines' run, bit for bit (every write, read, loss walk and
    clearing that goes through the tail lands where the line's slot would have been)."""
    _, unbounded = run_fluid(INCAST)

    def single_steps(reach, cap, line_slots):
        return (reach > cap).astype(np.int64), int(reach.max()) + 2

    monkeypatch.setattr(arrays, "tail_geometry", single_steps)
    sim, bounded = run_fluid([*INCAST, "engine.fluid_line_slots=64"])
    pool = sim.ring_pool
    assert pool.length.max() <= 64 < pool.reach.max()
    assert (pool.tail_width > 0).sum() >= 2  # (the inter-DC flows')
    assert np.array_equal(bounded, unbounded)


def test_a_bounded_line_gives_the_unbounded_run_in_bounded_memory():
    """Lines of at most 64 slots (tails of 16-step slots for ~1,800-step reaches) give every
    flow's FCT within 10% of unbounded lines' and the mean within 3%, and the rows the pool
    ever handed out stay within a line's growth and a tail per flow."""
    _, unbounded = run_fluid(INCAST)
    sim, bounded = run_fluid([*INCAST, "engine.fluid_line_slots=64"])
    pool = sim.ring_pool
    assert sim.n_finished == len(sim.flows)
    assert np.isclose(sim.fs[:, K.FS_DELIVERED], sim.fs[:, K.FS_SIZE], rtol=1e-9).all()
    tails = pool.tail_width > 0
    assert tails.any() and (pool.tail_width[tails] == 16).all()
    # (a line's growth takes 8, 16, 32 then 64 slots: under two lines' worth)
    assert pool.top[0] <= ring_rows_bound(pool) <= len(sim.flows) * (2 * 64 + pool.tail_meta[0])
    assert np.abs(bounded / unbounded - 1).max() < 0.10
    assert abs(bounded.mean() / unbounded.mean() - 1) < 0.03


@pytest.mark.parametrize("twin", [False, True])
def test_a_tail_slot_comes_back_spread_over_its_steps(twin):
    """A delay beyond the line (a 64-step line, a reach of 1,000 steps: 16-step tail slots)
    is filed at the first step of the tail slot that holds it; as that step comes its bytes
    spread evenly over the slot's 16 steps, the latest send and the last ACK's arrival copied
    to each, and its calendar bits and the flow's latest due steps follow; a finished flow's
    tail goes back to the pool zeroed."""
    fit, row_of, pour, give = (
        (fn.py_func if twin else fn) for fn in (fit_lag, line_row, pour_tail, ring_give)
    )
    pool = ring_pool(np.array([1000]), np.array([64]), K.RING_FULL, line_slots=64)
    assert pool.cap[0] == 64 and pool.tail_width[0] == 16 and pool.tail_meta[0] == 65
    ring = np.zeros((64 + 65 + 64, K.N_R))
    calendar = np.zeros((1024, 1), dtype=np.uint64)
    fs = np.zeros((1, K.N_FS))
    ring_take(pool, 0)
    k = 10
    lag = fit(0, k, 500, ring, pool)
    assert lag == 496 - k  # (the tail slot of steps 496 to 511)
    row = row_of(pool, 0, k, lag)
    assert pool.tail_ptr[0] >= 0 and row == pool.tail_ptr[0] + 496 // 16 % 65
    ring[row, K.R_ACK] += 160.0
    ring[row, K.R_ARRIVE] = 7.0e6
    fs[0, K.FS_DUE_LAST] = fs[0, K.FS_ACK_LAST] = k + lag
    assert fit(0, k, 40, ring, pool) == 40  # (within the line: its own step)
    pour(ring, pool, calendar, fs, 0, 496)
    line = [pool.ptr[0] + step % 64 for step in range(496, 512)]
    assert np.allclose(ring[line, K.R_ACK], 10.0) and (ring[line, K.R_ARRIVE] == 7.0e6).all()
    assert not ring[row].any()
    assert all(calendar[step % 1024, 0] & np.uint64(1) for step in range(496, 512))
    assert fs[0, K.FS_DUE_LAST] == fs[0, K.FS_ACK_LAST] == 511
    lag = fit(0, 496, 2000, ring, pool)  # (beyond the flow's reach: the slot of its longest)
    assert lag == 1488 - 496 and row_of(pool, 0, 496, lag) >= pool.tail_ptr[0]
    ring[row_of(pool, 0, 496, lag), K.R_ACK] = 1.0
    calendar[(496 + lag) % 1024, 0] |= np.uint64(1)
    fs[0, K.FS_DUE_LAST] = 496 + lag
    give(ring, pool, 0, 496, fs, calendar)
    assert pool.ptr[0] == -1 and pool.tail_ptr[0] == -1
    assert not ring[64:].any()  # (its line's slots after step 496 and its tail, zeroed)


def test_a_delay_beyond_the_longest_line_is_heard_and_timed_at_its_end():
    """Eight fluid flows of 1 MB into one host of a lossless k=4 fat tree, ECN off: PFC alone
    holds them, and a queue upstream of a port paused most of the time foresees a drain far
    slower than the one that comes (the paused share's mean). A batch's delay beyond what its
    line holds is heard at the line's longest (``longest_lag``), and its ACKs arrive then: no
    flow finishes after the run's end (timed by the foreseen delay, the last two finished at
    1,570 us in a run that ended at 1,101 us)."""
    flows = ",".join(f"{{src:{s},dst:0,size_bytes:1000000}}" for s in range(4, 12))
    over = ["topo=fat_tree", "topo.k=4", "workload=flows", f"workload.flows=[{flows}]",
            "lb=ecmp", "cc=dctcp", "switch.pfc.enabled=true", "switch.ecn.enabled=false",
            *INCAST]  # fmt: skip
    result = uno.run(uno.compose(over))
    end_ps = result.summary["run"]["sim_time_us"] * 1e6
    finish = result.flows["finish_ps"].to_numpy(dtype=float)
    assert np.isfinite(finish).all() and finish.max() <= end_ps + 1.0
    assert result.summary["pfc"]["lossless_violations"] == 0
