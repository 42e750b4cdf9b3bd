"""Faults in the fluid engine (uno/fluid/faults.py): failed links lose what leaves them and the
ACKs that cross them, lossy links a share of it, against the packet engine on REPS's Fig. 4
setting (SMaRTT with trimming, the links from the cores to the first aggregation switch down),
on a k=4 tree."""

from __future__ import annotations

import numpy as np
import pytest

import uno
from uno.core.errors import ConfigError

FAILED = [
    "experiment=reps_failures", "topo.k=4", "lb=ecmp", "engine.record_rtts=false",
    "engine.progress=false", "engine.max_sim_time_ms=5",
]  # fmt: skip
BACK_AT_300_US = (
    "faults.link_failures=[{ports:['core*->agg0'],both_directions:false,at_us:0,until_us:300}]"
)
LOSSY = ["faults.link_failures=[]",
         "faults.losses=[{ports:['*->*'],both_directions:false,probability:0.002}]"]  # fmt: skip
#: Table 1's model at a higher rate: per block of 10 packets, 1, 2 or 3 lost with these
#: chances, a packet in 500 on average
LOSSY_BLOCKS = [
    "faults.link_failures=[]",
    "faults.losses=[{ports:['*->*'],both_directions:false,block_probabilities:[0.01,0.002,0.002]}]",
]  # fmt: skip


def _both(extra):
    return [uno.run(uno.compose([*FAILED, *extra, f"engine.kind={kind}"]))
            for kind in ("packet", "fluid")]  # fmt: skip


def _unfinished(result):
    flows = result.flows
    return sorted(flows.loc[flows["finish_ps"].isna(), "flow_id"].tolist())


def test_the_flows_a_failed_link_black_holes_never_finish():
    """ECMP keeps each flow on its path: the flows whose data or ACKs cross a failed link never
    finish, in both engines the same flows, timing out (their losses are not trimmed); the
    others finish as with packets."""
    packet, fluid = _both([])
    stuck = _unfinished(packet)
    assert stuck and _unfinished(fluid) == stuck
    flows = fluid.flows
    assert (flows.loc[flows["finish_ps"].isna(), "timeouts"] > 0).all()
    assert (
        fluid.summary["faults"]["links_with_faults"]
        == packet.summary["faults"]["links_with_faults"]
    )
    ports = fluid.tables["ports"]
    assert ports.loc[ports["port"].str.match(r"core\d+->agg0$"), "fault_drops"].sum() > 0
    assert ports.loc[~ports["port"].str.match(r"core\d+->agg0$"), "fault_drops"].sum() == 0
    done = [r.flows["fct_ps"].dropna() for r in (packet, fluid)]
    assert done[1].mean() == pytest.approx(done[0].mean(), rel=0.1)


def test_a_link_that_comes_back_lets_its_flows_finish():
    """Down for the first 300 us, then up: every flow finishes, those that crossed it after it
    came back, the FCTs within the targets of the packet run's."""
    packet, fluid = _both([BACK_AT_300_US])
    assert not _unfinished(packet) and not _unfinished(fluid)
    late = fluid.flows.loc[fluid.flows["timeouts"] > 0, "finish_ps"]
    assert len(late) and (late > 300e6).all()
    for stat in ("mean", "max"):
        ours, theirs = fluid.flows["fct_ps"].agg(stat), packet.flows["fct_ps"].agg(stat)
        assert ours == pytest.approx(theirs, rel=0.1 if stat == "mean" else 0.2)


