"""Erasure coding in the transport (UnoRC, Uno paper §4.2): a block decodes from any x of its
x + y packets, so up to y losses per block cost no retransmission and no timeout; more losses
are recovered by the receiver's NACK; the real coder decodes every block; the wire carries the
code's overhead."""

from __future__ import annotations

import pytest
from conftest import assert_conservation, flows_override, run

import uno
from uno.ec.mds import DecodeMismatchError

# one inter-DC flow, pinned to one path (ECMP), nothing else in the network
ONE_FLOW = [
    "workload=flows",
    flows_override([(0, 200, 3_000_000)]),
    "lb=ecmp",
    "cc=uno",
    "ec=mds",
    "engine.sample_interval_us=0",
]


def wan_forward_port(extra=()):
    base = run([*ONE_FLOW, *extra])
    ports = base.tables["ports"]
    used = ports[(ports["kind"] == "wan") & (ports["tx_packets"] > 0)]
    (port,) = [p for p in used["port"] if p.startswith("dc0/border->dc1/")]  # host 0 is in DC 0
    return port


def block_loss(losses: list[float]) -> str:
    return (
        f"faults.losses=[{{ports:['{wan_forward_port()}'],block_probabilities:{losses},"
        "block_packets:10}]"
    )


def test_no_loss_costs_exactly_the_code_overhead():
    r = run(ONE_FLOW)
    f = r.flows.iloc[0]
    assert f["coded"] and f["retransmits"] == 0 and f["nacks"] == 0
    layout_wire = f["packets"]  # data + parity wire packets
    assert layout_wire == 733 + 2 * 92  # 3 MB = 733 packets -> 92 blocks of (8, 2)
    ec = r.summary["ec"]
    assert ec["code_overhead"] == pytest.approx(184 / 733)
    assert ec["wire_overhead"] == pytest.approx(ec["code_overhead"], rel=0.01)


def test_up_to_y_losses_per_block_need_no_retransmission():
    r = run([*ONE_FLOW, block_loss([0.0, 1.0])])  # exactly 2 of every 10 packets lost
    f = r.flows.iloc[0]
    assert r.summary["packets"]["dropped"]["block_loss/data"] > 100
    assert f["finish_ps"] is not None and f["bytes_delivered"] == f["size_bytes"]
    assert f["retransmits"] == 0 and f["timeouts"] == 0 and f["nacks"] == 0
    assert_conservation(r)


def test_more_than_y_losses_are_recovered_by_nack_not_by_timeout():
    """3 losses in 30% of the link's 10-packet blocks: the blocks that lose 3 are NACKed and
    their packets resent. A resent packet crosses the same lossy link; if every resent packet of
    a block is lost, no packet of it arrives to re-arm the receiver's timer and the sender's
    timeout recovers it (the artifact's rule too), so a timeout or two may remain."""
    r = run([*ONE_FLOW, block_loss([0.0, 0.0, 0.3])])
    f = r.flows.iloc[0]
    assert f["nacks"] > 10 and f["retransmits"] > 0
    assert f["timeouts"] <= 2 < f["nacks"]
    assert f["fct_ps"] < 3 * f["ideal_fct_ps"]
    assert_conservation(r)


def test_count_only_mode_makes_the_same_decisions():
    a = run([*ONE_FLOW, block_loss([0.0, 0.0, 0.3])])
    b = run([*ONE_FLOW, block_loss([0.0, 0.0, 0.3]), "ec.payload=false"])
    cols = ["finish_ps", "retransmits", "nacks", "sent_bytes"]
    assert a.flows[cols].equals(b.flows[cols])


def test_a_wrong_decode_is_an_error(monkeypatch):
    from uno.ec import mds

    real = mds.BlockCoder.encode_block

    def corrupt(self, flow_id, layout, block):
        coded = real(self, flow_id, layout, block).copy()
        coded[0, 0] ^= 0xFF  # a flipped symbol in the first data packet of every block
        return coded

    monkeypatch.setattr(mds.BlockCoder, "encode_block", corrupt)
    with pytest.raises(DecodeMismatchError):
        run([*ONE_FLOW, block_loss([0.0, 0.0, 0.0])])


def test_scope_inter_leaves_intra_dc_flows_uncoded():
    cfg = uno.compose(["ec=mds", "workload.size_bytes=1000000", "engine.sample_interval_us=0"])
    r = uno.run(cfg)
    assert set(r.flows.loc[r.flows["cls"] == "inter", "coded"]) == {True}
    assert set(r.flows.loc[r.flows["cls"] == "intra", "coded"]) == {False}


def test_a_block_opened_by_a_retransmission_keeps_its_timer():
    """ec.retransmit_timeout=target_rtt: a block whose first packet to arrive is a
    retransmission times out after that packet's timer (the Uno artifact: 1.05 x base RTT), a
    block opened by a first transmission after the receiver's; a re-armed timer keeps it."""
    from types import SimpleNamespace

    from uno.core.packet import DATA, Packet
    from uno.ec.mds import BlockCoder
    from uno.transport.flow import FlowCoding
    from uno.transport.receiver import Receiver

    armed = []  # (delay_ps, callback, block)
    engine = SimpleNamespace(_now=0, call_in=lambda delay, fn, arg: armed.append((delay, fn, arg)))
    coder = BlockCoder(8, 2, 4, payload=False, seed=1)
    layout = coder.layout(16)  # two blocks of 8 + 2
    coding = FlowCoding(coder, layout, receiver_timeout_ps=640, retransmit_timeout_ps=1881)
    flow = SimpleNamespace(flow_id=0, n_packets=layout.n_wire, size_bytes=16 * 4096,
                           coding=coding, src=0, dst=200)  # fmt: skip
    rx = Receiver(engine, flow, SimpleNamespace(send=lambda pkt: None), 64, 4096)

    def arrive(block, position, retx):
        seq = layout.wire_seq(block, position)
        rx.on_data(Packet(DATA, 0, seq, 4160, 4096, 0, 200, 0, 0, 0, retx=retx))

    arrive(0, 0, retx=False)
    arrive(1, 3, retx=True)
    assert [(d, b) for d, _, b in armed] == [(640, 0), (1881, 1)]
    _, fire, block = armed[1]
    fire(block)  # block 1 undecodable: NACK, timer disarmed
    assert rx.nacks_sent == 1
    arrive(1, 4, retx=False)  # re-armed with the block's own timer
    assert armed[-1][0] == 1881 and armed[-1][2] == 1
