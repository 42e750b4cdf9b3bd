"""A run creates no reference cycles, so pausing the cyclic garbage collector during the run
(uno.simulation.Simulation.start) cannot leak memory.

The check must be able to fail: with the collector enabled, any collection during or after the
run (the run re-enables the collector it found enabled) would free cycles before the check
counts them. So the collector is off from before the run until the count, and a second test
injects one cycle per packet to show that the same check catches it."""

from __future__ import annotations

import gc

import pytest

import uno
import uno.transport.sender as sender_module
from uno.api import to_run_config
from uno.build import build_simulation
from uno.core.packet import Packet
from uno.core.units import PS_PER_US

SCENARIO = ["lb=spray", "cc=uno", "switch=phantom", "workload.size_bytes=2000000"]


def cyclic_garbage_of_a_run(overrides: list[str]) -> tuple[int, int]:
    """(objects the collector finds unreachable right after the run, packet-hops of the run),
    with the collector off from before the run to that count."""
    sim = build_simulation(to_run_config(uno.compose(overrides)))
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        gc.collect()  # whatever composing and building left behind
        # every object alive now out of the count (earlier tests' objects that the run's
        # process lets go of, e.g. a plot's, are not the run's garbage)
        gc.freeze()
        sim.start()
        sim.advance(sim.max_time_ps)
        # Counted before finish(), which builds the result tables (pandas): only the engine's
        # own run is under test.
        garbage = gc.collect()
        assert not gc.isenabled(), "the run must leave the collector as it found it (off)"
        result = sim.finish()
        assert not gc.isenabled()
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()
    return garbage, result.summary["run"]["packet_hops"]


@pytest.mark.parametrize("dataplane", ["python", "compiled"])
def test_a_run_leaves_no_cyclic_garbage(dataplane):
    overrides = [*SCENARIO, f"engine.dataplane={dataplane}"]
    # a process's first call of the compiled kernels loads them (Numba's cache, or compiles
    # them), which leaves garbage of Numba's own: a short run first, sampled as the run is
    uno.run(uno.compose([*overrides, "workload.size_bytes=20000"]))
    garbage, hops = cyclic_garbage_of_a_run(overrides)
    assert hops > 10_000
    assert garbage == 0


class _CyclicPacket(Packet):
    """A packet that references itself through a list: a reference cycle per packet. No
    ``__slots__`` here, so instances get a ``__dict__`` to hold the list."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cycle = [self]


def test_the_check_catches_one_cycle_per_packet(monkeypatch):
    monkeypatch.setattr(sender_module, "Packet", _CyclicPacket)
    # (the Python senders make the packets; the kernel's senders make none)
    garbage, hops = cyclic_garbage_of_a_run([*SCENARIO, "engine.dataplane=python"])
    # each delivered data packet leaves its cycle (packet, its __dict__, the list) behind
    assert garbage > 1000


def test_a_failing_run_gives_the_collector_back():
    sim = build_simulation(to_run_config(uno.compose(SCENARIO)))
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        sim.start()
        assert not gc.isenabled()
        sim.advance(10 * PS_PER_US)  # stepping keeps it paused
        assert not gc.isenabled()

        def broken(_arg):
            raise RuntimeError("broken invariant")

        sim.engine.call_at(20 * PS_PER_US, broken)
        with pytest.raises(RuntimeError, match="broken invariant"):
            sim.advance(sim.max_time_ps)
        assert gc.isenabled()
    finally:
        if not was_enabled:
            gc.disable()
