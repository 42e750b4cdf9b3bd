"""A run creates no reference cycles, so pausing the cyclic garbage collector during the run
(uno.core.sim.Simulation.run) cannot leak memory."""

from __future__ import annotations

import gc

import uno
from uno.api import to_run_config
from uno.build import build_simulation


def test_a_run_leaves_no_cyclic_garbage():
    cfg = uno.compose(["lb=spray", "cc=uno", "switch=phantom", "workload.size_bytes=2000000"])
    sim = build_simulation(to_run_config(cfg))
    gc.collect()
    sim.run()
    assert gc.isenabled()
    gc.disable()
    try:
        assert gc.collect() == 0
    finally:
        gc.enable()
