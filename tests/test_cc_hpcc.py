"""HPCC (Algorithm 1) as plain arithmetic on the controller.

Main context: 100 Gb/s path, T = base RTT = 10 us, MSS 1000 B -> W_init = BDP = 1e11 x 1e-5 / 8
= 125,000 B. Default W_AI = W_init x (1 - 0.95) / 125 = 50 B.

INT records are (ts_ps, qlen_bytes, tx_bytes, rate_bps). A hop that carried ``frac`` x B over an
interval dt adds frac x B x dt / 8e12 bytes to its counter; its u' is then
min(qlen, qlen_prev) / (B T) + frac."""

from __future__ import annotations

import dataclasses

import pytest

from uno.cc.base import FlowContext
from uno.cc.hpcc import Hpcc, HpccParams
from uno.config.validate import check_fields
from uno.core.errors import ConfigError

US = 1_000_000  # ps
T = 10 * US
B = 100_000_000_000
MSS = 1000
BDP = 125_000.0
ETA = 0.95
W_AI = BDP * (1 - ETA) / 125  # 50 B


def ctx(rate_bps: int = B, rtt_ps: int = T, mss: int = MSS):
    return FlowContext(
        base_rtt_ps=rtt_ps,
        bdp_bytes=rate_bps * rtt_ps / 8e12,
        bottleneck_bps=rate_bps,
        mss_bytes=mss,
        intra_rtt_ps=rtt_ps,
        intra_bdp_bytes=rate_bps * rtt_ps / 8e12,
        is_inter_dc=False,
    )


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
    cc = Hpcc(ctx(), params or HpccParams())
    ports = ports or [Port()]
    cc.on_ack_int(now, MSS, False, T, 0, tuple(p.record() for p in ports))
    return cc, ports


def test_interface_and_defaults():
    cc = Hpcc(ctx(), HpccParams())
    assert Hpcc.wants_int is True and cc.name == "hpcc"
    assert cc.cwnd_bytes == approx(BDP)
    assert cc.ref_cwnd_bytes == approx(BDP)
    assert cc.w_ai_bytes == approx(50.0)
    assert cc.utilization == 1.0 and cc.inc_stage == 0
    assert cc.pacing_rate_bps == approx(BDP * 8e12 / T)  # = 100 Gb/s
    p = HpccParams()
    assert (p.eta, p.max_stage, p.max_flows, p.w_ai_bytes) == (0.95, 5, 125, None)
    assert Hpcc(ctx(), HpccParams(w_ai_bytes=80.0)).w_ai_bytes == 80.0
    # W_AI = W_init (1 - eta) / N, W_init = B x T even when the flow starts lower
    assert Hpcc(ctx(), HpccParams(eta=0.9, max_flows=10, init_cwnd_bdp=0.5)).w_ai_bytes == approx(
        BDP * 0.1 / 10
    )


def test_first_ack_only_stores_records():  # (a)
    cc = Hpcc(ctx(), HpccParams(init_cwnd_bdp=0.5))
    port = Port()
    hops = (port.advance(T, 0.1, qlen=50_000),)
    cc.on_ack_int(10 * US, MSS, False, T, 0, hops)
    assert cc.cwnd_bytes == approx(62_500)
    assert cc.ref_cwnd_bytes == approx(62_500)
    assert cc.utilization == 1.0 and cc.inc_stage == 0
    assert cc.prev_hops is hops
    assert cc.round.active and cc.round.start_ps == 10 * US


def test_utilization_ewma_and_window_one_hop():  # (b)
    # u' = 0.5 (no queue, half the line rate) over dt = 2 us < T: EWMA weight dt / T = 0.2
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (port.advance(2 * US, 0.5),))
    u = (1 - 0.2) * 1.0 + 0.2 * 0.5  # 0.9 < eta, incStage 0 < maxStage: additive increase
    assert cc.utilization == approx(u)
    assert cc.cwnd_bytes == approx(62_500 + W_AI)
    assert cc.ref_cwnd_bytes == approx(62_500 + W_AI) and cc.inc_stage == 1

    # maxStage = 0 (the authors' simulations): the same sample gives W = W^c / (U / eta) + W_AI
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5, max_stage=0))
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (port.advance(2 * US, 0.5),))
    assert cc.utilization == approx(0.9)
    w = 62_500 / (0.9 / ETA) + W_AI
    assert cc.cwnd_bytes == approx(w)
    assert cc.ref_cwnd_bytes == approx(w) and cc.inc_stage == 0

    # U = 0.5 exactly (U starts at 0.5): W = W^c / (0.5 / 0.95) + W_AI = 62,500 x 1.9 + 50
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5, max_stage=0, init_utilization=0.5))
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (port.advance(2 * US, 0.5),))
    assert cc.utilization == approx(0.5)
    assert cc.cwnd_bytes == approx(118_800)


