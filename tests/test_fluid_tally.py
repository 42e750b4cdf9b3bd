"""The fluid step loop's tally of where its time goes (uno.fluid.cycles): it counts every
step, every route entry the departures walk, and time in the parts that had work."""

from __future__ import annotations

from conftest import TWO_PLUS_TWO_INCAST as INCAST

import uno
import uno.api
from uno.build import build_simulation
from uno.fluid.cycles import TALLY, cycles


def test_the_tally_counts_the_steps_and_the_parts_that_worked():
    cfg = uno.api.to_run_config(uno.compose([*INCAST, "engine.kind=fluid"]))
    sim = build_simulation(cfg)
    result = sim.run()
    tally = sim.scratch.tally
    assert tally[TALLY.steps] == result.summary["run"]["fluid_steps"] > 0
    assert tally[TALLY.entries] >= tally[TALLY.steps]  # (a flow's bytes cross a link a step)
    for part in ("feedback", "sends", "enlist", "links", "depart", "file_sends"):
        assert tally[getattr(TALLY, part)] > 0, part
    assert (tally >= 0).all()


def test_the_cycle_counter_moves_forward():
    from numba import njit

    @njit
    def two():
        a = cycles()
        b = cycles()
        return a, b

    a, b = two()
    assert b >= a > 0
    assert cycles() <= cycles()
