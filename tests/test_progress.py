"""Progress: a bar on stderr when asked (or on a terminal), none in batch runs; progress lines in
the run's log from every engine while it runs; a percentage toward what ends the run (the
required flows' bytes, or the stop time only when that ends the run); watching never changes
the run; kernel calls return to Python within their wall budget, whatever the chunks the
results are the same, and Ctrl-C stops a run within seconds leaving no result folder."""

from __future__ import annotations

import logging
import re
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from conftest import SMALL_INCAST, uno_cli

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.core.budget import WallBudget
from uno.metrics.progress import (
    COMPLETION,
    STOP_TIME,
    Progress,
    Snapshot,
    progress_wanted,
    run_fraction,
)

SMALL = SMALL_INCAST

#: one small run per engine kind, each long enough (tenths of a second) to be watched as it goes
ENGINE_RUNS = {
    "packet-python": [*SMALL, "engine.dataplane=python"],
    "packet-compiled": [*SMALL, "engine.dataplane=compiled", "workload.size_bytes=100000000"],
    "fluid": [*SMALL, "engine.kind=fluid", "workload.size_bytes=40000000"],
    "hybrid": ["engine.kind=hybrid", "topo=dumbbell", "cc=dctcp", "lb=ecmp", "workload=flows",
               "workload.flows=[{src:1,dst:4,size_bytes:500000000,tag:pkt},"
               "{src:2,dst:4,size_bytes:200000000}]",
               "engine.hybrid_packet_tags=[pkt]"],
    "maxmin": ["topo.k=4", "workload=mixed", "workload.n_flows=2000", "engine.kind=maxmin",
               "engine.max_sim_time_ms=10000"],
}  # fmt: skip
LINE = re.compile(r"progress: (\d+)% to (completion|the stop time), about \S+ left \(")