def test_tau_is_capped_at_base_rtt():
    # dt = 3 T: tau = min(dt, T) = T, so U is the sample itself
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    cc.on_ack_int(40 * US, MSS, False, T, 10 * US, (port.advance(3 * T, 0.25),))
    assert cc.utilization == approx(0.25)


def test_overload_decreases_multiplicatively_and_resets_stage():  # (c)
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    # two additive rounds at u' = 0.5 (dt = T: U = 0.5)
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.5),))
    cc.on_ack_int(30 * US, MSS, False, T, 20 * US, (port.advance(T, 0.5),))
    assert cc.inc_stage == 2
    wc = 62_500 + 2 * W_AI
    assert cc.ref_cwnd_bytes == approx(wc)
    # a round-ending ACK at u' = 1.2 over dt = T/2: U = 0.5 x 0.5 + 0.5 x 1.2 = 0.85 < eta
    cc.on_ack_int(40 * US, MSS, False, T, 30 * US, (port.advance(T // 2, 1.2),))
    assert cc.utilization == approx(0.85) and cc.inc_stage == 3
    wc += W_AI
    # now u' = 1.2 over T: U = 1.2 > eta -> W = W^c / (1.2 / 0.95) + W_AI, incStage = 0
    cc.on_ack_int(50 * US, MSS, False, T, 40 * US, (port.advance(T, 1.2),))
    assert cc.utilization == approx(1.2)
    w = wc / (1.2 / ETA) + W_AI
    assert cc.cwnd_bytes == approx(w)
    assert cc.ref_cwnd_bytes == approx(w) and cc.inc_stage == 0


def test_every_ack_reacts_from_the_reference_window():
    # ACKs inside a round (data sent before the round started) set W from W^c and U but leave
    # W^c and incStage alone (Alg. 1 line 26)
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.5),))  # round end
    wc = 62_500 + W_AI
    assert cc.round.start_ps == 20 * US and cc.inc_stage == 1
    cc.on_ack_int(21 * US, MSS, False, T, 19 * US, (port.advance(T, 1.9),))  # U = 1.9
    assert cc.cwnd_bytes == approx(wc / (1.9 / ETA) + W_AI)
    assert cc.ref_cwnd_bytes == approx(wc) and cc.inc_stage == 1
    cc.on_ack_int(22 * US, MSS, False, T, 19 * US, (port.advance(T, 0.5),))  # U = 0.5
    assert cc.cwnd_bytes == approx(wc + W_AI)  # from W^c, not from the cut window
    assert cc.ref_cwnd_bytes == approx(wc) and cc.inc_stage == 1
    assert cc.round.start_ps == 20 * US


def test_max_stage_additive_rounds_then_multiplicative_increase():  # (d)
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    start = 10 * US
    wc = 62_500.0
    for stage in range(1, 6):
        # three ACKs for data sent before the round started: no stage advance
        for k in range(3):
            cc.on_ack_int(start + (k + 1) * US, MSS, False, T, start - 1, (port.advance(T, 0.5),))
            assert cc.inc_stage == stage - 1
            assert cc.cwnd_bytes == approx(wc + W_AI)
        # the first ACK for data sent at or after the round's start ends it
        now = start + 5 * US
        cc.on_ack_int(now, MSS, False, T, start, (port.advance(T, 0.5),))
        wc += W_AI
        assert cc.inc_stage == stage
        assert cc.ref_cwnd_bytes == approx(wc) and cc.cwnd_bytes == approx(wc)
        # a second ACK of that round does not end another round
        cc.on_ack_int(now + 1, MSS, False, T, start + 1, (port.advance(T, 0.5),))
        assert cc.inc_stage == stage
        assert cc.round.start_ps == now
        start = now
    # incStage = maxStage: the next round end multiplies, W = W^c / (0.5 / 0.95) + W_AI
    assert wc == approx(62_750)
    cc.on_ack_int(start + 5 * US, MSS, False, T, start, (port.advance(T, 0.5),))
    w = wc / (0.5 / ETA) + W_AI
    assert cc.cwnd_bytes == approx(w) and cc.ref_cwnd_bytes == approx(w)
    assert cc.inc_stage == 0


