"""ACKs that come back later than their flow's retransmission timeout, in the flow-level engines.

A packet sender declares a packet lost once it is unacknowledged ``rto`` after its send, and
resends it even when it arrived (a spurious retransmission; its copy's ACK is a duplicate).
A fluid flow's timer does the same for a batch whose RTT sample exceeds its timeout
(:func:`uno.fluid.filing.late_acks`); the run counts those batches and their bytes
(``fluid.late_ack_batches``, ``fluid.late_ack_bytes``) and its report says so."""

from __future__ import annotations

import pytest

import uno
from uno.metrics.summary import format_summary

QUIET = ["engine.progress=false", "engine.sample_interval_us=0"]
LONE = ["workload=flows", "workload.flows=[{src:0,dst:5,size_bytes:1000000,start_us:0}]",
        "lb=ecmp", *QUIET]  # fmt: skip


@pytest.mark.parametrize("kind", ["fluid", "hybrid"])
def test_a_lone_flow_counts_its_bytes_late_exactly_when_its_timeout_is_below_its_rtt(kind):
    """A lone flow's bytes come back a base RTT after their send (no queue on its way): every
    byte is late with a timeout of 0.9 base RTTs, and resent once (its sends are twice its
    late bytes), none with 1.5; only the first run's report names them."""
    over = [*LONE, f"engine.kind={kind}"]
    if kind == "hybrid":  # (the flow as fluid, a small one elsewhere in the fabric as packets;
        # at the first step throughout, as the fluid engine's: at settled steps of half an RTT,
        # a timeout of 1.8 steps, the flow resends 5% fewer bytes than it counts late)
        over += ["workload.flows=[{src:0,dst:5,size_bytes:1000000,start_us:0},"
                 "{src:10,dst:20,size_bytes:5000,start_us:0}]",
                 "engine.hybrid_packet_max_bytes=10000", "engine.fluid_step_settled_rtt=0"]  # fmt: skip
    key, group = ("late_ack_bytes", "fluid") if kind == "fluid" else ("fluid_late_ack_bytes",
                                                                       "hybrid")  # fmt: skip
    late = uno.run(uno.compose([*over, "transport.intra.rto_base_rtts=0.9"]))
    sent = late.flows.loc[late.flows["size_bytes"] > 10000, "sent_bytes"].sum()
    assert late.summary[group][key] == pytest.approx(sent / 2, rel=1e-2)
    assert late.summary[group]["unaccounted_bytes" if kind == "fluid" else
                               "fluid_unaccounted_bytes"] < 1.0  # fmt: skip
    assert late.summary[group][key.replace("bytes", "batches")] > 10
    assert "retransmission timeout" in format_summary(late.summary)
    on_time = uno.run(uno.compose([*over, "transport.intra.rto_base_rtts=1.5"]))
    assert on_time.summary[group][key] == 0
    assert "retransmission timeout" not in format_summary(on_time.summary)


def test_late_acks_where_the_packet_senders_resend_delivered_packets():
    """An incast (MP-RDMA intra-DC flows with timeouts of 1.02 base RTTs, DCTCP inter-DC, ECN
    marking): the queues delay most of the intra-DC ACKs past the timeout. The packet senders
    resend delivered packets (the receivers take more data packets than the flows hold), and
    the fluid run counts most of the intra-DC bytes late and resends them too (more data
    than its intra-DC flows hold); with the default timeouts neither happens."""
    base = ["cc.intra=mprdma", "cc.inter=dctcp", "lb=ecmp", "switch=ecn",
            "workload.size_bytes=1500000", *QUIET]  # fmt: skip
    short = ["transport.intra.rto_base_rtts=1.02", "transport.intra.timer_granularity_us=4.0",
             "transport.intra.rto_base_rtts_after_retransmit=1.02"]  # fmt: skip
    for timeouts, spurious in ((short, True), ([], False)):
        packets = uno.run(uno.compose([*base, *timeouts]))
        delivered = packets.summary["packets"]["delivered"]["data"]
        duplicates = delivered - packets.flows["packets"].sum()
        fluid = uno.run(uno.compose([*base, *timeouts, "engine.kind=fluid"]))
        intra_bytes = fluid.flows.loc[fluid.flows["cls"] == "intra", "sent_bytes"].sum()
        late = fluid.summary["fluid"]["late_ack_bytes"]
        intra_size = fluid.flows.loc[fluid.flows["cls"] == "intra", "size_bytes"].sum()
        if spurious:
            assert duplicates > 100
            assert late > 0.5 * intra_bytes
            assert intra_bytes > 1.5 * intra_size
        else:
            assert duplicates == 0
            assert late == 0


def test_a_lone_mprdma_flow_resends_what_its_timer_takes_as_the_packet_sender_does():
    """MP-RDMA (no slow start, a window of one BDP, no reaction to a timeout) with a timeout of
    0.9 base RTTs: every packet's timer runs out before its ACK comes, so the packet sender
    sends each packet twice; the fluid flow resends every late byte once as well, and the
    copies share its line with new bytes: bytes sent, retransmissions and FCT agree."""
    over = [*LONE, "cc=mprdma", "transport.intra.rto_base_rtts=0.9"]
    packets = uno.run(uno.compose(over)).flows.iloc[0]
    fluid = uno.run(uno.compose([*over, "engine.kind=fluid"])).flows.iloc[0]
    assert packets["retransmits"] == pytest.approx(packets["packets"], rel=0.02)
    assert fluid["sent_bytes"] == pytest.approx(packets["sent_bytes"], rel=0.02)
    assert fluid["retransmits"] == pytest.approx(packets["retransmits"], rel=0.02)
    assert fluid["fct_ps"] == pytest.approx(packets["fct_ps"], rel=0.05)
    # (without the copies the fluid flow would send its megabyte once, in half the time)
    assert fluid["sent_bytes"] > 1.9 * fluid["size_bytes"]
