"""The compiled data plane's senders (uno/net/compiled/, kernel senders).

* Identity: with every flow's sender in the kernel (DCTCP, UnoCC, GEMINI, MP-RDMA, BBR, HPCC,
  DCQCN over ECMP or packet spraying; BBR's delivery-rate samples taken in the kernel), the
  flows, sampled rates and windows, queues, ports and packet counts are the Python senders'
  bit for bit — with timeouts, fast retransmits, drops, link faults, flows arriving and
  finishing, and a RTO FIFO small enough to compact many times.
* The sender's kernels agree with their twins from a mid-run state.
* A resend with nothing in flight keeps the delivery clock (the kernel's packet rows read).
* Flows the kernel cannot send for keep Python senders beside the kernel's (sharing their hosts'
  NICs, identical results), and the summary says so.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import SMALL_INCAST, flows_override, run
from test_compiled_dataplane import LOSSY_WAN, _assert_identical, _both, twin_runner

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.net.compiled import dataplane, loop, nic_turns, packets, sender_acks, sender_rings, senders
from uno.net.compiled.layout import EID_SHIFT, POOL_ROOM, H, K, S

SEED = 20261124  # each test draws from its own generator: results do not depend on test order
DCTCP = ["cc=dctcp", "lb=ecmp"]


def _build(overrides: list[str]):
    return build_simulation(to_run_config(uno.compose([*overrides, "engine.dataplane=compiled"])))


INCAST_SAMPLED = [*SMALL_INCAST, "workload.size_bytes=1500000", "engine.sample_interval_us=5",
                  "engine.queue_ports=[busy]"]  # fmt: skip
DROPTAIL = [*SMALL_INCAST, "switch=droptail", "topo.buffer_bytes=60000",
            "workload.size_bytes=2000000", "engine.sample_interval_us=20"]  # fmt: skip
LOSSY = [*SMALL_INCAST, "workload.size_bytes=1500000", "engine.sample_interval_us=0", *LOSSY_WAN]
FIG10 = ["experiment=fig10_load", "workload.n_flows=150", "engine.max_sim_time_ms=8"]


@pytest.mark.parametrize(
    "overrides",
    [
        # sampled every 5 us: the samplers read the kernel senders' state mid-run
        [*INCAST_SAMPLED, *DCTCP],
        [*INCAST_SAMPLED, "cc=uno", "lb=ecmp"],  # paced
        [*INCAST_SAMPLED, "cc=gemini", "lb=ecmp"],
        [*INCAST_SAMPLED, "cc=uno", "lb=spray"],  # the default run's scheme: a path per packet
        [*INCAST_SAMPLED, "cc=mprdma", "lb=ecmp"],
        [*INCAST_SAMPLED, "cc=hpcc", "lb=ecmp"],  # INT records read in the kernel
        # MP-RDMA's rule on every ACK, duplicates included (as the artifact runs it), with
        # timeouts of 1.02 base RTTs: many spurious retransmissions, so many duplicate ACKs
        [*INCAST_SAMPLED, "cc=mprdma", "lb=spray", "cc.mprdma.ecn_decrease_mss=0.15",
         "cc.mprdma.update_on_duplicate_ack=true", "transport.intra.rto_base_rtts=1.02",
         "transport.inter.rto_base_rtts=1.02", "transport.intra.timer_granularity_us=4.0",
         "transport.intra.rto_base_rtts_after_retransmit=1.02"],
        # tail drops in bursts: timeouts
        [*DROPTAIL, *DCTCP],
        [*DROPTAIL, "cc=gemini", "lb=ecmp"],
        # the WAN failing and losing packets (i.i.d. and in blocks): fast retransmits too
        [*LOSSY, *DCTCP],
        [*LOSSY, "cc=uno", "lb=ecmp"],
        [*LOSSY, "cc=dctcp", "lb=spray"],
        # flows arriving and finishing (Poisson, web-search and WAN sizes), two DCs (DCTCP's
        # kernel senders are checked on the incast, tail drops and the lossy WAN above; this
        # one takes 20 s)
        pytest.param([*FIG10, *DCTCP], marks=pytest.mark.slow),
        [*FIG10, "scheme=uno_ecmp", "workload=mixed_artifact"],  # the artifact's switches
        # (GEMINI's kernel senders are checked on the incast and tail drops above; this one
        # takes most of a minute)
        pytest.param([*FIG10, "scheme=gemini"], marks=pytest.mark.slow),
    ],
    ids=["incast_dctcp", "incast_uno", "incast_gemini", "incast_uno_spray", "incast_mprdma",
         "incast_hpcc",
         "incast_mprdma_dup_acks", "droptail_dctcp",
         "droptail_gemini", "lossy_wan_dctcp", "lossy_wan_uno", "lossy_wan_dctcp_spray",
         "fig10_dctcp", "fig10_uno_ecmp", "fig10_gemini"],
)  # fmt: skip
def test_kernel_senders_give_the_python_senders_results(overrides):
    results = _both(overrides)
    _assert_identical(results)
    comp = results["compiled"]
    assert comp.summary["dataplane"]["senders"] == "in the kernel"
    if "switch=droptail" in overrides:
        assert comp.flows["timeouts"].sum() > 0
    if "cc.mprdma.update_on_duplicate_ack=true" in overrides:
        # spurious retransmissions: their ACKs are duplicates, which the controller hears
        assert comp.flows["retransmits"].sum() > 100
    if overrides[-2:] == DCTCP and LOSSY_WAN[1] in overrides:
        # single losses: three later packets acknowledged
        assert comp.flows["fast_retransmits"].sum() > 0


@pytest.mark.parametrize(
    "overrides",
    [
        [*INCAST_SAMPLED, "cc=mprdma_bbr"],  # MP-RDMA within the DC, BBR across the WAN
        # senders starting one after another: each restarts its delivery clock at its start
        [*INCAST_SAMPLED, "cc=mprdma_bbr", "workload.stagger_us=150"],
        # a whole first window lost at a failed host link: every packet resent after its
        # timeout, with nothing in flight
        ["workload=flows", flows_override([(0, 255, 2_000_000), (1, 254, 2_000_000, 300.0)]),
         "cc=bbr", "lb=ecmp", "engine.sample_interval_us=5",
         "faults.link_failures=[{ports:['dc0/h1->dc0/tor0'],both_directions:true,at_us:200.0,"
         "until_us:1000.0}]"],
        # BBR's timeouts at 1.02 base RTTs: spurious resends, the first copy's ACK often first
        [*INCAST_SAMPLED, "cc=mprdma_bbr", "transport.inter.rto_base_rtts=1.02"],
        # the WAN losing packets: BBR's fast retransmits (three duplicate ACKs) and timeouts
        [*LOSSY, "cc=mprdma_bbr", "lb=ecmp"],
        # the Uno paper's MPRDMA+BBR, flows arriving at random (a minute and a half: slow)
        pytest.param([*FIG10, "scheme=mprdma_bbr"], marks=pytest.mark.slow),
        # the artifact's timeout rules: timers tested at every ACK and paced send while a resend
        # waits, every timed-out packet reported to the law
        [*INCAST_SAMPLED, "cc=mprdma_bbr", "transport.inter.rto_base_rtts=1.02",
         "transport.intra.rto_base_rtts=1.02", "transport.intra.timer_granularity_us=4.0",
         "transport.scan_timers_while_resending=true", "transport.report_every_timeout=true"],
        [*INCAST_SAMPLED, "cc=mprdma_bbr_artifact"],  # the artifact's BBR pacer too
    ],
    ids=["incast", "incast_staggered", "idle_resends", "incast_spurious_timeouts", "lossy_wan", "fig10", "artifact_timeout_rules",
         "artifact_preset"],
)  # fmt: skip
def test_bbr_senders_in_the_kernel(overrides, monkeypatch):
    """BBR's senders in the kernel: the delivery-rate sample of every ACK (the sender's
    delivered bytes and clock when the acknowledged copy was sent, the clock restarting when
    nothing was in flight) as the Python sender takes it, so the Python data plane's results
    bit for bit; an ACK of a copy sent before the packet's resend echoes its own copy's."""
    from uno.transport.sender import Sender

    earlier_copies = []
    on_control = Sender.on_control

    def counted(self, pkt):
        resent = self.outstanding.get(pkt.seq)
        if self._rate_samples and resent is not None and resent > pkt.sent_ps:
            earlier_copies.append(pkt.seq)
        return on_control(self, pkt)

    monkeypatch.setattr(Sender, "on_control", counted)
    results = _both(overrides)
    _assert_identical(results)
    comp = results["compiled"]
    assert comp.summary["dataplane"]["senders"] == "in the kernel"
    inter = comp.flows[comp.flows["cc"] == "bbr"]
    assert len(inter) > 0
    if "transport.inter.rto_base_rtts=1.02" in overrides:
        assert len(earlier_copies) > 10  # (in the Python run: the kernel's must match it)
    if LOSSY_WAN[1] in overrides:
        assert inter["fast_retransmits"].sum() > 0 and inter["timeouts"].sum() > 0


def test_kernel_resends_with_nothing_in_flight_keep_the_delivery_clock():
    """A BBR flow's whole first window lost at a failed host link: the resends after its
    timeout go out with nothing in flight, and keep the clock of its first send (the clock
    restarts only when every byte sent is acknowledged), read from the kernel's packet rows
    before any of them is acknowledged."""
    from uno.core.packet import DATA

    start_ps = 300_000_000
    sim = _build(["workload=flows", flows_override([(0, 255, 2_000_000),
                                                    (1, 254, 2_000_000, start_ps / 1e6)]),
                  "cc=bbr", "lb=ecmp", "engine.sample_interval_us=0",
                  "faults.link_failures=[{ports:['dc0/h1->dc0/tor0'],both_directions:true,"
                  "at_us:200.0,until_us:1000.0}]"])  # fmt: skip
    sim.start()
    sim.advance(3_500_000_000)  # past the timeout, before a resend's ACK can return
    dp = sim.network.dataplane
    ST, PK = dp.ST, dp.PK
    sb = int(ST[H.off_senders]) + 1 * S.size
    assert ST[sb + S.rate] and ST[sb + S.retx] > 0 and ST[sb + S.acked_bytes] == 0
    resent = (PK[:, K.kind] == DATA) & (PK[:, K.flow] == 1) & (PK[:, K.sent] > 1_000_000_000)
    assert resent.sum() > 0
    assert (PK[resent, K.tx_delivered_ps] == start_ps).all()


@pytest.mark.parametrize(
    "overrides",
    [
        # PFC; rates down to 10 Mb/s, where pacing gaps outlast the rate timer, which then
        # shortens them (_EV_RATE)
        ["experiment=hpcc_incast", "cc=dcqcn", "workload.n_intra=15", "cc.dcqcn.min_rate_mbps=10"],
        ["experiment=hpcc_incast", "cc=dcqcn_hpcc"],  # CNPs every 4 us, no byte counter
        # no PFC: tail drops and the lossy WAN's losses, each taken as a CNP
        [*LOSSY, "cc=dcqcn", "lb=ecmp", "cc.dcqcn.loss_as_cnp=true",
         "cc.dcqcn.rate_on_first_cnp=0.5"],
    ],
    ids=["pfc_low_rates", "hpcc_settings", "lossy_wan_loss_as_cnp"],
)  # fmt: skip
def test_dcqcn_senders_in_the_kernel(overrides, monkeypatch):
    """DCQCN's senders in the kernel (rate-based pacing, the byte counter on every send, the
    rate timer shortening a pacing gap) and its notification point in the kernel's receivers
    (at most one CNP per interval): the Python data plane's results bit for bit."""
    from uno.transport.sender import Sender

    rate_wakes = []
    rate_changed = Sender._rate_changed

    def counted(self, last):
        rate_wakes.append(last)
        return rate_changed(self, last)

    monkeypatch.setattr(Sender, "_rate_changed", counted)
    results = _both(overrides)
    _assert_identical(results)
    comp = results["compiled"]
    assert comp.summary["dataplane"]["senders"] == "in the kernel"
    assert comp.flows["ecn_acks"].sum() > 0  # ACKs that carried a CNP
    if "cc.dcqcn.min_rate_mbps=10" in overrides:
        assert len(rate_wakes) > 100  # (in the Python run: the kernel's must match it)
    if "cc.dcqcn.loss_as_cnp=true" in overrides:
        assert comp.flows["retransmits"].sum() > 0