def test_most_loaded_hop_sets_u_and_tau():  # (e)
    # hop 1 (100 Gb/s): u' = 0.3 over T; hop 2 (50 Gb/s): tx at line rate and a queue of
    # 0.2 x B_2 x T = 12,500 B in both records, u' = 1.2, over T/4
    fast, slow = Port(B), Port(50_000_000_000)
    q2 = 0.2 * 50e9 * T / 8e12
    cc = Hpcc(ctx(), HpccParams(init_cwnd_bdp=0.5))
    cc.on_ack_int(10 * US, MSS, False, T, 0, (fast.record(), slow.record(q2)))
    hops = (fast.advance(T, 0.3), slow.advance(T // 4, 1.0, qlen=q2))
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, hops)
    u = 0.75 * 1.0 + 0.25 * 1.2  # tau from hop 2: 1.05 > eta
    assert cc.utilization == approx(u)
    assert cc.cwnd_bytes == approx(62_500 / (u / ETA) + W_AI)
    # the order of the hops does not matter
    fast, slow = Port(B), Port(50_000_000_000)
    cc = Hpcc(ctx(), HpccParams(init_cwnd_bdp=0.5))
    cc.on_ack_int(10 * US, MSS, False, T, 0, (slow.record(q2), fast.record()))
    hops = (slow.advance(T // 4, 1.0, qlen=q2), fast.advance(T, 0.3))
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, hops)
    assert cc.utilization == approx(u)


def test_queue_term():  # (f)
    # qlen = B x T / 2 = 62,500 B in both records and txRate = B: u' = 0.5 + 1 = 1.5
    half_bdp = BDP / 2
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    cc.prev_hops = (port.record(half_bdp),)
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (port.advance(T, 1.0, qlen=half_bdp),))
    assert cc.utilization == approx(1.5)
    assert cc.cwnd_bytes == approx(62_500 / (1.5 / ETA) + W_AI)
    # the queue term takes min(qlen, qlen_prev) (Alg. 1 line 5): a queue in one record only
    # does not count
    cc.on_ack_int(21 * US, MSS, False, T, 10 * US, (port.advance(T, 1.0, qlen=0),))
    assert cc.utilization == approx(1.0)
    cc.on_ack_int(22 * US, MSS, False, T, 10 * US, (port.advance(T, 1.0, qlen=BDP),))
    assert cc.utilization == approx(1.0)
    cc.on_ack_int(23 * US, MSS, False, T, 10 * US, (port.advance(T, 1.0, qlen=BDP / 4),))
    assert cc.utilization == approx(1.25)


def test_pacing_rate_is_window_over_base_rtt():  # (g)
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    assert cc.pacing_rate_bps == approx(62_500 * 8e12 / T)
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (port.advance(T, 1.2),))
    w = 62_500 / (1.2 / ETA) + W_AI
    assert cc.pacing_rate_bps == approx(w * 8e12 / T)
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5, pacing=False))
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (port.advance(T, 1.2),))
    assert cc.pacing_rate_bps == 0.0


def test_window_is_clamped():  # (h)
    # floor: u' = 1000 (a huge queue) -> W^c / (1000 / 0.95) + 50 = 168.75 B < 1 MSS
    cc, (port,) = started()
    big_q = 999 * BDP
    cc.prev_hops = (port.record(big_q),)
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (port.advance(T, 1.0, qlen=big_q),))
    assert cc.utilization == approx(1000.0)
    assert cc.cwnd_bytes == MSS and cc.ref_cwnd_bytes == MSS
    assert cc.pacing_rate_bps == approx(MSS * 8e12 / T)
    # cap: a multiplicative increase beyond 1 BDP stops at 1 BDP, and W^c is the capped value
    cc, (port,) = started(HpccParams(max_stage=0, init_cwnd_bdp=0.5))
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.1),))
    assert cc.utilization == approx(0.1)
    assert cc.cwnd_bytes == approx(BDP) and cc.ref_cwnd_bytes == approx(BDP)
    # additive increase at the cap stays at the cap
    cc, (port,) = started()
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.5),))
    assert cc.cwnd_bytes == approx(BDP) and cc.inc_stage == 1
    # U = 0 with the multiplicative branch: the limit, the cap
    cc, (port,) = started(HpccParams(max_stage=0, init_cwnd_bdp=0.5))
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.0),))
    assert cc.utilization == 0.0 and cc.cwnd_bytes == approx(BDP)
    # other limits
    cc, (port,) = started(HpccParams(min_cwnd_mss=4.0, max_cwnd_bdp=0.6, init_cwnd_bdp=0.5))
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (port.advance(T, 50.0),))
    assert cc.cwnd_bytes == 4 * MSS
    cc.on_ack_int(30 * US, MSS, False, T, 20 * US, (port.advance(T, 0.01),))
    cc.on_ack_int(40 * US, MSS, False, T, 30 * US, (port.advance(T, 0.01),))
    assert cc.inc_stage == 2  # additive: 4,000 + 50 + 50
    assert cc.cwnd_bytes == approx(4100)
    cc = Hpcc(ctx(), HpccParams(max_stage=0, max_cwnd_bdp=0.6, init_cwnd_bdp=0.5))
    port = Port()
    cc.on_ack_int(10 * US, MSS, False, T, 0, (port.record(),))
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.1),))
    assert cc.cwnd_bytes == approx(0.6 * BDP)


