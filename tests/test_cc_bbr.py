"""BBR v1 law: plain arithmetic on one flow's controller (uno.cc.bbr, run as the Python data
plane runs it: uno.cc.adapter.LawControl; its state columns read as attributes).

Path used throughout: 100 Gb/s, base RTT 8 us, BDP 100,000 B, MSS 1,000 B (wire). A sample of
``rate`` bit/s is fed as ``rate x 8 us / 8e12`` delivered bytes over an 8 us interval. Rounds are
send-time delimited: an ACK of a packet sent at or after the ACK that opened the round ends it, so
ACKs spaced one RTT apart, each for a packet sent one RTT earlier, are successive rounds.
"""

from __future__ import annotations

import math

import pytest

from uno.cc.adapter import LawControl
from uno.cc.base import FlowContext
from uno.cc.bbr import (
    DRAIN,
    HIGH_GAIN,
    PACING_GAIN_CYCLE,
    PROBE_BW,
    PROBE_RTT,
    STARTUP,
    BbrParams,
    bdp_estimate,
    bw_filter_update,
)
from uno.cc.registry import KIND, LAW_BY_NAME
from uno.config.validate import check_fields
from uno.core.errors import ConfigError

MSS = 1000
RTT = 8_000_000  # ps
LINE = 100e9
BDP = 100_000.0
G = 1e9
S = 10**12  # one second in ps
CTX = FlowContext(
    base_rtt_ps=RTT,
    bdp_bytes=BDP,
    bottleneck_bps=int(LINE),
    mss_bytes=MSS,
    intra_rtt_ps=RTT,
    intra_bdp_bytes=BDP,
    is_inter_dc=True,
)


def make(**kw) -> LawControl:
    cc = LawControl(LAW_BY_NAME["bbr"], KIND["bbr"], BbrParams(**kw), CTX)
    cc.delivered = 0  # the sender's delivered count (wire bytes acknowledged so far)
    return cc


def feed(cc, now, rate, inflight, *, sent=None, rtt=RTT, acked=MSS, ecn=False):
    """One ACK, with its delivery-rate sample, for a packet sent at ``sent`` (default now -
    rtt), as the sender hands it over: the bytes in flight and delivered after it."""
    if sent is None:
        sent = now - rtt
    sample = round(rate * RTT / 8e12)
    cc.delivered += acked
    cc.on_ack_batch(now, acked, ecn, rtt, sent, inflight, cc.delivered, sample, RTT)


def bdp(cc, gain=1.0):
    """BBRInflight(gain): gain x BtlBw x RTprop, or the initial window without a model."""
    return bdp_estimate(cc.state, cc.consts, gain)


def run_rounds(cc, t, rates, inflight):
    """One ACK per round at t, t + RTT, ...; returns the time of the next round's ACK."""
    for rate in rates:
        feed(cc, t, rate, inflight)
        t += RTT
    return t


def to_probe_bw(cc):
    """STARTUP -> DRAIN (round 5) -> PROBE_BW at the returned time, with BtlBw = 24 Gb/s and
    RTprop = 8 us, i.e. a BDP estimate of 24,000 B."""
    t = run_rounds(cc, RTT, [10 * G, 20 * G, 24 * G, 24 * G, 24 * G], inflight=10**9)
    assert cc.mode == DRAIN
    feed(cc, t, 24 * G, 24_000)
    assert cc.mode == PROBE_BW
    return t


# ---- initial values ------------------------------------------------------------------
def test_initial_state_window_and_pacing():
    cc = make()
    assert cc.wants_rate_samples is True
    assert cc.mode == STARTUP
    assert HIGH_GAIN == pytest.approx(2.885, abs=1e-3)
    assert cc.pacing_gain == cc.cwnd_gain == HIGH_GAIN
    assert cc.cwnd_bytes == BDP  # init_cwnd_bdp = 1
    assert cc.pacing_rate_bps == pytest.approx(LINE)  # 1 BDP per base RTT = line rate
    assert cc.rtprop_ps == RTT  # seeded with the base RTT
    assert PACING_GAIN_CYCLE == (1.25, 0.75, 1, 1, 1, 1, 1, 1)
    small = make(init_cwnd_bdp=0.25)
    assert small.cwnd_bytes == 25_000
    assert small.pacing_rate_bps == pytest.approx(25e9)