# hosts 1..6 send an intra-DC flow to host 0 (with eleven others: hosts 1..12) and an inter-DC
# flow, so their NICs take turns between a kernel sender and a Python one (the inter-DC flows
# are erasure-coded, their receivers Python's)
SHARED_NICS = [
    "topo.k=4",
    "workload=flows",
    "workload.flows=["
    + ",".join(
        [f"{{src:{i},dst:0,size_bytes:2000000}}" for i in range(1, 13)]
        + [f"{{src:{i},dst:{16 + i},size_bytes:2000000,start_us:{i}.0}}" for i in range(1, 7)]
    )
    + "]",
    "cc=mprdma_bbr",
    "ec=mds",
    "ec.payload=false",
    "engine.sample_interval_us=5",
    "engine.queue_ports=[busy]",
]


@pytest.mark.parametrize(
    "overrides",
    [
        SHARED_NICS,  # MP-RDMA in the kernel, coded BBR flows in Python, packet spraying
        # DCTCP without ECN and PFC in the DCs: pauses reach the shared NICs, whose RESUME
        # the kernel handles for both kinds of sender
        [*SHARED_NICS, "cc.intra=dctcp", "lb=ecmp", "switch.pfc.enabled=true",
         "switch.pfc.port_kinds=[host,fabric]", "switch.ecn.enabled=false"],
        # flows arriving and finishing at random hosts, the Uno paper's MPRDMA+BBR (the NICs'
        # sharing is checked by the two above; this one takes 20 s)
        pytest.param(["experiment=fig10_load", "workload.n_flows=150",
                      "engine.max_sim_time_ms=4", "scheme=mprdma_bbr", "ec=mds",
                      "ec.payload=false"], marks=pytest.mark.slow),
    ],
    ids=["spray", "pfc_hosts_paused", "fig10"],
)  # fmt: skip
def test_kernel_and_python_senders_share_a_nic(overrides, monkeypatch):
    """Flows the kernel cannot send for (coded ones) keep Python senders beside the kernel's:
    the kernel hands them their ACKs and, at a NIC they share with kernel senders, their turns
    in the one FIFO (``_RUN_NICPY``). Results are the Python data plane's bit for bit."""
    turns = []
    python_turns = dataplane.CompiledDataplane._python_turns

    def counted(self, flow_id, host, now):
        turns.append(flow_id)
        return python_turns(self, flow_id, host, now)

    monkeypatch.setattr(dataplane.CompiledDataplane, "_python_turns", counted)
    results = _both(overrides)
    _assert_identical(results)
    comp = results["compiled"]
    note = comp.summary["dataplane"]["senders"]
    assert note.startswith("in the kernel but ") and "receiver in Python: coding" in note
    assert len(turns) > 10  # Python senders took turns at kernel-scheduled NICs
    if "switch.pfc.enabled=true" in overrides:
        assert comp.summary["pfc"] == results["python"].summary["pfc"]
        assert (comp.tables["pauses"]["kind"] == "host").sum() > 0