def test_hop_count_change_resets_records():  # (i)
    cc, (p1,) = started(HpccParams(init_cwnd_bdp=0.5))
    p2 = Port(25_000_000_000)
    two = (p1.advance(T, 1.9), p2.record())
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, two)
    # not compared with the one-hop records: U, W, W^c and incStage unchanged, records replaced
    assert cc.prev_hops is two
    assert cc.utilization == 1.0 and cc.inc_stage == 0
    assert cc.cwnd_bytes == approx(62_500) and cc.ref_cwnd_bytes == approx(62_500)
    assert cc.round.start_ps == 20 * US  # that ACK ended the round: the next one starts
    # the next two-hop ACK measures against the stored two-hop records
    cc.on_ack_int(30 * US, MSS, False, T, 20 * US, (p1.advance(T, 0.2), p2.advance(T, 0.4)))
    assert cc.utilization == approx(0.4)
    assert cc.cwnd_bytes == approx(62_500 + W_AI) and cc.inc_stage == 1
    # back to one hop: reset again
    one = (p1.advance(T, 1.9),)
    cc.on_ack_int(31 * US, MSS, False, T, 25 * US, one)
    assert cc.prev_hops is one and cc.utilization == approx(0.4)
    assert cc.cwnd_bytes == approx(62_500 + W_AI)


def test_records_from_another_port_reset():
    # same hop count, but the timestamp does not advance or the byte counter goes back
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    stale = (port.ts - 1, 0.0, port.tx + 10_000, float(B))
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (stale,))
    assert cc.utilization == 1.0 and cc.cwnd_bytes == approx(62_500)
    assert cc.prev_hops == (stale,)
    back = (port.ts + T, 0.0, port.tx, float(B))  # counter below the stored one
    cc.on_ack_int(21 * US, MSS, False, T, 20 * US, (back,))
    assert cc.utilization == 1.0 and cc.cwnd_bytes == approx(62_500)
    assert cc.prev_hops == (back,)


def test_ack_without_int_keeps_window_and_records():
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.5),))
    w, stored = cc.cwnd_bytes, cc.prev_hops
    # a round-ending ACK without hops: only the round restarts
    cc.on_ack_int(30 * US, MSS, False, T, 20 * US, ())
    assert cc.cwnd_bytes == w and cc.prev_hops is stored and cc.inc_stage == 1
    assert cc.round.start_ps == 30 * US
    # on_ack (no INT on the path) behaves the same
    cc.on_ack(40 * US, MSS, True, T, 30 * US)
    assert cc.cwnd_bytes == w and cc.prev_hops is stored and cc.inc_stage == 1
    assert cc.round.start_ps == 40 * US
    # the next INT ACK compares with the last stored records (interval 2 T: tau = T)
    cc.on_ack_int(50 * US, MSS, False, T, 40 * US, (port.advance(2 * T, 0.3),))
    assert cc.utilization == approx(0.3) and cc.inc_stage == 2
    # a first ACK without hops starts the round; the first records come later
    cc = Hpcc(ctx(), HpccParams(init_cwnd_bdp=0.5))
    cc.on_ack(10 * US, MSS, False, T, 0)
    assert cc.round.start_ps == 10 * US and cc.prev_hops is None
    port = Port()
    first = (port.record(),)
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, first)
    assert cc.prev_hops is first and cc.cwnd_bytes == approx(62_500) and cc.utilization == 1.0


def test_loss_reactions():
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5))
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.5),))
    w = cc.cwnd_bytes
    cc.on_nack(25 * US)
    cc.on_timeout(30 * US)
    assert cc.cwnd_bytes == w and cc.ref_cwnd_bytes == w and cc.inc_stage == 1
    # optional: a timeout drops W and W^c to timeout_cwnd_mss MSS and restarts incStage
    cc, (port,) = started(HpccParams(init_cwnd_bdp=0.5, timeout_cwnd_mss=2.0))
    cc.on_ack_int(20 * US, MSS, False, T, 10 * US, (port.advance(T, 0.5),))
    cc.on_timeout(30 * US)
    assert cc.cwnd_bytes == 2000 and cc.ref_cwnd_bytes == 2000 and cc.inc_stage == 0
    assert cc.pacing_rate_bps == approx(2000 * 8e12 / T)
    cc.on_ack_int(40 * US, MSS, False, T, 30 * US, (port.advance(T, 0.5),))
    assert cc.cwnd_bytes == approx(2000 + W_AI)


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
