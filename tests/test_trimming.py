"""Packet trimming (``switch.trimming``, uno/net/overflow.py): a switch port cuts a data packet
its buffer has no room for to its header, which goes on ahead of data; the receiver NACKs it,
the sender resends it at once; trims are counted per port and per flow and a trimmed packet is
never counted as delivered. Both data planes trim alike."""

from __future__ import annotations

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


def test_the_flow_level_engines_refuse_trimming():
    with pytest.raises(uno.core.errors.ConfigError, match=r"^switch\.trimming\.enabled"):
        _run(["engine.kind=fluid"])
