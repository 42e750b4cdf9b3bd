"""experiments/fig4_phantom: the config (phantom on/off under UnoCC), and a reduced pair of runs
through the experiment's analysis script.

The reduced runs shorten the inter-DC RTT (inter/intra ratio 16 instead of 128) so that the long
flows' start-up (overflow, Quick Adapt collapse, additive increase back to the link rate) is over
by ~25 ms instead of ~200 ms, and send 400 RPCs from 30 ms. With the paper's epoch rule (T_epoch
advances by the RTT sample scaled to the intra-DC RTT) the p99 RPC FCT is 1.65x / 3.00x / 3.27x
lower with phantom queues for seeds 1 / 2 / 3 (mean physical queue 16.9 / 8.9 / 7.9 KB vs
209 / 220 / 251 KB; in seed 1 the phantom run's queue builds up at the end of the RPC window).
(With the fixed intra-DC period the earlier default used, seed 1 gave 3.41x.) So the test runs
the three seeds and asserts the claim as the full experiment states it for the median seed, and
its direction (p99 lower, mean queue lower with phantom queues) for every seed. The full-size
experiment's claim is the slow test below."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_conservation

import uno
from uno.workload.cdf import load_cdf

ROOT = Path(__file__).resolve().parents[1]
REDUCED = [
    "topo.inter_rtt_ratio=16",
    "workload.rpc_start_us=30000",
    "workload.rpc_count=400",
]


def load_analyze():
    path = ROOT / "experiments" / "fig4_phantom" / "analyze.py"
    spec = importlib.util.spec_from_file_location("fig4_analyze", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("switch", ["phantom", "ecn"])
def test_config_composes_with_and_without_phantom(switch):
    cfg = uno.compose(["experiment=fig4_phantom", f"switch={switch}"])
    assert cfg.name == "fig4_phantom"
    assert cfg.cc.algo == "uno" and cfg.cc.intra is None and cfg.cc.inter is None
    # the command line's switch=... wins over the one cc=uno pulls in
    assert cfg.switch.phantom.enabled is (switch == "phantom")
    assert cfg.switch.ecn.enabled
    w = cfg.workload
    assert (w.kind, w.receiver, w.n_intra, w.n_inter) == ("rpc_incast", 240, 0, 8)
    assert (w.rpc_cdf, w.rpc_sources, w.rpc_arrivals) == ("google_rpc", "same_rack", "periodic")
    assert w.rpc_start_us >= 200_000  # after the long flows' start-up transient
    assert cfg.engine.stop_when_done == ["rpc"]
    assert cfg.engine.queue_ports == ["receivers"]
    assert cfg.engine.sample_interval_us == 10
    assert cfg.topo.inter_rtt_ratio == 128 and cfg.lb.algo == "spray"


def test_default_switch_of_the_experiment_is_phantom():
    assert uno.compose(["experiment=fig4_phantom"]).switch.phantom.enabled


def run_pair(root: Path, extra: list[str]) -> None:
    for switch in ("phantom", "ecn"):
        cfg = uno.compose(["experiment=fig4_phantom", f"switch={switch}", *extra])
        result = uno.run(cfg, out_dir=root / switch, choices={"cc": "uno", "switch": switch})
        assert_conservation(result)
        flows = result.flows
        rpc = flows[flows["tag"] == "rpc"]
        long = flows[flows["tag"] != "rpc"]
        assert len(rpc) == cfg.workload.rpc_count and len(long) == 8  # (400 reduced, 4000 full)
        assert rpc["finish_ps"].notna().all()  # the run stops once the RPCs are done...
        assert long["finish_ps"].isna().all()  # ...long before the 1 GiB flows could finish
        assert (rpc["src"] // 4 == 240 // 4).all() and (rpc["cls"] == "intra").all()
        assert (long["cls"] == "inter").all()
        # physical lower bound: propagation both ways (1 us links) + the RPC's bytes once at
        # 100 Gb/s; and the ideal FCT, which counts one serialisation more than an unqueued
        # flow needs (the base RTT already serialises the first packet at every hop)
        wire = rpc["size_bytes"] + 64 * rpc["packets"]
        bound_ps = 2 * rpc["hops"] * 1_000_000 + wire * 8 * 10**12 // (100 * 10**9)
        assert (rpc["fct_ps"] >= bound_ps).all()
        one_packet_ps = (4096 + 64) * 8 * 10**12 // (100 * 10**9)
        assert (rpc["fct_ps"] >= rpc["ideal_fct_ps"] - one_packet_ps).all()
        assert (long["ideal_fct_ps"] > 0).all()
        q = result.tables["queues"]
        assert list(q["port"].unique()) == ["dc1/tor28->dc1/h112"]  # ToR -> host 240
        assert bool(q["phantom_bytes"].max() > 0) == (switch == "phantom")


# about 70 s: out of the default run to keep the default run short
@pytest.mark.slow
def test_reduced_fig4_phantom_vs_ecn(tmp_path):
    analyze = load_analyze()
    claims = []
    for seed in (1, 2, 3):
        root = tmp_path / f"seed{seed}"
        run_pair(root, [*REDUCED, f"seed={seed}"])
        results, claim = analyze.analyse(root, root / "analysis")
        assert claim["mean_queue_lower_with_phantom"], claim
        assert claim["p99_fct_ratio_no_phantom_over_phantom"] > 1.0, claim
        claims.append(claim)
    median = sorted(claims, key=lambda c: c["p99_fct_ratio_no_phantom_over_phantom"])[1]
    assert median["p99_at_least_2x_lower_with_phantom"] and median["holds"], median
    out = tmp_path / "seed1" / "analysis"
    results, claim = analyze.analyse(tmp_path / "seed1", out)
    assert {r["phantom"] for r in results} == {True, False}
    for r in results:
        assert r["rpc_all_finished"] and r["rpc"]["finished"] == 400
        assert r["long_flows_finished"] == 0
        assert r["rpc"]["p99_fct_us"] >= r["rpc"]["p50_fct_us"] > 0
        assert r["receiver_port"] == "dc1/tor28->dc1/h112"
    data = json.loads((out / "fig4_phantom.json").read_text())
    assert set(data) == {"runs", "claim"}
    assert {"rpc", "rpc_small", "queue_in_rpc_window", "receiver_load_gbps_in_rpc_window"} <= set(
        data["runs"][0]
    )
    assert {"mean_fct_us", "p99_fct_us"} <= set(data["runs"][0]["rpc"])
    assert (out / "fig4_phantom.png").stat().st_size > 10_000
    assert ("HOLDS" if claim["holds"] else "DOES NOT HOLD") in analyze.format_table(results, claim)


@pytest.mark.slow
def test_full_fig4_claim(tmp_path):
    """The experiment as its README runs it (about a minute): p99 RPC FCT at least 2x lower and
    a lower mean receiver queue with phantom queues."""
    analyze = load_analyze()
    run_pair(tmp_path, [])
    results, claim = analyze.analyse(tmp_path, tmp_path / "analysis")
    print(analyze.format_table(results, claim))
    assert claim["p99_at_least_2x_lower_with_phantom"] and claim["mean_queue_lower_with_phantom"]


def test_artifact_rpc_size_override_is_uniform_4k_16k():
    """The documented override for the artifact's RPC sizes: the shipped two-point CDF."""
    cfg = uno.compose(["experiment=fig4_phantom", "workload.rpc_cdf=uniform_4k_16k"])
    cdf = load_cdf(cfg.workload.rpc_cdf, field="workload.rpc_cdf")
    sizes = cdf.sample(np.random.default_rng(1), 5000)
    assert sizes.min() >= 4000 and sizes.max() <= 16000
    assert abs(sizes.mean() - 10_000) < 200 and cdf.mean_bytes() == pytest.approx(10_000)