def _live_fifo(ST, sb) -> list[tuple[int, int]]:
    """The RTO FIFO's live (send time, seq) entries, oldest first."""
    off, cap = int(ST[sb + S.fifo_off]), int(ST[sb + S.fifo_cap])
    head, n = int(ST[sb + S.fifo_head]), int(ST[sb + S.fifo_n])
    out = int(ST[sb + S.out_off])
    pairs = [(int(ST[off + 2 * ((head + i) % cap)]), int(ST[off + 2 * ((head + i) % cap) + 1]))
             for i in range(n)]  # fmt: skip
    return [(t, q) for t, q in pairs if ST[out + q] == t + 1]


def _logical(ST, sb, n_packets: int) -> tuple:
    """What a kernel sender's state means, whatever the ring layout: counters, outstanding send
    times, the retransmission queue, the acknowledged send times kept, the live FIFO."""
    rq_off, rq_cap = int(ST[sb + S.rq_off]), int(ST[sb + S.rq_cap])
    rq_head, rq_n = int(ST[sb + S.rq_head]), int(ST[sb + S.rq_n])
    later = int(ST[sb + S.later_off])
    out = int(ST[sb + S.out_off])
    counters = [int(ST[sb + c]) for c in (S.inflight, S.lost, S.fast_retx,
                                          S.timeouts, S.next_seq, S.sent_pkts)]  # fmt: skip
    return (
        counters,
        ST[out : out + n_packets].tolist(),
        [int(ST[rq_off + (rq_head + i) % rq_cap]) for i in range(rq_n)],
        ST[later : later + int(ST[sb + S.later_n])].tolist(),
        _live_fifo(ST, sb),
    )