# ---- BtlBw max filter ----------------------------------------------------------------
def test_max_filter_high_sample_expires_after_10_rounds():
    cc = make()
    t = run_rounds(cc, RTT, [80 * G], inflight=10**9)  # round 1
    assert cc.round_count == 1
    assert cc.btl_bw_bps == pytest.approx(80 * G)
    for k in range(2, 11):  # rounds 2..10: the round-1 sample is still in the window
        t = run_rounds(cc, t, [40 * G], inflight=10**9)
        assert cc.round_count == k
        assert cc.btl_bw_bps == pytest.approx(80 * G)
    run_rounds(cc, t, [40 * G], inflight=10**9)  # round 11: round 1 has left the window
    assert cc.round_count == 11
    assert cc.btl_bw_bps == pytest.approx(40 * G)


def test_max_filter_within_round_and_higher_sample():
    cc = make()
    feed(cc, RTT, 30 * G, 10**9)
    # same round (packet sent before the round started): lower sample ignored, higher replaces
    feed(cc, RTT + 1000, 10 * G, 10**9, sent=RTT - 1)
    assert cc.round_count == 1
    assert cc.btl_bw_bps == pytest.approx(30 * G)
    feed(cc, RTT + 2000, 50 * G, 10**9, sent=RTT - 1)
    assert cc.round_count == 1
    assert cc.btl_bw_bps == pytest.approx(50 * G)


def test_windowed_max_unit():
    cc = make(bw_window_rounds=3)
    s, p = cc.state, cc.consts
    assert len(s) == LAW_BY_NAME["bbr"].state_size + 2 * 4  # room for 3 + 1 entries
    assert bw_filter_update(s, p, 5.0, 1) == 5.0
    assert bw_filter_update(s, p, 3.0, 2) == 5.0
    assert bw_filter_update(s, p, 4.0, 3) == 5.0
    assert bw_filter_update(s, p, 1.0, 4) == 4.0  # 5 (round 1) expired; 4 (round 3) beats 3
    assert bw_filter_update(s, p, 1.0, 5) == 4.0  # rounds 3..5 still hold round 3
    assert bw_filter_update(s, p, 1.0, 6) == 1.0  # rounds 4..6: round 3 gone
    # the deque wraps around its ring: strictly falling samples fill every slot
    cc = make(bw_window_rounds=3)
    s, p = cc.state, cc.consts
    for r in range(1, 40):
        assert bw_filter_update(s, p, 100.0 - r, r) == 100.0 - max(1, r - 2)
        assert cc.bw_len == min(r, 3)


# ---- RTprop min filter ---------------------------------------------------------------
def test_min_rtt_filter_and_10s_expiry():
    cc = make(seed_rtprop_base_rtt=False, probe_rtt=False)
    assert math.isinf(cc.rtprop_ps)
    feed(cc, 12_000_000, 10 * G, 10**9, rtt=12_000_000)
    assert cc.rtprop_ps == 12_000_000
    t_min = 20_000_000
    feed(cc, t_min, 10 * G, 10**9, rtt=9_000_000)
    assert cc.rtprop_ps == 9_000_000
    assert cc.rtprop_stamp_ps == t_min
    feed(cc, 40_000_000, 10 * G, 10**9, rtt=15_000_000)
    assert cc.rtprop_ps == 9_000_000  # higher sample does not replace the min
    feed(cc, t_min + 10 * S, 10 * G, 10**9, rtt=15_000_000)
    assert cc.rtprop_ps == 9_000_000  # exactly 10 s old: not yet expired
    feed(cc, t_min + 10 * S + 1, 10 * G, 10**9, rtt=15_000_000)
    assert cc.rtprop_ps == 15_000_000  # older than 10 s: replaced by the current sample
    assert cc.rtprop_stamp_ps == t_min + 10 * S + 1


