"""GEMINI (ToN 2022, §III-B Algorithm 1) as plain arithmetic on its law, per ACK and per batch.

Main context: the paper's own example path, C = 1 Gbps, RTT_base = 8 ms, 1500 B packets
(§III-C: H = 1.2e-7 "leads to h = 1 when C = 1Gbps and RTT = 8ms"). Then
C x RTT = 1e9 b/s x 8e-3 s / 8 = 1,000,000 B, K (Table IV, 50 pkts/Gbps) = 50 x 1500 = 75,000 B,
F = 4 x 75,000 / 1,075,000, h = 1.2e-7 x 1e9 x 8e-3 = 0.96 MSS = 1440 B per RTT.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from uno.cc.adapter import LawControl, make_cc
from uno.cc.base import FlowContext
from uno.cc.gemini import GeminiParams, on_feedback, wan_congested
from uno.cc.law import NO_RECORDS, Feedback
from uno.config.validate import check_fields
from uno.core.errors import ConfigError

MS = 1_000_000_000  # ps
US = 1_000_000  # ps
MSS = 1500
GBPS = 1_000_000_000


def ctx(rate_bps: int = GBPS, rtt_ps: int = 8 * MS, mss: int = MSS, inter: bool = True):
    bdp = rate_bps * rtt_ps / 8e12
    return FlowContext(
        base_rtt_ps=rtt_ps,
        bdp_bytes=bdp,
        bottleneck_bps=rate_bps,
        mss_bytes=mss,
        intra_rtt_ps=200 * US,
        intra_bdp_bytes=25_000.0,
        is_inter_dc=inter,
    )


def approx(x: float):
    return pytest.approx(x, rel=1e-12, abs=1e-9)


def gemini(c: FlowContext, params: GeminiParams) -> LawControl:
    """GEMINI's law for one flow, as the simulator builds it (cc.gemini = ``params``)."""
    return make_cc("gemini", SimpleNamespace(gemini=params), c)


def wan(cc: LawControl) -> bool:
    """The WAN signal the law reads now (RTT_min > RTT_base + T)."""
    return bool(wan_congested(cc.state, cc.consts))


def test_f_k_and_h_from_table_iv_defaults():
    cc = gemini(ctx(), GeminiParams())
    assert cc.c_rtt_bytes == approx(1_000_000)
    assert cc.k_bytes == approx(75_000)
    assert cc.f_scale == approx(300_000 / 1_075_000)
    assert cc.h_mss_unclamped == approx(0.96)
    assert cc.h_bytes == approx(1440)
    assert cc.t_ps == 5 * MS
    assert cc.cwnd_bytes == approx(1_000_000)  # init 1 BDP


def test_k_scales_with_link_rate_and_k_bytes_override():
    # 10 Gbps, 1 ms: K = 50 x 10 x 1500 = 750,000 B; C x RTT = 1,250,000 B.
    cc = gemini(ctx(rate_bps=10 * GBPS, rtt_ps=1 * MS), GeminiParams())
    assert cc.k_bytes == approx(750_000)
    assert cc.f_scale == approx(3_000_000 / 2_000_000)
    # DCTCP guideline K = C x RTT / 7 gives exactly F = 1/2 (§III-B).
    cc = gemini(ctx(), GeminiParams(k_bytes=1_000_000 / 7))
    assert cc.f_scale == approx(0.5)


def test_h_clamps_and_override():
    # 1 Gbps x 200 us: h = 0.024 MSS -> clamped up to 0.1 MSS = 150 B.
    cc = gemini(ctx(rtt_ps=200 * US), GeminiParams())
    assert cc.h_mss_unclamped == approx(0.024)
    assert cc.h_bytes == approx(150)
    # 1 Gbps x 100 ms: h = 12 MSS -> clamped down to 5 MSS = 7500 B.
    cc = gemini(ctx(rtt_ps=100 * MS), GeminiParams())
    assert cc.h_mss_unclamped == approx(12)
    assert cc.h_bytes == approx(7500)
    # Custom bounds.
    cc = gemini(ctx(rtt_ps=100 * MS), GeminiParams(h_max_mss=8.0))
    assert cc.h_bytes == approx(8 * 1500)
    # Absolute override is used as is (no clamp): 20 MSS > h_max.
    cc = gemini(ctx(rtt_ps=200 * US), GeminiParams(h_bytes_per_rtt=30_000.0))
    assert cc.h_bytes == 30_000.0


