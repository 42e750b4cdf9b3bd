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


def test_a_cold_kernel_is_announced_before_its_compilation(tmp_path, caplog):
    """A kernel in no cache compiles for minutes at 0% progress: the run says so first;
    a kernel compiled already (in the process or on disk) is not announced."""
    import logging
    from types import SimpleNamespace as NS

    from uno.core.jit_cache import announce_compile, cached

    index = tmp_path / "kernel.nbi"
    kernel = NS(overloads={}, _cache=NS(_cache_file=NS(_index_path=str(index))))
    log = logging.getLogger("uno.test.compile")
    with caplog.at_level(logging.INFO, logger="uno.test.compile"):
        announce_compile((kernel,), "the test's kernels", log)
    assert not cached(kernel) and "compiling the test's kernels" in caplog.text
    index.write_bytes(b"")  # (compiled into the cache on disk)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="uno.test.compile"):
        announce_compile((kernel,), "the test's kernels", log)
    assert cached(kernel) and caplog.text == ""
    index.unlink()
    assert cached(NS(overloads={"sig": 1}, _cache=None))  # (loaded in this process)
    for kind in ("fluid", "maxmin", "hybrid"):
        extra = ["engine.hybrid_packet_tags=[intra]"] if kind == "hybrid" else []
        cfg = uno.api.to_run_config(uno.compose([*INCAST, f"engine.kind={kind}", *extra]))
        assert build_simulation(cfg).kernels(), kind
    from uno.net.compiled import loop

    compiled = uno.api.to_run_config(uno.compose([*INCAST, "engine.dataplane=compiled"]))
    assert build_simulation(compiled).kernels() == (loop.run,)
    python = uno.api.to_run_config(uno.compose([*INCAST, "engine.dataplane=python"]))
    assert build_simulation(python).kernels() == ()


def test_the_hybrids_tally_holds_its_packet_events_and_the_coupling():
    over = [*INCAST, "engine.kind=hybrid", "engine.hybrid_packet_tags=[inter]"]
    sim = build_simulation(uno.api.to_run_config(uno.compose(over)))
    result = sim.run()
    tally = sim.fluid.scratch.tally
    # (the steps it ran, which the summary reports; its step index also jumps over the idle
    # time after the intra-DC flows, and counts the last step's size)
    run = result.summary["run"]
    assert 0 < tally[TALLY.steps] == run["fluid_steps"]
    assert tally[TALLY.steps] * run["fluid_step_us"] < run["fluid_end_us"]
    for part in ("packet_events", "packets_in", "state_out", "links", "file_sends"):
        assert tally[getattr(TALLY, part)] > 0, part
    assert (tally >= 0).all()
