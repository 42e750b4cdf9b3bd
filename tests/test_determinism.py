"""Same config and seed, same results; a different seed changes random choices; a run stepped
in small increments is the run done in one go; two simulations stepped in turns in one process
do not interfere."""

from __future__ import annotations

import time

import pandas as pd
import pytest
from conftest import run

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.core.engine import Engine
from uno.core.units import PS_PER_US

PERMUTATION = [
    "topo=fat_tree",
    "topo.k=4",
    "workload=permutation",
    "workload.size_bytes=500000",
    "lb=ecmp",
]


def test_same_seed_gives_identical_flows_parquet(tmp_path):
    run(PERMUTATION + ["seed=3"], out_dir=tmp_path / "a")
    run(PERMUTATION + ["seed=3"], out_dir=tmp_path / "b")
    a = pd.read_parquet(tmp_path / "a" / "flows.parquet")
    b = pd.read_parquet(tmp_path / "b" / "flows.parquet")
    pd.testing.assert_frame_equal(a, b)
    assert a["finish_ps"].notna().all()


def used_ports(result) -> set[str]:
    ports = result.tables["ports"]
    return set(ports.loc[ports.arrivals > 0, "port"])


def test_different_seed_changes_ecmp_choices():
    # fixed flows (explicit workload), so only ECMP entropies and switch salts depend on the seed
    flows = ",".join(f"{{src:{i},dst:{15 - i},size_bytes:200000}}" for i in range(8))
    base = ["topo=fat_tree", "topo.k=4", "workload=flows", f"workload.flows=[{flows}]", "lb=ecmp"]
    a = run(base + ["seed=1"])
    b = run(base + ["seed=2"])
    assert used_ports(a) != used_ports(b)
    assert used_ports(a) == used_ports(run(base + ["seed=1"]))


# ---- stepping: Engine.run_until called repeatedly, Simulation.start/advance/finish ----------
def engine_trace(steps_ps: list[int]) -> tuple[list, int]:
    """Trace of a small engine scenario run through ``run_until(t, stop)`` for each t in turn:
    fast calls (some scheduling others at the same time, i.e. during the boundary's processing),
    two SimPy processes, and a stop event triggered at t=200 alongside other events."""
    eng = Engine()
    stop = eng.event()
    trace = []

    def chain(i):
        trace.append(("call", eng.now, i))
        if i < 60:
            eng.call_in(0 if i % 3 == 0 else 7, chain, i + 1)

    def ticker(name, period_ps):
        while True:
            yield eng.timeout(period_ps)
            trace.append((name, eng.now))

    def stopper():
        yield eng.timeout(200)
        stop.succeed()
        trace.append(("stop", eng.now))

    eng.call_at(0, chain, 0)
    eng.process(ticker("every5", 5))
    eng.process(ticker("every10", 10))
    eng.process(stopper())
    for t in steps_ps:
        eng.run_until(t, stop)
    return trace, eng.now


def test_engine_run_until_in_steps_is_one_run():
    whole, end = engine_trace([300])
    assert end == 200 and whole[-1][0] != "stop"  # entries due at 200 behind the stop event
    assert ("stop", 200) in whole and ("every10", 200) in whole
    # every step boundary on an event time (1 ps steps), off them (7 ps), and far past the stop
    for steps in (list(range(301)), list(range(0, 301, 7)), [0, 199, 200, 250, 10**6]):
        assert engine_trace(steps) == (whole, end)


#: a reduced mixed incast with ECN marking, spraying and the recorder on (a SimPy process
#: whose samples fall on the step boundaries)
INCAST = [
    "topo.k=4",
    "topo.wan_delay_us=20",
    "workload.size_bytes=1000000",
    "cc=dctcp",
    "lb=spray",
    "engine.sample_interval_us=10",
    "engine.queue_ports=[all]",
]


