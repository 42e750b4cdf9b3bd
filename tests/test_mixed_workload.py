"""Realistic mixed traffic (Uno §5.2.2): the generator hits its offered load and class ratio,
its sizes follow their CDFs; sweeps aggregate and plot."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import uno_cli

import uno
from uno.config.schema import MixedWorkload
from uno.core.errors import ConfigError
from uno.metrics.plots import class_table, run_flows
from uno.metrics.plots import main as plot_main
from uno.metrics.sweep import collect_flows, collect_summaries
from uno.metrics.sweep import main as collect_main
from uno.workload.cdf import load_cdf
from uno.workload.hosts import HostFacts
from uno.workload.mixed import mixed_flows

ROOT = Path(__file__).resolve().parents[1]
HOSTS = HostFacts(
    dc=(0,) * 128 + (1,) * 128,
    rack=tuple(h // 4 for h in range(256)),
    rate_bps=(100 * 10**9,) * 256,
)


def ks_distance(sizes: np.ndarray, cdf) -> float:
    """Kolmogorov–Smirnov distance between the sample and the piecewise-linear CDF."""
    x = np.sort(sizes.astype(float))
    model = np.interp(x, cdf.sizes_bytes, cdf.cum_prob)
    n = len(x)
    return float(max(np.max(np.arange(1, n + 1) / n - model), np.max(model - np.arange(n) / n)))


@pytest.mark.parametrize("load,intra", [(0.4, 0.8), (0.7, 0.5)])
def test_generator_hits_load_ratio_and_size_distributions(load, intra):
    cfg = MixedWorkload(load=load, n_flows=300_000, intra_fraction=intra)
    specs = mixed_flows(cfg, HOSTS, np.random.default_rng(11))
    sizes = np.array([s.size_bytes for s in specs])
    cls_intra = np.array([HOSTS.dc[s.src] == HOSTS.dc[s.dst] for s in specs])
    span_s = (specs[-1].start_ps - specs[0].start_ps) / 1e12
    offered = sizes.sum() * 8 / span_s / sum(HOSTS.rate_bps)
    assert offered == pytest.approx(load, rel=0.02)
    assert cls_intra.mean() == pytest.approx(intra, rel=0.02)
    for mask, name in ((cls_intra, "web_search"), (~cls_intra, "alibaba_interdc")):
        n = int(mask.sum())
        assert ks_distance(sizes[mask], load_cdf(name)) < 1.95 / np.sqrt(n)  # alpha = 0.001
    assert all(s.src != s.dst for s in specs)


def test_same_seed_same_trace_and_duration_mode():
    a = mixed_flows(MixedWorkload(n_flows=500), HOSTS, np.random.default_rng(3))
    b = mixed_flows(MixedWorkload(n_flows=500), HOSTS, np.random.default_rng(3))
    assert a == b
    c = mixed_flows(
        MixedWorkload(n_flows=None, duration_us=2000.0), HOSTS, np.random.default_rng(3)
    )
    assert c and max(s.start_ps for s in c) < 2000 * 10**6


@pytest.mark.parametrize("load", ["0", "1.0", "-0.2", "1.5"])
def test_impossible_load_is_refused(load):
    with pytest.raises(ConfigError) as err:
        uno.run(uno.compose(["workload=mixed", f"workload.load={load}"]))
    assert err.value.field == "workload.load"


def test_malformed_cdf_is_refused_before_the_run(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("size_bytes,cum_prob\n0,0\n100,0.7\n50,1\n")
    with pytest.raises(ConfigError) as err:
        uno.run(uno.compose(["workload=mixed", f"workload.intra_cdf={bad}"]))
    assert err.value.field == "workload.intra_cdf" and "bad.csv:4" in str(err.value)


@pytest.fixture(scope="module")
def tiny_sweep(tmp_path_factory):
    sweep = tmp_path_factory.mktemp("sweep")
    i = 0
    for load in (0.2, 0.4):
        for scheme in ("uno_ecmp", "uno"):
            cfg = uno.compose(
                ["experiment=fig10_load", "workload=mixed_artifact", f"scheme={scheme}",
                 f"workload.load={load}", "workload.n_flows=150", "ec.payload=false"]
            )  # fmt: skip
            uno.run(cfg, out_dir=sweep / str(i), choices={"scheme": scheme})
            i += 1
    return sweep


def test_tables_and_plots_of_a_sweep(tiny_sweep, capsys):
    flows = run_flows(tiny_sweep)
    assert set(flows["label"]) == {"uno_ecmp", "uno"} and set(flows["load"]) == {0.2, 0.4}
    table = class_table(flows, ["load", "label"])
    assert set(table.index.get_level_values("cls")) == {"intra", "inter"}
    assert (table["p99_fct_us"] >= table["mean_fct_us"] * 0.5).all()
    assert plot_main([str(tiny_sweep)]) == 0
    assert "class_bars.png" in capsys.readouterr().out
    assert (tiny_sweep / "slowdown_by_size.png").stat().st_size > 10_000


MIXED_TINY = ["experiment=fig10_load", "workload=mixed_artifact", "workload.n_flows=60",
              "ec.payload=false", "engine.progress=false"]  # fmt: skip


@pytest.mark.parametrize(
    "launcher,axis",
    [
        (["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"], "scheme=uno_ecmp,gemini"),
        (["hydra/launcher=submitit_local"], "workload.load=0.2,0.6"),
    ],
    ids=["joblib-schemes", "submitit_local-loads"],
)
def test_two_job_sweep_through_a_launcher_aggregates(tmp_path, launcher, axis):
    """A 2-job fig10_load sweep through each local launcher writes both runs' tables; the
    aggregation step (API and ``uno-collect``) turns them into one table per scheme/load."""
    sw = tmp_path / "sw"
    proc = uno_cli(["-m", *MIXED_TINY, *launcher, axis, f"hydra.sweep.dir={sw}"], tmp_path)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    summaries = collect_summaries(sw)
    assert list(summaries["job"]) == [0, 1]
    flows = collect_flows(sw)
    assert len(flows) == 2 * 60 and set(flows["job"]) == {0, 1}
    table = class_table(run_flows(sw), ["load", "label"])
    key, values = axis.split("=")
    want = values.split(",")
    if key == "scheme":
        assert sorted(table.index.get_level_values("label").unique()) == sorted(want)
    else:
        assert sorted(table.index.get_level_values("load").unique()) == [float(v) for v in want]
    assert table["flows"].sum() == 2 * 60 - table["unfinished"].sum()
    assert collect_main([str(sw), "--out", str(tmp_path / "all.parquet")]) == 0
    assert len(pd.read_parquet(tmp_path / "all.parquet")) == 2 * 60


def test_destinations_are_uniform_over_the_other_hosts_and_a_lone_host_is_refused():
    """An intra-DC flow's destination is uniform over the other hosts of its source's
    datacenter, an inter-DC flow's over the hosts of the other datacenters (here of unequal
    sizes); an intra-DC flow from a datacenter of one host is refused naming the field."""
    hosts = HostFacts(dc=(0,) * 3 + (1,) * 5, rack=(0,) * 3 + (1,) * 5, rate_bps=(10**11,) * 8)
    cfg = MixedWorkload(n_flows=80_000, intra_fraction=0.5)
    specs = mixed_flows(cfg, hosts, np.random.default_rng(5))
    pairs = pd.DataFrame([(s.src, s.dst, s.tag) for s in specs], columns=["src", "dst", "tag"])
    for src in (0, 4):
        mine = hosts.dc[src]
        for tag, allowed in (
            ("intra", [h for h in range(8) if hosts.dc[h] == mine and h != src]),
            ("inter", [h for h in range(8) if hosts.dc[h] != mine]),
        ):
            dst = pairs.loc[(pairs["src"] == src) & (pairs["tag"] == tag), "dst"]
            share = dst.value_counts(normalize=True)
            assert sorted(share.index) == allowed, (src, tag)
            assert share.to_numpy() == pytest.approx(1 / len(allowed), abs=0.03), (src, tag)
    lone = HostFacts(dc=(0,) + (1,) * 4, rack=(0,) + (1,) * 4, rate_bps=(10**11,) * 5)
    with pytest.raises(ConfigError) as err:
        mixed_flows(MixedWorkload(n_flows=200), lone, np.random.default_rng(1))
    assert err.value.field == "workload.intra_fraction"


def test_load_of_the_wan_sets_the_inter_dc_bytes_per_second():
    """``load_of: wan``: the inter-DC flows carry ``load`` x the WAN links' capacity (both
    directions), the intra-DC flows come with them in the share ``intra_fraction``."""
    wan_bps = 16 * 100 * 10**9
    hosts = HostFacts(HOSTS.dc, HOSTS.rack, HOSTS.rate_bps, wan_bps=wan_bps)
    cfg = MixedWorkload(load=0.3, load_of="wan", n_flows=200_000, intra_fraction=0.5)
    specs = mixed_flows(cfg, hosts, np.random.default_rng(5))
    span_s = (specs[-1].start_ps - specs[0].start_ps) / 1e12
    inter = sum(s.size_bytes for s in specs if hosts.dc[s.src] != hosts.dc[s.dst])
    assert inter * 8 / span_s / wan_bps == pytest.approx(0.3, rel=0.03)
    with pytest.raises(ConfigError, match="workload.load_of"):
        mixed_flows(cfg, HOSTS, np.random.default_rng(5))  # no WAN links


def test_background_traffic_joins_any_workload_with_its_own_ids_tags_and_stream():
    """background.*: the mixed generator's flows over duration_us, numbered after the
    workload's, tagged background_*; the workload itself is the same draw as without it; at
    load 0 nothing is added; a bad field is named as background's."""
    from uno.config.schema import BackgroundTraffic
    from uno.workload.mixed import background_flows

    cfg = BackgroundTraffic(load=0.2, duration_us=20_000.0, intra_fraction=0.5)
    flows = background_flows(cfg, HOSTS, np.random.default_rng(5), first_id=7)
    assert [f.flow_id for f in flows] == list(range(7, 7 + len(flows)))
    assert {f.tag for f in flows} == {"background_intra", "background_inter"}
    assert all(f.start_ps < 20_000 * 10**6 for f in flows)
    sizes = sum(f.size_bytes for f in flows)
    assert sizes * 8 / 20e-3 / sum(HOSTS.rate_bps) == pytest.approx(0.2, rel=0.25)
    assert background_flows(BackgroundTraffic(), HOSTS, np.random.default_rng(5), 0) == []
    one_dc = HostFacts(dc=(0,) * 8, rack=(0,) * 8, rate_bps=(10**11,) * 8)
    with pytest.raises(ConfigError, match=r"^background\.intra_fraction"):
        background_flows(cfg, one_dc, np.random.default_rng(5), 0)
    base = ["topo=dumbbell", "workload=incast", "workload.n_intra=2", "workload.n_inter=0"]
    plain = _scenario(base)
    busy = _scenario([*base, "background.load=0.1", "background.duration_us=50"])
    n = len(plain.flows)
    assert [p.spec for p in busy.flows[:n]] == [p.spec for p in plain.flows]
    assert len(busy.flows) > n and busy.flows[n].spec.tag == "background_intra"