def test_rto_fifo_compaction_keeps_what_the_sender_decides():
    """One kernel sender driven twice by the same random sends, ACKs (fast retransmit on) and
    timers, with fast retransmit on and off: once with its full RTO FIFO, once with a ring of 24
    entries that fills and drops its stale entries over and over (at most 16 packets
    outstanding, so it always can). After every step the two mean the same: counters,
    outstanding packets, retransmission queue, the acknowledged send times fast retransmit
    counts, the live FIFO entries; and the windows."""
    rng = np.random.default_rng(SEED)
    sim = _build([*SMALL_INCAST, *DCTCP, "workload.n_intra=1", "workload.n_inter=0",
                  "workload.size_bytes=4000000", "engine.sample_interval_us=0"])  # fmt: skip
    dp = sim.network.dataplane
    assert dp._kernel_tx and len(dp.flows) == 1
    sb = int(dp.ST[H.off_senders])
    n = int(dp.ST[sb + S.n])
    compactions = {}
    for dupthr in (3, 0):
        wide, narrow = _drive_twice(dp, sb, n, dupthr, rng)
        compactions[dupthr] = narrow
        assert wide[0][sb + S.fast_retx] > 0 or dupthr == 0
    # without fast retransmit acknowledged packets pile up behind the oldest outstanding one;
    # with it, at most two can before it is declared lost
    assert compactions[0] > 10