def test_min_rtt_seeded_with_base_rtt():
    cc = make()
    feed(cc, RTT + 1_000_000, 10 * G, 10**9, rtt=RTT + 1_000_000)
    assert cc.rtprop_ps == RTT  # a sample above the base RTT does not raise it
    feed(cc, 2 * RTT, 10 * G, 10**9, rtt=RTT - 500_000)
    assert cc.rtprop_ps == RTT - 500_000  # a lower one replaces it


# ---- STARTUP -> DRAIN -> PROBE_BW ----------------------------------------------------
def test_startup_to_drain_after_three_rounds_without_25pct_growth():
    cc = make()
    t = run_rounds(cc, RTT, [10 * G, 20 * G, 24 * G, 24 * G], inflight=10**9)
    assert cc.mode == STARTUP
    assert cc.full_bw_bps == pytest.approx(20 * G)  # 20 >= 1.25 x 10 was growth, 24 < 25 is not
    assert cc.full_bw_count == 2
    # more ACKs in the same round (round 4) do not count again
    for i in range(5):
        feed(cc, t - RTT + 100 * (i + 1), 24 * G, 10**9, sent=t - 2 * RTT)
    assert cc.round_count == 4
    assert cc.full_bw_count == 2
    assert cc.mode == STARTUP
    run_rounds(cc, t, [24 * G], inflight=10**9)  # third round without growth
    assert cc.filled_pipe
    assert cc.mode == DRAIN
    assert cc.pacing_gain == pytest.approx(1 / HIGH_GAIN)
    assert cc.cwnd_gain == pytest.approx(HIGH_GAIN)
    assert cc.pacing_rate_bps == pytest.approx(24 * G / HIGH_GAIN)


def test_exactly_25pct_growth_resets_the_count():
    cc = make()
    run_rounds(cc, RTT, [20 * G, 24 * G, 30 * G], inflight=10**9)
    # 24 < 25 counts one round; 30 >= 1.25 x 20 = 25 is growth and resets
    assert cc.full_bw_bps == pytest.approx(30 * G)
    assert cc.full_bw_count == 0
    cc2 = make()
    run_rounds(cc2, RTT, [20 * G, 25 * G], inflight=10**9)
    assert cc2.full_bw_bps == pytest.approx(25 * G)
    assert cc2.full_bw_count == 0
    cc3 = make()
    run_rounds(cc3, RTT, [20 * G, 24.9 * G], inflight=10**9)
    assert cc3.full_bw_bps == pytest.approx(20 * G)
    assert cc3.full_bw_count == 1


def test_drain_to_probe_bw_when_inflight_at_most_bdp():
    cc = make()
    t = run_rounds(cc, RTT, [10 * G, 20 * G, 24 * G, 24 * G, 24 * G], inflight=10**9)
    assert cc.mode == DRAIN
    assert bdp(cc) == pytest.approx(24_000)  # 24 Gb/s x 8 us
    feed(cc, t, 24 * G, 24_001)
    assert cc.mode == DRAIN
    feed(cc, t + 100, 24 * G, 24_000)
    assert cc.mode == PROBE_BW
    assert cc.cycle_index == 0
    assert cc.pacing_gain == 1.25
    assert cc.cwnd_gain == 2.0
    assert cc.cycle_stamp_ps == t + 100


def test_drain_entered_and_left_on_the_same_ack_when_inflight_is_small():
    cc = make()
    t = run_rounds(cc, RTT, [10 * G, 20 * G, 24 * G, 24 * G], inflight=10**9)
    run_rounds(cc, t, [24 * G], inflight=20_000)
    assert cc.filled_pipe
    assert cc.mode == PROBE_BW


# ---- PROBE_BW gain cycle -------------------------------------------------------------
def _cycle_gains(cc, t0, steps, inflight):
    """Advance ``steps`` phases, each by an ACK just after RTprop; check none happens at
    exactly RTprop. Returns the gains seen after each advance."""
    gains = []
    for _ in range(steps):
        stamp = cc.cycle_stamp_ps
        before = cc.pacing_gain
        feed(cc, stamp + RTT, 24 * G, inflight)  # elapsed == RTprop: not yet
        assert cc.pacing_gain == before
        assert cc.cycle_stamp_ps == stamp
        feed(cc, stamp + RTT + 1, 24 * G, inflight)  # elapsed > RTprop: next phase
        assert cc.cycle_stamp_ps == stamp + RTT + 1
        gains.append(cc.pacing_gain)
    return gains


