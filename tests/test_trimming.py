"""Packet trimming (``switch.trimming``, uno/net/overflow.py): a switch port cuts a data packet
its buffer has no room for to its header, which goes on ahead of data; the receiver NACKs it,
the sender resends it at once; trims are counted per port and per flow and a trimmed packet is
never counted as delivered. Both data planes trim alike."""

from __future__ import annotations

import pandas as pd
import pytest
from test_port import DELAY, RATE, FakeNetwork, Sink, packet

import uno
from uno.core.engine import Engine
from uno.core.packet import DATA, TRIM
from uno.core.units import serialization_ps
from uno.net.event_port import EventPort
from uno.net.overflow import OVERFLOW_TRIM
from uno.net.port import Port

FULL = 4160
HEADER = 64


@pytest.mark.parametrize("port_cls", [Port, EventPort])
def test_a_packet_that_does_not_fit_goes_on_as_a_header_ahead_of_data(port_cls):
    """Buffer for two packets, four arrive at once: the first two queue, the last two are cut
    to 64-byte headers, which the event port sends right after the packet in service, ahead of
    the queued one (the lazy port's control lane takes no time from data)."""
    eng = Engine()
    net = FakeNetwork(eng)
    port = port_cls(eng, net, "p", RATE, DELAY, 2 * FULL)
    got = []
    sink = Sink(eng)
    sink.receive = lambda pkt: got.append((eng.now, pkt.seq, pkt.kind, pkt.size_bytes))
    port.connect(sink)
    port.enable_control_lane()
    port.overflow_policy = OVERFLOW_TRIM
    port.trim_bytes = HEADER
    for i in range(4):
        eng.call_at(0, port.receive, packet(i, FULL))
    eng.run_until(10**12)
    assert port.trims == 2 and port.drops == 0 and not net.dropped
    ser, hdr = serialization_ps(FULL, RATE), serialization_ps(HEADER, RATE)
    data = [(t, s) for t, s, k, _ in got if k == DATA]
    headers = [(t, s, b) for t, s, k, b in got if k == TRIM]
    assert [s for _, s, _ in headers] == [2, 3] and {b for *_, b in headers} == {HEADER}
    if port_cls is EventPort:
        assert data == [(DELAY + ser, 0), (DELAY + 2 * ser + 2 * hdr, 1)]
        assert [t for t, _, _ in headers] == [DELAY + ser + hdr, DELAY + ser + 2 * hdr]
    else:
        assert data == [(DELAY + ser, 0), (DELAY + 2 * ser, 1)]
        assert [t for t, _, _ in headers] == [DELAY + hdr, DELAY + 2 * hdr]
    assert port.max_bytes <= 2 * FULL


INCAST = [
    "topo=dumbbell", "topo.n_senders=8", "topo.buffer_bytes=100000", "workload=incast",
    "workload.n_intra=8", "workload.n_inter=0", "workload.size_bytes=2000000", "cc=smartt",
    "switch.trimming.enabled=true", "engine.sample_interval_us=0", "engine.progress=false",
]  # fmt: skip


def _run(extra):
    return uno.run(uno.compose([*INCAST, *extra]))


def _checked(result):
    """Every flow done with exactly its bytes; each trim NACKed once and resent once; the
    ports' trims are the flows'; nothing dropped or timed out."""
    flows, ports = result.flows, result.tables["ports"]
    assert flows["finish_ps"].notna().all()
    assert (flows["bytes_delivered"] == flows["size_bytes"]).all()
    assert flows["trims"].sum() > 0
    assert (flows["retransmits"] == flows["trims"]).all()
    assert (flows["timeouts"] == 0).all()
    assert (flows["sent_packets"] == flows["packets"] + flows["trims"]).all()
    assert ports["trims"].sum() == flows["trims"].sum() == result.summary["trims"]
    assert ports["drops"].sum() == 0
    return flows


@pytest.mark.parametrize("extra", [[], ["lb=reps"], ["engine.port_model=lazy"]])
def test_trimmed_packets_are_nacked_resent_at_once_and_counted(extra):
    """Kernel senders and receivers (spraying), Python senders with kernel receivers (REPS),
    lazy ports: the same accounting, and the two data planes give the same run."""
    python = _checked(_run([*extra, "engine.dataplane=python"]))
    compiled = _checked(_run([*extra, "engine.dataplane=compiled"]))
    assert python.equals(compiled)


def test_coded_flows_are_trimmed_too():
    """Erasure-coded flows (receivers in Python in both data planes): a trimmed wire packet is
    NACKed and resent like any other, and the blocks still decode."""
    extra = ["ec=mds", "engine.dataplane=compiled"]
    result = _run(extra)
    flows = result.flows
    assert flows["finish_ps"].notna().all() and flows["trims"].sum() > 0
    assert result.tables["ports"]["trims"].sum() == result.summary["trims"]
    assert flows.equals(_run(["ec=mds", "engine.dataplane=python"]).flows)


