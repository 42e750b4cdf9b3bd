"""The DCI switches' element in the fluid engine (uno/fluid/dci.py): MLCC's per-flow queues at
the receiver-side DCI switch, its receiver's credit loop and the sender-side switch's
Switch-INT notices, against the packet engine and on their own."""

from __future__ import annotations

import numpy as np
import pytest

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.cc.mlcc import RS
from uno.core.errors import ConfigError
from uno.fluid import kernels as K
from uno.fluid.dci import pfq_step

#: MLCC's Figs. 8-9 flows (rack 1 of DC 0 and rack 5 of DC 1 to rack 6 of DC 1)
FIG9 = ["experiment=mlcc_fig9", "engine.progress=false", "engine.sample_interval_us=0",
        "engine.max_sim_time_ms=300"]  # fmt: skip


def _sim(engine: str, flows: list[int], size: int, extra=()):
    """``mlcc_fig9``'s flows ``flows``, each of ``size`` bytes, in ``engine``."""
    cfg = uno.compose([*FIG9, f"engine.kind={engine}", *extra,
                       *(["engine.dataplane=auto"] if engine == "fluid" else [])])  # fmt: skip
    cfg.workload.flows = [cfg.workload.flows[i] for i in flows]
    for flow in cfg.workload.flows:
        flow.size_bytes = size
    return build_simulation(to_run_config(cfg))


def test_a_lone_cross_dc_flow_finishes_as_with_packets():
    """One 20-MB cross-DC MLCC flow alone: its first window waits in the receiver-side DCI
    switch's per-flow queue, which the receiver's credit loop drains at the line rate it
    finds free; its ACKs come as its bytes are delivered. The FCT within 2% of the packet
    run's (fluid 12.94, packets 12.96 ms; ideal 12.61 ms)."""
    fluid = _sim("fluid", [0], 20_000_000).run().flows["fct_ps"].iloc[0]
    packet = _sim("packet", [0], 20_000_000).run().flows["fct_ps"].iloc[0]
    assert fluid == pytest.approx(packet, rel=0.02)


def test_the_receiver_driven_loop_queues_and_credits_the_cross_dc_flows():
    """Four cross-DC flows meet four intra-DC flows at their receivers' links: mid-run the
    per-flow queues hold bytes, drained below the line rate at the rate the receivers'
    credit rounds set (Algorithm 1), which the queues took from their ACKs; every flow ends
    with its bytes delivered."""
    sim = _sim("fluid", list(range(8)), 20_000_000, ["engine.max_sim_time_ms=4.8",
                                                     "engine.allow_unfinished=true"])  # fmt: skip
    sim.run()
    fs, cs = sim.fs, sim.cs
    cross = np.arange(4)
    assert (fs[cross, K.FS_PFQ] > 1e5).all()  # (MB of the first window wait there)
    assert (fs[4:, K.FS_PFQ_RATE] == 0).all() and (fs[4:, K.FS_RX_P] == 0).all()
    s0 = int(fs[0, K.FS_RX_S])
    rounds = cs[cross, s0 + RS.rounds]
    assert (rounds > 10).all()
    credit_bps = cs[cross, s0 + RS.credit_rate_bps]
    line = 25e9
    assert (credit_bps < 0.9 * line).all()
    # a round's credit and rate are on their way to the queue (a new round begins as the
    # last one's stamped bytes arrive): the queue stamps the one before
    credit = cs[cross, s0 + RS.credit]
    assert (fs[cross, K.FS_PFQ_NEXT_AT] > sim.now_ps).all()
    assert (fs[cross, K.FS_PFQ_NEXT_CD] == credit).all()
    assert (fs[cross, K.FS_PFQ_CD] == credit - 1).all()
    assert np.allclose(fs[cross, K.FS_PFQ_NEXT_RATE], credit_bps / 8e12)
    assert (fs[cross, K.FS_PFQ_RATE] * 8e12 < 0.9 * line).all()  # (the last round's rate)
    done = _sim("fluid", list(range(8)), 2_000_000).run().flows
    assert done["fct_ps"].notna().all()
    assert (done["bytes_delivered"] >= done["size_bytes"]).all()


