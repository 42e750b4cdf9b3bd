"""MP-RDMA window control as plain arithmetic on the controller.

Main context: 100 Gb/s bottleneck, 10 us base RTT, MSS 1000 B -> BDP = 1e11 x 1e-5 / 8 =
125,000 B."""

from __future__ import annotations

import dataclasses

import pytest

from uno.cc.base import FlowContext
from uno.cc.mprdma import Mprdma, MprdmaParams
from uno.config.validate import check_fields
from uno.core.errors import ConfigError

US = 1_000_000  # ps
MSS = 1000


def ctx(rate_bps: int = 100_000_000_000, rtt_ps: int = 10 * US, mss: int = MSS):
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


def test_defaults_start_at_bdp_capped_at_bdp():
    cc = Mprdma(ctx(), MprdmaParams())
    assert cc.cwnd_bytes == approx(125_000)
    cc.on_ack(1 * US, 1000, False, 10 * US, 0)
    assert cc.cwnd_bytes == approx(125_000)  # +8 B would exceed the 1-BDP cap


def test_additive_increase_one_mss_per_window():
    cc = Mprdma(ctx(), MprdmaParams(init_cwnd_bdp=0.5, max_cwnd_bdp=0.0))
    assert cc.cwnd_bytes == approx(62_500)
    cc.on_ack(1 * US, 1000, False, 10 * US, 0)
    w1 = 62_500 + 1000 * 1000 / 62_500  # MSS^2 / cwnd = 16 B
    assert cc.cwnd_bytes == approx(62_516)
    cc.on_ack(2 * US, 500, False, 10 * US, 0)  # partial packet: MSS x acked / cwnd
    assert cc.cwnd_bytes == approx(w1 + 1000 * 500 / w1)


def test_ecn_decrement_per_marked_ack():
    cc = Mprdma(ctx(), MprdmaParams())
    cc.on_ack(1 * US, 1000, True, 10 * US, 0)
    assert cc.cwnd_bytes == approx(124_500)  # -0.5 MSS
    cc.on_ack(1 * US + 1, 300, True, 10 * US, 0)  # fixed per ACK, not per byte
    assert cc.cwnd_bytes == approx(124_000)
    cc.on_ack(1 * US + 2, 1000, True, 10 * US, 0)  # repeated marks keep decrementing
    assert cc.cwnd_bytes == approx(123_500)


def test_ecn_decrement_artifact_value():
    cc = Mprdma(ctx(), MprdmaParams(ecn_decrease_mss=0.15))
    cc.on_ack(1 * US, 1000, True, 10 * US, 0)
    assert cc.cwnd_bytes == approx(125_000 - 150)


def test_min_cwnd_floor():
    # 1 Gb/s x 16 us: BDP = 2000 B.
    cc = Mprdma(ctx(rate_bps=1_000_000_000, rtt_ps=16 * US), MprdmaParams())
    assert cc.cwnd_bytes == approx(2000)
    for expected in (1500, 1000, 1000):
        cc.on_ack(1 * US, 1000, True, 16 * US, 0)
        assert cc.cwnd_bytes == approx(expected)
    cc = Mprdma(ctx(rate_bps=1_000_000_000, rtt_ps=16 * US), MprdmaParams(min_cwnd_mss=1.8))
    cc.on_ack(1 * US, 1000, True, 16 * US, 0)
    assert cc.cwnd_bytes == approx(1800)


def test_pacing_rate_is_cwnd_over_base_rtt():
    cc = Mprdma(ctx(), MprdmaParams())
    assert cc.pacing_rate_bps == approx(125_000 * 8e12 / (10 * US))  # = 100 Gb/s
    cc.on_ack(1 * US, 1000, True, 10 * US, 0)
    assert cc.pacing_rate_bps == approx(124_500 * 8e12 / (10 * US))
    cc = Mprdma(ctx(), MprdmaParams(pacing=False))
    cc.on_ack(1 * US, 1000, True, 10 * US, 0)
    assert cc.pacing_rate_bps == 0.0


def test_timeout_reaction():
    cc = Mprdma(ctx(), MprdmaParams())
    cc.on_ack(1 * US, 1000, True, 10 * US, 0)
    cc.on_timeout(50 * US)
    assert cc.cwnd_bytes == approx(124_500)  # default: unchanged (Uno artifact)
    cc = Mprdma(ctx(), MprdmaParams(timeout_resets_cwnd=True))
    cc.on_timeout(50 * US)
    assert cc.cwnd_bytes == 1000
    assert cc.pacing_rate_bps == approx(1000 * 8e12 / (10 * US))
    cc.on_ack(60 * US, 1000, False, 10 * US, 55 * US)
    assert cc.cwnd_bytes == approx(2000)  # AI from 1 MSS: + MSS^2 / MSS


@pytest.mark.parametrize(
    "field,value",
    [
        ("ecn_decrease_mss", 0.0),
        ("init_cwnd_bdp", 0.0),
        ("min_cwnd_mss", -1.0),
        ("max_cwnd_bdp", -0.5),
    ],
)
def test_check_rejects_out_of_range(field, value):
    params = dataclasses.replace(MprdmaParams(), **{field: value})
    with pytest.raises(ConfigError) as err:
        check_fields(params, "cc.mprdma")
    assert err.value.field == f"cc.mprdma.{field}"


def test_check_accepts_defaults():
    check_fields(MprdmaParams(), "cc.mprdma")
    check_fields(MprdmaParams(ecn_decrease_mss=0.15, max_cwnd_bdp=0.0), "cc.mprdma")


def test_duplicate_acks_run_the_per_ack_rule_only_in_the_artifact_mode():
    paper = Mprdma(ctx(), MprdmaParams(max_cwnd_bdp=0.0, init_cwnd_bdp=0.5))
    artifact = Mprdma(
        ctx(), MprdmaParams(max_cwnd_bdp=0.0, init_cwnd_bdp=0.5, update_on_duplicate_ack=True)
    )
    assert not paper.wants_duplicate_acks and artifact.wants_duplicate_acks
    w = artifact.cwnd_bytes
    artifact.on_duplicate_ack(1 * US, 1000, True, 10 * US, 0)
    assert artifact.cwnd_bytes == approx(w - 500)
