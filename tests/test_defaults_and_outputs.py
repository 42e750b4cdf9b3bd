"""Defaults that show the scenario they name, and outputs that read right: the dumbbell incast
crosses its bottleneck (and an incast that cannot is refused); bar charts on linear axes from 0
unless their values span decades; run headers and summaries with the config options as chosen
and only the measures of the engine that ran."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import uno_cli

import uno
from uno.api import _header, to_run_config
from uno.build import build_simulation
from uno.core.errors import ConfigError
from uno.core.rng import RngStreams
from uno.metrics.plots import LOG_SPAN, class_bars_figure, class_table, run_flows
from uno.metrics.summary import ENGINES_WITHOUT_CC, format_summary, option_names
from uno.packet_engine import resolve_dataplane
from uno.scenario import build_scenario, host_facts
from uno.topo.routing import Routing

ROOT = Path(__file__).resolve().parents[1]

#: the README's dumbbell incast, small: 4 senders of 250 kB into one receiver
DUMBBELL_INCAST = [
    "topo=dumbbell",
    "workload=incast",
    "workload.n_intra=4",
    "workload.n_inter=0",
    "workload.size_bytes=250000",
    "cc=dctcp",
    "lb=ecmp",
    "engine.sample_interval_us=0",
    "engine.progress=false",
]


def scenario_of(overrides: list[str]):
    cfg = to_run_config(uno.compose(overrides))
    return build_scenario(cfg, RngStreams(cfg.seed))


# ---- the default incast receiver and the bottleneck check ------------------------------------
def test_topologies_declare_their_incast_receiver_and_bottleneck_sides():
    dumbbell = scenario_of(DUMBBELL_INCAST).topo
    assert dumbbell.designated_receiver() == 4  # r0, after s0..s3
    assert dumbbell.bottleneck_sides() == (0, 0, 0, 0, 1)
    two_dc = scenario_of(["topo.k=4", "workload=incast", "workload.n_inter=2"]).topo
    assert two_dc.designated_receiver() == 0 and two_dc.bottleneck_sides() == ()
    hosts = host_facts(Routing(dumbbell))
    assert (hosts.receiver, hosts.bottleneck_side) == (4, (0, 0, 0, 0, 1))


def test_default_incast_receiver_is_the_topologys():
    sc = scenario_of(DUMBBELL_INCAST)
    assert uno.compose(DUMBBELL_INCAST).workload.receiver is None
    assert {p.spec.dst for p in sc.flows} == {4}
    assert sorted(p.spec.src for p in sc.flows) == [0, 1, 2, 3]
    assert all(p.path.hops == 3 for p in sc.flows)  # s -> left -> right -> r0
    # elsewhere host 0
    two_dc = scenario_of(["topo.k=4", "workload=incast", "workload.n_inter=2"])
    assert {p.spec.dst for p in two_dc.flows} == {0}


@pytest.mark.slow  # (over a minute)
def test_default_dumbbell_incast_fcts_depend_on_the_bottleneck_rate():
    fast = uno.run(uno.compose(DUMBBELL_INCAST)).flows.set_index("flow_id")
    slow = uno.run(uno.compose([*DUMBBELL_INCAST, "topo.bottleneck_rate_gbps=10"]))
    slow = slow.flows.set_index("flow_id")
    assert fast["finish_ps"].notna().all() and slow["finish_ps"].notna().all()
    assert (slow["fct_ps"] > fast["fct_ps"]).all()
    # 1 MB through a 10 Gb/s link takes 800 us; through 100 Gb/s, 80 us
    assert slow["fct_ps"].max() > 5 * fast["fct_ps"].max()


@pytest.mark.parametrize(
    "extra, field",
    [
        (["workload.receiver=0", "workload.n_intra=3"], "workload.receiver"),
        (
            [
                "workload.receiver=0",
                "workload.n_intra=2",
                "workload.placement=explicit",
                "workload.senders=[1,2]",
            ],
            "workload.senders",
        ),
    ],
)
def test_incast_that_cannot_reach_the_bottleneck_is_refused(tmp_path, extra, field):
    cfg = uno.compose([*DUMBBELL_INCAST, "topo.bottleneck_rate_gbps=10", *extra])
    with pytest.raises(ConfigError) as err:
        uno.run(cfg, out_dir=tmp_path / "run")
    assert err.value.field == field
    assert "no flow crosses the topology's bottleneck" in str(err.value)
    assert not (tmp_path / "run").exists()


def test_incast_with_one_flow_across_the_bottleneck_is_accepted():
    # receiver s0: s1..s3 stay on the left switch, r0's flow crosses the bottleneck
    sc = scenario_of([*DUMBBELL_INCAST, "workload.receiver=0"])
    assert {p.spec.src for p in sc.flows} == {1, 2, 3, 4}


def test_cli_refuses_an_incast_that_misses_the_bottleneck(tmp_path):
    proc = uno_cli(
        [
            *DUMBBELL_INCAST,
            "topo.bottleneck_rate_gbps=10",
            "workload.receiver=0",
            "workload.n_intra=3",
        ],
        tmp_path,
    )
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, (out, err)
    assert "workload.receiver" in err and "Traceback" not in err
    assert not list(tmp_path.rglob("summary.json"))


# ---- bar charts -----------------------------------------------------------------------------
def tick_labels(ax) -> list[str]:
    ax.figure.canvas.draw()
    return [t.get_text() for t in ax.get_yticklabels() if t.get_text()]


def assert_plain(labels: list[str]) -> None:
    assert labels
    for text in labels:
        assert all(c in "0123456789.,-−" for c in text), text


def test_a_sweeps_bars_are_on_a_linear_axis_from_zero(tmp_path):
    for i, cc in enumerate(("dctcp", "dcqcn")):
        uno.run(uno.compose([*DUMBBELL_INCAST, f"cc={cc}"]), out_dir=tmp_path / "sweep" / str(i))
    table = class_table(run_flows(tmp_path / "sweep"), ["label"])
    values = table[["mean_fct_us", "p99_fct_us"]].to_numpy()
    assert values.max() < LOG_SPAN * values.min()  # a few x apart at most
    plt, fig = class_bars_figure(table)
    (ax,) = fig.axes[:1]
    assert ax.get_yscale() == "linear"
    assert ax.get_ylim()[0] == 0 and ax.get_ylim()[1] >= values.max()
    assert ax.get_ylabel() == "FCT (µs)"
    assert_plain(tick_labels(ax))
    assert len(ax.patches) == 2 * len(table)
    plt.close(fig)


def test_bars_spanning_decades_go_on_a_labelled_log_axis():
    idx = pd.MultiIndex.from_tuples([("a", "intra"), ("b", "intra")], names=["label", "cls"])
    table = pd.DataFrame({"mean_fct_us": [12.0, 40.0], "p99_fct_us": [90.0, 5000.0]}, index=idx)
    plt, fig = class_bars_figure(table)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert ax.get_ylabel() == "FCT (µs) (log scale)"
    assert ax.get_ylim()[0] == 10 and ax.get_ylim()[1] >= 5000
    labels = tick_labels(ax)
    assert_plain(labels)
    assert "100" in labels and "1000" in labels
    plt.close(fig)


# ---- summaries and run headers --------------------------------------------------------------
def test_option_names_are_the_chosen_options_with_the_builders_detail():
    run = {"topo": "two_dc_k8", "workload": "incast"}
    choices = {"topo": "two_dc", "workload": "mixed_incast", "cc": "uno"}
    names = option_names({**run, "choices": choices})
    assert names == {
        "topo": "two_dc",
        "topo_detail": "two_dc_k8",
        "workload": "mixed_incast",
        "workload_detail": "incast",
    }
    assert option_names({**run, **names, "choices": choices}) == names  # applied twice
    assert option_names(run) == {"topo": "two_dc_k8", "workload": "incast"}  # no choices
    same = option_names({"topo": "dumbbell", "workload": "incast", "choices": {"topo": "dumbbell"}})
    assert same == {"topo": "dumbbell", "workload": "incast"}


def packet_summary(dropped: dict) -> dict:
    return {
        "run": {
            "name": "x",
            "seed": 1,
            "engine": "packet",
            "topo": "dumbbell",
            "workload": "incast",
            "cc": "dctcp",
            "lb": "ecmp",
            "sim_time_us": 10.0,
            "wall_s": 0.5,
            "packet_hops": 1000,
            "packet_hops_per_s": 2000.0,
        },  # fmt: skip
        "classes": {},
        "packets": {"injected": {"data": 10, "ack": 9}, "dropped": dropped, "in_network": 0},
        "retransmits": 0,
    }


def test_dropped_line_without_drops_reads_cleanly():
    text = format_summary(packet_summary({}))
    assert "dropped 0, retransmitted 0," in text
    assert "{}" not in text and " ," not in text
    text = format_summary(packet_summary({"buffer_full/data": 0, "fault/data": 0}))
    assert "dropped 0, retransmitted 0," in text
    text = format_summary(packet_summary({"buffer_full/data": 1200, "fault/data": 3}))
    assert "dropped 1,203 (buffer_full/data 1,200, fault/data 3), retransmitted 0" in text


def test_a_fluid_run_says_when_finished_flows_left_bytes_at_the_links():
    summary = packet_summary({})
    summary["run"]["all_flows_finished"] = True
    summary["fluid"] = {"queued_bytes_at_end": 0.0}
    assert "still queued" not in format_summary(summary)
    summary["fluid"]["queued_bytes_at_end"] = 2_974_326.4
    assert "fluid: 2,974,326 B of the flows' bytes still queued" in format_summary(summary)
    summary["run"]["all_flows_finished"] = False  # (a run stopped early holds bytes anyway)
    assert "still queued" not in format_summary(summary)


def test_a_flow_level_run_says_when_its_finished_flows_bytes_do_not_add_up():
    """A fluid or hybrid run's finished flows whose bytes sent are more or less than those
    acknowledged and lost (or left in flight) are named in its report, past a data packet's
    worth (float sums over many flows round to a few bytes)."""
    summary = packet_summary({})
    summary["fluid"] = {"queued_bytes_at_end": 0.0, "unaccounted_bytes": 2.03}
    assert "do not add up" not in format_summary(summary)
    summary["fluid"]["unaccounted_bytes"] = 8404.0
    assert "fluid: 8,404 B the finished flows sent" in format_summary(summary)
    summary.pop("fluid")
    summary["hybrid"] = {"fluid_unaccounted_bytes": 12_606.0}
    assert "fluid: 12,606 B the finished flows sent" in format_summary(summary)


def test_a_hybrid_runs_packets_line_counts_its_packet_flows_retransmits():
    """A hybrid's summary counts every flow's retransmits; its packets line, its packet
    flows' alone (the fluid flows' lost bytes are no packets the data plane sent)."""
    summary = packet_summary({})
    summary["retransmits"] = 237_678
    summary["hybrid"] = {"fluid_retransmits": 237_600}
    assert "retransmitted 78, in network" in format_summary(summary)
    summary.pop("hybrid")
    assert "retransmitted 237,678, in network" in format_summary(summary)


def test_summary_header_names_the_chosen_options():
    summary = packet_summary({})
    summary["run"].update(topo="two_dc_k8", workload="incast")
    assert "topo=two_dc_k8 workload=incast cc=dctcp lb=ecmp" in format_summary(summary)
    summary["run"]["choices"] = {"topo": "two_dc", "workload": "mixed_incast"}
    assert "topo=two_dc workload=mixed_incast cc=dctcp lb=ecmp" in format_summary(summary)


def test_run_header_names_the_chosen_options():
    cfg = to_run_config(uno.compose(["topo.k=4", "workload.n_intra=1", "workload.n_inter=1"]))
    sim = build_simulation(cfg)
    assert "topo=two_dc_k4 workload=incast " in _header(sim, "0" * 12, None)  # from Python
    sim.meta["choices"] = {"topo": "two_dc", "workload": "mixed_incast"}
    assert "topo=two_dc workload=mixed_incast cc=uno lb=spray," in _header(sim, "0" * 12, None)


def test_cli_header_and_summary_name_the_chosen_options(tmp_path):
    proc = uno_cli(
        [
            "topo.k=4",
            "workload.n_intra=1",
            "workload.n_inter=1",
            "workload.size_bytes=100000",
            "cc=dctcp",
            "lb=ecmp",
            "engine.sample_interval_us=0",
            "engine.progress=false",
            f"out_dir={tmp_path / 'run'}",
        ],  # fmt: skip
        tmp_path,
    )
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    text = out + err
    header, summary = (line for line in text.splitlines() if "uno run '" in line)
    for line in (header, summary):
        assert "topo=two_dc workload=mixed_incast cc=dctcp lb=ecmp" in line, line
    # summary.json: the options as chosen, the builder's names beside them
    run = json.loads((tmp_path / "run" / "summary.json").read_text())["run"]
    assert (run["topo"], run["workload"]) == ("two_dc", "mixed_incast")
    assert (run["topo_detail"], run["workload_detail"]) == ("two_dc_k4", "incast")


@pytest.mark.parametrize("engine", ["fluid", "maxmin", "hybrid", "packet"])
def test_summaries_show_the_measures_of_their_engine(engine):
    # (the hybrid runs flows up to 300 kB, here all of them, as packets)
    extra = ["engine.hybrid_packet_max_bytes=300000"] if engine == "hybrid" else []
    result = uno.run(uno.compose([*DUMBBELL_INCAST, f"engine.kind={engine}", *extra]))
    header, work = format_summary(result.summary).splitlines()[:2]
    if engine in ("packet", "hybrid"):
        assert f"{result.summary['run']['packet_hops']:,} packet-hops" in work
        assert result.summary["run"]["packet_hops"] > 0
    else:
        assert "packet-hops" not in work
    if engine in ("fluid", "hybrid"):
        assert f"{result.summary['run']['fluid_steps']:,} fluid steps" in work
    if engine == "maxmin":
        n = result.summary["run"]["maxmin_rate_computations"]
        assert f"({n:,} rate computation" in work and "fluid steps" not in work
        assert "cc=" not in header and " lb=ecmp" in header
    else:
        assert " cc=dctcp lb=ecmp" in header


def test_engines_without_cc_are_those_that_run_no_controller():
    from uno.fluid.engine import FluidSimulation
    from uno.fluid.maxmin import MaxMinSimulation

    runs_cc = {"fluid": FluidSimulation.runs_cc, "maxmin": MaxMinSimulation.runs_cc}
    assert {k for k, v in runs_cc.items() if not v} == set(ENGINES_WITHOUT_CC)


# ---- the benchmark's data plane ---------------------------------------------------------------
def test_engine_speed_scenario_runs_the_compiled_data_plane_by_default():
    path = ROOT / "benchmarks" / "engine_speed.py"
    spec = importlib.util.spec_from_file_location("engine_speed", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    cfg = to_run_config(uno.compose(bench.SCENARIO))
    assert cfg.engine.dataplane == "auto" and resolve_dataplane(cfg) == "compiled"
    assert "default ``engine.dataplane=auto``" in bench.__doc__


def test_a_flow_level_run_names_flows_whose_bytes_in_flight_nothing_will_release():
    """A fluid or hybrid run whose unfinished flows hold bytes in flight that no ACK and no
    timer will release says so, naming the first: a longer run would not finish them."""
    summary = packet_summary({})
    summary["fluid"] = {"queued_bytes_at_end": 0.0, "stalled_flows": 0, "stalled_flow_id": -1}
    assert "no ACK and no timer" not in format_summary(summary)
    summary["fluid"].update(stalled_flows=6, stalled_flow_id=46)
    assert "fluid: 6 unfinished flows (the first: flow 46) hold bytes" in format_summary(summary)
    summary.pop("fluid")
    summary["hybrid"] = {"fluid_stalled_flows": 2, "fluid_stalled_flow_id": 7}
    assert "fluid: 2 unfinished flows (the first: flow 7)" in format_summary(summary)