def _scenario(overrides):
    from uno.core.rng import RngStreams
    from uno.scenario import build_scenario

    cfg = uno.api.to_run_config(uno.compose(overrides))
    return build_scenario(cfg, RngStreams(cfg.seed))


@pytest.mark.parametrize("cdf", ["web_search", "fb_hadoop"])
def test_per_class_loads_offer_each_class_its_own_load(cdf):
    """``inter_load`` (MLCC §4.4's "50% intra-DC + 20% cross-DC"): each class carries its own
    share of the hosts' capacity, both from one CDF."""
    cfg = MixedWorkload(load=0.5, inter_load=0.2, intra_fraction=None, n_flows=300_000,
                        intra_cdf=cdf, inter_cdf=cdf)  # fmt: skip
    specs = mixed_flows(cfg, HOSTS, np.random.default_rng(7))
    sizes = np.array([s.size_bytes for s in specs])
    cls_intra = np.array([HOSTS.dc[s.src] == HOSTS.dc[s.dst] for s in specs])
    span_s = (specs[-1].start_ps - specs[0].start_ps) / 1e12
    capacity = sum(HOSTS.rate_bps)
    assert sizes[cls_intra].sum() * 8 / span_s / capacity == pytest.approx(0.5, rel=0.03)
    assert sizes[~cls_intra].sum() * 8 / span_s / capacity == pytest.approx(0.2, rel=0.03)


def test_per_class_loads_need_the_share_by_count_left_open():
    from uno.api import to_run_config
    from uno.config.validate import check_config

    with pytest.raises(ConfigError, match="workload.inter_load"):
        check_config(to_run_config(uno.compose(["workload=mixed", "workload.inter_load=0.2"])))
    with pytest.raises(ConfigError, match="workload.intra_fraction"):
        check_config(to_run_config(uno.compose(["workload=mixed", "workload.intra_fraction=null"])))
