"""fig9_permutation (Uno paper Fig. 9): the experiment composes for the multirun combinations
(3 schemes x 2 border provisionings), its workload is a permutation of 1 MB flows, and a reduced
version (two k=4 fat trees, 200 kB flows, 1 vs 32 WAN links) runs end to end through
experiments/fig9_permutation/analyze.py. Directional property asserted: fewer WAN links make
inter-DC flows slower for every scheme. The full-size run is the slow test below and
experiments/fig9_permutation/README.md."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from omegaconf import OmegaConf

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.metrics.io import read_run

ANALYZE = Path(__file__).resolve().parents[1] / "experiments" / "fig9_permutation" / "analyze.py"
SCHEMES = ("uno", "gemini", "mprdma_bbr")


def run_like_cli(overrides: list[str], out: Path, cc: str):
    """Run in-process, writing what ``uno-run`` writes (config.yaml, the cc choice)."""
    cfg = uno.compose(overrides)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.yaml").write_text(OmegaConf.to_yaml(cfg))
    return uno.run(cfg, out_dir=out, choices={"cc": cc})


@pytest.mark.parametrize("cc", SCHEMES)
@pytest.mark.parametrize("wan_links", [8, 128])
def test_experiment_composes_for_the_sweep(cc, wan_links):
    cfg = uno.compose(["experiment=fig9_permutation", f"cc={cc}", f"topo.wan_links={wan_links}"])
    assert cfg.name == "fig9_permutation"
    assert cfg.workload.kind == "permutation" and cfg.workload.scope == "all"
    assert cfg.workload.size_bytes == 1_000_000 and cfg.workload.start_us == 0
    assert cfg.lb.algo == "ecmp"
    assert cfg.topo.kind == "two_dc" and cfg.topo.k == 8 and cfg.topo.wan_links == wan_links
    # "fully provisioned": as many WAN links as one DC's core-border links (16 cores x 8)
    assert (cfg.topo.k // 2) ** 2 * cfg.topo.core_border_links == 128
    assert cfg.switch.phantom.enabled is (cc == "uno")
    if cc == "mprdma_bbr":
        assert (cfg.cc.intra, cfg.cc.inter) == ("mprdma", "bbr")
    else:
        assert cfg.cc.algo == cc


def test_permutation_every_host_sends_and_receives_once():
    sim = build_simulation(
        to_run_config(uno.compose(["experiment=fig9_permutation", "topo.wan_links=128"]))
    )
    flows = sim.flows
    assert len(flows) == 256
    assert Counter(f.src for f in flows) == Counter(range(256))
    assert Counter(f.dst for f in flows) == Counter(range(256))
    assert all(f.src != f.dst for f in flows)
    assert {f.cls for f in flows} == {"intra", "inter"}
    assert sum(p.kind == "wan" for p in sim.network.ports) == 2 * 128


def test_reduced_sweep_and_analysis(tmp_path):
    sweep = tmp_path / "sweep"
    job = 0
    for cc in SCHEMES:
        for links in (1, 32):
            out = sweep / str(job)
            job += 1
            result = run_like_cli(
                [
                    "experiment=fig9_permutation",
                    f"cc={cc}",
                    "topo.k=4",
                    f"topo.wan_links={links}",
                    "workload.size_bytes=200000",
                    "engine.sample_interval_us=0",
                ],
                out,
                cc,
            )
            flows = read_run(out)["flows"]
            assert result.summary["run"]["all_flows_finished"]
            # ideal FCT counts the first packet's bottleneck serialisation twice (it is in the
            # base RTT too): an unqueued flow may beat it by up to one packet time
            one_packet_ps = 4160 * flows["base_rtt_ps"] / flows["bdp_bytes"]
            assert (flows["fct_ps"] >= flows["ideal_fct_ps"] - one_packet_ps).all()
            assert (flows["fct_ps"] >= flows["base_rtt_ps"]).all()
    proc = subprocess.run(
        [sys.executable, str(ANALYZE), str(sweep)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "inter mean/p99 ms" in proc.stdout
    assert (sweep / "fig9_permutation.png").exists()
    res = json.loads((sweep / "fig9_permutation.json").read_text())
    assert {(r["scheme"], r["wan_links"]) for r in res} == {
        (c, n) for c in SCHEMES for n in (1, 32)
    }
    for r in res:
        assert r["all_finished"] and r["fct_below_ideal_minus_one_packet"] == 0
        for cls in ("all", "intra", "inter"):
            s = r["classes"][cls]
            assert s["finished"] == s["flows"] > 0
            assert 0 < s["mean_fct_ms"] <= s["p99_fct_ms"] <= s["max_fct_ms"]
            assert s["mean_slowdown"] >= 1.0
    by = {(r["scheme"], r["wan_links"]): r["classes"]["inter"]["mean_fct_ms"] for r in res}
    for cc in SCHEMES:
        assert by[(cc, 1)] > by[(cc, 32)], cc


@pytest.mark.slow
def test_full_fig9_uno_beats_baselines_with_8_links(tmp_path):
    """The paper's claim at full size, 8 WAN links (about 25 s): Uno's mean and p99 FCT over all
    flows are below Gemini's and MPRDMA+BBR's under ECMP."""
    res = {}
    for cc in SCHEMES:
        out = tmp_path / cc
        run_like_cli(["experiment=fig9_permutation", f"cc={cc}", "topo.wan_links=8"], out, cc)
        res[cc] = read_run(out)["summary"]["classes"]["all"]
        assert res[cc]["finished"] == res[cc]["flows"] == 256
    for base in ("gemini", "mprdma_bbr"):
        assert res["uno"]["fct_mean_us"] < res[base]["fct_mean_us"]
        assert res["uno"]["fct_p99_us"] < res[base]["fct_p99_us"]