def test_h_as_a_fraction_of_the_inter_dc_bdp():
    """The artifact's -geminiH: h = H x the inter-DC reference BDP for intra- and inter-DC flows
    alike, unclamped, ahead of h_bytes_per_rtt; refused without an inter-DC path."""
    params = GeminiParams(h_inter_bdp_frac=0.00024, h_bytes_per_rtt=1.0)
    for inter in (True, False):
        c = dataclasses.replace(ctx(inter=inter), inter_bdp_bytes=22_400_515.0)
        assert gemini(c, params).h_bytes == approx(0.00024 * 22_400_515.0)
    with pytest.raises(ConfigError, match="h_inter_bdp_frac"):
        gemini(ctx(), params)  # (no inter-DC BDP: one datacenter)


def test_additive_increase_per_ack_in_bytes():
    cc = gemini(ctx(), GeminiParams())
    cc.on_ack(now_ps=10 * MS, acked_bytes=1500, ecn=False, rtt_ps=8 * MS, sent_ps=2 * MS)
    w1 = 1_000_000 + 1440 * 1500 / 1_000_000  # +2.16 B (not slow start: +1500)
    assert cc.cwnd_bytes == approx(w1)
    cc.on_ack(now_ps=10 * MS + 1, acked_bytes=700, ecn=False, rtt_ps=8 * MS, sent_ps=2 * MS)
    assert cc.cwnd_bytes == approx(w1 + 1440 * 700 / w1)
    assert cc.pacing_rate_bps == approx((w1 + 1440 * 700 / w1) * 8e12 / (8 * MS))


def test_ecn_alpha_ewma_updates_once_per_window():
    cc = gemini(ctx(), GeminiParams(alpha_init=0.0, g=0.5))
    # Window starts at the first ACK (t = 10 ms).
    cc.on_ack(10 * MS, 1500, False, 8 * MS, sent_ps=2 * MS)
    cc.on_ack(11 * MS, 1500, True, 8 * MS, sent_ps=3 * MS)  # sent before 10 ms: same window
    cc.on_ack(11 * MS + 1, 1500, True, 8 * MS, sent_ps=3 * MS)
    assert cc.alpha == 0.0  # not updated per ACK
    # First ACK for a packet sent at/after 10 ms ends the window: 2 of 4 packets marked.
    cc.on_ack(19 * MS, 1500, False, 8 * MS, sent_ps=11 * MS)
    assert cc.alpha == approx(0.5 * 0.0 + 0.5 * (3000 / 6000))
    # Next window (started at 19 ms): marked fraction is byte-weighted, 1500 of 2000 bytes.
    cc.on_ack(20 * MS, 1500, True, 8 * MS, sent_ps=12 * MS)
    cc.on_ack(27 * MS, 500, False, 8 * MS, sent_ps=19 * MS)
    assert cc.alpha == approx(0.5 * 0.25 + 0.5 * (1500 / 2000))


def test_reduction_at_most_once_per_base_rtt():
    cc = gemini(ctx(), GeminiParams())  # alpha = 1, F = 300k/1075k
    f = 300_000 / 1_075_000
    w0 = 1_000_000.0
    # All ACKs for packets sent before the window start, so alpha stays 1 throughout.
    cc.on_ack(10 * MS, 1500, True, 8 * MS, sent_ps=0)
    w1 = w0 * (1 - 1.0 * f)
    assert cc.cwnd_bytes == approx(w1)
    # Exactly one base RTT later: not "> 1 RTT" -> no cut, and no increase (congested ACK).
    cc.on_ack(18 * MS, 1500, True, 8 * MS, sent_ps=0)
    assert cc.cwnd_bytes == approx(w1)
    # An unmarked ACK within the hold-off still grows the window.
    cc.on_ack(18 * MS, 1500, False, 8 * MS, sent_ps=0)
    w2 = w1 + 1440 * 1500 / w1
    assert cc.cwnd_bytes == approx(w2)
    # One ps after a full base RTT since the cut: cut again.
    cc.on_ack(18 * MS + 1, 1500, True, 8 * MS, sent_ps=0)
    assert cc.cwnd_bytes == approx(w2 * (1 - f))


