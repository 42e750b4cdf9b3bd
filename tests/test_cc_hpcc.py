"""HPCC (Algorithm 1) as plain arithmetic on the law (uno/cc/hpcc.py), run as the Python data
plane runs it (:class:`uno.cc.adapter.LawControl`: an ACK is a feedback batch of one).

Main context: 100 Gb/s path, T = base RTT = 10 us, MSS 1000 B -> W_init = BDP = 1e11 x 1e-5 / 8
= 125,000 B. Default W_AI = W_init x (1 - 0.95) / 125 = 50 B.

INT records are (ts_ps, qlen_bytes, tx_bytes, rate_bps). A hop that carried ``frac`` x B over an
interval dt adds frac x B x dt / 8e12 bytes to its counter; its u' is then
min(qlen, qlen_prev) / (B T) + frac."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from uno.cc.adapter import LawControl
from uno.cc.base import FlowContext
from uno.cc.hpcc import LAW, HpccParams, S
from uno.cc.law import INT_FIELDS
from uno.cc.registry import KIND
from uno.config.validate import check_fields
from uno.core.errors import ConfigError

US = 1_000_000  # ps
T = 10 * US
B = 100_000_000_000
MSS = 1000
BDP = 125_000.0
ETA = 0.95
W_AI = BDP * (1 - ETA) / 125  # 50 B


def ctx(rate_bps: int = B, rtt_ps: int = T, mss: int = MSS, int_max_records: int = 5):
    return FlowContext(
        base_rtt_ps=rtt_ps,
        bdp_bytes=rate_bps * rtt_ps / 8e12,
        bottleneck_bps=rate_bps,
        mss_bytes=mss,
        intra_rtt_ps=rtt_ps,
        intra_bdp_bytes=rate_bps * rtt_ps / 8e12,
        is_inter_dc=False,
        int_max_records=int_max_records,
    )


def hpcc(params: HpccParams | None = None, context: FlowContext | None = None) -> LawControl:
    """One flow's HPCC, as the Python data plane runs it."""
    return LawControl(LAW, KIND["hpcc"], params or HpccParams(), context or ctx())


def on_ack_int(cc, now_ps: int, acked_bytes: int, ecn: bool, rtt_ps: int, sent_ps: int, hops):
    """An ACK whose data packet collected the INT records ``hops`` (path order; may be empty)."""
    cc.on_ack_batch(now_ps, acked_bytes, ecn, rtt_ps, sent_ps, hops=hops)


def stored(cc):
    """The INT records the law keeps to compare the next ACK's with (None before the first)."""
    n = int(cc.prev_n)
    if n < 0:
        return None
    tail = cc.state[S.size : S.size + INT_FIELDS * n]
    return tuple(tuple(tail[i : i + INT_FIELDS].tolist()) for i in range(0, len(tail), INT_FIELDS))


def store(cc, hops) -> None:
    """Replace the stored INT records by ``hops``."""
    cc.state[S.prev_n] = len(hops)
    cc.state[S.size : S.size + INT_FIELDS * len(hops)] = np.ravel(hops)


def approx(x: float):
    return pytest.approx(x, rel=1e-12, abs=1e-9)


class Port:
    """One switch port's INT counters, advanced by hand."""

    def __init__(self, rate_bps: float = B, ts_ps: int = 1 * US):
        self.rate = rate_bps
        self.ts = ts_ps
        self.tx = 0

    def record(self, qlen: float = 0.0):
        return (self.ts, qlen, self.tx, self.rate)

    def advance(self, dt_ps: int, frac: float, qlen: float = 0.0):
        """Let ``dt_ps`` pass with the port sending at ``frac`` x its rate; the new record."""
        self.ts += dt_ps
        self.tx += round(frac * self.rate * dt_ps / 8e12)
        return self.record(qlen)


def started(params: HpccParams | None = None, ports=None, now: int = 10 * US):
    """A controller that has seen its first ACK (records stored, round started at ``now``)."""
    cc = hpcc(params)
    ports = ports or [Port()]
    on_ack_int(cc, now, MSS, False, T, 0, tuple(p.record() for p in ports))
    return cc, ports


