"""Transport and switch options the presets select: fast retransmit on duplicate ACKs,
per-class retransmission timers, class reference paths, full-size packets, the control lane for
ACKs and what a phantom queue counts."""

from __future__ import annotations

import pytest
from conftest import flows_override, run
from test_port import make_port, packet

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.core.packet import ACK
from uno.core.units import serialization_ps
from uno.net.phantom import PhantomQueue
from uno.net.red import RedMarker

US = 1_000_000


def sim_of(overrides):
    return build_simulation(to_run_config(uno.compose(overrides)))


# ---- fast retransmit ----------------------------------------------------------------------
LOSSY = [
    "cc=dctcp",
    "topo=dumbbell",
    "topo.n_senders=8",
    "topo.buffer_bytes=60000",
    "switch=droptail",
    "workload=flows",
    flows_override([(i, 8, 2_000_000) for i in range(8)]),
    "engine.sample_interval_us=0",
]


def test_duplicate_acks_find_losses_before_the_timeout():
    slow = run([*LOSSY, "transport.dupack_threshold=0"])
    fast = run([*LOSSY, "transport.dupack_threshold=3"])
    assert slow.flows["fast_retransmits"].sum() == 0 and slow.flows["timeouts"].sum() > 0
    assert fast.flows["fast_retransmits"].sum() > 0
    # on a single path nothing is reordered: every fast retransmit replaced a dropped packet
    drops = fast.summary["packets"]["dropped"]["buffer_full/data"]
    assert fast.flows["retransmits"].sum() == drops
    assert fast.flows["timeouts"].sum() < slow.flows["timeouts"].sum()
    assert fast.flows["fct_ps"].mean() < slow.flows["fct_ps"].mean()


def test_reordering_makes_fast_retransmit_spurious_and_duplicates_are_counted():
    # packet spraying over a fat tree reorders; one loss-free flow pair, threshold 1
    flows = flows_override([(0, 15, 3_000_000)])
    r = run(
        ["topo=fat_tree", "topo.k=4", "workload=flows", flows, "lb=spray", "cc=dctcp"]
        + ["transport.dupack_threshold=1", "engine.sample_interval_us=0"]
    )
    f = r.flows.iloc[0]
    assert r.summary["packets"]["dropped"] == {}
    assert f["fast_retransmits"] == f["retransmits"] > 0  # all spurious: nothing was lost
    assert f["bytes_delivered"] == f["size_bytes"]


# ---- timers and path facts ----------------------------------------------------------------
def test_class_timer_overrides_and_granularity_reach_the_sender():
    sim = sim_of(
        [
            "transport.intra.rto_base_rtts=3",
            "transport.intra.timer_granularity_us=4",
            "transport.inter.rto_us=5000",
        ]
    )
    for f in sim.flows:
        if f.cls == "intra":
            assert f.rto_ps == round(3 * f.path.base_rtt_ps)
            assert f.sender.timer_granularity_ps == 4 * US
        else:
            assert f.rto_ps == 5000 * US and f.sender.timer_granularity_ps == 1 * US


def test_artifact_presets_have_the_artifact_rtos():
    """With 10^6-B buffers and the 886.5-us WAN delay the drain rule gives the artifact's
    414.03 us (intra) and 2432.04 us (inter), and MPRDMA 3 base RTTs less 1/8."""
    for cc in ("uno_artifact", "gemini_artifact"):
        sim = sim_of([f"cc={cc}"])
        rto_us = {f.cls: round(f.rto_ps / US, 2) for f in sim.flows}
        assert rto_us == {"intra": 414.03, "inter": 2432.04}
    sim = sim_of(["cc=mprdma_bbr_artifact"])
    for f in sim.flows:
        if f.cls == "intra":
            assert f.rto_ps == round(2.875 * f.path.base_rtt_ps)
            assert f.sender._rto_after_retransmit_ps == round(2.5 * f.path.base_rtt_ps)
            assert f.sender.timer_granularity_ps == 4 * US
        else:
            assert round(f.rto_ps / US, 2) == 2432.04


def test_every_timed_out_packet_reaches_the_controller_when_asked():
    """``report_every_timeout``: the controller hears of each timed-out packet (the artifact's
    BBR: a window reset per packet), not of one loss episode per base RTT."""
    counts = {}
    for every in (False, True):
        sim = sim_of([*LOSSY, "engine.dataplane=python", f"transport.report_every_timeout={every}"])
        sim.run()
        counts[every] = [(f.sender.timeouts, f.sender.lost_packets - f.sender.fast_retransmits)
                         for f in sim.flows]  # fmt: skip
    # (reported timeouts, packets that timed out)
    assert any(reported < lost for reported, lost in counts[False])
    assert all(reported == lost for reported, lost in counts[True])
    assert sum(lost for _, lost in counts[True]) > 0