def _drive_twice(dp, sb: int, n: int, dupthr: int, rng):
    """Drive the sender's two copies (full FIFO, 24-entry ring) by the same random steps,
    comparing their meaning after each; returns (the full copy, the ring's compactions)."""
    wide = [dp.ST.copy(), dp.F.copy(), dp.U.copy(), dp.PK.copy()]
    wide[0][sb + S.dupthr] = dupthr
    narrow = [a.copy() for a in wide]
    narrow[0][sb + S.fifo_cap] = 24
    compactions = 0
    now, seq_next = 0, 0
    for _ in range(3000):
        now += int(rng.integers(1, 400_000))
        st = wide[0]
        out = int(st[sb + S.out_off])
        live = np.flatnonzero(st[out : out + n] > 0)
        op = rng.random()
        if op < 0.45 and len(live) < 16:
            # a (re)transmission of a packet not outstanding: the FIFO's push
            queued = _logical(st, sb, n)[2]
            seq = queued[0] if queued and rng.random() < 0.5 else seq_next
            if seq == seq_next:
                if seq_next >= n:
                    continue
                seq_next += 1
            for state in (wide, narrow):
                ST = state[0]
                if queued and seq == queued[0]:
                    sender_rings.retx_pop(ST, sb)
                full = ST[sb + S.fifo_n] == ST[sb + S.fifo_cap]
                compactions += bool(full) and state is narrow
                ST[out + seq] = now + 1
                ST[sb + S.inflight] += sender_rings.wire_of(ST, sb, seq)
                sender_rings.fifo_push(ST, sb, now, seq)
        elif op < 0.9 and len(live):
            # an ACK of an outstanding packet, mostly not the oldest (whose loss then waits for
            # the rules): out of flight, then the fast-retransmit rule
            oldest = min(live, key=lambda q: st[out + q])
            others = [q for q in live if q != oldest]
            seq = int(rng.choice(others)) if others and rng.random() < 0.9 else int(oldest)
            sent = int(st[out + seq]) - 1
            for state in (wide, narrow):
                ST = state[0]
                ST[out + seq] = 0
                ST[sb + S.inflight] -= sender_rings.wire_of(ST, sb, seq)
                if dupthr:
                    sender_acks.detect_losses(ST, state[1], sb, now, sent)
        else:
            if rng.random() < 0.2:  # late enough for the oldest to time out
                now += int(wide[0][sb + S.rto])
            for state in (wide, narrow):
                sender_acks.on_timer(*state, 0, now)
                # the NIC wake the engine would run: the sender's turn, if it waits there
                nic_turns.nic_wake(*state, int(state[0][sb + S.host]), now)
        assert _logical(wide[0], sb, n) == _logical(narrow[0], sb, n)
        np.testing.assert_array_equal(wide[1], narrow[1])
    return wide, compactions