def stepped(sim, step_ps: int):
    """Run ``sim`` by ``advance`` calls of ``step_ps``; returns (result, number of steps)."""
    sim.start()
    steps = 1
    while not sim.advance(sim.engine.now + step_ps):
        steps += 1
    return sim.finish(), steps


def test_a_run_advanced_in_small_steps_matches_one_run():
    cfg = to_run_config(uno.compose(INCAST))
    whole = build_simulation(cfg).run()
    steps_result, n_steps = stepped(build_simulation(cfg), PS_PER_US)
    assert n_steps > 100
    assert whole.flows["finish_ps"].notna().all() and whole.flows["ecn_acks"].sum() > 0
    pd.testing.assert_frame_equal(steps_result.flows, whole.flows)
    for name in ("ports", "queues", "rates", "cwnd"):
        pd.testing.assert_frame_equal(steps_result.tables[name], whole.tables[name], obj=name)
    assert steps_result.summary["run"]["sim_time_us"] == whole.summary["run"]["sim_time_us"]
    assert steps_result.summary["packets"] == whole.summary["packets"]


def test_a_run_cut_at_max_time_in_steps_matches_one_run():
    cfg = to_run_config(uno.compose(INCAST + ["engine.max_sim_time_ms=0.5"]))
    whole = build_simulation(cfg).run()
    # steps that do not divide max_sim_time: the last one is capped at it
    steps_result, _ = stepped(build_simulation(cfg), 3 * PS_PER_US + 1)
    assert whole.flows["finish_ps"].isna().any()
    assert steps_result.summary["run"]["sim_time_us"] == whole.summary["run"]["sim_time_us"] == 500
    pd.testing.assert_frame_equal(steps_result.flows, whole.flows)
    pd.testing.assert_frame_equal(steps_result.tables["ports"], whole.tables["ports"])


def test_two_simulations_in_one_process_match_each_alone():
    cfg_a = to_run_config(uno.compose(PERMUTATION + ["seed=1"]))
    cfg_b = to_run_config(uno.compose(PERMUTATION + ["seed=2", "lb=spray"]))
    alone_a = build_simulation(cfg_a).run().flows
    alone_b = build_simulation(cfg_b).run().flows
    # stepped in turns, 5 us of simulated time each (a run lasts about 130 us), until both
    # are over
    sims = {"a": build_simulation(cfg_a), "b": build_simulation(cfg_b)}
    steps = {"a": 0, "b": 0}
    for sim in sims.values():
        sim.start()
    running = dict(sims)
    while running:
        for name, sim in list(running.items()):
            steps[name] += 1
            if sim.advance(sim.engine.now + 5 * PS_PER_US):
                del running[name]
    assert min(steps.values()) > 10  # really interleaved
    pd.testing.assert_frame_equal(alone_a, sims["a"].finish().flows)
    pd.testing.assert_frame_equal(alone_b, sims["b"].finish().flows)


def test_stepping_wall_time_counts_only_advance_calls():
    cfg = to_run_config(uno.compose(PERMUTATION + ["seed=1"]))
    sim = build_simulation(cfg)
    sim.start()
    in_calls_s = 0.0  # the time spent inside advance(), as the caller measures it

    def advance(until_ps: int) -> bool:
        nonlocal in_calls_s
        t0 = time.perf_counter()
        try:
            return sim.advance(until_ps)
        finally:
            in_calls_s += time.perf_counter() - t0

    advance(10 * PS_PER_US)
    time.sleep(0.2)  # the caller's own time between steps is not the simulator's
    with pytest.raises(ValueError, match="before the current time"):
        advance(5 * PS_PER_US)
    while not advance(sim.engine.now + 100 * PS_PER_US):
        pass
    result = sim.finish()
    # a bound the caller's clock gives whatever the machine's load: counting the sleep would
    # put the run's wall time 0.2 s above the time spent in the calls
    assert 0 < result.summary["run"]["wall_s"] <= in_calls_s
    assert result.flows["finish_ps"].notna().all()