def run_cli(args, cwd, env=None):
    return subprocess.run(
        [sys.executable, "-m", "uno.cli", *SMALL, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def watched_run(overrides, **progress_args):
    """Build and run ``overrides`` (unsampled) under a watcher that logs every update; returns
    (the result, the watcher, the progress lines logged while it ran)."""
    cfg = to_run_config(uno.compose([*overrides, "engine.sample_interval_us=0"]))
    sim = build_simulation(cfg)
    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    log = logging.getLogger("uno.test_progress")
    log.setLevel(logging.INFO)
    log.addHandler(handler)
    watcher = Progress(sim, show_bar=False, logger=log, log_every_s=0.0, **progress_args)
    watcher.attach()
    try:
        result = sim.run()
    finally:
        watcher.close()
        log.removeHandler(handler)
    return result, watcher, records


# ---- the bar: on a terminal by default, never in batch ----------------------------------------
def test_the_default_config_leaves_the_bar_to_the_terminal():
    assert uno.compose([]).engine.progress is None


def test_bar_when_asked_and_none_in_batch(tmp_path):
    proc = run_cli(["engine.progress=true", f"out_dir={tmp_path / 'a'}"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "to completion" in proc.stderr and "100%" in proc.stderr
    assert "simulated" in proc.stderr and "flows 4/4" in proc.stderr
    assert "packet-hops/s" in proc.stderr
    # captured output is not a terminal: no bar by default
    proc = run_cli([f"out_dir={tmp_path / 'b'}"], tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_auto_detection(monkeypatch):
    assert progress_wanted(True) and not progress_wanted(False)
    monkeypatch.setenv("CI", "true")
    assert not progress_wanted(None)
    monkeypatch.delenv("CI")
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    assert not progress_wanted(None)
    monkeypatch.delenv("SLURM_JOB_ID")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert progress_wanted(None)


# ---- what the percentage measures --------------------------------------------------------------
def snap(now_ps, done, total=100.0, started=True, late=False) -> Snapshot:
    return Snapshot(now_ps, done, total, started, late, 0, 4, 0, "packet-hops")


def test_run_fraction_measures_toward_what_ends_the_run():
    stop = 1000
    # ahead of the clock: the flows finish first
    assert run_fraction(snap(100, 40.0), stop) == (0.4, COMPLETION)
    # behind the clock once all started: the stop time ends the run first
    assert run_fraction(snap(500, 20.0), stop) == (0.5, STOP_TIME)
    # ... but not while flows are still to start (their bytes are work to come), unless the run
    # is meant to end at its stop time
    assert run_fraction(snap(500, 20.0, started=False), stop) == (0.2, COMPLETION)
    assert run_fraction(snap(500, 20.0, started=False), stop, time_bounded=True) == (
        0.5,
        STOP_TIME,
    )
    # the first round trips deliver nothing yet: no verdict before 1% of the stop time
    assert run_fraction(snap(5, 0.0), stop) == (0.0, COMPLETION)
    # a required flow starting at or after the stop time cannot finish
    assert run_fraction(snap(100, 90.0, late=True), stop) == (0.1, STOP_TIME)
    # the stop time reached ends the run whatever is left; no bytes to measure: the clock
    assert run_fraction(snap(1000, 20.0, started=False), stop) == (1.0, STOP_TIME)
    assert run_fraction(snap(250, 0.0, total=0.0), stop) == (0.25, STOP_TIME)
    assert run_fraction(snap(10, 100.0), stop) == (1.0, COMPLETION)


@pytest.mark.parametrize("kind", list(ENGINE_RUNS))
def test_every_engine_logs_its_way_to_completion_while_it_runs(kind):
    """Every engine gives the interpreter back while it runs (a compiled kernel within its wall
    budget), so the watcher's thread logs lines between 0% and 100%. The runs end when their
    flows finish, long before the stop time: the measure is the bytes delivered, climbing to
    100% at the end, while the stop-time fraction stays below 10%."""
    result, watcher, lines = watched_run(ENGINE_RUNS[kind])
    stop_us = to_run_config(uno.compose(ENGINE_RUNS[kind])).engine.max_sim_time_ms * 1e3
    assert result.summary["run"]["sim_time_us"] < 0.1 * stop_us
    seen = [(int(m.group(1)), m.group(2)) for m in map(LINE.match, lines) if m]
    percents = [p for p, _ in seen]
    assert any(0 < p < 100 for p in percents), lines[-3:]
    assert {ends for _, ends in seen} == {"completion"}
    assert percents == sorted(percents)
    assert watcher.last == (1.0, COMPLETION)


def test_the_log_line_states_the_measure_and_the_time_left():
    class Stub:
        max_time_ps = 1000

        def progress_snapshot(self):
            return snap(100, 25.0)

    now = [0.0]
    records: list[str] = []
    log = logging.getLogger("uno.test_progress.stub")
    log.setLevel(logging.INFO)
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    log.addHandler(handler)
    watcher = Progress(Stub(), show_bar=False, logger=log, log_every_s=3600.0, clock=lambda: now[0])
    watcher.attach()
    try:
        now[0] = 7200.0  # two hours in, a quarter done: six hours left
        watcher.update()
    finally:
        watcher.close()
        log.removeHandler(handler)
    assert records == [
        "progress: 25% to completion, about 6:00:00 left (delivered 25 B of 100 B; simulated "
        "0.0 of 0.0 us; flows 0/4, 0 packet-hops/s)"
    ]


# ---- lines from every engine while it runs; watching changes nothing ---------------------------
def test_watching_does_not_change_the_run():
    cfg = to_run_config(uno.compose([*SMALL, "engine.sample_interval_us=0"]))
    alone = build_simulation(cfg).run()
    watched, _, lines = watched_run(SMALL)
    assert lines and all(line.startswith("progress: ") for line in lines)
    pd.testing.assert_frame_equal(alone.flows, watched.flows)
    assert watched.summary["run"]["events"] == alone.summary["run"]["events"]


def test_a_flow_level_run_is_freed_when_it_returns():
    """The watcher (its thread, the bar) holds the simulation only while it runs: once
    ``uno.run`` returns, reference counting frees a fluid run's arrays (its delay lines: ~100 MiB
    on the 5000-flow Fig. 10 traffic), with the cycle collector off."""
    import gc

    from uno.fluid.engine import FluidSimulation

    cfg = uno.compose(["engine.kind=fluid", "workload.n_intra=2", "workload.n_inter=0",
                       "workload.size_bytes=200000", "engine.sample_interval_us=0"])  # fmt: skip
    gc.collect()
    gc.disable()
    try:
        for progress in (False, True):
            uno.run(cfg, progress=progress)
            # (type(), not isinstance: a dead weak proxy among the objects raises on the latter)
            alive = [o for o in gc.get_objects() if type(o) is FluidSimulation]
            assert not alive, progress
    finally:
        gc.enable()


# ---- kernel calls within a wall budget, results whatever the chunks ----------------------------
class RecordingBudget(WallBudget):
    """A budget that records each call's (units given, units done, wall time)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls: list[tuple[int, int, float]] = []

    def units(self) -> int:
        self._given = super().units()
        return self._given

    def spent(self, done: int) -> float:
        wall = super().spent(done)
        self.calls.append((self._given, done, wall))
        return wall


def test_the_budget_grows_at_most_twice_a_call_and_shrinks_at_once():
    now = [0.0]
    budget = WallBudget(aim_s=1.0, first=4, clock=lambda: now[0])
    given = []
    for cost_s in [1e-3] * 12 + [0.1] * 3:  # the pace drops 100x
        n = budget.units()
        given.append(n)
        now[0] += n * cost_s
        budget.spent(n)
    assert given[:9] == [4, 8, 16, 32, 64, 128, 256, 512, 1000]
    assert given[9:13] == [1000, 1000, 1000, 1000]  # the last one is 100x slower (100 s)...
    assert given[13:] == [10, 10]  # ... and the next take its pace at once: 10 x 0.1 s
    # a call cut short by the engine's own stop is no evidence that longer calls fit
    budget = WallBudget(aim_s=1.0, first=64, clock=lambda: now[0])
    for _ in range(5):
        budget.units()
        now[0] += 0.01
        budget.spent(3)
    assert budget.units() == 64


def test_fluid_kernel_calls_return_within_their_wall_budget():
    """With an injected clock that charges 1 ms a fluid step (steps of the kernel, counted by
    the engine), every kernel call lasts at most the budget's aim (50 ms): the chunks follow the
    wall clock, not a fixed number of steps; and the run is the one of the default chunks."""
    overrides = [*SMALL, "engine.kind=fluid", "engine.sample_interval_us=0"]
    cfg = to_run_config(uno.compose(overrides))
    alone = build_simulation(cfg).run()
    sim = build_simulation(cfg)
    sim.wall_budget = budget = RecordingBudget(aim_s=0.05, clock=lambda: sim.k_done * 1e-3)
    chunked = sim.run()
    assert len(budget.calls) >= sim.k_done / 50 and len(budget.calls) > 10  # (<= 50 steps a call)
    assert max(wall for _, _, wall in budget.calls) <= 0.05 + 1e-9
    assert max(done for _, done, _ in budget.calls) == 50
    pd.testing.assert_frame_equal(alone.flows, chunked.flows)


@pytest.mark.parametrize("kind", ["fluid", "maxmin"])
def test_results_are_the_same_whatever_the_chunks(kind):
    """A clock that makes every call look too long gives calls of one step (or one rate
    computation): the same tables, bit for bit, as the default chunks."""
    overrides = {
        "fluid": ["topo.k=4", "workload=mixed", "workload.n_flows=60", "engine.kind=fluid",
                  "engine.sample_interval_us=20", "cc=dctcp", "lb=ecmp"],
        "maxmin": ENGINE_RUNS["maxmin"],
    }[kind]  # fmt: skip
    cfg = to_run_config(uno.compose(overrides))
    alone = build_simulation(cfg).run()
    sim = build_simulation(cfg)
    ticks = [0.0]

    def slow_clock():
        ticks[0] += 1.0
        return ticks[0]

    sim.wall_budget = budget = RecordingBudget(aim_s=1e-3, first=1, clock=slow_clock)
    chunked = sim.run()
    assert {given for given, _, _ in budget.calls} == {1}
    for name, table in alone.tables.items():
        pd.testing.assert_frame_equal(table, chunked.tables[name], obj=name)
    for key in ("events", "fluid_steps", "maxmin_rate_computations", "sim_time_us"):
        assert alone.summary["run"].get(key) == chunked.summary["run"].get(key)


# ---- Ctrl-C --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "engine",
    [["engine.kind=fluid"], ["engine.dataplane=compiled"],
     ["engine.kind=hybrid", "engine.hybrid_packet_tags=[inter]"]],
    ids=["fluid", "packet-compiled", "hybrid-compiled"],
)  # fmt: skip
def test_ctrl_c_stops_a_long_run_within_seconds_and_leaves_no_result(tmp_path, engine):
    """A run that would take about a minute, interrupted a second into its stepping, ends within
    seconds (a kernel never keeps the interpreter long) with status 130, one line and no
    traceback, and leaves no result folder, complete-looking or partial."""
    out = tmp_path / "run"
    size = "4000000000" if engine[0] == "engine.kind=fluid" else "2000000000"
    args = ["topo.k=4", "workload.n_intra=8", "workload.n_inter=8", f"workload.size_bytes={size}",
            "engine.sample_interval_us=0", "engine.progress=false", f"out_dir={out}", *engine]  # fmt: skip
    proc = uno_cli(args, tmp_path)
    try:
        header = proc.stdout.readline()  # logged once built, right before the run starts
        assert header.startswith("uno run"), header + proc.stderr.read()
        time.sleep(1.5)
        assert proc.poll() is None, "the run ended before it was interrupted"
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        _, err = proc.communicate(timeout=20)
        stopped_s = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert stopped_s < 20
    assert sorted(p.name for p in tmp_path.iterdir()) == []