def test_interface_and_defaults():
    cc = hpcc()
    assert cc.wants_int is True and cc.name == "hpcc" and LAW.signals == ("int",)
    assert cc.cwnd_bytes == approx(BDP)
    assert cc.ref_cwnd_bytes == approx(BDP)
    assert cc.w_ai_bytes == approx(50.0)
    assert cc.utilization == 1.0 and cc.inc_stage == 0
    assert cc.pacing_rate_bps == approx(BDP * 8e12 / T)  # = 100 Gb/s
    p = HpccParams()
    assert (p.eta, p.max_stage, p.max_flows, p.w_ai_bytes) == (0.95, 5, 125, None)
    assert hpcc(HpccParams(w_ai_bytes=80.0)).w_ai_bytes == 80.0
    # W_AI = W_init (1 - eta) / N, W_init = B x T even when the flow starts lower
    assert hpcc(HpccParams(eta=0.9, max_flows=10, init_cwnd_bdp=0.5)).w_ai_bytes == approx(
        BDP * 0.1 / 10
    )


def test_first_ack_only_stores_records():  # (a)
    cc = hpcc(HpccParams(init_cwnd_bdp=0.5))
    port = Port()
    hops = (port.advance(T, 0.1, qlen=50_000),)
    on_ack_int(cc, 10 * US, MSS, False, T, 0, hops)
    assert cc.cwnd_bytes == approx(62_500)
    assert cc.ref_cwnd_bytes == approx(62_500)
    assert cc.utilization == 1.0 and cc.inc_stage == 0
    assert stored(cc) == hops
    assert cc.round_active == 1.0 and cc.round_start_ps == 10 * US


def test_utilization_ewma_and_window_one_hop():  # (b)
    # u' = 0.5 (no queue, half the line rate) over dt = 2 us < T: EWMA weight dt / T = 0.2
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (port.advance(2 * US, 0.5),))
    u = (1 - 0.2) * 1.0 + 0.2 * 0.5  # 0.9 < eta, incStage 0 < maxStage: additive increase
    assert cc.utilization == approx(u)
    assert cc.cwnd_bytes == approx(62_500 + W_AI)
    assert cc.ref_cwnd_bytes == approx(62_500 + W_AI) and cc.inc_stage == 1

    # maxStage = 0 (the authors' simulations): the same sample gives W = W^c / (U / eta) + W_AI
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5, max_stage=0))
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (port.advance(2 * US, 0.5),))
    assert cc.utilization == approx(0.9)
    w = 62_500 / (0.9 / ETA) + W_AI
    assert cc.cwnd_bytes == approx(w)
    assert cc.ref_cwnd_bytes == approx(w) and cc.inc_stage == 0

    # U = 0.5 exactly (U starts at 0.5): W = W^c / (0.5 / 0.95) + W_AI = 62,500 x 1.9 + 50
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5, max_stage=0, init_utilization=0.5))
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (port.advance(2 * US, 0.5),))
    assert cc.utilization == approx(0.5)
    assert cc.cwnd_bytes == approx(118_800)


def test_tau_is_capped_at_base_rtt():
    # dt = 3 T: tau = min(dt, T) = T, so U is the sample itself
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    on_ack_int(cc, 40 * US, MSS, False, T, 10 * US, (port.advance(3 * T, 0.25),))
    assert cc.utilization == approx(0.25)


def test_overload_decreases_multiplicatively_and_resets_stage():  # (c)
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    # two additive rounds at u' = 0.5 (dt = T: U = 0.5)
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.5),))
    on_ack_int(cc, 30 * US, MSS, False, T, 20 * US, (port.advance(T, 0.5),))
    assert cc.inc_stage == 2
    wc = 62_500 + 2 * W_AI
    assert cc.ref_cwnd_bytes == approx(wc)
    # a round-ending ACK at u' = 1.2 over dt = T/2: U = 0.5 x 0.5 + 0.5 x 1.2 = 0.85 < eta
    on_ack_int(cc, 40 * US, MSS, False, T, 30 * US, (port.advance(T // 2, 1.2),))
    assert cc.utilization == approx(0.85) and cc.inc_stage == 3
    wc += W_AI
    # now u' = 1.2 over T: U = 1.2 > eta -> W = W^c / (1.2 / 0.95) + W_AI, incStage = 0
    on_ack_int(cc, 50 * US, MSS, False, T, 40 * US, (port.advance(T, 1.2),))
    assert cc.utilization == approx(1.2)
    w = wc / (1.2 / ETA) + W_AI
    assert cc.cwnd_bytes == approx(w)
    assert cc.ref_cwnd_bytes == approx(w) and cc.inc_stage == 0


def test_every_ack_reacts_from_the_reference_window():
    # ACKs inside a round (data sent before the round started) set W from W^c and U but leave
    # W^c and incStage alone (Alg. 1 line 26)
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.5),))  # round end
    wc = 62_500 + W_AI
    assert cc.round_start_ps == 20 * US and cc.inc_stage == 1
    on_ack_int(cc, 21 * US, MSS, False, T, 19 * US, (port.advance(T, 1.9),))  # U = 1.9
    assert cc.cwnd_bytes == approx(wc / (1.9 / ETA) + W_AI)
    assert cc.ref_cwnd_bytes == approx(wc) and cc.inc_stage == 1
    on_ack_int(cc, 22 * US, MSS, False, T, 19 * US, (port.advance(T, 0.5),))  # U = 0.5
    assert cc.cwnd_bytes == approx(wc + W_AI)  # from W^c, not from the cut window
    assert cc.ref_cwnd_bytes == approx(wc) and cc.inc_stage == 1
    assert cc.round_start_ps == 20 * US