def test_gain_cycle_order_and_phase_advance_per_rtprop():
    cc = make(phase_inflight_checks=False)
    t0 = to_probe_bw(cc)
    assert cc.pacing_gain == 1.25
    gains = _cycle_gains(cc, t0, 9, inflight=20_000)
    assert gains == [0.75, 1, 1, 1, 1, 1, 1, 1.25, 0.75]


def test_gain_cycle_start_index():
    cc = make(cycle_start_index=2, phase_inflight_checks=False)
    t0 = to_probe_bw(cc)
    assert cc.cycle_index == 2
    assert cc.pacing_gain == 1.0
    assert _cycle_gains(cc, t0, 7, inflight=20_000) == [1, 1, 1, 1, 1, 1.25, 0.75]


def test_gain_cycle_inflight_conditions_of_the_draft():
    cc = make()  # phase_inflight_checks = True
    t0 = to_probe_bw(cc)
    bdp = 24_000
    # 1.25 phase: after RTprop, still waits while prior inflight < 1.25 x BDP and no loss
    feed(cc, t0 + RTT + 1, 24 * G, 1.25 * bdp - MSS - 1)  # prior = inflight + acked = 29,999
    assert cc.pacing_gain == 1.25
    feed(cc, t0 + RTT + 2, 24 * G, 1.25 * bdp - MSS)  # prior = 30,000 = 1.25 x BDP
    assert cc.pacing_gain == 0.75
    # 0.75 phase: ends before RTprop once prior inflight <= BDP
    t1 = cc.cycle_stamp_ps
    feed(cc, t1 + 10, 24 * G, bdp - MSS + 1)  # prior = 24,001
    assert cc.pacing_gain == 0.75
    feed(cc, t1 + 20, 24 * G, bdp - MSS)  # prior = 24,000
    assert cc.pacing_gain == 1.0
    # 1.0 phase: only time ends it
    t2 = cc.cycle_stamp_ps
    feed(cc, t2 + RTT, 24 * G, 0)
    assert cc.pacing_gain == 1.0
    feed(cc, t2 + RTT + 1, 24 * G, 0)
    assert cc.cycle_index == 3


def test_gain_cycle_loss_ends_the_probing_phase():
    cc = make()
    t0 = to_probe_bw(cc)
    feed(cc, t0 + RTT + 1, 24 * G, 10_000)
    assert cc.pacing_gain == 1.25  # low inflight, no loss: keep probing
    cc.on_timeout(t0 + RTT + 2)
    feed(cc, t0 + RTT + 3, 24 * G, 10_000)
    assert cc.pacing_gain == 0.75
    # the loss flag is consumed by one ACK
    cc2 = make()
    t0 = to_probe_bw(cc2)
    cc2.on_timeout(t0 + 1)
    feed(cc2, t0 + 2, 24 * G, 10_000)  # before RTprop: no advance, flag cleared
    feed(cc2, t0 + RTT + 3, 24 * G, 10_000)
    assert cc2.pacing_gain == 1.25


# ---- pacing rate and cwnd ------------------------------------------------------------
def test_pacing_rate_is_gain_times_btlbw():
    cc = make(phase_inflight_checks=False)
    feed(cc, RTT, 10 * G, 10**9)
    # STARTUP: only raised, 2.885 x 10 G < the initial line rate
    assert cc.pacing_rate_bps == pytest.approx(LINE)
    feed(cc, RTT + 10, 40 * G, 10**9, sent=RTT - 1)
    assert cc.pacing_rate_bps == pytest.approx(HIGH_GAIN * 40 * G)
    cc = make(phase_inflight_checks=False)
    t0 = to_probe_bw(cc)
    assert cc.pacing_rate_bps == pytest.approx(1.25 * 24 * G)
    feed(cc, t0 + RTT + 1, 24 * G, 20_000)
    assert cc.pacing_gain == 0.75
    assert cc.pacing_rate_bps == pytest.approx(0.75 * 24 * G)
    feed(cc, t0 + 2 * RTT + 2, 24 * G, 20_000)
    assert cc.pacing_rate_bps == pytest.approx(24 * G)