def test_lossy_links_lose_their_share():
    """Every port loses a packet in 500: the fluid's links lose that share of the data packets
    they send, the flows find them (timeouts as many as with packets, within a third), and the
    FCTs stay within the targets."""
    packet, fluid = _both(LOSSY)
    ports = fluid.tables["ports"]
    assert ports["fault_drops"].sum() / ports["tx_packets"].sum() == pytest.approx(0.002, rel=0.25)
    assert fluid.flows["timeouts"].sum() == pytest.approx(packet.flows["timeouts"].sum(), rel=0.33)
    for stat in ("mean", lambda x: x.quantile(0.99)):
        ours, theirs = fluid.flows["fct_ps"].agg(stat), packet.flows["fct_ps"].agg(stat)
        assert ours == pytest.approx(theirs, rel=0.1 if stat == "mean" else 0.2)


def test_block_losses_lose_their_mean_rate():
    """The correlated losses of Table 1's model (here a packet in 500 on average): the fluid's
    links lose their mean rate, and the flows' timeouts and FCTs stay within the same targets
    of the packet run's, whose ports lose the packets in clusters."""
    packet, fluid = _both(LOSSY_BLOCKS)
    for run in (packet, fluid):
        ports = run.tables["ports"]
        share = ports["fault_drops"].sum() / ports["tx_packets"].sum()
        assert share == pytest.approx(0.002, rel=0.25)
    assert sum(packet.summary["faults"]["block_losses"][2:]) > 0  # (clusters, in packets)
    assert fluid.flows["timeouts"].sum() == pytest.approx(packet.flows["timeouts"].sum(), rel=0.33)
    for stat in ("mean", lambda x: x.quantile(0.99)):
        ours, theirs = fluid.flows["fct_ps"].agg(stat), packet.flows["fct_ps"].agg(stat)
        assert ours == pytest.approx(theirs, rel=0.1 if stat == "mean" else 0.2)


def test_faults_change_nothing_where_there_are_none():
    """A loss probability of 0 on every port is no fault: the same run as without."""
    base = [*FAILED, "engine.kind=fluid", "faults.link_failures=[]"]
    plain = uno.run(uno.compose(base))
    zero = uno.run(uno.compose([*base, LOSSY[1].replace("0.002", "0.0")]))
    assert np.array_equal(plain.flows["finish_ps"], zero.flows["finish_ps"])
    assert "faults" not in plain.summary


@pytest.mark.parametrize(
    "extra, field",
    [
        (["engine.kind=maxmin", "faults.link_failures=[]", LOSSY_BLOCKS[1]], r"faults\.losses"),
        (["engine.kind=maxmin"], r"faults\.link_failures"),
        (["engine.kind=fluid", "faults.link_failures=[{ports:['nowhere->*']}]"],
         r"faults\.link_failures\[0\]\.ports\[0\]"),
    ],
)  # fmt: skip
def test_what_the_flow_level_engines_refuse(extra, field):
    with pytest.raises(ConfigError, match=field):
        uno.run(uno.compose([*FAILED, *extra]))


def test_a_sprayed_coded_flow_over_a_failed_link_mostly_decodes():
    """Eight flows sprayed over the eight WAN links, one of them down: each packet of a block
    meets the failed link with a chance of one in eight (not the failed branch's bytes' chance,
    1, for the whole block), so most blocks decode, the rest are NACKed, and coding shortens
    the flows as with packets."""
    base = ["experiment=fig13_linkfail", "lb=spray", "faults=artifact_fail_one",
            "engine.kind=fluid", "engine.progress=false"]  # fmt: skip
    coded = uno.run(uno.compose([*base, "ec=mds"])).flows
    plain = uno.run(uno.compose([*base, "ec=none"])).flows
    assert coded["finish_ps"].notna().all() and coded["nacks"].sum() > 0
    assert coded["fct_ps"].mean() < 0.75 * plain["fct_ps"].mean()


HYBRID_FLOWS = ",".join(
    f"{{src:{s},dst:{d},size_bytes:{b}}}"
    for s, d, b in [(4, 0, 10**6), (5, 1, 4 * 10**6), (8, 2, 10**6), (9, 3, 4 * 10**6),
                    (12, 0, 10**6), (13, 1, 4 * 10**6), (0, 4, 10**6), (1, 8, 4 * 10**6),
                    (2, 12, 10**6), (3, 5, 4 * 10**6)]
)  # fmt: skip


