"""experiment=artifact_fig9 and artifact_fig13_*: every variant of the Uno artifact's Fig. 9 and
Fig. 13 scripts composes, replays the artifact's shipped connection matrix and fails (and loses
packets on) the ports the artifact's flags name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.workload.trace import shipped_cms

ANALYZE_FIG13 = (
    Path(__file__).resolve().parents[1] / "experiments" / "fig13_linkfail" / "analyze.py"
)
FAIL_MORE_PAIRS = [
    (15, 247),
    (0, 129),
    (87, 252),
    (25, 145),
    (44, 151),
    (12, 182),
    (102, 139),
    (120, 179),
]
FIG13 = ("artifact_fig13_linkfail", "artifact_fig13_random_drops", "artifact_fig13_mult_failures")


def sim_of(overrides):
    return build_simulation(to_run_config(uno.compose(overrides)))


def test_the_artifacts_fig9_and_fig13_matrices_are_shipped():
    assert {"custom_256_5mb", "fail_more", "fail_one", "ai"} <= set(shipped_cms())


@pytest.mark.parametrize("experiment", FIG13)
@pytest.mark.parametrize("lb", ["spray", "plb", "unolb_artifact"])
@pytest.mark.parametrize("ec", ["none", "mds"])
def test_fig13_variants_compose(experiment, lb, ec):
    cfg = uno.compose([f"experiment={experiment}", f"lb={lb}", f"ec={ec}"])
    assert cfg.name == experiment and cfg.cc.algo == "uno" and cfg.engine.max_sim_time_ms == 12860
    assert cfg.lb.algo == lb.removesuffix("_artifact") and cfg.ec.kind == ec
    assert (cfg.ec.data_packets, cfg.ec.parity_packets) == (
        8,
        2,
    )  # -parityGroup 10 -parityCorrect 2
    assert cfg.lb.plb.initial_entropy == "zero"


@pytest.mark.parametrize(
    "experiment,pairs,size,rtt_us",
    [
        ("artifact_fig13_linkfail", FAIL_MORE_PAIRS, 5_000_000, 1792.04),
        ("artifact_fig13_random_drops", FAIL_MORE_PAIRS[:1], 5_000_000, 1792.04),
        ("artifact_fig13_mult_failures", FAIL_MORE_PAIRS, 35_000_000, 7111.04),
    ],
)
def test_fig13_flows_and_faults_are_the_artifacts(experiment, pairs, size, rtt_us):
    sim = sim_of([f"experiment={experiment}", "ec=mds"])
    assert [(f.src, f.dst) for f in sim.flows] == pairs
    assert {f.size_bytes for f in sim.flows} == {size} and {f.start_ps for f in sim.flows} == {0}
    assert round(sim.meta["max_base_rtt_us"], 2) == rtt_us
    faulty = {
        p.name: [type(m).__name__ for m in p.fault.models] for p in sim.network.ports if p.fault
    }
    # -fail_one: the first WAN link, DC 0 -> DC 1 only; its reverse direction still works
    assert faulty["dc0/border->dc1/border#0"][0] == "LinkDown"
    assert sum("LinkDown" in m for m in faulty.values()) == 1
    if experiment == "artifact_fig13_mult_failures":
        # -multiple_failures: every queue the artifact names BORDER, both DCs, both directions
        lossy = [n for n, m in faulty.items() if "BlockLoss" in m]
        assert len(lossy) == 2 * (128 + 128) + 16
        assert all("border" in n for n in lossy)
        assert sim.network.port_by_name["dc0/core0->dc0/border#0"].phantom.size_bytes == 89602060
    else:
        assert list(faulty) == ["dc0/border->dc1/border#0"]


@pytest.mark.parametrize(
    "variant",
    [
        ["cc=uno_artifact"],
        ["lb=unolb_artifact"],
        ["cc=gemini_artifact"],
        ["cc=mprdma_bbr_artifact"],
    ],
)
@pytest.mark.parametrize("wan_links", [8, 128])
def test_fig9_variants_replay_the_artifacts_permutation(variant, wan_links):
    cfg = uno.compose(["experiment=artifact_fig9", *variant, f"topo.wan_links={wan_links}"])
    sim = build_simulation(to_run_config(cfg))
    flows = sim.flows
    assert len(flows) == 256 and {f.size_bytes for f in flows} == {1_000_000}
    assert sorted(f.src for f in flows) == list(range(256))
    assert sorted(f.dst for f in flows) == list(range(256))
    assert sum(f.cls == "inter" for f in flows) == 142
    assert sum(p.kind == "wan" for p in sim.network.ports) == 2 * wan_links
    assert cfg.engine.max_sim_time_ms == 2860 and cfg.transport.ack_paths == 256
    assert cfg.lb.algo == ("unolb" if variant == ["lb=unolb_artifact"] else "ecmp")


def test_fig13_analysis_reads_the_artifact_runs(tmp_path):
    """experiments/fig13_linkfail/analyze.py on artifact_fig13_* runs: files named after the
    experiment, and --ideal-ms gives each run's (mean FCT - ideal) / ideal per variant."""
    sweep = tmp_path / "sweep"
    for i, ec in enumerate(("none", "mds")):
        cfg = uno.compose(
            ["experiment=artifact_fig13_random_drops", "lb=plb", f"ec={ec}", "ec.payload=false"]
        )
        uno.run(cfg, out_dir=sweep / str(i))
    proc = subprocess.run(
        [sys.executable, str(ANALYZE_FIG13), str(sweep), "--ideal-ms", "2.0"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads((sweep / "artifact_fig13_random_drops.json").read_text())
    assert (sweep / "artifact_fig13_random_drops.png").exists()
    runs = {r["variant"]: r for r in data["runs"]}
    assert set(runs) == {"plb", "plb+EC"} and all(r["finished"] == 1 for r in runs.values())
    over = {r["variant"]: r["over_ideal (mean)"] for r in data["over_ideal"]["table"]}
    for variant, r in runs.items():
        assert over[variant] == pytest.approx((r["mean_fct_ms"] - 2.0) / 2.0)