def test_timers_are_tested_at_acks_while_a_resend_waits(monkeypatch):
    """``scan_timers_while_resending``: with the periodic scan every 40 us, losses are found at
    ACKs and paced sends too while retransmissions wait, and only then."""
    from uno.transport.sender import Sender

    found_at_ack = []
    scan = Sender._scan_while_resending

    def watched(self, now):
        waiting = bool(self.retx_queue)
        lost_before = self.lost_packets
        scan(self, now)
        if self.lost_packets > lost_before:
            assert waiting and self.scan_timers_while_resending
            found_at_ack.append(now)

    monkeypatch.setattr(Sender, "_scan_while_resending", watched)
    slow = [*LOSSY, "engine.dataplane=python", "transport.timer_granularity_us=40"]
    periodic = run(slow)
    assert not found_at_ack
    eager = run([*slow, "transport.scan_timers_while_resending=true"])
    assert len(found_at_ack) > 0
    assert eager.flows["fct_ps"].tolist() != periodic.flows["fct_ps"].tolist()


def test_class_reference_path_facts_for_a_same_rack_flow():
    flows = flows_override([(0, 1, 100_000), (0, 200, 100_000)])
    own = sim_of(["workload=flows", flows])
    ref = sim_of(["workload=flows", flows, "transport.path_facts=class_reference"])
    intra_rtt = own.meta["intra_base_rtt_us"] * US
    near_own, far_own = own.flows
    near_ref, far_ref = ref.flows
    assert near_own.sender.cc.ctx.base_rtt_ps < intra_rtt  # 2 hops: its own short path
    assert near_ref.sender.cc.ctx.base_rtt_ps == pytest.approx(intra_rtt)  # the 6-hop class path
    assert near_ref.rto_ps > near_own.rto_ps
    assert near_ref.path == near_own.path  # the network path itself is unchanged
    assert far_ref.sender.cc.ctx.base_rtt_ps == far_own.sender.cc.ctx.base_rtt_ps


def test_padded_last_packet():
    flows = flows_override([(0, 1, 1000)])
    plain = run(["workload=flows", flows, "engine.sample_interval_us=0"])
    padded = run(
        ["workload=flows", flows, "transport.pad_last_packet=true", "engine.sample_interval_us=0"]
    )
    assert padded.flows["bytes_delivered"].item() == 1000
    assert padded.flows["ideal_fct_ps"].item() > plain.flows["ideal_fct_ps"].item()
    assert padded.flows["fct_ps"].item() > plain.flows["fct_ps"].item()
    ports = padded.tables["ports"]
    assert ports["tx_bytes"].max() == 4096 + 64  # the one data packet went out full size


# ---- switches -----------------------------------------------------------------------------
def test_control_lane_lets_acks_overtake_queued_data():
    eng, _net, port, sink = make_port(1 << 20)
    port.enable_control_lane()
    for seq in range(5):
        port.receive(packet(seq, 4160))
    port.receive(packet(99, 64, kind=ACK))
    eng.run()
    times = {seq: t for t, seq, _ in sink.got}
    assert times[99] == serialization_ps(64, 10_000_000_000) + US  # no wait behind the data
    assert times[99] < times[0]
    assert port.bytes == 0 and port.arrivals == 6 and port.packets_held() == 0


def test_control_packets_are_never_dropped_in_their_lane():
    eng, net, port, _sink = make_port(5000)
    port.enable_control_lane()
    port.receive(packet(0, 4160))
    port.receive(packet(1, 4160))  # dropped: buffer full
    for seq in range(2, 100):
        port.receive(packet(seq, 64, kind=ACK))
    eng.run()
    assert port.drops == 1 and sum(net.dropped.values()) == 1


def _phantom_port(count_acks, count_drops):
    ph = PhantomQueue(1e9, 1.0, 1e9, 1e9, None)
    red = RedMarker(1e9, 1e9, None)
    eng, _net, port, _sink = make_port(5000, red=red, phantom=ph, source="phantom")
    port.set_phantom_accounting(count_acks, count_drops)
    return port, ph


def test_what_the_phantom_queue_counts():
    port, ph = _phantom_port(count_acks=True, count_drops=False)
    port.receive(packet(0, 4160))
    port.receive(packet(1, 4160))  # dropped
    port.receive(packet(2, 64, kind=ACK))
    assert ph.level_bytes == pytest.approx(4160 + 64)
    port, ph = _phantom_port(count_acks=False, count_drops=True)
    port.receive(packet(0, 4160))
    port.receive(packet(1, 4160))  # dropped, but counted
    port.receive(packet(2, 64, kind=ACK))
    assert ph.level_bytes == pytest.approx(2 * 4160)


def test_gemini_switches_step_mark_at_the_controllers_k():
    sim = sim_of(["cc=gemini"])
    intra_bdp = sim.meta["intra_bdp_bytes"]
    marking = [p for p in sim.network.ports if p.red is not None]
    assert marking and {p.kind for p in marking} <= {"host", "fabric", "bottleneck"}
    assert (
        {p.red.kmin_bytes for p in marking}
        == {p.red.kmax_bytes for p in marking}
        == {intra_bdp / 7}
    )
    for f in sim.flows:
        assert f.sender.cc.k_bytes == pytest.approx(intra_bdp / 7)
    intra = next(f for f in sim.flows if f.cls == "intra").sender.cc
    assert intra.f_scale == pytest.approx(0.5, rel=0.01)  # §III-B: F = 1/2 for K = C RTT / 7