def test_python_senders_when_asked_or_without_a_compiled_form():
    base = [*SMALL_INCAST, "workload.size_bytes=300000", "engine.sample_interval_us=0"]
    off = run([*base, *DCTCP, "engine.dataplane=compiled", "engine.compiled_senders=false"])
    on = run([*base, *DCTCP, "engine.dataplane=compiled"])
    pd.testing.assert_frame_equal(off.flows, on.flows)
    assert off.summary["dataplane"]["senders"] == "in Python (engine.compiled_senders=false)"
    bbr = run([*base, "cc=mprdma_bbr", "engine.dataplane=compiled"])  # BBR across the WAN
    assert bbr.summary["dataplane"]["senders"] == "in the kernel"  # (its rate samples too)
    coded = run([*base, "cc=mprdma_bbr", "ec=mds", "ec.payload=false", "engine.dataplane=compiled"])
    assert coded.summary["dataplane"]["senders"].startswith("in the kernel but 2 of 4 in Python")
    assert "receiver in Python: coding" in coded.summary["dataplane"]["senders"]
    sim = _build([*base, "cc=dctcp", "lb=plb"])
    assert not sim.network.dataplane._kernel_tx
    assert sim.network.dataplane.senders_note.startswith("in Python (dctcp with plb")


# ---- the sender's kernels against their twins --------------------------------------------------
def test_sender_kernels_match_their_twins():
    """From a mid-run state with losses (tail drops), random ACKs of outstanding packets,
    timers, NIC wakes, sends and kernel runs through each sender kernel and its pure-Python
    twin: the same state and return values after every step."""
    rng = np.random.default_rng(SEED)
    overrides = [*SMALL_INCAST, *DCTCP, "switch=droptail", "topo.buffer_bytes=60000",
                 "workload.size_bytes=2000000", "engine.sample_interval_us=0"]  # fmt: skip
    sim = _build(overrides)
    sim.start()
    sim.advance(60_000_000)
    dp = sim.network.dataplane
    state = [dp.ST.copy(), dp.F.copy(), dp.U.copy(), dp.PK.copy()]
    twin = [a.copy() for a in state]
    ST = state[0]
    n_flows = len(dp.flows)
    n_hosts = len(sim.network.hosts)
    now = int(ST[H.now])
    eid = 1 << 30

    both = twin_runner(state, twin, {packets.free_row: (0, 3)})

    seen = set()
    for _ in range(1200):
        op = rng.random()
        f = int(rng.integers(n_flows))
        sb = int(ST[H.off_senders]) + f * S.size
        for arr in (state[0], twin[0]):
            arr[H.eid] = eid << EID_SHIFT
        if op < 0.5:
            out = int(ST[sb + S.out_off])
            live = np.flatnonzero(ST[out : out + int(ST[sb + S.n])] > 0)
            if len(live) and ST[H.pool_cap] - ST[H.in_pool] >= POOL_ROOM + 1:
                # an ACK of a live packet, in a row of its own as the kernel's receiver makes
                seq = int(rng.choice(live))
                now += int(rng.integers(0, 300_000))
                slot = int(ST[H.free])
                ecn = int(rng.random() < 0.3)
                for arr_st, arr_pk in ((state[0], state[3]), (twin[0], twin[3])):
                    arr_st[H.free] = arr_pk[slot, K.next]
                    arr_st[H.in_pool] += 1
                    arr_pk[slot, [K.seq, K.ecn, K.sent]] = (
                        seq, ecn, arr_st[out + seq] - 1
                    )  # fmt: skip
                seen.add(("ack", both(sender_acks.sender_on_ack, f, slot, now)))
                both(packets.free_row, slot)
        elif op < 0.6:
            now += int(rng.integers(0, 2_000_000))
            both(sender_acks.on_timer, f, now)
            seen.add("timer")
        elif op < 0.7:
            both(nic_turns.nic_wake, int(rng.integers(n_hosts)), now)
            seen.add("wake")
        elif op < 0.8 and ST[H.pool_cap] - ST[H.in_pool] >= POOL_ROOM:
            # a start, ACK or pacing wake (may not pass waiting senders), or a NIC turn
            turn = bool(rng.random() < 0.5)
            both(senders.try_send, f, now, turn)
            seen.add(("send", turn))
        else:
            eid += 1
            out = both(loop.run, now, 1, eid, eid)
            now = max(now, int(out[4]))
            seen.add("run")
    assert {("ack", 0), "timer", "wake", ("send", False), ("send", True), "run"} <= seen
