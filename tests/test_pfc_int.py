"""The pausable event port, PFC and INT (uno/net/event_port.py, pfc.py, int.py).

* With nothing paused and one FIFO, the event port gives the lazy port's results exactly, so
  the existing experiments are unchanged whichever port runs them.
* A paused port finishes the frame in service, sends nothing more, and resumes in order.
* An ingress queue pauses its upstream port once above Xoff and resumes it at Xon or below.
* A lossless incast drops nothing, delivers every byte and pauses; an idle fabric never pauses.
* INT records describe the ports a packet left; Gear's rule keeps the longest drain times.
"""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import SCHEME_OVERRIDES, SMALL_INCAST, flows_override, run

import uno
from uno.core.engine import Engine
from uno.core.errors import ConfigError
from uno.core.packet import ACK, DATA, Packet
from uno.core.units import serialization_ps
from uno.net.event_port import DATA_PRIORITY, PAUSED_PS, EventPort
from uno.net.int import IntStamper
from uno.net.pfc import PauseLog, PfcIngress, headroom_bytes

GBPS = 1_000_000_000
US = 1_000_000


# ---- the event port against the lazy port -------------------------------------------------
@pytest.mark.parametrize(
    "overrides",
    [
        *SCHEME_OVERRIDES,
        ["cc=uno", "switch.ack_priority=false", "faults=table1_setup1"],
    ],
)
def test_event_port_gives_the_lazy_ports_results(overrides):
    base = [*SMALL_INCAST, "workload.size_bytes=1500000", "engine.sample_interval_us=0"]
    results = {
        model: run([*base, *overrides, f"engine.port_model={model}"]) for model in ("lazy", "event")
    }
    lazy, event = results["lazy"], results["event"]
    pd.testing.assert_frame_equal(lazy.flows, event.flows)
    cols = ["port", "arrivals", "tx_packets", "tx_bytes", "drops", "ecn_marks", "max_queue_bytes"]
    pd.testing.assert_frame_equal(lazy.tables["ports"][cols], event.tables["ports"][cols])
    assert lazy.summary["packets"] == event.summary["packets"]


# ---- a paused port --------------------------------------------------------------------------
class _Net:
    def __init__(self):
        self.dropped = []

    def drop(self, pkt, reason, port):
        self.dropped.append((pkt.seq, reason))


class _Sink:
    def __init__(self, engine):
        self.engine = engine
        self.got: list[tuple[int, int]] = []

    def receive(self, pkt):
        self.got.append((pkt.seq, self.engine.now))


def _port(rate_gbps=100, delay_ps=1 * US, buffer_bytes=1 << 20):
    engine = Engine()
    port = EventPort(engine, _Net(), "a->b", rate_gbps * GBPS, delay_ps, buffer_bytes, "fabric")
    sink = _Sink(engine)
    port.connect(sink)
    return engine, port, sink


def _data(seq, size=4160, kind=DATA):
    return Packet(kind, 0, seq, size, size - 64, 0, 1, 0, 0, 0)


