"""Feedback in blocks for a law that reads a batch's least RTT sample (GEMINI's RTT_min)."""

from __future__ import annotations

import numpy as np

import uno
import uno.api
from uno.build import build_simulation
from uno.fluid import columns as C
from uno.fluid.state import RingPool


def test_a_blocks_batch_carries_the_least_rtt_sample_of_its_steps():
    """On the Uno Fig. 10 traffic with GEMINI (300 flows), an inter-DC flow files its feedback
    in blocks of steps. Each step it sends in, its RTT is sampled (base RTT, the queueing before
    its wire link and on its ACKs' way back: ``FS_BASE_RTT + FS_QBEFORE + FS_RDELAY`` after
    the sample); the batch its block files carries the least of those samples in its delay
    line's ``R_RTTMIN``, as the ACKs of every step's packets would, not only the sample of
    the block's last step. Some blocks here see a queue move between their steps, so their
    least is below their last sample. A slot another batch's ACKs share keeps the lesser of
    the two samples (a batch sent later whose RTT sample fell by more than the time between)."""
    cfg = uno.api.to_run_config(uno.compose([
        "experiment=fig10_load", "scheme=gemini", "workload.n_flows=300", "engine.kind=fluid",
        "engine.progress=false", "engine.sample_interval_us=0",
    ]))  # fmt: skip
    sim = build_simulation(cfg)
    fs = sim.fs
    assert (sim.block[C.BL.steps, : len(sim.flows)] > 1).any()  # (GEMINI's inter-DC flows)
    filed = below_last = shared = 0
    for k in range(8000):
        least = fs[:, C.FS_BLOCK_RTTMIN].copy()
        if sim.advance(k, k + 1) <= k:
            break
        pool = RingPool(*sim.ring_pool)
        done = np.flatnonzero((least > 0.0) & (fs[:, C.FS_BLOCK_RTTMIN] == 0.0))
        for f in done:
            if fs[f, C.FS_STATE] != 1.0:
                continue  # (finished in its block: nothing filed)
            last = fs[f, C.FS_BASE_RTT] + fs[f, C.FS_QBEFORE] + fs[f, C.FS_RDELAY]
            start, n = pool.ptr[f], pool.length[f]
            line = sim.ring[start : start + n, C.R_RTTMIN]
            want = min(least[f], last)
            held = np.isclose(line, want, rtol=0.0, atol=1e-3).any()
            if least[f] < last - 1.0:  # (the block's least, not its last sample)
                assert held, (k, f)
                below_last += 1
            elif not held:  # its slot holds another batch's lesser sample
                assert ((line > 0.0) & (line < want)).any(), (k, f)
                shared += 1
            filed += 1
    assert filed > 1000
    assert below_last > 10
    assert shared < 0.001 * filed