def _both_signals(params: GeminiParams) -> tuple[LawControl, float]:
    """First window: RTT samples of 14 ms > 8 + 5 ms. The ACK ending it is ECN-marked, so both
    signals fire on it. Returns the controller and the window just before that ACK."""
    cc = gemini(ctx(), params)
    cc.on_ack(20 * MS, 1500, False, 14 * MS, sent_ps=6 * MS)  # starts the window; no RTT_min yet
    w1 = 1_000_000 + 1440 * 1500 / 1_000_000
    assert cc.cwnd_bytes == approx(w1)
    cc.on_ack(34 * MS, 1500, True, 14 * MS, sent_ps=20 * MS)  # ends it
    assert cc.rtt_min_prev == 14 * MS
    assert wan(cc)
    return cc, w1


def test_max_of_signals_ecn_wins():
    # K = C RTT / 7 -> F = 1/2; alpha = 15/16 x 1 + 1/16 x 1/2 = 31/32; alpha F = 31/64 > 0.2.
    cc, w1 = _both_signals(GeminiParams(k_bytes=1_000_000 / 7))
    assert cc.alpha == approx(31 / 32)
    assert cc.cwnd_bytes == approx(w1 * (1 - 31 / 64))


def test_max_of_signals_beta_wins():
    # alpha = 15/16 x 0 + 1/16 x 1/2 = 1/32; alpha F = 1/64 < beta = 0.2.
    cc, w1 = _both_signals(GeminiParams(k_bytes=1_000_000 / 7, alpha_init=0.0))
    assert cc.alpha == approx(1 / 32)
    assert cc.cwnd_bytes == approx(w1 * (1 - 0.2))


def test_wan_congestion_from_min_rtt_of_last_window():
    cc = gemini(ctx(), GeminiParams())
    # Within the first window there is no RTT_min yet: large samples do not cut.
    cc.on_ack(20 * MS, 1500, False, 14 * MS, sent_ps=6 * MS)
    cc.on_ack(21 * MS, 1500, False, 15 * MS, sent_ps=6 * MS)
    w = 1_000_000.0
    for _ in range(2):
        w += 1440 * 1500 / w
    assert cc.cwnd_bytes == approx(w)
    # Window ends; its min is 14 ms > 13 ms -> WAN cut by beta, no ECN involved.
    cc.on_ack(34 * MS, 1500, False, 14 * MS, sent_ps=20 * MS)
    w *= 1 - 0.2
    assert cc.cwnd_bytes == approx(w)
    # Next window, still flagged by the previous window's RTT_min: in hold-off, no growth.
    cc.on_ack(35 * MS, 1500, False, 9 * MS, sent_ps=26 * MS)
    assert cc.cwnd_bytes == approx(w)


def test_no_wan_congestion_when_one_sample_is_low_or_at_threshold():
    for low in (12 * MS, 13 * MS):  # below, and exactly at, RTT_base + T (strict ">")
        cc = gemini(ctx(), GeminiParams())
        cc.on_ack(20 * MS, 1500, False, 14 * MS, sent_ps=6 * MS)
        cc.on_ack(21 * MS, 1500, False, low, sent_ps=9 * MS)
        cc.on_ack(34 * MS, 1500, False, 14 * MS, sent_ps=20 * MS)
        assert cc.rtt_min_prev == low
        assert not wan(cc)
        w = 1_000_000.0
        for _ in range(3):
            w += 1440 * 1500 / w
        assert cc.cwnd_bytes == approx(w)


def test_delay_signal_can_be_disabled_per_class():
    cc = gemini(ctx(inter=True), GeminiParams(delay_signal_inter=False))
    cc.on_ack(20 * MS, 1500, False, 14 * MS, sent_ps=6 * MS)
    cc.on_ack(34 * MS, 1500, False, 14 * MS, sent_ps=20 * MS)
    assert not wan(cc)
    # intra flag does not affect an inter-DC flow
    cc = gemini(ctx(inter=True), GeminiParams(delay_signal_intra=False))
    cc.on_ack(20 * MS, 1500, False, 14 * MS, sent_ps=6 * MS)
    cc.on_ack(34 * MS, 1500, False, 14 * MS, sent_ps=20 * MS)
    assert wan(cc)