def test_max_stage_additive_rounds_then_multiplicative_increase():  # (d)
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    start = 10 * US
    wc = 62_500.0
    for stage in range(1, 6):
        # three ACKs for data sent before the round started: no stage advance
        for k in range(3):
            on_ack_int(cc, start + (k + 1) * US, MSS, False, T, start - 1, (port.advance(T, 0.5),))
            assert cc.inc_stage == stage - 1
            assert cc.cwnd_bytes == approx(wc + W_AI)
        # the first ACK for data sent at or after the round's start ends it
        now = start + 5 * US
        on_ack_int(cc, now, MSS, False, T, start, (port.advance(T, 0.5),))
        wc += W_AI
        assert cc.inc_stage == stage
        assert cc.ref_cwnd_bytes == approx(wc) and cc.cwnd_bytes == approx(wc)
        # a second ACK of that round does not end another round
        on_ack_int(cc, now + 1, MSS, False, T, start + 1, (port.advance(T, 0.5),))
        assert cc.inc_stage == stage
        assert cc.round_start_ps == now
        start = now
    # incStage = maxStage: the next round end multiplies, W = W^c / (0.5 / 0.95) + W_AI
    assert wc == approx(62_750)
    on_ack_int(cc, start + 5 * US, MSS, False, T, start, (port.advance(T, 0.5),))
    w = wc / (0.5 / ETA) + W_AI
    assert cc.cwnd_bytes == approx(w) and cc.ref_cwnd_bytes == approx(w)
    assert cc.inc_stage == 0


def test_most_loaded_hop_sets_u_and_tau():  # (e)
    # hop 1 (100 Gb/s): u' = 0.3 over T; hop 2 (50 Gb/s): tx at line rate and a queue of
    # 0.2 x B_2 x T = 12,500 B in both records, u' = 1.2, over T/4
    fast, slow = Port(B), Port(50_000_000_000)
    q2 = 0.2 * 50e9 * T / 8e12
    cc = hpcc(HpccParams(init_cwnd_bdp=0.5))
    on_ack_int(cc, 10 * US, MSS, False, T, 0, (fast.record(), slow.record(q2)))
    hops = (fast.advance(T, 0.3), slow.advance(T // 4, 1.0, qlen=q2))
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, hops)
    u = 0.75 * 1.0 + 0.25 * 1.2  # tau from hop 2: 1.05 > eta
    assert cc.utilization == approx(u)
    assert cc.cwnd_bytes == approx(62_500 / (u / ETA) + W_AI)
    # the order of the hops does not matter
    fast, slow = Port(B), Port(50_000_000_000)
    cc = hpcc(HpccParams(init_cwnd_bdp=0.5))
    on_ack_int(cc, 10 * US, MSS, False, T, 0, (slow.record(q2), fast.record()))
    hops = (slow.advance(T // 4, 1.0, qlen=q2), fast.advance(T, 0.3))
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, hops)
    assert cc.utilization == approx(u)


def test_queue_term():  # (f)
    # qlen = B x T / 2 = 62,500 B in both records and txRate = B: u' = 0.5 + 1 = 1.5
    half_bdp = BDP / 2
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    store(cc, (port.record(half_bdp),))
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (port.advance(T, 1.0, qlen=half_bdp),))
    assert cc.utilization == approx(1.5)
    assert cc.cwnd_bytes == approx(62_500 / (1.5 / ETA) + W_AI)
    # the queue term takes min(qlen, qlen_prev) (Alg. 1 line 5): a queue in one record only
    # does not count
    on_ack_int(cc, 21 * US, MSS, False, T, 10 * US, (port.advance(T, 1.0, qlen=0),))
    assert cc.utilization == approx(1.0)
    on_ack_int(cc, 22 * US, MSS, False, T, 10 * US, (port.advance(T, 1.0, qlen=BDP),))
    assert cc.utilization == approx(1.0)
    on_ack_int(cc, 23 * US, MSS, False, T, 10 * US, (port.advance(T, 1.0, qlen=BDP / 4),))
    assert cc.utilization == approx(1.25)


def test_pacing_rate_is_window_over_base_rtt():  # (g)
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    assert cc.pacing_rate_bps == approx(62_500 * 8e12 / T)
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (port.advance(T, 1.2),))
    w = 62_500 / (1.2 / ETA) + W_AI
    assert cc.pacing_rate_bps == approx(w * 8e12 / T)
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5, pacing=False))
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (port.advance(T, 1.2),))
    assert cc.pacing_rate_bps == 0.0