@pytest.mark.parametrize("until", ["", ",until_us:300"])
def test_the_hybrid_fails_its_packets_and_its_fluid_alike(until):
    """The hybrid (flows of 1 MB as packets, of 4 MB as fluid): the links from the cores to the
    first aggregation switch fail at 100 us, a scheduled change of the fluid links (the packet
    ports' own fault models drop the packets), and the same flows as in the packet run never
    finish; back at 300 us, every flow finishes."""
    base = [
        "topo=fat_tree", "topo.k=4", "workload=flows", f"workload.flows=[{HYBRID_FLOWS}]",
        "lb=ecmp", "cc=dctcp", "engine.progress=false", "engine.max_sim_time_ms=5",
        "engine.allow_unfinished=true", "engine.sample_interval_us=0",
        f"faults.link_failures=[{{ports:['core*->agg0'],both_directions:false,at_us:100{until}}}]",
    ]  # fmt: skip
    packet = uno.run(uno.compose([*base, "engine.kind=packet"]))
    hybrid = uno.run(uno.compose([*base, "engine.kind=hybrid",
                                  "engine.hybrid_packet_max_bytes=1000000"]))  # fmt: skip
    assert _unfinished(hybrid) == _unfinished(packet)
    assert bool(_unfinished(packet)) == (until == "")
    assert hybrid.summary["hybrid"]["fluid_flows"] == 5


def test_the_artifacts_unolb_on_its_failed_wan_link():
    """The Uno artifact's UnoLB (``lb=unolb_artifact``: silent subflows move to random paths;
    the ACKs on the receivers' 256 cycled entropies) on the artifact's Fig. 13 A, uncoded, seeds
    111-114 (the subflows' random moves differ between the engines, so single runs differ by
    up to a third): every flow finishes, and over the seeds the fluid's mean FCT is within 10%
    of the packets' and its p99 within 20%."""
    over = ["experiment=artifact_fig13_linkfail", "ec=none", "engine.progress=false"]
    means, p99s = {}, {}
    for engine in ("packet", "fluid"):
        runs = [uno.run(uno.compose([*over, f"seed={s}", f"engine.kind={engine}"])).flows
                for s in range(111, 115)]  # fmt: skip
        assert all(r["fct_ps"].notna().all() and r["timeouts"].sum() > 0 for r in runs)
        means[engine] = np.mean([r["fct_ps"].mean() for r in runs])
        p99s[engine] = np.mean([r["fct_ps"].quantile(0.99) for r in runs])
    assert means["fluid"] == pytest.approx(means["packet"], rel=0.1)
    assert p99s["fluid"] == pytest.approx(p99s["packet"], rel=0.2)


def test_the_artifacts_coded_fig13a_runs_in_the_fluid():
    """The Uno artifact's Fig. 13 A with coding sets ``ec.retransmit_timeout=target_rtt``: a
    block a retransmission opened waits 1.05 base RTTs for its NACK. Every flow finishes, its
    blocks NACKed where they failed."""
    from uno.api import to_run_config
    from uno.build import build_simulation
    from uno.fluid import columns as C

    over = ["experiment=artifact_fig13_linkfail", "ec=mds", "lb=plb", "seed=111",
            "engine.kind=fluid", "engine.progress=false"]  # fmt: skip
    sim = build_simulation(to_run_config(uno.compose(over)))
    fs = sim.fs
    assert fs[:, C.FS_RETX_LOSS_DELAY] == pytest.approx(1.05 * fs[:, C.FS_BASE_RTT], rel=1e-6)
    assert (fs[:, C.FS_LOSS_DELAY] < fs[:, C.FS_RETX_LOSS_DELAY]).all()
    flows = sim.run().flows
    assert flows["finish_ps"].notna().all() and flows["nacks"].sum() > 0
