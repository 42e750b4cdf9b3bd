"""The output port: exact FIFO timing, tail drop, and ECN decided at dequeue.

The port schedules one event per packet and decides marks lazily; these tests compare it with
a straightforward reference queue that processes every arrival and departure explicitly."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from uno.core.engine import Engine
from uno.core.packet import ACK, DATA, Packet
from uno.core.rng import UniformBuffer
from uno.core.units import serialization_ps
from uno.net.phantom import PhantomQueue
from uno.net.port import Port
from uno.net.red import RedMarker

RATE = 10_000_000_000  # 10 Gb/s
DELAY = 1_000_000  # 1 us


class FakeNetwork:
    def __init__(self, engine):
        self.engine = engine
        self.dropped = Counter()
        self.in_flight = 0

    def drop(self, pkt, reason, port):
        self.dropped[reason] += 1


class Sink:
    def __init__(self, engine):
        self.engine = engine
        self.got = []

    def receive(self, pkt):
        self.got.append((self.engine.now, pkt.seq, pkt.ecn))


def make_port(buffer_bytes, red=None, phantom=None, source="physical"):
    eng = Engine()
    net = FakeNetwork(eng)
    port = Port(eng, net, "p", RATE, DELAY, buffer_bytes)
    sink = Sink(eng)
    port.connect(sink)
    if red or phantom:
        port.set_marking(red, phantom, source)
    return eng, net, port, sink


def packet(seq, size, kind=DATA):
    return Packet(kind, 0, seq, size, size, 0, 1, 0, 0, 0)


def reference(arrivals, buffer_bytes, k_bytes):
    """Event-by-event FIFO queue: returns {seq: (deliver_ps, marked)} and dropped seqs.
    Marks a data packet if the bytes left behind it when it departs exceed ``k_bytes``."""
    queue = []  # (seq, size, arrival, dep)
    busy = 0
    out, dropped = {}, []
    for seq, t, size in arrivals:
        queue = [q for q in queue if q[3] > t]  # departed packets leave at their departure
        if sum(q[1] for q in queue) + size > buffer_bytes:
            dropped.append(seq)
            continue
        dep = max(busy, t) + serialization_ps(size, RATE)
        busy = dep
        queue.append((seq, size, t, dep))
        out[seq] = dep
    result = {}
    all_pkts = [(seq, size, t, out[seq]) for seq, t, size in arrivals if seq in out]
    for seq, _size, _t, dep in all_pkts:
        behind = sum(s2 for _q2, s2, t2, d2 in all_pkts if d2 > dep and t2 < dep)
        result[seq] = (dep + DELAY, behind > k_bytes)
    return result, dropped


@pytest.mark.parametrize("seed", range(5))
def test_lazy_port_matches_reference_queue(seed):
    rng = np.random.default_rng(seed)
    n = 400
    sizes = rng.choice([64, 1500, 4160], size=n)
    # bursty arrivals: mean gap below the service time so the queue builds and drains
    gaps = rng.exponential(1_200_000, size=n).astype(np.int64)
    times = np.cumsum(gaps)
    arrivals = [(i, int(times[i]), int(sizes[i])) for i in range(n)]
    buffer_bytes, k = 40_000, 15_000
    eng, net, port, sink = make_port(buffer_bytes, red=RedMarker(k, k, UniformBuffer(rng)))
    for seq, t, size in arrivals:
        eng.call_at(t, port.receive, packet(seq, size))
    eng.run_until(10**15)
    expected, dropped = reference(arrivals, buffer_bytes, k)
    assert net.dropped["buffer_full"] == len(dropped) > 0
    got = {seq: (t, ecn) for t, seq, ecn in sink.got}
    assert set(got) == set(expected)
    for seq, (t, marked) in expected.items():
        assert got[seq][0] == t
        assert got[seq][1] == marked, f"seq {seq}"
    assert sum(1 for _, m in expected.values() if m) > 10  # the comparison exercised marking


def test_back_to_back_packets_leave_at_line_rate():
    eng, net, port, sink = make_port(10**6)
    for i in range(5):
        eng.call_at(0, port.receive, packet(i, 4160))
    eng.run_until(10**12)
    ser = serialization_ps(4160, RATE)
    assert [t for t, _, _ in sink.got] == [DELAY + ser * (i + 1) for i in range(5)]
    assert port.max_bytes == 5 * 4160
    assert port.tx_packets == 5 and port.tx_bytes == 5 * 4160


def test_tail_drop_when_buffer_overflows():
    eng, net, port, sink = make_port(3 * 4160)
    for i in range(5):
        eng.call_at(0, port.receive, packet(i, 4160))
    eng.run_until(10**12)
    assert net.dropped["buffer_full"] == 2
    assert [seq for _, seq, _ in sink.got] == [0, 1, 2]
    assert port.max_bytes <= port.buffer_bytes


def test_acks_are_never_marked():
    rng = np.random.default_rng(0)
    eng, net, port, sink = make_port(10**6, red=RedMarker(0, 0, UniformBuffer(rng)))
    for i in range(10):
        eng.call_at(0, port.receive, packet(i, 64, kind=ACK))
        eng.call_at(0, port.receive, packet(100 + i, 4160))
    eng.run_until(10**12)
    marks = {seq: ecn for _, seq, ecn in sink.got}
    assert not any(marks[i] for i in range(10))
    assert all(marks[100 + i] for i in range(9))  # every data packet left bytes behind


def test_phantom_marks_at_dequeue_from_its_own_level():
    rng = UniformBuffer(np.random.default_rng(0))
    # phantom drains at half line rate and marks above 10 kB; the physical queue never marks
    ph = PhantomQueue(100_000, RATE / 2, 10_000, 10_000, rng)
    eng, net, port, sink = make_port(
        10**6, red=RedMarker(10**9, 10**9, rng), phantom=ph, source="phantom"
    )
    ser = serialization_ps(4160, RATE)
    for i in range(20):  # line-rate arrivals: the physical queue stays at one packet
        eng.call_at(i * ser, port.receive, packet(i, 4160))
    eng.run_until(10**12)
    marks = [ecn for _, _, ecn in sorted(sink.got)]
    # phantom level at each departure: grows by 4160 per packet, drains 2080 per ser time
    level = 0.0
    expected = []
    for i in range(20):
        level = max(0.0, level - (ser / 2 * 4160 / ser if i else 0)) + 4160
        dep_level = max(0.0, level - 4160 / 2)  # drained for one service time after arrival
        expected.append(dep_level > 10_000)
    assert marks == expected
    assert port.max_bytes == 4160


def test_phantom_queue_adds_no_events():
    def events_for(with_phantom: bool) -> int:
        rng = UniformBuffer(np.random.default_rng(0))
        ph = PhantomQueue(100_000, RATE * 0.9, 10_000, 50_000, rng) if with_phantom else None
        eng, net, port, sink = make_port(
            10**6,
            red=RedMarker(10**9, 10**9, rng),
            phantom=ph,
            source="phantom" if with_phantom else "physical",
        )
        for i in range(200):
            eng.call_at(i * 1_000_000, port.receive, packet(i, 4160))
        eng.run_until(10**12)
        assert len(sink.got) == 200
        return eng.events_scheduled

    assert events_for(True) == events_for(False)