def test_window_is_clamped():  # (h)
    # floor: u' = 1000 (a huge queue) -> W^c / (1000 / 0.95) + 50 = 168.75 B < 1 MSS
    cc, (port,) = started()
    big_q = 999 * BDP
    store(cc, (port.record(big_q),))
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (port.advance(T, 1.0, qlen=big_q),))
    assert cc.utilization == approx(1000.0)
    assert cc.cwnd_bytes == MSS and cc.ref_cwnd_bytes == MSS
    assert cc.pacing_rate_bps == approx(MSS * 8e12 / T)
    # cap: a multiplicative increase beyond 1 BDP stops at 1 BDP, and W^c is the capped value
    cc, (port,) = started(HpccParams(max_stage=0, init_cwnd_bdp=0.5))
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.1),))
    assert cc.utilization == approx(0.1)
    assert cc.cwnd_bytes == approx(BDP) and cc.ref_cwnd_bytes == approx(BDP)
    # additive increase at the cap stays at the cap
    cc, (port,) = started()
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.5),))
    assert cc.cwnd_bytes == approx(BDP) and cc.inc_stage == 1
    # U = 0 with the multiplicative branch: the limit, the cap
    cc, (port,) = started(HpccParams(max_stage=0, init_cwnd_bdp=0.5))
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.0),))
    assert cc.utilization == 0.0 and cc.cwnd_bytes == approx(BDP)
    # other limits
    cc, (port,) = started(HpccParams(min_cwnd_mss=4.0, max_cwnd_bdp=0.6, init_cwnd_bdp=0.5))
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (port.advance(T, 50.0),))
    assert cc.cwnd_bytes == 4 * MSS
    on_ack_int(cc, 30 * US, MSS, False, T, 20 * US, (port.advance(T, 0.01),))
    on_ack_int(cc, 40 * US, MSS, False, T, 30 * US, (port.advance(T, 0.01),))
    assert cc.inc_stage == 2  # additive: 4,000 + 50 + 50
    assert cc.cwnd_bytes == approx(4100)
    cc = hpcc(HpccParams(max_stage=0, max_cwnd_bdp=0.6, init_cwnd_bdp=0.5))
    port = Port()
    on_ack_int(cc, 10 * US, MSS, False, T, 0, (port.record(),))
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.1),))
    assert cc.cwnd_bytes == approx(0.6 * BDP)


def test_hop_count_change_resets_records():  # (i)
    cc, (p1,) = started(HpccParams(init_cwnd_bdp=0.5))
    p2 = Port(25_000_000_000)
    two = (p1.advance(T, 1.9), p2.record())
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, two)
    # not compared with the one-hop records: U, W, W^c and incStage unchanged, records replaced
    assert stored(cc) == two
    assert cc.utilization == 1.0 and cc.inc_stage == 0
    assert cc.cwnd_bytes == approx(62_500) and cc.ref_cwnd_bytes == approx(62_500)
    assert cc.round_start_ps == 20 * US  # that ACK ended the round: the next one starts
    # the next two-hop ACK measures against the stored two-hop records
    on_ack_int(cc, 30 * US, MSS, False, T, 20 * US, (p1.advance(T, 0.2), p2.advance(T, 0.4)))
    assert cc.utilization == approx(0.4)
    assert cc.cwnd_bytes == approx(62_500 + W_AI) and cc.inc_stage == 1
    # back to one hop: reset again
    one = (p1.advance(T, 1.9),)
    on_ack_int(cc, 31 * US, MSS, False, T, 25 * US, one)
    assert stored(cc) == one and cc.utilization == approx(0.4)
    assert cc.cwnd_bytes == approx(62_500 + W_AI)


def test_records_from_another_port_reset():
    # same hop count, but the timestamp does not advance or the byte counter goes back
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    stale = (port.ts - 1, 0.0, port.tx + 10_000, float(B))
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (stale,))
    assert cc.utilization == 1.0 and cc.cwnd_bytes == approx(62_500)
    assert stored(cc) == (stale,)
    back = (port.ts + T, 0.0, port.tx, float(B))  # counter below the stored one
    on_ack_int(cc, 21 * US, MSS, False, T, 20 * US, (back,))
    assert cc.utilization == 1.0 and cc.cwnd_bytes == approx(62_500)
    assert stored(cc) == (back,)