def test_the_fluid_engine_trims_as_the_packets_do():
    """The fluid engine (uno/fluid/losses.py ``book_losses``): what the switch ports cannot
    queue is trimmed, NACKed an RTT after its send and resent at once, so no flow waits for a
    timeout; the ports count trims, not drops; the incast's FCTs are the packet run's within the
    validation targets (mean 10%, p99 20%). Without trimming the same fluid run drops and times
    out."""
    fluid = _run(["engine.kind=fluid"])
    flows, ports = fluid.flows, fluid.tables["ports"]
    assert flows["finish_ps"].notna().all()
    assert flows["trims"].sum() > 0 and (flows["timeouts"] == 0).all()
    assert (flows["retransmits"] == flows["trims"]).all()
    assert fluid.summary["trims"] == flows["trims"].sum()
    assert ports["drops"].sum() == 0
    assert ports["trims"].sum() == pytest.approx(flows["trims"].sum(), rel=0.05)
    packets = _run([])
    for stat in ("mean", lambda x: x.quantile(0.99)):
        ours, theirs = flows["fct_ps"].agg(stat), packets.flows["fct_ps"].agg(stat)
        assert ours == pytest.approx(theirs, rel=0.1 if stat == "mean" else 0.2)
    assert flows["trims"].sum() == pytest.approx(packets.flows["trims"].sum(), rel=0.25)
    dropped = _run(["engine.kind=fluid", "switch.trimming.enabled=false"])
    assert dropped.flows["trims"].sum() == 0 and dropped.tables["ports"]["drops"].sum() > 0
    assert dropped.flows["timeouts"].sum() > 0


def test_the_fluid_controller_hears_every_trimmed_packet():
    """Each trimmed packet is a NACK to the law, as the packet sender tells it of each
    (``_on_trim_nack``): SMaRTT without Quick Adapt takes ``nack_decrease_mss`` off its window per NACK."""
    from uno.build import build_simulation
    from uno.cc.smartt import S
    from uno.fluid import columns as C
    from uno.fluid.control import hear_trims

    cfg = uno.api.to_run_config(uno.compose([*INCAST, "engine.kind=fluid",
                                             "cc.smartt.quick_adapt=false", "cc.smartt.nack_decrease_mss=0.1"]))  # fmt: skip
    sim = build_simulation(cfg)
    sim.advance(0, 64)  # (the flows started, their laws' windows set)
    mss = sim.cp[0, C.P_MSS]
    trims = sim.fs[0, C.FS_TRIMS]
    cwnd = sim.cs[0, S.cwnd]
    hear_trims(sim.cs, sim.cp, 0, 1.0e6, mss, sim.fs)
    one = cwnd - sim.cs[0, S.cwnd]
    cwnd = sim.cs[0, S.cwnd]
    hear_trims(sim.cs, sim.cp, 0, 1.1e6, 3 * mss, sim.fs)
    assert one > 0.0 and cwnd - sim.cs[0, S.cwnd] == pytest.approx(3 * one)
    assert sim.fs[0, C.FS_TRIMS] == trims + 4


def test_where_the_flow_level_engines_take_trimming():
    """Max-min never queues, so trimming changes nothing there; coded flows in the fluid are
    refused, naming the setting."""
    on = _run(["engine.kind=maxmin"])
    off = _run(["engine.kind=maxmin", "switch.trimming.enabled=false"])
    assert on.flows["finish_ps"].tolist() == off.flows["finish_ps"].tolist()
    with pytest.raises(uno.core.errors.ConfigError, match=r"^switch\.trimming\.enabled"):
        _run(["engine.kind=fluid", "ec=mds"])


#: the incast as listed flows, half of them (tag pkt) the hybrid's packet flows
MIXED = [*(o for o in INCAST if not o.startswith("workload")), "workload=flows",
         "workload.flows=[" + ",".join(
             f"{{src:{s},dst:8,size_bytes:2000000,tag:{'pkt' if s % 2 else 'bulk'}}}"
             for s in range(8)) + "]", "engine.hybrid_packet_tags=[pkt]"]  # fmt: skip


def _run_mixed(extra):
    return uno.run(uno.compose([*MIXED, *extra]))


def test_the_hybrid_trims_the_packets_the_fluid_bytes_squeeze_out():
    """The hybrid on a trimming incast, half of its flows as packets: at the receiver's port,
    shared with the fluid flows, a packet its own queue would take but the fluid bytes leave no
    room for is trimmed (its header NACKed, the packet resent at once), not dropped; the two
    data planes give the same run; every flow finishes with no timeout, and the FCTs are the
    all-packet run's within the validation targets (mean 10%, p99 20%)."""
    runs = {dp: _run_mixed(["engine.kind=hybrid", f"engine.dataplane={dp}"])
            for dp in ("python", "compiled")}  # fmt: skip
    hybrid = runs["compiled"]
    pd.testing.assert_frame_equal(hybrid.flows, runs["python"].flows)
    flows, ports = hybrid.flows, hybrid.tables["ports"]
    assert flows["finish_ps"].notna().all() and (flows["timeouts"] == 0).all()
    pkt = flows[flows["tag"] == "pkt"]
    assert pkt["trims"].sum() > 0 and (pkt["retransmits"] == pkt["trims"]).all()
    assert ports["drops"].sum() == 0
    assert ports["trims"].sum() >= pkt["trims"].sum() > 0
    packets = _run_mixed(["engine.kind=packet"]).flows
    for stat in ("mean", lambda x: x.quantile(0.99)):
        ours, theirs = flows["fct_ps"].agg(stat), packets["fct_ps"].agg(stat)
        assert ours == pytest.approx(theirs, rel=0.1 if stat == "mean" else 0.2)