def test_cwnd_target_is_two_bdp_estimates_in_probe_bw():
    cc = make()
    to_probe_bw(cc)
    assert cc.target_cwnd_bytes == pytest.approx(2 * 24_000)
    # a cwnd above the target is cut to it at once once the pipe is filled
    assert cc.cwnd_bytes == pytest.approx(48_000)
    # RTprop and BtlBw both enter the target
    cc2 = make(seed_rtprop_base_rtt=False)
    t = run_rounds(cc2, RTT, [10 * G, 20 * G, 24 * G, 24 * G, 24 * G], inflight=10**9)
    feed(cc2, t, 24 * G, 0, rtt=4_000_000)
    assert cc2.mode == PROBE_BW
    assert cc2.target_cwnd_bytes == pytest.approx(2 * 24e9 * 4e-6 / 8)


def test_cwnd_grows_by_acked_toward_target_and_floor_of_4_packets():
    cc = make()
    t0 = to_probe_bw(cc)
    cc.on_timeout(t0 + 1)
    assert cc.cwnd_bytes == MSS
    feed(cc, t0 + 2, 24 * G, 0)
    assert cc.cwnd_bytes == 4 * MSS  # min(1 + 1, target) packets, then the 4-packet floor
    for k in range(5, 48):
        feed(cc, t0 + 2 + k, 24 * G, 0)
        assert cc.cwnd_bytes == k * MSS  # + acked per ACK
    feed(cc, t0 + 100, 24 * G, 0)
    assert cc.cwnd_bytes == pytest.approx(48_000)
    feed(cc, t0 + 101, 24 * G, 0)
    assert cc.cwnd_bytes == pytest.approx(48_000)  # never beyond the target
    # floor when the target is tiny: 2 x 1 Gb/s x 8 us = 2,000 B < 4 MSS
    cc2 = make()
    t = run_rounds(cc2, RTT, [1 * G] * 4, inflight=10**9)
    feed(cc2, t, 1 * G, 0)
    assert cc2.mode == PROBE_BW
    assert cc2.target_cwnd_bytes == pytest.approx(2_000)
    assert cc2.cwnd_bytes == 4 * MSS


def test_startup_cwnd_growth_rules():
    cc = make(init_cwnd_bdp=0.05)  # 5,000 B initial window
    # 2.885 x 1 Gb/s x 8 us = 2,885 B target: growth only while delivered < initial window
    for k in range(1, 5):
        feed(cc, RTT + k, 1 * G, 10**9, sent=RTT - 1)
        assert cc.cwnd_bytes == 5_000 + k * MSS
    feed(cc, RTT + 5, 1 * G, 10**9, sent=RTT - 1)  # delivered = 5,000: stop, but no cut
    assert cc.cwnd_bytes == 9_000
    assert cc.mode == STARTUP
    # below the target it grows by acked
    cc2 = make(init_cwnd_bdp=0.05)
    feed(cc2, RTT, 10 * G, 10**9)  # target 28,854 B
    assert cc2.cwnd_bytes == 6_000


def test_max_cwnd_cap():
    cc = make(max_cwnd_bdp=1.0)
    run_rounds(cc, RTT, [50 * G, 90 * G], inflight=10**9)
    assert cc.cwnd_bytes == BDP  # STARTUP growth stops at the cap
    uncapped = make()
    run_rounds(uncapped, RTT, [50 * G, 90 * G], inflight=10**9)
    assert uncapped.cwnd_bytes == BDP + 2 * MSS


# ---- ECN -----------------------------------------------------------------------------
def _snapshot(cc):
    """The whole state: every column and the BtlBw filter's entries."""
    return cc.state.tolist()