def test_switch_int_notices_pace_the_cross_dc_flows_at_the_sender():
    """MLCC Fig. 7's bottleneck in the sender's datacenter: eight intra-DC and eight cross-DC
    flows share rack 1's uplinks. The sender-side DCI switch's notices (R_NS) slow the
    cross-DC flows within the first base RTT, before any ACK: without them they send their
    first window at line rate."""
    base = ["experiment=mlcc_fig7", "engine.kind=fluid", "engine.dataplane=auto",
            "engine.progress=false", "engine.sample_interval_us=0", "engine.max_sim_time_ms=4",
            "engine.allow_unfinished=true"]  # fmt: skip

    def cross_sent(extra, notices):
        cfg = uno.compose([*base, *extra])
        sim = build_simulation(to_run_config(cfg))
        sim.run()
        cross = sim.fs[:, K.FS_PFQ_RATE] > 0
        assert cross.sum() == 8
        assert ((sim.fs[:, K.FS_NS_HOPS] == 2) == (cross & notices)).all()  # (leaf, spine)
        return sim.fs[cross, K.FS_SENT].sum()

    with_notices = cross_sent([], True)
    without = cross_sent(["switch.dci.near_source=false"], False)
    assert with_notices < 0.8 * without


def test_a_per_flow_queue_lets_go_at_most_its_rate():
    """:func:`uno.fluid.dci.pfq_step` (its Python twin): arrivals join the queue, which lets
    go at most its rate a step into the next hop and keeps the rest (bytes and marks
    conserved); the credit and rate on the way take effect when due; a queue holding bytes is
    due next step."""
    fs = np.zeros((1, K.N_FS))
    fx = np.zeros((1, K.N_FX))
    fx[0, K.FX_FIRST] = 99
    ef = np.zeros((4, K.N_EF))
    ring = np.zeros((8, K.N_R_NARROW))
    calendar = np.zeros((16, 1), dtype=np.uint64)
    fs[0, K.FS_WIRE_NEXT] = 2
    fs[0, K.FS_PFQ_RATE] = 0.001  # bytes/ps (8 Gb/s)
    fs[0, K.FS_PFQ_CD] = -1.0
    fs[0, K.FS_PFQ_NEXT_CD] = 3.0
    fs[0, K.FS_PFQ_NEXT_RATE] = 0.002
    fs[0, K.FS_PFQ_NEXT_AT] = 2_000_000.0
    dt = 1_000_000.0
    ring[5, K.R_WIRE] = 5000.0
    ring[5, K.R_WIRE_M] = 1000.0
    pfq_step.py_func(0, 5, 1_000_000.0, dt, 5, fs, fx, ring, ef, calendar)
    assert ef[2, K.EF_CARRY] == pytest.approx(1000.0)  # (its rate for a step)
    assert ef[2, K.EF_MCARRY] == pytest.approx(200.0)
    assert fs[0, K.FS_PFQ] == pytest.approx(4000.0) and fs[0, K.FS_PFQ_M] == pytest.approx(800.0)
    assert ring[5, K.R_WIRE] == 0.0 and fx[0, K.FX_FIRST] == 2
    assert calendar[6, 0] == 1 and fs[0, K.FS_PFQ_CD] == -1.0
    pfq_step.py_func(0, 6, 2_000_000.0, dt, 6, fs, fx, ring, ef, calendar)  # (the ACKs arrive)
    assert fs[0, K.FS_PFQ_CD] == 3.0 and fs[0, K.FS_PFQ_CD_AT] == 2_000_000.0
    assert ef[2, K.EF_CARRY] == pytest.approx(3000.0) and fs[0, K.FS_PFQ] == pytest.approx(2000.0)
    pfq_step.py_func(0, 7, 3_000_000.0, dt, 7, fs, fx, ring, ef, calendar)
    assert fs[0, K.FS_PFQ] == 0.0 and ef[2, K.EF_CARRY] == pytest.approx(5000.0)
    assert ef[2, K.EF_MCARRY] == pytest.approx(1000.0) and calendar[8, 0] == 0


def test_mlcc_without_the_per_flow_queues_is_refused():
    """MLCC without the per-flow queues is refused in the fluid engine as in the packet
    engine."""
    with pytest.raises(ConfigError, match="switch.dci.enabled"):
        _sim("fluid", [0, 4], 1_000_000, ["switch.dci.enabled=false"])


def test_the_hybrid_runs_each_kinds_dci_element():
    """A cross-DC and an intra-DC MLCC flow of 4 MB to one receiver, PFC on: in the hybrid
    with every flow as packets the run is the packet engine's; with the cross-DC flow as
    packets beside the intra-DC one fluid, its packets wait in the receiver-side DCI switch's
    per-flow queue and its sender hears the sender-side switch's notices, as in the packet
    run, and both flows finish."""
    hybrid = ["engine.kind=hybrid", "engine.dataplane=auto"]
    packet = _sim("packet", [0, 4], 4_000_000, ["engine.dataplane=auto"]).run()
    same = _sim("hybrid", [0, 4], 4_000_000, [*hybrid, "engine.hybrid_packet_tags=[cross,intra]"])
    same = same.run()
    assert same.flows["finish_ps"].tolist() == packet.flows["finish_ps"].tolist()
    assert same.summary["dci"] == packet.summary["dci"]
    mixed = _sim("hybrid", [0, 4], 4_000_000, [*hybrid, "engine.hybrid_packet_tags=[cross]"])
    mixed = mixed.run()
    assert mixed.flows["finish_ps"].notna().all()
    for run in (packet, mixed):
        sides = run.summary["dci"].values()
        assert sum(d["pfq_packets"] for d in sides) > 0
        assert sum(d["switch_int_notices"] for d in sides) > 0