def test_cut_is_capped_by_max_cut_and_min_cwnd():
    # K >> C RTT: F = 4 x 9e6 / 1e7 = 3.6, alpha = 1 -> alpha F = 3.6 > 1.
    cc = gemini(ctx(), GeminiParams(k_bytes=9_000_000.0))
    assert cc.f_scale == approx(3.6)
    cc.on_ack(10 * MS, 1500, True, 8 * MS, sent_ps=0)
    assert cc.cwnd_bytes == 1500  # cut of 1 -> 0 -> floor of 1 MSS
    cc = gemini(ctx(), GeminiParams(k_bytes=9_000_000.0, max_cut=0.5))
    cc.on_ack(10 * MS, 1500, True, 8 * MS, sent_ps=0)
    assert cc.cwnd_bytes == approx(500_000)


def test_init_and_max_cwnd_and_pacing_flag():
    cc = gemini(ctx(), GeminiParams(init_cwnd_bdp=2.0, pacing=False))
    assert cc.cwnd_bytes == approx(2_000_000)
    assert cc.pacing_rate_bps == 0.0
    cc = gemini(ctx(), GeminiParams(init_cwnd_bdp=2.0, max_cwnd_bdp=1.0))
    assert cc.cwnd_bytes == approx(1_000_000)
    assert cc.pacing_rate_bps == approx(1e9)  # cwnd / base RTT = line rate
    cc.on_ack(10 * MS, 1500, False, 8 * MS, sent_ps=2 * MS)
    assert cc.cwnd_bytes == approx(1_000_000)  # growth capped


def test_timeout_one_mss_then_slow_start_until_ssthresh():
    # 1 Gbps x 48 us: BDP = 6000 B; h = 0.00576 MSS -> clamped to 0.1 MSS = 150 B.
    cc = gemini(ctx(rtt_ps=48 * US), GeminiParams())
    assert cc.cwnd_bytes == approx(6000)
    cc.on_timeout(1 * MS)
    assert cc.cwnd_bytes == 1500
    assert cc.ssthresh == 3000
    assert cc.pacing_rate_bps == approx(1500 * 8e12 / (48 * US))
    cc.on_ack(2 * MS, 1000, False, 48 * US, sent_ps=2 * MS - 48 * US)
    assert cc.cwnd_bytes == 2500  # slow start: += acked
    cc.on_ack(2 * MS + 1, 1000, False, 48 * US, sent_ps=2 * MS - 48 * US)
    assert cc.cwnd_bytes == 3500  # reached ssthresh -> congestion avoidance
    cc.on_ack(2 * MS + 2, 1500, False, 48 * US, sent_ps=2 * MS - 48 * US)
    assert cc.cwnd_bytes == approx(3500 + 150 * 1500 / 3500)


def test_timeout_counts_as_reduction_and_clears_rtt_history():
    cc = gemini(ctx(), GeminiParams())
    cc.on_ack(20 * MS, 1500, False, 14 * MS, sent_ps=6 * MS)
    cc.on_ack(34 * MS, 1500, False, 14 * MS, sent_ps=20 * MS)
    assert wan(cc)
    cc.on_timeout(40 * MS)
    assert not wan(cc)
    # Slow start: += acked per unmarked ACK.
    cc.on_ack(41 * MS, 1500, False, 8 * MS, sent_ps=33 * MS)
    assert cc.cwnd_bytes == 3000
    cc.on_ack(42 * MS, 1500, False, 8 * MS, sent_ps=34 * MS)
    assert cc.cwnd_bytes == 4500
    # A marked ACK within one base RTT of the timeout (but 9 ms after the WAN cut at 34 ms)
    # neither cuts nor grows the window.
    cc.on_ack(43 * MS, 1500, True, 8 * MS, sent_ps=35 * MS)
    assert cc.cwnd_bytes == 4500
    assert cc.slow_start
    # More than one base RTT after the timeout a mark cuts, and ends slow start.
    # alpha = 15/16 (the first window, 20-34 ms, had no marks); F = 300k / 1075k.
    cc.on_ack(48 * MS + 1, 1500, True, 8 * MS, sent_ps=39 * MS)
    assert cc.cwnd_bytes == approx(4500 * (1 - (15 / 16) * 300_000 / 1_075_000))
    assert not cc.slow_start