def test_ecn_is_ignored():
    plain, marked = make(), make()
    rates = [10, 20, 24, 24, 24, 24, 30, 24, 24, 24, 24, 24, 24]
    inflights = [10**9] * 5 + [24_000, 40_000, 30_000, 20_000, 10_000, 0, 5_000, 50_000]
    t = RTT
    for i, (r, w) in enumerate(zip(rates, inflights, strict=True)):
        feed(plain, t, r * G, w, ecn=False)
        feed(marked, t, r * G, w, ecn=True)
        assert _snapshot(plain) == _snapshot(marked)
        # a second ACK inside the round, and time for a gain-cycle phase to pass
        feed(plain, t + RTT // 2, r * G, w, sent=t - RTT - 1, ecn=False)
        feed(marked, t + RTT // 2, r * G, w, sent=t - RTT - 1, ecn=True)
        assert _snapshot(plain) == _snapshot(marked)
        t += RTT + (i % 3) * 1000
    assert plain.mode == PROBE_BW
    assert marked.cwnd_bytes == plain.cwnd_bytes > 4 * MSS


# ---- PROBE_RTT -----------------------------------------------------------------------
def _enter_probe_rtt(cc):
    """From PROBE_BW, let RTprop age past 10 s with higher RTT samples. Returns the time."""
    t0 = to_probe_bw(cc)
    assert cc.rtprop_stamp_ps == t0
    t_exp = t0 + 10 * S
    feed(cc, t_exp, 24 * G, 30_000, rtt=9_000_000)
    assert cc.mode == PROBE_BW  # exactly 10 s old: not expired
    assert cc.cwnd_bytes == pytest.approx(48_000)
    feed(cc, t_exp + 1, 24 * G, 30_000, rtt=9_000_000)
    return t_exp + 1


def test_probe_rtt_entry_exit():
    cc = make()
    t = _enter_probe_rtt(cc)
    assert cc.mode == PROBE_RTT
    assert cc.rtprop_ps == 9_000_000  # expired estimate replaced by the current sample
    assert cc.pacing_gain == 1.0 and cc.cwnd_gain == 1.0
    assert cc.cwnd_bytes == 4 * MSS
    assert cc.prior_cwnd_bytes == pytest.approx(48_000)
    assert cc.pacing_rate_bps == pytest.approx(24 * G)
    # inflight still above 4 packets: the 200 ms timer is not armed
    t1 = t + RTT
    feed(cc, t1, 24 * G, 4 * MSS + 1)
    assert not cc.probe_rtt_armed
    t2 = t1 + RTT
    feed(cc, t2, 24 * G, 4 * MSS)
    assert cc.probe_rtt_done_ps == t2 + 200_000_000_000
    done = cc.probe_rtt_done_ps
    # 15 rounds of low-rate samples while waiting: app-limited, BtlBw is kept
    for k in range(1, 16):
        feed(cc, t2 + k * RTT, 1 * G, 4 * MSS)
        assert cc.mode == PROBE_RTT
        assert cc.cwnd_bytes == 4 * MSS
    assert cc.probe_rtt_round_done
    assert cc.btl_bw_bps == pytest.approx(24 * G)
    assert cc.rtprop_ps == RTT  # lower samples taken during PROBE_RTT
    # (RTT samples above RTprop from here on, so only the exit restamps RTprop)
    feed(cc, done, 24 * G, 4 * MSS, rtt=9_000_000)
    assert cc.mode == PROBE_RTT  # 200 ms not yet exceeded
    feed(cc, done + 1, 24 * G, 4 * MSS, rtt=9_000_000)
    assert cc.mode == PROBE_BW
    assert cc.pacing_gain == 1.25 and cc.cwnd_gain == 2.0
    assert cc.rtprop_stamp_ps == done + 1
    assert cc.cwnd_bytes == pytest.approx(48_000)  # restored (48,000), then min(+acked, target)


def test_probe_rtt_needs_a_round_after_inflight_drops():
    cc = make()
    t = _enter_probe_rtt(cc)
    t1 = t + RTT
    feed(cc, t1, 24 * G, 10_000)  # a round starts at t1
    t2 = t1 + RTT // 2
    feed(cc, t2, 24 * G, 4 * MSS, sent=t1 - 1)  # arms the timer; no round start
    assert cc.round_start_ps == t2  # the draft's next_round_delivered = delivered
    done = cc.probe_rtt_done_ps
    assert done == t2 + 200_000_000_000
    # after 200 ms, but for a packet sent before the timer was armed (after t1 though)
    feed(cc, done + 1, 24 * G, 4 * MSS, sent=t2 - 1)
    assert cc.mode == PROBE_RTT
    feed(cc, done + 2, 24 * G, 4 * MSS, sent=t2)
    assert cc.mode == PROBE_BW


def test_probe_rtt_app_limited_samples_only_for_packets_sent_during_it():
    cc = make(bw_window_rounds=1)  # BtlBw = the current round's max: every admission shows
    t = _enter_probe_rtt(cc)  # entered at t; the current round began at t - 1
    assert cc.btl_bw_bps == pytest.approx(24 * G)
    # a packet sent before PROBE_RTT began: its (lower) sample is admitted
    feed(cc, t + 10, 12 * G, 4 * MSS, sent=t - 1)
    assert cc.round_start
    assert cc.btl_bw_bps == pytest.approx(12 * G)
    # a packet sent during PROBE_RTT: app-limited, a lower sample is not admitted ...
    feed(cc, t + 20, 6 * G, 4 * MSS, sent=t + 10)
    assert cc.round_start
    assert cc.btl_bw_bps == pytest.approx(12 * G)
    # ... but a higher one is
    feed(cc, t + 30, 20 * G, 4 * MSS, sent=t + 20)
    assert cc.btl_bw_bps == pytest.approx(20 * G)
    # exit (the timer was armed at t + 10); the marking lasts until the data in flight at the
    # last PROBE_RTT ACK (none here) is delivered: delivered count at send <= the mark
    done = cc.probe_rtt_done_ps
    feed(cc, done + 1, 20 * G, 0)
    assert cc.mode == PROBE_BW
    mark = cc.delivered
    assert cc.app_limited_mark_bytes == mark  # (nothing in flight at the exit)
    feed(cc, done + 2, 5 * G, 0, sent=done + 2, acked=MSS)  # sent with delivered = mark - 4,000
    assert cc.btl_bw_bps == pytest.approx(20 * G)
    feed(cc, done + 3, 5 * G, 0, sent=done + 3, acked=10 * MSS)  # delivered = mark + 6,000
    assert cc.delivered - 5_000 > mark
    assert cc.btl_bw_bps == pytest.approx(5 * G)


def test_probe_rtt_exits_to_startup_when_pipe_not_filled():
    cc = make()
    feed(cc, RTT, 10 * G, 10**9)
    assert cc.rtprop_stamp_ps == RTT
    t = RTT + 10 * S + 1
    feed(cc, t, 10 * G, 10**9, rtt=9_000_000)
    assert cc.mode == PROBE_RTT
    assert cc.cwnd_bytes == 4 * MSS
    feed(cc, t + RTT, 10 * G, 0)
    done = cc.probe_rtt_done_ps
    feed(cc, done + 1, 10 * G, 0)
    assert cc.mode == STARTUP
    assert cc.pacing_gain == cc.cwnd_gain == HIGH_GAIN
    assert not cc.filled_pipe


def test_probe_rtt_disabled():
    cc = make(probe_rtt=False)
    t0 = to_probe_bw(cc)
    feed(cc, t0 + 10 * S + 1, 24 * G, 30_000, rtt=9_000_000)
    assert cc.mode == PROBE_BW
    assert cc.rtprop_ps == 9_000_000  # the min filter still expires
    assert cc.cwnd_bytes == pytest.approx(49_000)  # min(48,000 + 1,000, 2 x 24 G x 9 us)


# ---- timeout -------------------------------------------------------------------------
def test_timeout_sets_one_mss_without_restoring():
    cc = make()
    cc.on_timeout(0)
    assert cc.cwnd_bytes == MSS  # also in STARTUP, before any ACK
    cc = make()
    t0 = to_probe_bw(cc)
    assert cc.cwnd_bytes == pytest.approx(48_000)
    cc.on_timeout(t0 + 5)
    assert cc.cwnd_bytes == MSS
    assert cc.mode == PROBE_BW  # the model and state are untouched
    assert cc.btl_bw_bps == pytest.approx(24 * G)
    feed(cc, t0 + 6, 24 * G, 0)
    assert cc.cwnd_bytes == 4 * MSS  # regrows from the floor, no jump back to 48,000


# ---- config --------------------------------------------------------------------------
def test_default_params_pass_check():
    check_fields(BbrParams(), "cc.bbr")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("high_gain", 1.0),
        ("high_gain", float("nan")),
        ("cwnd_gain", 0.5),
        ("bw_window_rounds", 0),
        ("bw_window_rounds", 2.5),
        ("min_rtt_window_s", 0.0),
        ("full_bw_growth", 1.0),
        ("full_bw_rounds", 0),
        ("cycle_start_index", 8),
        ("cycle_start_index", -1),
        ("phase_inflight_checks", 1),
        ("probe_rtt", "yes"),
        ("probe_rtt_duration_s", -0.1),
        ("min_pipe_cwnd_mss", 0.0),
        ("seed_rtprop_base_rtt", None),
        ("init_cwnd_bdp", 0.0),
        ("max_cwnd_bdp", -1.0),
    ],
)
def test_check_rejects_bad_values(field, value):
    p = BbrParams(**{field: value})
    with pytest.raises(ConfigError) as exc:
        check_fields(p, "cc.bbr")
    assert exc.value.field == f"cc.bbr.{field}"