def test_paused_port_finishes_its_frame_sends_nothing_and_resumes_in_order():
    engine, port, sink = _port()
    ser = serialization_ps(4160, 100 * GBPS)
    for seq in range(5):
        port.receive(_data(seq))
    # pause during the second frame's serialisation
    engine.call_at(ser + ser // 2, port.pause, DATA_PRIORITY)
    engine.run_until(50 * US)
    # the first two frames left (the second was in service), nothing more
    assert [s for s, _ in sink.got] == [0, 1]
    assert sink.got[1][1] == 2 * ser + 1 * US
    assert port.bytes == 3 * 4160 and port.paused[DATA_PRIORITY]
    assert port._busy_until_ps == PAUSED_PS  # a host NIC takes no data while paused
    resume_at = 60 * US
    engine.call_at(resume_at, port.resume, DATA_PRIORITY)
    engine.run_until(200 * US)
    assert [s for s, _ in sink.got] == [0, 1, 2, 3, 4]
    assert [t for _, t in sink.got[2:]] == [resume_at + k * ser + 1 * US for k in (1, 2, 3)]
    assert port.bytes == 0 and port.tx_packets == 5 and port.packets_held() == 0


def test_control_priority_overtakes_queued_data_and_is_not_paused():
    engine, port, sink = _port()
    port.enable_control_lane()
    for seq in range(3):
        port.receive(_data(seq))
    port.receive(_data(10, size=64, kind=ACK))
    port.pause(DATA_PRIORITY)
    engine.run_until(100 * US)
    # frame 0 was in service; the ACK goes next, ahead of the queued data, despite the pause
    assert [s for s, _ in sink.got] == [0, 10]
    assert port.bytes == 2 * 4160  # the ACK is not in the data buffer


def test_pause_log_records_intervals():
    engine, port, _ = _port()
    log = PauseLog()
    port.pause_log = log
    engine.call_at(5 * US, port.pause, DATA_PRIORITY)
    engine.call_at(7 * US, port.pause, DATA_PRIORITY)  # already paused: no new interval
    engine.call_at(9 * US, port.resume, DATA_PRIORITY)
    engine.call_at(20 * US, port.pause, DATA_PRIORITY)
    engine.run_until(30 * US)
    table = log.table(end_ps=30 * US)
    assert list(table["duration_us"]) == [4.0, 10.0]
    assert list(table["open"]) == [False, True]


# ---- PFC thresholds -------------------------------------------------------------------------
class _Upstream:
    """Stands for the upstream port: records when PAUSE / RESUME reach it."""

    def __init__(self, engine):
        self._engine = engine
        self.name = "up->sw"
        self.delay_ps = 2 * US
        self.rate_bps = 100 * GBPS
        self.calls: list[tuple[str, int]] = []

    def pause(self, prio):
        self.calls.append(("pause", self._engine.now))

    def resume(self, prio):
        self.calls.append(("resume", self._engine.now))


class _Switch:
    name = "sw"

    def __init__(self):
        self.got = []

    def receive(self, pkt):
        self.got.append(pkt)


def test_ingress_pauses_above_xoff_and_resumes_at_xon():
    engine = Engine()
    up = _Upstream(engine)
    sw = _Switch()
    ing = PfcIngress(up, sw, xoff=10_000, xon=5_000, headroom=50_000)
    signal = 2 * US + serialization_ps(64, 100 * GBPS)
    for seq in range(3):  # 3 x 4160 = 12,480 B > Xoff after the third packet
        engine.call_at(seq * US, ing.receive, _data(seq))
    engine.run_until(10 * US)
    assert up.calls == [("pause", 2 * US + signal)]
    assert ing.bytes == 12_480 and all(p.ingress is ing for p in sw.got)
    ing.release(4160)  # 8,320 > Xon: still paused
    engine.run_until(20 * US)
    assert len(up.calls) == 1
    engine.call_at(30 * US, ing.release, 4160)  # 4,160 <= Xon: resume
    engine.run_until(60 * US)
    assert up.calls[1] == ("resume", 30 * US + signal)
    assert ing.pauses_sent == 1


def test_headroom_covers_the_round_trip_and_two_frames():
    # 100 Gb/s, 1 us: 2 x 12,500 B on the wire and in the PAUSE's trip, 8 B for the PAUSE
    # frame's own 5.12 ns, two full 4,160-byte packets
    assert headroom_bytes(100 * GBPS, 1 * US, 4160) == 25_000 + 64 + 2 * 4160


# ---- lossless runs --------------------------------------------------------------------------
FAT_INCAST = [
    "topo=fat_tree",
    "topo.k=4",
    "workload=incast",
    "workload.n_intra=8",
    "workload.n_inter=0",
    "workload.size_bytes=1000000",
    "lb=ecmp",
    "engine.sample_interval_us=0",
]


def test_lossless_incast_drops_nothing_delivers_everything_and_pauses():
    # no ECN: only PFC holds the incast back
    r = run([*FAT_INCAST, "cc=dctcp", "switch.ecn.enabled=false", "switch.pfc.enabled=true"])
    assert r.summary["packets"]["dropped"] == {}
    assert r.flows["finish_ps"].notna().all()
    assert (r.flows["bytes_delivered"] == r.flows["size_bytes"]).all()
    pfc = r.summary["pfc"]
    assert pfc["lossless_violations"] == 0 and pfc["pause_frames"] > 0
    pauses = r.tables["pauses"]
    assert len(pauses) == pfc["pause_intervals"] > 0
    # the receiver's ToR pauses its uplinks' senders: the aggregation ports into that ToR
    assert pauses["port"].str.endswith("->tor0").any()
    # without PFC the same incast overflows the buffers
    lossy = run([*FAT_INCAST, "cc=dctcp", "switch.ecn.enabled=false"])
    assert sum(lossy.summary["packets"]["dropped"].values()) > 0


def test_idle_fabric_never_pauses():
    r = run(
        [
            "topo=fat_tree",
            "topo.k=4",
            "workload=flows",
            flows_override([(0, 5, 500_000), (2, 9, 500_000, 50.0)]),
            "cc=dctcp",
            "switch.pfc.enabled=true",
            "engine.sample_interval_us=0",
        ]
    )
    assert r.summary["pfc"]["pause_frames"] == 0
    assert r.tables["pauses"].empty


def test_pfc_settings_are_checked():
    with pytest.raises(ConfigError, match="engine.port_model"):
        uno.run(uno.compose([*FAT_INCAST, "switch.pfc.enabled=true", "engine.port_model=lazy"]))
    with pytest.raises(ConfigError, match="switch.pfc.xoff_bytes"):
        # the WAN links' round trip needs more headroom than a 1 MiB port buffer has
        uno.run(uno.compose(["topo.k=4", "switch.pfc.enabled=true"]))
    with pytest.raises(ConfigError, match="switch.pfc.port_kinds"):
        uno.run(
            uno.compose([*FAT_INCAST, "switch.pfc.enabled=true", "switch.pfc.port_kinds=[wan]"])
        )
    with pytest.raises(ConfigError, match="switch.pfc.xon_bytes"):
        uno.run(uno.compose(["switch.pfc.xoff_bytes=1000", "switch.pfc.xon_bytes=2000"]))
    # (the hybrid pauses the compiled data plane's ports only)
    with pytest.raises(ConfigError, match="engine.dataplane"):
        hybrid = ["engine.kind=hybrid", "engine.hybrid_packet_max_bytes=1000000",
                  "engine.dataplane=python"]  # fmt: skip
        uno.run(uno.compose([*FAT_INCAST, "switch.pfc.enabled=true", *hybrid]))


def test_max_min_rates_never_queue_so_pfc_never_pauses():
    """Max-min's rates never exceed a link's capacity: no ingress queue builds, so with PFC on
    it pauses nothing and the flows finish as without it (the max-min baseline of a lossless
    fabric)."""
    on = uno.run(uno.compose([*FAT_INCAST, "switch.pfc.enabled=true", "engine.kind=maxmin"]))
    off = uno.run(uno.compose([*FAT_INCAST, "engine.kind=maxmin"]))
    pfc = on.summary["pfc"]
    assert pfc["ingress_queues"] > 0 and pfc["pause_frames"] == 0
    assert pfc["max_ingress_bytes"] == 0 and pfc["lossless_violations"] == 0
    assert on.flows["finish_ps"].notna().all()
    assert on.flows["finish_ps"].tolist() == off.flows["finish_ps"].tolist()


def test_max_min_runs_what_only_acts_on_losses():
    """Max-min runs no congestion control and never queues or loses: a controller told of every
    timed-out packet has nothing to hear, so it runs the setting (the same finish times as
    without)."""
    setting = ["cc=bbr", "transport.report_every_timeout=true"]
    on = uno.run(uno.compose([*FAT_INCAST, *setting, "engine.kind=maxmin"]))
    off = uno.run(uno.compose([*FAT_INCAST, "cc=bbr", "engine.kind=maxmin"]))
    assert on.flows["finish_ps"].notna().all()
    assert on.flows["finish_ps"].tolist() == off.flows["finish_ps"].tolist()


def test_two_dc_with_pfc_inside_the_datacenters_only():
    # the core and border switches take WAN / border links, which are not lossless: they stay
    # lossy as a whole, the ToR and aggregation switches are lossless
    r = run(
        [
            *SMALL_INCAST,
            "workload.size_bytes=500000",
            "cc=dctcp",
            "lb=ecmp",
            "switch.pfc.enabled=true",
            "switch.pfc.port_kinds=[host,fabric]",
            "engine.sample_interval_us=0",
        ]
    )
    assert r.flows["finish_ps"].notna().all()
    pfc = r.summary["pfc"]
    assert pfc["lossless_violations"] == 0
    # k = 4: per DC 4 core switches and a border switch stay lossy
    assert pfc["lossy_switches"] == 2 * (4 + 1)


# ---- INT ------------------------------------------------------------------------------------
def test_int_records_describe_the_ports_left():
    stamper = IntStamper(max_records=5, replacement="none")
    pkt = _data(0)
    stamper.stamp(pkt, 10, 0, 4160, 100 * GBPS)
    stamper.stamp(pkt, 20, 8320, 1_000_000, 25 * GBPS)
    assert pkt.int_hops == [(10, 0, 4160, 100 * GBPS), (20, 8320, 1_000_000, 25 * GBPS)]


def test_int_keeps_the_first_hops_when_full_without_replacement():
    stamper = IntStamper(max_records=2, replacement="none")
    pkt = _data(0)
    for t, q in ((1, 100), (2, 0), (3, 10**6)):
        stamper.stamp(pkt, t, q, 0, 100 * GBPS)
    assert [r[0] for r in pkt.int_hops] == [1, 2]


def test_gear_replacement_keeps_the_longest_drain_times():
    # Gear eq. 3: when full, a record with a longer ql / bw replaces the shortest one
    stamper = IntStamper(max_records=2, replacement="gear")
    pkt = _data(0)
    stamper.stamp(pkt, 1, 50_000, 0, 100 * GBPS)  # 4 us to drain
    stamper.stamp(pkt, 2, 10_000, 0, 100 * GBPS)  # 0.8 us
    stamper.stamp(pkt, 3, 20_000, 0, 25 * GBPS)  # 6.4 us: replaces the 0.8 us record
    assert [r[0] for r in pkt.int_hops] == [1, 3]
    stamper.stamp(pkt, 4, 5_000, 0, 100 * GBPS)  # 0.4 us: shorter than both, dropped
    assert [r[0] for r in pkt.int_hops] == [1, 3]
    one = IntStamper(max_records=1, replacement="gear")
    pkt = _data(1)
    for t, q in ((1, 10), (2, 30), (3, 20)):
        one.stamp(pkt, t, q, 0, 100 * GBPS)
    assert pkt.int_hops == [(2, 30, 0, 100 * GBPS)]  # the argmax of eq. 3


def test_int_in_a_run_reaches_the_sender_and_counts_on_the_wire():
    from uno.build import build_simulation
    from uno.cc.base import CongestionControl

    cfg = uno.api.to_run_config(
        uno.compose(
            [
                "topo=fat_tree",
                "topo.k=4",
                "workload=flows",
                flows_override([(0, 15, 200_000)]),  # another pod: 5 switch hops
                "cc=dctcp",
                "lb=ecmp",
                "switch.int_telemetry.enabled=true",
                "engine.sample_interval_us=0",
                # the spy replaces the Python sender's controller after the build
                "engine.dataplane=python",
            ]
        )
    )
    sim = build_simulation(cfg)
    sender = sim.flows[0].sender
    seen = []

    class Spy(CongestionControl):
        wants_int = True

        def on_ack_int(self, now_ps, acked_bytes, ecn, rtt_ps, sent_ps, hops):
            seen.append(list(hops))

    spy = Spy(sender.cc.ctx)
    spy.cwnd_bytes = sender.cc.cwnd_bytes
    sender.cc = spy
    sender._int_cc = True
    result = sim.run()
    assert seen and all(len(h) == 5 for h in seen)  # ToR, agg, core, agg, ToR
    rates = {r[3] for h in seen for r in h}
    assert rates == {100 * GBPS}
    # the txBytes of each hop only grows; timestamps increase along the path
    for h in seen:
        assert [r[0] for r in h] == sorted(r[0] for r in h)
    first_hop_tx = [h[0][2] for h in seen]
    assert first_hop_tx == sorted(first_hop_tx)
    # 42 INT bytes on every data packet (2 + 5 x 8) and on every ACK
    assert sender.full_wire_bytes == cfg.transport.mtu_bytes + cfg.transport.header_bytes + 42
    assert sim.flows[0].receiver.ack_bytes == cfg.transport.ack_bytes + 42
    assert result.flows["finish_ps"].notna().all()


def test_int_tiers_are_checked():
    with pytest.raises(ConfigError, match="switch.int_telemetry.tiers"):
        uno.run(
            uno.compose(
                [
                    *FAT_INCAST,
                    "switch.int_telemetry.enabled=true",
                    "switch.int_telemetry.tiers=[spine]",
                ]
            )
        )


# ---- HPCC and DCQCN end to end --------------------------------------------------------------
def test_dcqcn_receiver_sends_at_most_one_cnp_per_interval():
    from uno.build import build_simulation

    cfg = uno.api.to_run_config(
        # (the Python data plane: the spies sit on the Python controllers; the kernel's senders
        # and receivers give the same CNPs: tests/test_compiled_senders.py)
        uno.compose(
            [
                *FAT_INCAST,
                "cc=dcqcn",
                "switch.pfc.enabled=true",
                "workload.n_intra=4",
                "engine.dataplane=python",
            ]
        )  # fmt: skip
    )
    sim = build_simulation(cfg)
    stamps: dict[int, list[int]] = {}
    for flow in sim.flows:
        cc = flow.sender.cc
        orig = cc.on_ack_batch

        def spy(now_ps, acked, ecn, *rest, _orig=orig, _fid=flow.flow_id):
            if ecn:
                stamps.setdefault(_fid, []).append(now_ps)
            _orig(now_ps, acked, ecn, *rest)

        cc.on_ack_batch = spy
    sim.run()
    interval = 50 * US
    assert stamps, "the incast marks packets, so CNPs flow"
    for flow in sim.flows:
        times = stamps.get(flow.flow_id, [])
        assert len(times) == flow.receiver.cnps_sent <= flow.receiver.ecn_packets
        # CNPs leave the receiver >= 50 us apart; ACKs of one flow keep their order and their
        # path's delay, so they reach the sender >= 50 us apart less the queueing jitter
        gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
        assert all(g > interval - 10 * US for g in gaps)


@pytest.mark.parametrize("cc", ["hpcc", "dcqcn", "dcqcn_hpcc"])
def test_lossless_incast_experiment_runs_each_scheme(cc):
    r = run(["experiment=hpcc_incast", f"cc={cc}", "workload.size_bytes=500000"])
    assert r.flows["finish_ps"].notna().all()
    assert r.summary["packets"]["dropped"] == {}
    assert r.summary["pfc"]["lossless_violations"] == 0


def test_pfc_spreading_pauses_reach_the_victims_and_slow_them():
    spread = run(["experiment=pfc_spreading"])
    alone = run(["experiment=pfc_spreading_alone"])
    victims = spread.flows[spread.flows["tag"] == "victim"]
    pauses = spread.tables["pauses"]
    # the victims' own NICs were paused (their ToR's ingress from them filled behind paused
    # uplinks), though they never cross the incast's bottleneck link
    for src in victims["src"]:
        assert pauses.loc[pauses["port"].str.startswith(f"h{src}->"), "duration_us"].sum() > 0
    assert (victims["fct_ps"].to_numpy() > 2 * alone.flows["fct_ps"].max()).all()
    assert alone.summary["pfc"]["pause_frames"] == 0


def test_sender_wakes_when_a_rate_timer_raises_the_rate_within_a_pacing_gap():
    """A rate-based controller whose timer raises the rate during a long pacing gap (DCQCN's
    rate-increase timer at a low rate) shortens the gap: the next packet leaves at the timer,
    not at the end of the gap the old rate set."""
    from uno.build import build_simulation
    from uno.cc.base import CongestionControl

    cfg = uno.api.to_run_config(
        uno.compose(
            [
                "topo=fat_tree",
                "topo.k=4",
                "workload=flows",
                flows_override([(0, 15, 3 * 4096)]),
                "cc=dctcp",
                "engine.sample_interval_us=0",
                # the test replaces the Python sender's controller after the build
                "engine.dataplane=python",
            ]
        )
    )
    sim = build_simulation(cfg)
    sender = sim.flows[0].sender
    sends = []

    class Timed(CongestionControl):
        wants_send_events = True

        def __init__(self, ctx):
            super().__init__(ctx)
            self.cwnd_bytes = float("inf")
            self.pacing_rate_bps = 1e9  # a 4,160-byte gap is 33.28 us
            self.timer_ps = 5 * US

        def on_send(self, now_ps, wire_bytes):
            sends.append(now_ps)

        def next_rate_change_ps(self):
            return self.timer_ps

        def advance(self, now_ps):
            if self.timer_ps is not None and now_ps >= self.timer_ps:
                self.pacing_rate_bps = 100e9
                self.timer_ps = None

    sender.cc = Timed(sender.cc.ctx)
    sender._send_events = True
    sim.run()
    assert sends[0] == 0
    # at 5 us the rate is 100 Gb/s: the gap after packet 0 is 332.8 ns, already over, so the
    # second packet leaves at the timer; the third 332.8 ns after it
    assert sends[1] == 5 * US
    assert sends[2] == 5 * US + serialization_ps(4160, 100 * GBPS)


def test_a_pacing_wake_left_behind_by_a_rate_timer_does_nothing(monkeypatch):
    """When a rate timer brings the next send forward, the wake already set for the old send
    time is stale: it sends nothing and sets no new wake, so wakes do not pile up (they once
    did: every stale wake cleared the pending flag and set another, 27 wakes per packet sent on
    the 4+4 DCQCN incast of benchmarks/engine_speed.py). A wake at most per packet sent and per
    rate-timer change."""
    from uno.transport.sender import Sender

    wakes = []
    wake = Sender._wake

    def counted(self, *at):
        wakes.append(at)
        return wake(self, *at)

    monkeypatch.setattr(Sender, "_wake", counted)
    result = uno.run(
        uno.compose(
            ["topo=two_dc", "workload=mixed_incast", "workload.n_intra=4", "workload.n_inter=4",
             "workload.size_bytes=2000000", "cc=dcqcn", "lb=ecmp", "switch=ecn",
             "engine.sample_interval_us=0", "engine.dataplane=python"]
        )
    )  # fmt: skip
    sent = int(result.flows["sent_packets"].sum())
    assert result.flows["ecn_acks"].sum() > 0  # CNPs: the rates and their timers moved
    assert sent <= len(wakes) <= 1.2 * sent
