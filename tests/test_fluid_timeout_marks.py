"""The ECN echoes a fluid flow hears after a retransmission timeout that left nothing in flight.

A packet's ACK echoes its own mark. A fluid batch's ACKs echo the marked share of the flow's
latest delivered bytes whose echo has come back, which may come a step after the ACKs
(:func:`uno.fluid.arrivals.ack_batch`). Once a timer has declared lost every byte with an ACK
on its way, that share is of bytes delivered before the timer, so the resent bytes' first
ACKs hear it cleared (:func:`uno.fluid.arrivals.loss_reports`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import uno

#: four 1.5-MB DCTCP flows from the other datacenter into one receiver (and four MP-RDMA flows
#: within it): each sends its message in its first window, loses part of it, times out, and
#: resends in slow start
INCAST = ["cc.intra=mprdma", "cc.inter=dctcp", "lb=ecmp", "switch=ecn",
          "workload.size_bytes=1500000", "engine.progress=false"]  # fmt: skip


def _run(kind: str):
    return uno.run(uno.compose([*INCAST, f"engine.kind={kind}", "engine.sample_interval_us=500"]))


def test_a_dctcp_flow_resends_in_slow_start_after_a_timeout_as_its_packet_sender():
    """Flow 7 times out with its first window's marks echoed, in both engines: its window
    restarts from one packet and doubles each round trip (4,160 B to 133,120 B from 3 to
    12 ms), sample for sample as the packet sender's; the inter-DC flows' mean FCT is within
    10% of the packet run's. (Were the first window's marks echoed to the resent bytes' ACKs,
    DCTCP would cut the window and grow it a packet a round trip: 64% above.)"""
    runs = {kind: _run(kind) for kind in ("packet", "fluid")}
    windows = {}
    for kind, r in runs.items():
        cwnd = r.tables["cwnd"]
        cwnd = cwnd[cwnd["flow_id"] == 7]
        at_ms = (cwnd["time_ps"] / 5e8).round() / 2  # (the samples' nearest half millisecond)
        windows[kind] = pd.Series(cwnd["cwnd_bytes"].to_numpy(), index=at_ms.to_numpy())
    span = np.arange(3.0, 12.01, 0.5)
    packet, fluid = windows["packet"].loc[span], windows["fluid"].loc[span]
    assert packet.min() == 4160.0 and packet.max() == 133120.0
    np.testing.assert_array_equal(fluid.to_numpy(), packet.to_numpy())
    inter = {kind: r.flows.loc[r.flows["cls"] == "inter", "fct_ps"].mean()
             for kind, r in runs.items()}  # fmt: skip
    assert inter["fluid"] == pytest.approx(inter["packet"], rel=0.10)
