"""Uno paper Fig. 13 experiments: the configs are what the paper describes, the all-reduce
workload chains its iterations, and reduced sweeps go through the analyses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import uno
from uno.api import to_run_config
from uno.build import build_simulation

ROOT = Path(__file__).resolve().parents[1]


def sim_of(overrides):
    return build_simulation(to_run_config(uno.compose(overrides)))


def test_linkfail_config():
    sim = sim_of(["experiment=fig13_linkfail"])
    assert len(sim.flows) == 8 and {f.size_bytes for f in sim.flows} == {5 * 2**20}
    assert {f.cls for f in sim.flows} == {"inter"} and len({f.src for f in sim.flows}) == 8
    down = [p.name for p in sim.network.ports if p.fault is not None]
    assert sorted(down) == ["dc0/border->dc1/border#0", "dc1/border->dc0/border#0"]


def test_random_loss_and_ai_configs():
    sim = sim_of(["experiment=fig13_random_loss"])
    assert len(sim.flows) == 1 and sum(p.fault is not None for p in sim.network.ports) == 16
    sim = sim_of(["experiment=fig13_ai"])
    assert round(sim.meta["max_base_rtt_us"], 2) == 7111.04  # the artifact's AI inter-DC RTT
    assert {f.tag for f in sim.flows} == {"it0", "it1", "it2"}


def test_allreduce_iterations_follow_each_other():
    r = uno.run(
        uno.compose(
            [
                "workload=allreduce",
                "workload.iteration_bytes=4000000",
                "engine.sample_interval_us=0",
            ]
        )
    )
    f = r.flows
    assert f["finish_ps"].notna().all()
    ends = f.groupby("tag")["finish_ps"].max()
    starts = f.groupby("tag")["start_ps"].min()
    for i in (1, 2):
        assert starts[f"it{i}"] == ends[f"it{i - 1}"] + 1000 * 10**6  # compute_us after
    # alternating directions, fixed pairs across iterations
    it0, it1 = f[f.tag == "it0"], f[f.tag == "it1"]
    assert list(it0.src) == list(it1.src) and (it0.src.to_numpy() < 128).sum() == 4


def _sweep(tmp_path, experiment, extra):
    sweep = tmp_path / "sweep"
    i = 0
    for lb in ("spray", "unolb"):
        for ec in ("none", "mds"):
            cfg = uno.compose([f"experiment={experiment}", f"lb={lb}", f"ec={ec}", *extra])
            uno.run(cfg, out_dir=sweep / str(i))
            i += 1
    return sweep


def _analyze(name, sweep):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / name / "analyze.py"), str(sweep)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_reduced_linkfail_sweep_and_analysis(tmp_path):
    sweep = _sweep(tmp_path, "fig13_linkfail", ["ec.payload=false"])
    out = _analyze("fig13_linkfail", sweep)
    data = json.loads((sweep / "fig13_linkfail.json").read_text())
    assert {r["variant"] for r in data["runs"]} == {"spray", "spray+EC", "unolb", "unolb+EC"}
    assert "lowest_mean" in out and (sweep / "fig13_linkfail.png").exists()
    # the failed link costs spraying without coding a timeout; coding recovers by decoding
    runs = {r["variant"]: r for r in data["runs"]}
    assert runs["spray"]["timeouts"] > 0
    assert runs["unolb+EC"]["mean_fct_ms"] < runs["spray"]["mean_fct_ms"]


def test_reduced_random_loss_sweep_and_check(tmp_path):
    # ten times the Table 1 rates so that a one-seed run sees losses
    lossy = "faults.losses.0.block_probabilities=[3.0e-3,7.5e-4,1.6e-4]"
    sweep = _sweep(tmp_path, "fig13_random_loss", [lossy])
    _analyze("fig13_random_loss", sweep)
    check = json.loads((sweep / "fig13_random_loss.json").read_text())["check"]
    assert check["coded_runs_with_at_most_y_losses_per_block"] >= 1 and check["holds"]


def test_reduced_ai_analysis(tmp_path):
    sweep = _sweep(tmp_path, "fig13_ai", ["workload.iteration_bytes=8000000", "ec.payload=false"])
    out = _analyze("fig13_ai", sweep)
    assert "ratio" in out and (sweep / "fig13_ai.json").exists()