def test_the_queues_table_samples_the_per_flow_queues_as_the_packet_recorder_does():
    """The fluid run's queues table holds the receiver-side DCI switch's per-flow queues under
    the packet recorder's names (``<switch>/pfq``, ``<switch>/pfq/flow<id>``): the switch's row
    is the sum of its flows' rows at each sample, which :func:`uno.metrics.dci.pfq_levels`
    reads."""
    from uno.metrics.dci import pfq_levels

    sim = _sim("fluid", list(range(8)), 20_000_000, ["engine.sample_interval_us=500",
                                                     "engine.max_sim_time_ms=8"])  # fmt: skip
    queues = sim.run().tables["queues"]
    total = queues[queues["port"] == "dc1/dci/pfq"].set_index("time_ps")["queue_bytes"]
    flows = queues[queues["port"].str.startswith("dc1/dci/pfq/flow")]
    assert set(flows["port"]) == {f"dc1/dci/pfq/flow{i}" for i in range(4)}
    summed = flows.groupby("time_ps")["queue_bytes"].sum().reindex(total.index).fillna(0.0)
    np.testing.assert_allclose(summed.to_numpy(), total.to_numpy())
    levels = pfq_levels(queues, "dc1/dci", int(6e9))
    assert levels["peak_total_bytes"] > 4e6 and 4.0 < levels["peak_ms"] <= 8.0


def test_a_cross_dc_flows_acks_carry_the_records_of_the_receivers_datacenter_only():
    """Under HPCC with the DCI switches' element (`scheme=mlcc_hpcc`, ``switch.dci.enabled``),
    the receiver-side DCI switch erases a cross-DC packet's records and its ports into its
    datacenter write new ones: the ACK batches carry the records of the hops after the wire
    link only (``FS_DCI_HOP0`` on), the intra-DC flow's of its whole path; a lone cross-DC
    flow's FCT within 5% of the packet engine's."""
    extra = ["scheme=mlcc_hpcc", "switch.dci.enabled=true"]
    sim = _sim("fluid", [0, 4], 4_000_000, extra)
    fs = sim.fs
    assert fs[0, K.FS_DCI_HOP0] == 2 and fs[1, K.FS_DCI_HOP0] == 0  # (leaf and spine uplinks)
    sim.run()
    assert K.packet_records.py_func(0, sim.hops, -1, 2) == 3  # (DCI, spine, leaf downlinks)
    assert K.packet_records.py_func(1, sim.hops) == 3
    fluid = _sim("fluid", [0], 20_000_000, extra).run().flows["fct_ps"].iloc[0]
    packet = _sim("packet", [0], 20_000_000, extra).run().flows["fct_ps"].iloc[0]
    assert fluid == pytest.approx(packet, rel=0.05)


def test_cross_dc_flows_account_for_every_byte_sent_with_losses_drawn_in_whole_packets():
    """On the Fig. 10 traffic (150 flows, MLCC), cross-DC flows whose ACKs follow their
    deliveries lose bytes at the border: the links drop bytes and the draw loses whole
    packets, more or fewer, and the difference is settled at the draw. Every flow finishes
    with what it sent acknowledged or lost, byte for byte, and nothing left in flight
    (unsettled, a flow whose draws fell short of its drops would keep the difference in
    flight with no ACK or timer to come for it; one whose draws went over would have its
    timer take out of flight bytes its ACKs had taken already)."""
    cfg = uno.compose(["experiment=fig10_load", "scheme=mlcc_mlcc", "workload.n_flows=150",
                       "engine.kind=fluid", "engine.progress=false",
                       "engine.sample_interval_us=0"])  # fmt: skip
    sim = build_simulation(to_run_config(cfg))
    result = sim.run()
    flows = result.flows
    fs = sim.fs
    pfq = fs[:, K.FS_PFQ_RATE] > 0
    assert result.summary["fluid"]["unaccounted_bytes"] < 1e-3
    assert (fs[pfq, K.FS_LOST] > 0).sum() >= 10  # (the case: cross-DC flows that lost bytes)
    assert flows["fct_ps"].notna().all()
    unaccounted = fs[:, K.FS_SENT] - fs[:, K.FS_ACKED] - fs[:, K.FS_LOST]
    assert np.abs(unaccounted).max() < 1e-3
    assert np.abs(fs[:, K.FS_INFLIGHT]).max() < 1e-3
