"""The packet senders' delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation-00,
"Transmitting a data packet", "Upon receiving an ACK"): the bytes delivered since the packet's
send over the time since the sender's delivery clock at that send. The clock restarts at a send
when every byte sent so far is acknowledged, so a flow's first window is timed from its first
send, not from the run's start; both data planes take the same samples
(``test_compiled_senders.test_bbr_senders_in_the_kernel``)."""

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
