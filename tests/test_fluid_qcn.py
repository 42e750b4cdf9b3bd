"""QCN congestion points in the fluid engine (uno/fluid/qcn.py): the samples against the packet
ports' congestion point, the notices' return delays, Annulus against the packet engine (and in
the hybrid), and where the engines refuse it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import uno
from uno.fluid import columns as C
from uno.fluid.qcn import QP, return_delays, take_samples
from uno.net.qcn import CongestionPoint

QEQ, W, SAMPLE = 34_000.0, 8.0, 15_000.0


def point_row(counted=0.0, qold=0.0, q_end=0.0, q_at=-1.0, accepted=0.0) -> np.ndarray:
    qcn = np.zeros((1, QP.size))
    qcn[0, QP.qeq], qcn[0, QP.w], qcn[0, QP.sample] = QEQ, W, SAMPLE
    qcn[0, QP.counted], qcn[0, QP.qold] = counted, qold
    qcn[0, QP.q_end], qcn[0, QP.q_at], qcn[0, QP.accepted] = q_end, q_at, accepted
    return qcn


def packet_samples(counted, qold, q_start, q_end, accepted, packet_bytes=1_500):
    """The packet ports' congestion point fed ``accepted`` bytes in packets, the queue growing
    evenly from ``q_start`` to ``q_end`` as they join it: (notices, sum of levels)."""
    cp = CongestionPoint(int(SAMPLE), int(QEQ), W)
    cp.counted_bytes, cp.qold_bytes = counted, qold
    notices, levels, joined = 0, 0, 0
    while joined < accepted:
        joined += packet_bytes
        level = cp.accepted(packet_bytes, q_start + (q_end - q_start) * joined / accepted)
        notices += level > 0
        levels += level
    return notices, levels, cp.counted_bytes, cp.qold_bytes


@pytest.mark.parametrize(
    "counted, qold, q_start, q_end, accepted",
    [
        (0, 0, 40_000, 100_000, 60_000),  # a queue building fast: four samples, each notifies
        (6_000, 20_000, 30_000, 36_000, 45_000),  # slow growth near Q_eq
        (3_000, 90_000, 90_000, 40_000, 75_000),  # draining: F_b below 0, no notice
        (12_000, 0, 0, 0, 1_500),  # one sample, an empty queue
    ],
)
def test_samples_match_the_packet_congestion_point(counted, qold, q_start, q_end, accepted):
    """A step's samples where the count crosses each multiple of the interval, the queue at
    the point of the step the sample falls: the packet congestion point's notices, levels,
    count and Q_old, for packets joining a queue that grows evenly over the same bytes."""
    start, end = 10e6, 11e6  # (ps: the step after the one that left the queue at q_start)
    qcn = point_row(counted, qold, q_start, start, accepted)
    take_samples(qcn, 0, start, end, float(q_end), 1e9)
    notices, levels, count_after, qold_after = packet_samples(counted, qold, q_start, q_end,
                                                             accepted)  # fmt: skip
    assert qcn[0, QP.notices] == notices
    assert qcn[0, QP.level_sum] == levels
    assert qcn[0, QP.counted] == pytest.approx(count_after)
    assert qcn[0, QP.qold] == pytest.approx(qold_after)
    assert (qcn[0, QP.q_end], qcn[0, QP.q_at]) == (q_end, end)


def test_the_queue_drains_between_steps_without_arrivals():
    """A link that accepted nothing for three steps of 1 us starts the step with its last
    level drained at its line rate (10 kB a step) over them: 60 kB -> 50 kB -> ... -> 30 kB."""
    rate = 10_000.0 / 1e6  # (bytes/ps)
    qcn = point_row(0.0, 0.0, 60_000.0, 7e6, accepted=15_000.0)  # (the end of step 6)
    take_samples(qcn, 0, 10e6, 11e6, 30_000.0, rate)
    # one sample at the step's end: Q = 30 kB, Q - Q_old = 30 kB: F_b = -4 kB + 240 kB
    assert qcn[0, QP.notices] == 1
    assert qcn[0, QP.level_sum] == 63 * 236_000 // (QEQ * 17)
    qcn = point_row(0.0, 0.0, 60_000.0, 4e6, accepted=15_000.0)  # (long idle: it emptied)
    take_samples(qcn, 0, 10e6, 11e6, 0.0, rate)
    assert qcn[0, QP.notices] == 0


def test_a_notice_returns_twice_the_propagation_before_its_link():
    """Propagation 1 us to the first switch, a split hop of 2 us, a wire link of 5 us (whose
    propagation the fluid's bytes cross on their way out), then 1 us: the notices of the
    hops come back 0, 2, 6 and 2 (1 + 2 + 5) - 5 = 11 us after the bytes reach their link."""
    us = 1e6
    rt_link = np.array([0, 1, 2, 3, 4])
    rt_w = np.array([1.0, 0.5, 0.5, 1.0, 1.0])
    ei = np.zeros((5, C.N_EI), dtype=np.int32)
    ei[:, C.EI_GSTART] = [0, 1, 1, 3, 4]
    ei[3, C.EI_LAG] = -1
    delay = np.array([1, 2, 2, 5, 1]) * us
    back = return_delays(np.array([0, 5]), rt_link, rt_w, ei, delay)
    assert back.tolist() == [0.0, 2 * us, 2 * us, 6 * us, 11 * us]


SMALL = [
    "experiment=gear_fig9", "workload.n_intra=2", "workload.size_bytes=2000000",
    "engine.max_sim_time_ms=200", "engine.sample_interval_us=0", "engine.progress=false",
    "scheme=gear_annulus",
]  # fmt: skip


def test_annulus_in_the_fluid_hears_the_notices_packets_do():
    """Two intra-DC flows of 2 MB and a cross-DC one into one receiver under Annulus: the
    ToR's notices cut the intra-DC flows about as often as in the packet engine, and their
    completion times come within 20% of the packet run's; without the congestion points the
    fluid flows hear none and finish an order of magnitude sooner (in both engines)."""
    packet = uno.run(uno.compose(SMALL)).flows
    fluid = uno.run(uno.compose([*SMALL, "engine.kind=fluid"])).flows
    intra = packet["tag"] != "inter"
    assert packet.loc[intra, "notices"].min() > 10
    ratio = fluid.loc[intra, "notices"].sum() / packet.loc[intra, "notices"].sum()
    assert 0.6 < ratio < 1.4
    gap = fluid.loc[intra, "fct_ps"].mean() / packet.loc[intra, "fct_ps"].mean() - 1.0
    assert abs(gap) < 0.2
    assert fluid["finish_ps"].notna().all()
    off = uno.run(uno.compose([*SMALL, "engine.kind=fluid", "switch.qcn.enabled=false"])).flows
    assert (off["notices"] == 0).all()
    assert off.loc[intra, "fct_ps"].max() < fluid.loc[intra, "fct_ps"].min() / 5


@pytest.mark.parametrize("lb", ["plb", "reps", "unolb"])
def test_flows_on_subflows_hear_the_links_their_subflows_are_at(lb):
    """The same incast with the flows on subflows: the intra-DC flows hear the receiver's ToR
    as in the packet engine, within a factor of two, and finish within 25% of the packet run's
    mean."""
    over = [*SMALL, f"lb={lb}"]
    packet = uno.run(uno.compose(over)).flows
    fluid = uno.run(uno.compose([*over, "engine.kind=fluid"])).flows
    intra = packet["tag"] != "inter"
    ratio = fluid.loc[intra, "notices"].sum() / packet.loc[intra, "notices"].sum()
    assert 0.5 < ratio < 2.0
    gap = fluid.loc[intra, "fct_ps"].mean() / packet.loc[intra, "fct_ps"].mean() - 1.0
    assert abs(gap) < 0.25


@pytest.mark.parametrize("as_packets", ["intra", "inter"])
def test_the_hybrid_hears_the_notices_of_both_kinds_of_flow(as_packets):
    """The incast in the hybrid (PFC off: the Python data plane has no hybrid PFC), the intra-DC or the cross-DC
    flows as packets: the ToR port samples the packets at the link's level (packets and fluid
    bytes), the fluid link the fluid bytes; the intra-DC flows hear about as many notices as in
    the packet run and finish within 20% of it, and both data planes give the same run."""
    over = [*SMALL, "switch.pfc.enabled=false"]
    packet = uno.run(uno.compose(over)).flows
    hybrid = {dp: uno.run(uno.compose([*over, "engine.kind=hybrid", f"engine.dataplane={dp}",
                                       f"engine.hybrid_packet_tags=[{as_packets}]"])).flows
              for dp in ("compiled", "python")}  # fmt: skip
    pd.testing.assert_frame_equal(hybrid["compiled"], hybrid["python"])
    flows = hybrid["compiled"]
    intra = packet["tag"] != "inter"
    ratio = flows.loc[intra, "notices"].sum() / packet.loc[intra, "notices"].sum()
    assert 0.6 < ratio < 1.4
    gap = flows.loc[intra, "fct_ps"].mean() / packet.loc[intra, "fct_ps"].mean() - 1.0
    assert abs(gap) < 0.2
    assert flows["finish_ps"].notna().all()


#: the incast as listed flows: one intra-DC flow as packets, the other and the cross-DC one fluid
MIXED = ["topo=gear_two_dc", "scheme=gear_annulus", "switch.pfc.enabled=false", "workload=flows",
         "workload.flows=[{src:8,dst:0,size_bytes:2000000,tag:pkt},"
         "{src:16,dst:0,size_bytes:2000000,tag:bulk},{src:128,dst:0,size_bytes:2000000,tag:bulk}]",
         "engine.max_sim_time_ms=200", "engine.sample_interval_us=0", "engine.progress=false"]  # fmt: skip


def test_a_packet_flow_beside_a_fluid_one_hears_the_links_queue():
    """An intra-DC packet flow and an intra-DC fluid flow into one receiver: the ToR port samples
    the packets at the link's level, packets and fluid bytes (with its own packets' queue alone
    the packet flow heard too little and finished 43% early), so the packet flow's FCT is the
    packet run's within 10% and its notices within 40%; both data planes give the same run."""
    packet = uno.run(uno.compose(MIXED)).flows
    hybrid = {dp: uno.run(uno.compose([*MIXED, "engine.kind=hybrid", f"engine.dataplane={dp}",
                                       "engine.hybrid_packet_tags=[pkt]"])).flows
              for dp in ("compiled", "python")}  # fmt: skip
    pd.testing.assert_frame_equal(hybrid["compiled"], hybrid["python"])
    mine, theirs = hybrid["compiled"].iloc[0], packet.iloc[0]
    assert mine["tag"] == "pkt" and theirs["notices"] > 10
    assert 0.6 < mine["notices"] / theirs["notices"] < 1.4
    assert mine["fct_ps"] == pytest.approx(theirs["fct_ps"], rel=0.1)


def test_the_hybrid_runs_gear_with_pfc():
    """Gear's incast with PFC on in the hybrid, the cross-DC flows as packets: every flow
    finishes, nothing is lost at a lossless switch, and the intra-DC (fluid) flows finish
    within 25% of the packet run."""
    packet = uno.run(uno.compose(SMALL))
    hybrid = uno.run(
        uno.compose([*SMALL, "engine.kind=hybrid", "engine.hybrid_packet_tags=[inter]"])
    )
    assert hybrid.flows["finish_ps"].notna().all()
    pfc = hybrid.summary["pfc"]
    assert pfc["lossless_violations"] == 0 and pfc["fluid_lossless_violations"] == 0
    intra = packet.flows["tag"] != "inter"
    gap = hybrid.flows.loc[intra, "fct_ps"].mean() / packet.flows.loc[intra, "fct_ps"].mean() - 1.0
    assert abs(gap) < 0.25