def test_nack_halves_once_per_rtt():
    cc = gemini(ctx(), GeminiParams())
    cc.on_nack(10 * MS)
    assert cc.cwnd_bytes == approx(500_000)
    cc.on_nack(12 * MS)  # within one base RTT
    assert cc.cwnd_bytes == approx(500_000)
    cc.on_nack(19 * MS)
    assert cc.cwnd_bytes == approx(250_000)


@pytest.mark.parametrize(
    "field,value",
    [
        ("h_coeff", 0.0),
        ("h_min_mss", 0.0),
        ("h_max_mss", 0.05),  # below h_min_mss = 0.1
        ("h_bytes_per_rtt", 0.0),
        ("beta", 1.0),
        ("beta", -0.1),
        ("t_us", -1.0),
        ("k_pkts_per_gbps", 0.0),
        ("k_bytes", -5.0),
        ("g", 0.0),
        ("g", 1.5),
        ("alpha_init", 1.1),
        ("max_cut", 0.0),
        ("max_cut", 1.2),
        ("init_cwnd_bdp", 0.0),
        ("min_cwnd_mss", 0.0),
        ("max_cwnd_bdp", -1.0),
    ],
)
def test_check_rejects_out_of_range(field, value):
    params = dataclasses.replace(GeminiParams(), **{field: value})
    with pytest.raises(ConfigError) as err:
        check_fields(params, "cc.gemini")
    assert err.value.field == f"cc.gemini.{field}"


def test_check_accepts_defaults_and_artifact_values():
    check_fields(GeminiParams(), "cc.gemini")
    artifact = GeminiParams(
        h_bytes_per_rtt=5376.0,
        beta=0.1,
        t_us=100.0,
        g=0.5,
        k_bytes=24_576.0,
        alpha_init=0.0,
        max_cwnd_bdp=1.0,
        delay_signal_intra=False,
    )
    check_fields(artifact, "cc.gemini")


# ---- K from the switches, and the Uno artifact's rules --------------------------------------
def test_k_from_the_switches_on_the_path():
    c = dataclasses.replace(ctx(), ecn_k_bytes=1_000_000 / 7)
    cc = gemini(c, GeminiParams())  # k_source: switch
    assert cc.k_bytes == approx(1_000_000 / 7) and cc.f_scale == approx(0.5)
    assert gemini(c, GeminiParams(k_source="rule")).k_bytes == approx(75_000)
    assert gemini(c, GeminiParams(k_bytes=24_576.0)).k_bytes == approx(24_576)
    # Table IV's rule counts the paper's 1.5 KB packets, not the simulator's MSS
    big = dataclasses.replace(ctx(rate_bps=100 * GBPS, rtt_ps=14 * US), mss_bytes=4160)
    assert gemini(big, GeminiParams()).k_bytes == approx(50 * 100 * 1500)


def _in_slow_start(**kw):
    cc = gemini(ctx(), GeminiParams(alpha_init=1.0, **kw))
    cc.on_timeout(10 * MS)  # ssthresh = 500 kB, cwnd = 1 MSS, slow start
    assert cc.slow_start and cc.cwnd_bytes == MSS
    cc.on_ack(19 * MS, 1500, False, 8 * MS, sent_ps=11 * MS)
    cc.on_ack(19 * MS + 1, 1500, True, 8 * MS, sent_ps=11 * MS)  # a cut, > 1 RTT after
    return cc


def test_a_cut_ends_slow_start_unless_the_artifact_rule():
    assert not _in_slow_start().slow_start
    cc = _in_slow_start(slow_start_exit_on_cut=False)
    assert cc.slow_start and cc.ssthresh == approx(500_000)
    w = cc.cwnd_bytes
    cc.on_ack(19 * MS + 2, 1500, False, 8 * MS, sent_ps=12 * MS)
    assert cc.cwnd_bytes == approx(w + 1500)  # still doubling per RTT


