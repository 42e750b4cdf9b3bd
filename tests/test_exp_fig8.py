"""experiments/fig8_incast: the config (each incast mix x scheme of the multirun composes as the
paper's setup), and a reduced run of all nine combinations (4 MB flows instead of 1 GiB) through
the experiment's analysis script."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from conftest import assert_conservation

import uno

ROOT = Path(__file__).resolve().parents[1]
MIXES = {"intra8": (8, 0), "inter8": (0, 8), "intra4_inter4": (4, 4)}
SCHEMES = ("uno", "gemini", "mprdma_bbr")
SMALL_BYTES = 4_000_000


def load_analyze():
    path = ROOT / "experiments" / "fig8_incast" / "analyze.py"
    spec = importlib.util.spec_from_file_location("fig8_analyze", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def overrides(mix: str | None, cc: str | None, *extra: str) -> list[str]:
    out = ["experiment=fig8_incast"]
    if mix:
        out.append(f"incast_mix={mix}")
    if cc:
        out.append(f"cc={cc}")
    return out + list(extra)


@pytest.mark.parametrize("mix", [None, *MIXES])
@pytest.mark.parametrize("cc", SCHEMES)
def test_config_composes_each_mix_and_scheme(mix, cc):
    cfg = uno.compose(overrides(mix, cc))
    n_intra, n_inter = MIXES[mix or "intra4_inter4"]  # the experiment's own default is 4+4
    w = cfg.workload
    assert (w.kind, w.n_intra, w.n_inter) == ("incast", n_intra, n_inter)
    assert (w.receiver, w.size_bytes, w.placement) == (240, 1 << 30, "spread")
    assert cfg.topo.kind == "two_dc" and cfg.topo.inter_rtt_ratio == 128
    assert cfg.lb.algo == "spray"
    assert cfg.name == "fig8_incast"
    # cc=uno brings its phantom queues; the baselines run on plain ECN switches
    assert cfg.switch.phantom.enabled is (cc == "uno")
    assert cfg.cc.algo == {"uno": "uno", "gemini": "gemini", "mprdma_bbr": "mprdma"}[cc]


def test_incast_mix_applies_to_a_plain_incast():
    cfg = uno.compose(["workload=incast", "incast_mix=inter8"])
    assert (cfg.workload.n_intra, cfg.workload.n_inter) == (0, 8)


def test_reduced_fig8_all_mixes_and_schemes(tmp_path):
    analyze = load_analyze()
    for mix in MIXES:
        for cc in SCHEMES:
            cfg = uno.compose(
                overrides(
                    mix,
                    cc,
                    f"workload.size_bytes={SMALL_BYTES}",
                    "engine.sample_interval_us=50",
                )
            )
            result = uno.run(
                cfg, out_dir=tmp_path / f"{mix}-{cc}", choices={"cc": cc, "incast_mix": mix}
            )
            assert_conservation(result)
            flows = result.flows
            assert flows["finish_ps"].notna().all(), (mix, cc)
            assert (flows["dst"] == 240).all() and (flows["size_bytes"] == SMALL_BYTES).all()
            n_intra, n_inter = MIXES[mix]
            assert (flows["cls"] == "intra").sum() == n_intra
            assert (flows["cls"] == "inter").sum() == n_inter
            assert (flows["fct_ps"] >= flows["ideal_fct_ps"]).all(), (mix, cc)

    out = tmp_path / "analysis"
    results = analyze.analyse(tmp_path, out)
    assert len(results) == 9
    assert {(r["mix"], r["scheme"]) for r in results} == {(m, s) for m in MIXES for s in SCHEMES}
    for r in results:
        assert r["all_finished"] and r["fct_ge_ideal"]
        assert len(r["flows"]) == 8
        assert r["min_fct_ms"] <= r["mean_fct_ms"] <= r["max_fct_ms"]
        # the receiver link cannot carry the eight flows faster than its line rate
        assert r["max_over_incast_ideal"] >= 0.99, r
        assert r["ideal_incast_fct_ms"] > r["ideal_single_flow_fct_ms"]
    data = json.loads((out / "fig8_incast.json").read_text())
    assert set(data) == {"runs", "by_mix"}
    assert set(data["by_mix"]) == set(MIXES)
    for mix in MIXES:
        assert set(data["by_mix"][mix]) == set(SCHEMES)
        for entry in data["by_mix"][mix].values():
            assert {"mean_fct_ms", "max_fct_ms", "ideal_incast_fct_ms"} <= set(entry)
    run0 = data["runs"][0]
    assert {"mix", "scheme", "flows", "by_class", "drops", "timeouts"} <= set(run0)
    assert {"fct_ms", "ideal_fct_ms", "cls"} <= set(run0["flows"][0])
    assert (out / "fig8_incast.png").stat().st_size > 10_000
    table = analyze.format_table(results)
    assert "intra4_inter4" in table and "mprdma_bbr" in table
