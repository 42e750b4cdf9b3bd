"""``benchmarks/fluid_speed.py --repeats``: the least engine wall time of the repeats, the
largest peak memory, and the same flows in every repeat (the runs' processes replaced by
canned results here)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    path = ROOT / "benchmarks" / "fluid_speed.py"
    spec = importlib.util.spec_from_file_location("fluid_speed", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def _run(engine_s, process_s, peak_mib, fct_ps=(10.0, 20.0)):
    flows = pd.DataFrame({"flow_id": [0, 1], "cls": ["intra", "inter"], "fct_ps": list(fct_ps)})
    return {"summary": {"run": {"wall_s": engine_s}}, "flows": flows, "wall_s": process_s,
            "peak_mib": peak_mib}  # fmt: skip


def test_repeats_keep_the_least_wall_time_and_the_largest_memory(monkeypatch):
    bench = _bench()
    canned = iter([_run(3.0, 5.0, 100.0), _run(2.0, 4.5, 120.0), _run(2.5, 4.0, 90.0)])
    monkeypatch.setattr(bench, "run_process", lambda overrides: next(canned))
    monkeypatch.setattr(bench, "warm_up", lambda overrides: None)
    run = bench.run_repeated(["x=1"], 3)
    assert run["engine_walls"] == [3.0, 2.0, 2.5]
    assert bench.engine_wall(run) == 2.0
    assert run["wall_s"] == 4.0 and run["peak_mib"] == 120.0
    assert bench.wall_text(run) == "engine 2.00 s (least of 3: 2.00-3.00 s)"
    canned = iter([_run(1.5, 2.0, 10.0)])
    one = bench.run_repeated(["x=1"], 1)
    assert one["engine_walls"] == [1.5] and bench.wall_text(one) == "engine 1.50 s"


def test_a_repeat_with_other_flows_or_a_failure_is_an_error(monkeypatch):
    bench = _bench()
    canned = iter([_run(3.0, 5.0, 100.0), _run(2.0, 4.5, 120.0, fct_ps=(10.0, 21.0))])
    monkeypatch.setattr(bench, "run_process", lambda overrides: next(canned))
    monkeypatch.setattr(bench, "warm_up", lambda overrides: None)
    assert "differs" in bench.run_repeated(["x=1"], 2)["error"]
    canned = iter([_run(3.0, 5.0, 100.0), {"error": "exit 1"}])
    monkeypatch.setattr(bench, "run_process", lambda overrides: next(canned))
    assert bench.run_repeated(["x=1"], 2) == {"error": "exit 1"}


def test_each_configuration_is_warmed_once_before_its_timed_runs(monkeypatch):
    """A short run (0.1 ms simulated, unfinished flows allowed) of a configuration precedes its
    first timed run, and only its first: the kernels are compiled outside the timings."""
    bench = _bench()
    calls = []

    def process(overrides):
        calls.append(list(overrides))
        return _run(1.0, 2.0, 10.0)

    monkeypatch.setattr(bench, "run_process", process)
    bench.run_repeated(["x=1"], 2)
    bench.run_repeated(["x=1"], 1)
    bench.run_repeated(["x=2"], 1)
    short = ["engine.max_sim_time_ms=0.1", "engine.allow_unfinished=true"]
    assert calls == [["x=1", *short], ["x=1"], ["x=1"], ["x=1"], ["x=2", *short], ["x=2"]]


def test_leave_compares_each_flows_throughput_phase_by_phase():
    """``--suites leave``: two flows, the second from 1 s to 2 s; the throughputs of the
    phases' second halves against the reference's, and each phase's deviation from equal
    shares."""
    bench = _bench()
    s = 10**12
    flows = pd.DataFrame({"flow_id": [0, 1], "start_ps": [0, 1 * s],
                          "stop_ps": pd.array([None, 2 * s], dtype="Int64")})  # fmt: skip

    def run(second_phase):  # samples every 0.25 s: (flow 0, flow 1) Gb/s
        rows = []
        for t in range(1, 13):
            time_ps = t * s // 4
            rows.append((time_ps, 0, 100.0 if t <= 4 or t > 8 else second_phase[0]))
            if 4 < t <= 8:
                rows.append((time_ps, 1, second_phase[1]))
        rates = pd.DataFrame(rows, columns=["time_ps", "flow_id", "acked_gbps"])
        return {"summary": {"run": {"sim_time_us": 3e6}}, "flows": flows, "rates": rates}

    text = bench.share_gaps(run((40.0, 60.0)), run((50.0, 50.0)))
    assert text.startswith("throughputs within 10.0 Gb/s (flow 0, 1.5-2.0 s)")
    assert text.endswith("by phase, packet | this: 0.00 | 0.20")
    assert "no rate samples" in bench.share_gaps({"rates": None}, run((50.0, 50.0)))