def test_timeout_reaction_once_per_rto_in_the_artifact():
    c = dataclasses.replace(ctx(), rto_ps=20 * MS)
    paper = gemini(c, GeminiParams())
    artifact = gemini(c, GeminiParams(timeout_holdoff="rto"))
    for cc in (paper, artifact):
        cc.on_timeout(10 * MS)
        cc.on_ack(11 * MS, 1500, False, 8 * MS, sent_ps=10 * MS + 1)  # slow start: 2 MSS
        cc.on_timeout(25 * MS)  # 15 ms later: within one RTO, after one base RTT
    assert paper.cwnd_bytes == MSS and paper.ssthresh == approx(1500)
    assert artifact.cwnd_bytes == 2 * MSS and artifact.ssthresh == approx(500_000)


def test_alpha_per_base_rtt_and_no_cut_before_the_first_ack_plus_one_rtt():
    cc = gemini(ctx(), GeminiParams(alpha_update="base_rtt", alpha_init=0.0, g=0.5))
    cc.on_ack(8 * MS, 1500, True, 8 * MS, sent_ps=0)  # first ACK: clocks start, no cut
    assert cc.cwnd_bytes == approx(1_000_000)
    cc.on_ack(9 * MS, 1500, True, 8 * MS, sent_ps=1 * MS)  # < 1 base RTT later: no cut yet
    assert cc.cwnd_bytes == approx(1_000_000) and cc.alpha == 0.0
    cc.on_ack(16 * MS + 1, 1500, True, 8 * MS, sent_ps=8 * MS)  # the period ends: alpha = 0.5
    assert cc.alpha == approx(0.5)
    assert cc.cwnd_bytes == approx(1_000_000 * (1 - 0.5 * cc.f_scale))  # and a cut


def test_a_loss_halves_even_right_after_an_ecn_cut():
    cc = gemini(ctx(), GeminiParams())
    cc.on_ack(10 * MS, 1500, True, 8 * MS, sent_ps=2 * MS)  # ECN cut (alpha x F)
    w = cc.cwnd_bytes
    assert w < 1_000_000
    cc.on_nack(10 * MS + 1)  # fast retransmit within the ECN hold-off: still halves
    assert cc.cwnd_bytes == approx(w / 2)


# ---- a batch of many ACKs (a fluid step) ----------------------------------------------------
def batch(cc, now, acked, marked, events, rtt, rtt_min, sent) -> None:
    """``acked`` bytes of which ``marked`` carried ECN, ``events`` whole marked ACKs, mean RTT
    ``rtt`` and least sample ``rtt_min``, latest send ``sent``, to the law."""
    fb = Feedback(float(now), float(acked), float(marked), acked / MSS, marked / MSS,
                  float(events), float(rtt), float(rtt_min), float(sent), 0.0, 0.0, 0.0, 0.0,
                  0.0, 0.0, 1.0, 1.0, 0.0)  # fmt: skip
    on_feedback(cc.state, cc.consts, fb, NO_RECORDS)
    cc.state_written()  # (the law ran on the row directly)


def test_a_batch_cuts_on_a_whole_marked_ack_and_grows_on_its_unmarked_bytes():
    cc = gemini(ctx(), GeminiParams())  # alpha = 1, F = 300k/1075k
    f = 300_000 / 1_075_000
    batch(cc, 10 * MS, 15_000, 900, 0, 8 * MS, 8 * MS, 2 * MS)  # 0.6 of a marked ACK: no cut
    w1 = 1_000_000 + 1440 * 14_100 / 1_000_000
    assert cc.cwnd_bytes == approx(w1)
    batch(cc, 11 * MS, 15_000, 4_500, 3, 8 * MS, 8 * MS, 3 * MS)  # the cut, then 7 packets' growth
    w2 = w1 * (1 - f)
    assert cc.cwnd_bytes == approx(w2 + 1440 * 10_500 / w2)


def test_a_batch_gives_its_least_rtt_sample_to_rtt_min():
    cc = gemini(ctx(), GeminiParams())
    batch(cc, 20 * MS, 15_000, 0, 0, 14 * MS, 12 * MS, 6 * MS)  # mean above RTT_base + T
    batch(cc, 34 * MS, 15_000, 0, 0, 14 * MS, 14 * MS, 20 * MS)  # ends the window
    assert cc.rtt_min_prev == 12 * MS and not wan(cc)
