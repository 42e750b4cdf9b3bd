"""gemini_rtt_fairness (Gemini paper Fig. 11) and gemini_k_sweep (Fig. 8) in the Gemini paper's
own setting: the experiments compose for every multirun combination with the paper's values
(1 Gb/s, ~200 us intra-DC RTT, 1.5 KB packets, 450-packet DC buffers, 10,000-packet WAN
buffers, step ECN at K packets on DC switches only, Table IV Gemini with the same K), and
reduced runs (about 1-1.5 s of simulated time instead of 20 s / 10 s) go end to end through the
experiments' analyze.py. Directional properties asserted: the bottleneck stays loaded, DCTCP
gives the intra-DC (short-RTT) flows most of the bandwidth at RTT ratio 64, and a larger K
holds a longer queue. The full sweeps are in the experiments' READMEs."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.metrics.io import read_run

ROOT = Path(__file__).resolve().parents[1]
FAIRNESS = ROOT / "experiments" / "gemini_rtt_fairness" / "analyze.py"
KSWEEP = ROOT / "experiments" / "gemini_k_sweep" / "analyze.py"
PKT = 1500
RATIOS = (4, 8, 16, 32, 64)
K_PKTS = (20, 40, 80, 160, 320)


def _ends_by_default(values):
    """The sweep's values, the first and last checked by default and the ones between under
    ``slow`` (each check builds a simulation: seconds apiece, kept out of the default run)."""
    last = len(values) - 1
    return [v if i in (0, last) else pytest.param(v, marks=pytest.mark.slow)
            for i, v in enumerate(values)]  # fmt: skip


US = 10**6


def run_like_cli(overrides: list[str], out: Path, cc: str):
    """Run in-process, writing what ``uno-run`` writes (config.yaml, the cc choice)."""
    cfg = uno.compose(overrides)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.yaml").write_text(OmegaConf.to_yaml(cfg))
    return uno.run(cfg, out_dir=out, choices={"cc": cc})


def analyze(script: Path, path: Path, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, str(script), str(path), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def check_gemini_paper_setting(c) -> None:
    """The §IV-A 1 Gb/s testbed as configured (c: a resolved RunConfig)."""
    assert c.topo.kind == "two_dc"
    assert c.topo.link_rate_gbps == c.topo.wan_rate_gbps == 1.0
    assert c.transport.mtu_bytes + c.transport.header_bytes == PKT
    assert c.topo.intra_buffer_bytes == 450 * PKT
    assert c.topo.inter_buffer_bytes == 10_000 * PKT
    assert c.switch.ecn.enabled and not c.switch.phantom.enabled
    assert c.switch.ecn.kmin_bytes == c.switch.ecn.kmax_bytes  # step marking
    assert sorted(c.switch.port_kinds) == ["fabric", "host"]  # DC switches only
    assert c.switch.ecn.k_intra_bdp_divisor is None  # the experiment's K, not switch=gemini's
    if c.cc.algo == "gemini":  # Gemini's F uses the switches' K
        assert c.cc.gemini.k_bytes is None and c.cc.gemini.k_source == "switch"
        ks = {f.sender.cc.k_bytes for f in build_simulation(c).flows}
        assert ks == {float(c.switch.ecn.kmin_bytes)}
    g = c.cc.gemini  # Table IV
    assert (g.h_coeff, g.beta, g.t_us) == (1.2e-7, 0.2, 5000.0)
    assert c.lb.algo == "ecmp"


def base_rtts_us(c) -> dict[str, list[float]]:
    sim = build_simulation(c)
    out: dict[str, list[float]] = {"intra": [], "inter": []}
    for f in sim.flows:
        out[f.cls].append(f.path.base_rtt_ps / US)
    marking = {p.kind for p in sim.network.ports if p.red is not None}
    assert marking == {"host", "fabric"}
    return out


# ---- gemini_rtt_fairness --------------------------------------------------------------------
@pytest.mark.parametrize("cc", ["gemini", "dctcp"])
@pytest.mark.parametrize("ratio", _ends_by_default(RATIOS))
def test_rtt_fairness_composes_for_the_sweep(cc, ratio):
    c = to_run_config(
        uno.compose(["experiment=gemini_rtt_fairness", f"cc={cc}", f"topo.inter_rtt_ratio={ratio}"])
    )
    check_gemini_paper_setting(c)
    assert c.name == "gemini_rtt_fairness" and c.cc.algo == cc
    assert c.switch.ecn.kmin_bytes == 300 * PKT  # §IV-C: K = 300 packets for every scheme
    assert c.cc.gemini.delay_signal_inter and c.cc.gemini.delay_signal_intra
    assert (c.workload.kind, c.workload.n_intra, c.workload.n_inter) == ("incast", 4, 4)
    assert c.topo.inter_rtt_ratio == ratio


@pytest.mark.parametrize("ratio", [4, 64])
def test_rtt_fairness_base_rtts(ratio):
    c = to_run_config(
        uno.compose(["experiment=gemini_rtt_fairness", f"topo.inter_rtt_ratio={ratio}"])
    )
    rtt = base_rtts_us(c)
    assert len(rtt["intra"]) == len(rtt["inter"]) == 4
    assert all(r == pytest.approx(200, rel=0.01) for r in rtt["intra"])  # ~200 us (§IV-A)
    assert all(r / rtt["intra"][0] == pytest.approx(ratio, rel=1e-3) for r in rtt["inter"])


# about 20 s: out of the default run to keep the default run short
@pytest.mark.slow
def test_rtt_fairness_reduced_runs_and_analysis(tmp_path):
    sweep = tmp_path / "sweep"
    for i, cc in enumerate(("gemini", "dctcp")):
        out = sweep / str(i)
        run_like_cli(
            [
                "experiment=gemini_rtt_fairness",
                f"cc={cc}",
                "topo.inter_rtt_ratio=64",
                "engine.max_sim_time_ms=1200",
            ],
            out,
            cc,
        )
        run = read_run(out)
        assert run["flows"]["finish_ps"].isna().all()  # long-lived flows
        assert run["summary"]["run"]["sim_time_us"] == pytest.approx(1.2e6)
        ports = run["ports"]
        assert set(ports.loc[ports["ecn_marks"] > 0, "kind"]) <= {"host", "fabric"}
    stdout = analyze(FAIRNESS, sweep, "--from-ms", "600")
    assert "intra:inter" in stdout
    assert (sweep / "gemini_rtt_fairness.png").exists()
    res = {r["scheme"]: r for r in json.loads((sweep / "gemini_rtt_fairness.json").read_text())}
    assert set(res) == {"gemini", "dctcp"}
    for r in res.values():
        assert r["rtt_ratio"] == 64
        assert r["rtt_ratio_measured"] == pytest.approx(64, rel=1e-3)
        assert r["load"] > 0.95  # the receiver link stays busy
        assert 0 < r["share_intra_over_inter"] < float("inf")
        assert r["intra_mbps"] + r["inter_mbps"] <= 1000.5
        assert 0 < r["jain_per_flow"] <= 1
        assert r["mean_queue_pkts"] < 450
    # DCTCP: the short-RTT (intra-DC) flows take most of the bandwidth (paper: "proportional")
    assert res["dctcp"]["share_intra_over_inter"] > 2.0


# ---- gemini_k_sweep -------------------------------------------------------------------------
@pytest.mark.parametrize("cc", ["gemini", "dctcp"])
@pytest.mark.parametrize("k", _ends_by_default(K_PKTS))
def test_k_sweep_composes_for_the_sweep(cc, k):
    c = to_run_config(
        uno.compose(["experiment=gemini_k_sweep", f"cc={cc}", f"switch.ecn.kmin_bytes={k * PKT}"])
    )
    check_gemini_paper_setting(c)
    assert c.name == "gemini_k_sweep" and c.cc.algo == cc
    # one swept value sets the switches' step threshold and Gemini's K alike
    assert c.switch.ecn.kmin_bytes == c.switch.ecn.kmax_bytes == k * PKT
    # §IV-B: "The RTT-based WAN congestion control module is disabled here for GEMINI"
    assert not c.cc.gemini.delay_signal_inter and not c.cc.gemini.delay_signal_intra
    assert (c.workload.n_intra, c.workload.n_inter) == (0, 8)


def test_k_sweep_inter_dc_rtt_is_10_ms():
    rtt = base_rtts_us(to_run_config(uno.compose(["experiment=gemini_k_sweep"])))
    assert rtt["intra"] == [] and len(rtt["inter"]) == 8
    assert all(r == pytest.approx(10_000, rel=0.01) for r in rtt["inter"])


# about 40 s: out of the default run to keep the default run short
@pytest.mark.slow
def test_k_sweep_reduced_runs_and_analysis(tmp_path):
    # Every flow times out in the start-up; until about 1.5 s the link is still recovering and
    # the utilisation depends on the seed's ECMP paths (0.89-0.98 over 1.0-1.5 s for seeds 1-5),
    # so the steady state is measured over 1.5-2.5 s (1.000 for seeds 1-5).
    sweep = tmp_path / "sweep"
    for i, k in enumerate((20, 320)):
        run_like_cli(
            [
                "experiment=gemini_k_sweep",
                f"switch.ecn.kmin_bytes={k * PKT}",
                "engine.max_sim_time_ms=2500",
            ],
            sweep / str(i),
            "gemini",
        )
    stdout = analyze(KSWEEP, sweep, "--from-ms", "1500")
    assert "goodput Mb/s" in stdout
    assert (sweep / "gemini_k_sweep.png").exists()
    res = {r["k_pkts"]: r for r in json.loads((sweep / "gemini_k_sweep.json").read_text())}
    assert set(res) == {20, 320}
    for k, r in res.items():
        assert r["scheme"] == "gemini" and r["n_inter_flows"] == 8
        assert r["inter_base_rtt_ms"] == pytest.approx(10, rel=0.01)
        assert 0.9 < r["utilisation"] <= 1.0005
        assert r["goodput_mbps"] < r["throughput_mbps"]
        assert r["mean_queue_pkts"] < k + 100
        assert all("border" not in p for p in r["marking_ports"])
    assert res[320]["mean_queue_pkts"] > res[20]["mean_queue_pkts"]


@pytest.mark.slow
def test_rtt_fairness_ratio_64_gemini_fairer_than_dctcp(tmp_path):
    """10 s at RTT ratio 64 for both schemes (about 1.5 minutes), measured over 5-10 s:
    Gemini's intra:inter share is closer to 1:1 than DCTCP's (|ln share| smaller) and DCTCP
    favours the short-RTT flows. Gemini does not reach 1:1 here (it favours the long-RTT flows,
    about 1:3; see experiments/gemini_rtt_fairness/README.md), so that is not asserted."""
    sweep = tmp_path / "sweep"
    for i, cc in enumerate(("gemini", "dctcp")):
        run_like_cli(
            [
                "experiment=gemini_rtt_fairness",
                f"cc={cc}",
                "topo.inter_rtt_ratio=64",
                "engine.max_sim_time_ms=10000",
            ],
            sweep / str(i),
            cc,
        )
    print(analyze(FAIRNESS, sweep, "--from-ms", "5000"))
    res = {r["scheme"]: r for r in json.loads((sweep / "gemini_rtt_fairness.json").read_text())}
    share = {cc: res[cc]["share_intra_over_inter"] for cc in res}
    assert share["dctcp"] > 4
    assert abs(math.log(share["gemini"])) < abs(math.log(share["dctcp"]))
    assert res["gemini"]["jain_per_flow"] > res["dctcp"]["jain_per_flow"]
