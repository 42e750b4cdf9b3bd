"""The packet senders' delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation-00,
"Transmitting a data packet", "Upon receiving an ACK"): the bytes delivered since the packet's
send over the time since the sender's delivery clock at that send. The clock restarts at a send
when every byte sent so far is acknowledged, so a flow's first window is timed from its first
send, not from the run's start, and a resend after a timeout keeps it. These runs are on the
Python data plane; the compiled data plane's senders give the same runs
(``test_compiled_senders.test_bbr_senders_in_the_kernel``) and stamp resends alike
(``test_compiled_senders.test_kernel_resends_with_nothing_in_flight_keep_the_delivery_clock``)."""

from __future__ import annotations

import pytest
from conftest import flows_override, run

from uno.transport.sender import Sender

START_US = [0.0, 300.0, 1500.0]
INTER_DC = [(0, 255, 2_000_000, START_US[0]), (1, 254, 2_000_000, START_US[1]),
            (2, 253, 2_000_000, START_US[2])]  # fmt: skip


@pytest.fixture
def samples(monkeypatch):
    """Per flow, its delivery-rate samples in ACK order: (ACK time, the acknowledged copy's send
    time, bytes delivered, interval), times in ps."""
    taken: dict[int, list[tuple[int, int, int, int]]] = {}
    feedback = Sender._feedback

    def recorded(self, pkt, now, wire, ecn, rtt):
        before = self.acked_bytes - pkt.tx_delivered, now - pkt.tx_delivered_ps
        taken.setdefault(self.flow.flow_id, []).append((now, pkt.sent_ps, *before))
        return feedback(self, pkt, now, wire, ecn, rtt)

    monkeypatch.setattr(Sender, "_feedback", recorded)
    return taken


def test_a_flows_first_window_is_timed_from_its_first_send(samples):
    r = run(["workload=flows", flows_override(INTER_DC), "cc=bbr", "lb=ecmp",
             "engine.dataplane=python"])  # fmt: skip
    assert r.flows["finish_ps"].notna().all()
    assert sorted(samples) == [0, 1, 2]
    for flow_id, start_us in enumerate(START_US):
        start_ps = int(start_us * 1e6)
        first_ack_ps = samples[flow_id][0][0]
        first_window = [s for s in samples[flow_id] if s[1] < first_ack_ps]
        assert len(first_window) > 10
        for ack_ps, _sent_ps, _delivered, interval_ps in first_window:
            # timed from the flow's first send, whenever the flow starts
            assert interval_ps == ack_ps - start_ps
        # later samples run from a delivery of this flow, never from before its start
        assert all(ack - interval >= first_ack_ps for ack, _, _, interval in
                   samples[flow_id][len(first_window):])  # fmt: skip
        # a lone flow on an idle path: its rate samples stay within the 100 Gb/s host link
        rates_gbps = [8e3 * b / i for _, _, b, i in samples[flow_id] if i > 0]
        assert max(rates_gbps) <= 100.0 * 1.001


def test_the_clock_restarts_only_when_every_byte_sent_is_acknowledged(monkeypatch):
    """Across a whole flight lost at a failed host link: a send with nothing in flight restarts
    the clock unless it is a retransmission (bytes sent earlier are still unacknowledged), and
    every other send carries the time of the flow's last delivery."""
    from uno.core.packet import DATA
    from uno.net.host import Host

    events: list[tuple] = []  # in execution order: ("send", ...) and ("ack", ...)
    sending: list[Sender] = []
    try_send, host_send, feedback = Sender._try_send, Host.send, Sender._feedback

    def sender_sends(self, turn=False):
        sending.append(self)
        try:
            return try_send(self, turn)
        finally:
            sending.pop()

    def host_sends(self, pkt):
        if sending and pkt.kind == DATA:
            s = sending[-1]
            events.append(("send", s.flow.flow_id, pkt.sent_ps, pkt.retx, pkt.tx_delivered_ps,
                           s.inflight_bytes - pkt.size_bytes))  # fmt: skip
        return host_send(self, pkt)

    def acked(self, pkt, now, wire, ecn, rtt):
        events.append(("ack", self.flow.flow_id, now))
        return feedback(self, pkt, now, wire, ecn, rtt)

    monkeypatch.setattr(Sender, "_try_send", sender_sends)
    monkeypatch.setattr(Host, "send", host_sends)
    monkeypatch.setattr(Sender, "_feedback", acked)
    # the second flow's host link fails while its first window crosses it: the whole flight
    # times out, and its resends go out with nothing in flight
    failing_link = ("faults.link_failures=[{ports:['dc0/h1->dc0/tor0'],both_directions:true,"
                   "at_us:200.0,until_us:1000.0}]")  # fmt: skip
    r = run(["workload=flows", flows_override(INTER_DC), "cc=bbr", "lb=ecmp",
             "engine.dataplane=python", failing_link])  # fmt: skip
    assert r.flows["finish_ps"].notna().all() and r.flows["timeouts"].iloc[1] > 0
    clock: dict[int, int] = {}
    idle_resends = 0
    for event in events:
        if event[0] == "ack":
            clock[event[1]] = event[2]
            continue
        _, flow_id, now, retx, stamp, inflight_before = event
        if inflight_before == 0 and not retx:
            clock[flow_id] = now
        idle_resends += inflight_before == 0 and retx
        assert stamp == clock[flow_id], event
    assert idle_resends > 0  # (the case the draft does not restart the clock in)