def test_ack_without_int_keeps_window_and_records():
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.5),))
    w, kept = cc.cwnd_bytes, stored(cc)
    # a round-ending ACK without hops: only the round restarts
    on_ack_int(cc, 30 * US, MSS, False, T, 20 * US, ())
    assert cc.cwnd_bytes == w and stored(cc) == kept and cc.inc_stage == 1
    assert cc.round_start_ps == 30 * US
    # on_ack (no INT on the path) behaves the same
    cc.on_ack(40 * US, MSS, True, T, 30 * US)
    assert cc.cwnd_bytes == w and stored(cc) == kept and cc.inc_stage == 1
    assert cc.round_start_ps == 40 * US
    # the next INT ACK compares with the last stored records (interval 2 T: tau = T)
    on_ack_int(cc, 50 * US, MSS, False, T, 40 * US, (port.advance(2 * T, 0.3),))
    assert cc.utilization == approx(0.3) and cc.inc_stage == 2
    # a first ACK without hops starts the round; the first records come later
    cc = hpcc(HpccParams(init_cwnd_bdp=0.5))
    cc.on_ack(10 * US, MSS, False, T, 0)
    assert cc.round_start_ps == 10 * US and stored(cc) is None
    port = Port()
    first = (port.record(),)
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, first)
    assert stored(cc) == first and cc.cwnd_bytes == approx(62_500) and cc.utilization == 1.0


def test_loss_reactions():
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.5),))
    w = cc.cwnd_bytes
    cc.on_nack(25 * US)
    cc.on_timeout(30 * US)
    assert cc.cwnd_bytes == w and cc.ref_cwnd_bytes == w and cc.inc_stage == 1
    # optional: a timeout drops W and W^c to timeout_cwnd_mss MSS and restarts incStage
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5, timeout_cwnd_mss=2.0))
    on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.5),))
    cc.on_timeout(30 * US)
    assert cc.cwnd_bytes == 2000 and cc.ref_cwnd_bytes == 2000 and cc.inc_stage == 0
    assert cc.pacing_rate_bps == approx(2000 * 8e12 / T)
    on_ack_int(cc, 40 * US, MSS, False, T, 30 * US, (port.advance(T, 0.5),))
    assert cc.cwnd_bytes == approx(2000 + W_AI)


def test_stored_records_live_in_the_state_tail_sized_for_a_packets_records():
    # room for as many records as a packet of the flow holds (FlowContext.int_max_records)
    cc = hpcc(HpccParams(init_cwnd_bdp=0.5), ctx(int_max_records=2))
    assert len(cc.state) == S.size + 2 * INT_FIELDS and stored(cc) is None
    a, b = Port(), Port()
    on_ack_int(cc, 10 * US, MSS, False, T, 0, (a.record(), b.record(7.0)))
    assert stored(cc) == (a.record(), b.record(7.0))
    with pytest.raises(ValueError):
        on_ack_int(cc, 20 * US, MSS, False, T, 10 * US, (a.record(), b.record(), Port().record()))
    assert len(hpcc(context=ctx(int_max_records=5)).state) == S.size + 5 * INT_FIELDS


def test_fluid_engine_refuses_hpcc_on_split_routes_naming_the_balancer():
    """The fluid engine computes INT records on single paths: spraying is refused."""
    import uno

    with pytest.raises(ConfigError) as err:
        uno.run(uno.compose(["engine.kind=fluid", "cc=hpcc", "lb=spray"]))
    assert err.value.field == "lb.algo" and "INT records" in str(err.value)


@pytest.mark.parametrize(
    "field,value",
    [
        ("eta", 0.0),
        ("eta", 1.5),
        ("max_stage", -1),
        ("w_ai_bytes", 0.0),
        ("max_flows", 0),
        ("init_cwnd_bdp", 0.0),
        ("min_cwnd_mss", 0.0),
        ("max_cwnd_bdp", 0.0),
        ("init_utilization", -0.1),
        ("timeout_cwnd_mss", -1.0),
    ],
)
def test_check_rejects_out_of_range(field, value):
    params = dataclasses.replace(HpccParams(), **{field: value})
    with pytest.raises(ConfigError) as err:
        check_fields(params, "cc.hpcc")
    assert err.value.field == f"cc.hpcc.{field}"


def test_check_accepts_defaults():
    check_fields(HpccParams(), "cc.hpcc")
    check_fields(HpccParams(max_stage=0, eta=0.99, w_ai_bytes=80.0), "cc.hpcc")
