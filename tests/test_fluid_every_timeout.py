"""A controller told of every packet its flow's timer takes (``transport.*.report_every_timeout``,
the Uno artifact's BBR: a window reset per timed-out packet) in the flow-level engines: a fluid
flow's controller hears one timeout for every whole packet of the bytes its timer declares
lost at a step (:func:`uno.fluid.control.hear_timeout`), where by default it hears of at most
one per base RTT."""

from __future__ import annotations

import numpy as np

import uno

# (20-MB BBR flows into one receiver: their first windows overflow its port and the WAN links,
# and the inter-DC flows resend thousands of packets on their timers over many steps)
INCAST = ["cc=bbr", "workload.size_bytes=20000000", "lb=ecmp", "switch=ecn",
          "engine.sample_interval_us=0", "engine.progress=false"]  # fmt: skip


def timer_packets(flows):
    """The packets each flow's timer took: its retransmissions less fast retransmit's."""
    return flows["retransmits"] - flows["fast_retransmits"]


def test_every_packet_the_timer_takes_is_a_timeout_its_controller_hears():
    """With the setting a fluid flow counts (and its controller hears) a timeout for each packet
    its timer took, as the packet sender; without, at most one a base RTT. The resets change
    the run: BBR's timeout sets its window to one packet each time."""
    runs = {
        every: uno.run(
            uno.compose([*INCAST, "engine.kind=fluid", f"transport.report_every_timeout={every}"])
        ).flows
        for every in ("false", "true")
    }
    once, every = runs["false"], runs["true"]
    assert once["finish_ps"].notna().all() and every["finish_ps"].notna().all()
    assert (once["timeouts"] < timer_packets(once)).any()
    assert (every["timeouts"] - timer_packets(every)).abs().max() <= 1
    assert every["timeouts"].sum() > 1000
    assert every["fct_ps"].tolist() != once["fct_ps"].tolist()
    packets = uno.run(uno.compose([*INCAST, "transport.report_every_timeout=true"])).flows
    assert (packets["timeouts"] == timer_packets(packets)).all()


def test_the_setting_of_one_class_reaches_that_class_fluid_flows_in_the_hybrid():
    """The class block's setting (the artifact's MP-RDMA+BBR sets it for its inter-DC BBR
    flows): in the hybrid, its inter-DC flows fluid and its intra-DC ones packets, the fluid
    inter-DC flows count every packet their timers take, the intra-DC packet flows at most one
    timeout a base RTT. At the first step throughout the count is the timers' packets to one;
    at the hybrid's settled steps (as it comes) to two, or a few in a thousand."""
    hybrid = [*INCAST, "engine.kind=hybrid", "engine.hybrid_packet_tags=[intra]",
              "transport.inter.report_every_timeout=true"]  # fmt: skip
    for first_step, least, off_by in ((True, 1.0, 0.0), (False, 2.0, 0.005)):
        fixed = ["engine.fluid_step_settled_rtt=0"] if first_step else []
        flows = uno.run(uno.compose([*hybrid, *fixed])).flows
        assert flows["finish_ps"].notna().all()
        inter, intra = flows[flows["cls"] == "inter"], flows[flows["cls"] == "intra"]
        taken = timer_packets(inter)
        assert ((inter["timeouts"] - taken).abs() <= np.maximum(least, off_by * taken)).all()
        assert inter["timeouts"].sum() > 1000
        assert (intra["timeouts"] < timer_packets(intra)).any()