def test_artifact_window_is_never_cut_to_the_target():
    cc = make(cwnd_cut_to_target=False)
    t = to_probe_bw(cc)
    w = cc.cwnd_bytes
    assert cc.target_cwnd_bytes == pytest.approx(48_000) and w > 48_000
    feed(cc, t + 1, 24 * G, 24_000)
    assert cc.cwnd_bytes == w  # above the target: left alone (the draft cuts it to 48,000)
    cc.on_timeout(t + 2)
    feed(cc, t + 3, 24 * G, 0)
    assert cc.cwnd_bytes == 4 * MSS  # below the target: grows (+acked, then the floor)


def test_artifact_pacer_gaps_steps_and_once_per_base_rtt():
    """``artifact_pacer`` (the Uno artifact's BBRSrc::UpdatePacingRate / update_bw_model): a
    whole-ns gap of wire bits / (BtlBw x gain); while the gain is above 1 a gap not at least a
    step (4,300 B at 100 Gb/s: 344 ns) longer than the previous one becomes the previous less
    two steps (at least one step); the pacer takes the gap at the first ACK after each base-RTT
    window."""
    cc = make(artifact_pacer=True, phase_inflight_checks=False)
    assert cc.pacer_gap_ns == 80  # a 1,000-B packet at 100 Gb/s
    feed(cc, RTT, 10 * G, 10**9)  # STARTUP: 8,000 / (10 x 2.885) = 277 ns, not 344 longer
    assert cc.pacer_gap_ns == 344  # 80 - 688 < 0: one step
    assert cc.pacing_rate_bps == pytest.approx(LINE)  # no window ended yet (t = 1 base RTT)
    feed(cc, 2 * RTT + 1, 10 * G, 10**9)  # the first ACK after [0, 1 base RTT]
    assert cc.pacing_rate_bps == pytest.approx(8000 / 344e-9)
    feed(cc, 2 * RTT + 2, 10 * G, 10**9)  # same window: the pacer keeps its gap
    assert cc.pacing_rate_bps == pytest.approx(8000 / 344e-9)
    # at gain 1 the gap is the formula's: 8,000 / 24 Gb/s = 333.3 -> 333 ns
    cc = make(artifact_pacer=True, phase_inflight_checks=False, cycle_start_index=2)
    t = to_probe_bw(cc)
    assert cc.pacing_gain == 1.0
    assert cc.pacer_gap_ns == 333
    feed(cc, t + RTT + 1, 24 * G, 20_000)
    assert cc.pacing_rate_bps == pytest.approx(8000 / 333e-9)
    # below 3 Gb/s the pacer assumes 3 Gb/s; a gap a step longer than the last one is kept
    cc = make(artifact_pacer=True)
    feed(cc, RTT, 1 * G, 10**9)
    assert cc.pacer_gap_ns == 924  # 8,000 / (3 x 2.885), not 8,000 / (1 x 2.885) = 2,772
