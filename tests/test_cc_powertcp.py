"""PowerTCP (Algorithm 1, INT-based) as plain arithmetic on the law (uno/cc/powertcp.py), run as
the Python data plane runs it (:class:`uno.cc.adapter.LawControl`: an ACK is a feedback batch of
one), and end to end on a dumbbell.

Main context: 100 Gb/s path, tau = base RTT = 10 us, MSS 1000 B -> HostBw x tau = BDP = 1e11 x
1e-5 / 8 = 125,000 B. Default beta = BDP / 10 = 12,500 B; gamma = 0.9.

INT records are (ts_ps, qlen_bytes, tx_bytes, rate_bps). A hop that sent ``frac`` x B over an
interval dt adds frac x B x dt / 8e12 bytes to its counter; with its queue going from q0 to q1
its normalised power is ((q1 - q0) / dt + frac x B / 8) (q1 + B tau / 8) / ((B / 8)^2 tau),
i.e. (rise + frac) x (1 + q1 / BDP) with rise = (q1 - q0) / (B dt / 8)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import flows_override

import uno
from uno.cc.adapter import LawControl
from uno.cc.base import FlowContext
from uno.cc.law import INT_FIELDS
from uno.cc.powertcp import LAW, PowertcpParams, S
from uno.cc.registry import KIND
from uno.config.validate import check_fields
from uno.core.errors import ConfigError

US = 1_000_000  # ps
T = 10 * US
B = 100_000_000_000
MSS = 1000
BDP = 125_000.0
GAMMA = 0.9
BETA = BDP / 10  # 12,500 B
HALF = 62_500.0  # the window of init_cwnd_bdp = 0.5


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


def powertcp(params: PowertcpParams | None = None, context: FlowContext | None = None):
    """One flow's PowerTCP, as the Python data plane runs it."""
    return LawControl(LAW, KIND["powertcp"], params or PowertcpParams(), context or ctx())


def ack(cc, now_ps: int, sent_ps: int, hops=()):
    """An ACK of MSS bytes whose data packet (sent at ``sent_ps``) collected ``hops``."""
    cc.on_ack_batch(now_ps, MSS, False, T, sent_ps, hops=hops)


def stored(cc):
    """The INT records the law keeps to compare the next ACK's with (None before the first)."""
    n = int(cc.prev_n)
    if n < 0:
        return None
    tail = cc.state[S.size : S.size + INT_FIELDS * n]
    return tuple(tuple(tail[i : i + INT_FIELDS].tolist()) for i in range(0, len(tail), INT_FIELDS))


def approx(x: float):
    return pytest.approx(x, rel=1e-12, abs=1e-9)


class Port:
    """One switch port's INT counters, advanced by hand."""

    def __init__(self, rate_bps: float = B, ts_ps: int = 1 * US):
        self.rate = rate_bps
        self.ts = ts_ps
        self.tx = 0
        self.qlen = 0.0

    def record(self):
        return (self.ts, self.qlen, self.tx, self.rate)

    def advance(self, dt_ps: int, frac: float, qlen: float | None = None):
        """Let ``dt_ps`` pass with the port sending at ``frac`` x its rate and its queue ending
        at ``qlen`` (None: unchanged); the new record."""
        self.ts += dt_ps
        self.tx += round(frac * self.rate * dt_ps / 8e12)
        if qlen is not None:
            self.qlen = qlen
        return self.record()


def started(params: PowertcpParams | None = None, ports=None, now: int = 10 * US):
    """A controller that has seen its first ACK (records stored, round started at ``now``)."""
    cc = powertcp(params or PowertcpParams(init_cwnd_bdp=0.5))
    ports = ports or [Port()]
    ack(cc, now, 0, tuple(p.record() for p in ports))
    return cc, ports


def test_interface_and_defaults():
    cc = powertcp()
    assert cc.wants_int is True and cc.name == "powertcp" and LAW.signals == ("int",)
    assert cc.cwnd_bytes == approx(BDP) and cc.old_cwnd_bytes == approx(BDP)
    assert cc.beta_bytes == approx(BETA) and cc.gamma == GAMMA
    assert cc.power == 1.0
    assert cc.pacing_rate_bps == approx(BDP * 8e12 / T)  # = 100 Gb/s
    p = PowertcpParams()
    assert (p.gamma, p.beta_bytes, p.expected_flows, p.max_cwnd_bdp) == (0.9, None, 10, 1.0)
    assert powertcp(PowertcpParams(beta_bytes=800.0)).beta_bytes == 800.0
    # beta = HostBw x tau / N, not scaled by init_cwnd_bdp
    assert powertcp(PowertcpParams(expected_flows=4, init_cwnd_bdp=0.5)).beta_bytes == approx(
        BDP / 4
    )


def test_first_ack_only_stores_records():
    cc = powertcp(PowertcpParams(init_cwnd_bdp=0.5))
    port = Port()
    hops = (port.advance(T, 1.0, qlen=50_000),)
    ack(cc, 10 * US, 0, hops)
    assert cc.cwnd_bytes == approx(HALF) and cc.old_cwnd_bytes == approx(HALF)
    assert cc.power == 1.0 and stored(cc) == hops
    assert cc.round_active == 1.0 and cc.round_start_ps == 10 * US


def test_hand_worked_power_and_one_window_update():
    # two records of one port, 2 us apart: it sent at line rate (25,000 B) while its queue grew
    # from 0 to 12,500 B. current = (12,500 + 25,000) B / 2 us = 1.5 B; voltage = 12,500 +
    # 125,000 = 1.1 B tau; Gamma' = 1.5 x 1.1 = 1.65
    cc, (port,) = started()
    ack(cc, 20 * US, 10 * US, (port.advance(2 * US, 1.0, qlen=12_500),))
    # smoothing, weight dt / tau = 0.2: 0.8 x 1 + 0.2 x 1.65 = 1.13
    assert cc.power == approx(1.13)
    # cwnd = 0.9 (62,500 / 1.13 + 12,500) + 0.1 x 62,500 = 67,278.76... (beta = 0.1 BDP)
    w = GAMMA * (HALF / 1.13 + BETA) + (1 - GAMMA) * HALF
    assert cc.cwnd_bytes == approx(w) and round(w, 2) == 67_278.76
    assert cc.pacing_rate_bps == approx(w * 8e12 / T)
    # that ACK (sent at the round's start) ended the round: cwnd_old is the new window
    assert cc.old_cwnd_bytes == approx(w) and cc.round_start_ps == 20 * US
    assert stored(cc) == (port.record(),)


def test_queue_gradient_and_queue_both_count():
    # queue steady at 25,000 B = 0.2 BDP, line rate: Gamma' = 1 x 1.2
    port = Port()
    port.qlen = 25_000
    cc, _ = started(ports=[port])
    ack(cc, 20 * US, 10 * US, (port.advance(T, 1.0),))  # dt = tau: Gamma_smooth = Gamma'
    assert cc.power == approx(1.2)
    # the queue drains by 12,500 B over tau while the port sends at line rate: the arrivals
    # were 0.9 B; the voltage is 1 + 12,500 / BDP = 1.1
    ack(cc, 30 * US, 20 * US, (port.advance(T, 1.0, qlen=12_500),))
    assert cc.power == approx(0.9 * 1.1)
    # a queue that falls by more than the port sent (inconsistent records): no negative current
    ack(cc, 40 * US, 30 * US, (port.advance(T, 0.05, qlen=0),))
    assert cc.power == 0.0
    assert cc.cwnd_bytes == approx(BDP)  # Gamma = 0: the window goes to its cap


def test_most_powerful_hop_sets_power_and_interval():
    # hop 1 (100 Gb/s): line rate, no queue, over tau: Gamma' = 1. hop 2 (50 Gb/s, BDP 62,500):
    # line rate and a queue rising from 0 to 6,250 B over tau / 4 = 2.5 us (its line rate sends
    # 15,625 B then): current = (6,250 + 15,625) / 15,625 = 1.4, voltage = 1.1: Gamma' = 1.54
    fast, slow = Port(B), Port(50_000_000_000)
    cc = powertcp(PowertcpParams(init_cwnd_bdp=0.5))
    ack(cc, 10 * US, 0, (fast.record(), slow.record()))
    ack(cc, 20 * US, 10 * US, (fast.advance(T, 1.0), slow.advance(T // 4, 1.0, qlen=6_250)))
    power = 0.75 * 1.0 + 0.25 * 1.54  # hop 2's interval: weight 1/4
    assert cc.power == approx(power)
    assert cc.cwnd_bytes == approx(GAMMA * (HALF / power + BETA) + (1 - GAMMA) * HALF)
    # the order of the hops does not matter
    fast, slow = Port(B), Port(50_000_000_000)
    cc = powertcp(PowertcpParams(init_cwnd_bdp=0.5))
    ack(cc, 10 * US, 0, (slow.record(), fast.record()))
    ack(cc, 20 * US, 10 * US, (slow.advance(T // 4, 1.0, qlen=6_250), fast.advance(T, 1.0)))
    assert cc.power == approx(power)


def test_interval_is_capped_at_base_rtt():
    # dt = 3 tau: the weight is 1, so Gamma_smooth is the sample itself
    cc, (port,) = started()
    ack(cc, 40 * US, 10 * US, (port.advance(3 * T, 0.25),))
    assert cc.power == approx(0.25)


def test_every_ack_updates_from_the_window_of_one_round_ago():
    # ACKs inside a round set cwnd from cwnd_old and the current cwnd; only a round's end
    # stores the window as cwnd_old (GETCWND / UPDATEOLD)
    params = PowertcpParams(init_cwnd_bdp=0.5, beta_bytes=1000.0)
    cc, (port,) = started(params)
    ack(cc, 20 * US, 10 * US, (port.advance(T, 0.5),))  # round end, Gamma = 0.5
    w1 = GAMMA * (HALF / 0.5 + 1000) + (1 - GAMMA) * HALF
    assert cc.cwnd_bytes == approx(w1) and cc.old_cwnd_bytes == approx(w1)
    # two ACKs for data sent before the round's start (20 us): cwnd_old stays w1
    ack(cc, 21 * US, 19 * US, (port.advance(T, 2.0),))
    w2 = GAMMA * (w1 / 2.0 + 1000) + (1 - GAMMA) * w1
    assert cc.cwnd_bytes == approx(w2) and cc.old_cwnd_bytes == approx(w1)
    ack(cc, 22 * US, 19 * US, (port.advance(T, 1.0),))
    w3 = GAMMA * (w1 / 1.0 + 1000) + (1 - GAMMA) * w2  # from cwnd_old, EWMA with cwnd
    assert cc.cwnd_bytes == approx(w3) and cc.old_cwnd_bytes == approx(w1)
    assert cc.round_start_ps == 20 * US
    # the first ACK for data sent at or after the round's start ends it
    ack(cc, 30 * US, 20 * US, (port.advance(T, 1.0),))
    w4 = GAMMA * (w1 / 1.0 + 1000) + (1 - GAMMA) * w3
    assert cc.cwnd_bytes == approx(w4) and cc.old_cwnd_bytes == approx(w4)
    assert cc.round_start_ps == 30 * US


def test_window_shrinks_while_a_queue_grows():
    # the bottleneck at line rate with its queue rising by 5,000 B every tau (10 rounds): the
    # window falls round after round (beta = 1,000 B: with the default 12,500 B the window
    # first falls once the queue passes about beta x BDP / cwnd)
    cc, (port,) = started(PowertcpParams(beta_bytes=1000.0))
    windows = [cc.cwnd_bytes]
    for k in range(1, 11):
        now = (10 + 10 * k) * US
        ack(cc, now, now - 10 * US, (port.advance(T, 1.0, qlen=5_000.0 * k),))
        assert cc.power > 1.0
        windows.append(cc.cwnd_bytes)
    assert all(b < a for a, b in zip(windows, windows[1:], strict=False))
    assert windows[-1] < 0.75 * BDP


def test_window_grows_on_an_idle_link_to_its_cap():
    # the flow alone at a tenth of the line rate, no queue: Gamma = 0.1 -> a multiplicative
    # increase (x 10 per round) up to the cap
    cc, (port,) = started(PowertcpParams(init_cwnd_bdp=0.01))
    windows = [cc.cwnd_bytes]
    for k in range(1, 4):
        now = (10 + 10 * k) * US
        ack(cc, now, now - 10 * US, (port.advance(T, 0.1),))
        windows.append(cc.cwnd_bytes)
    assert cc.power == approx(0.1)
    w1 = GAMMA * (1250.0 / 0.1 + BETA) + (1 - GAMMA) * 1250.0
    assert windows[1] == approx(w1)
    assert windows[1] > 10 * windows[0]
    assert windows[-1] == approx(BDP)  # the cap, 1 BDP


def test_equilibrium_queue_is_about_the_flows_betas():
    # N flows at line rate through one port with a steady queue q: the window update is at a
    # fixed point when w = w / Gamma + beta, Gamma = 1 + q / BDP, with N w = BDP + q: q = N beta
    n, beta = 4, 2_000.0
    q = n * beta
    w = (BDP + q) / n
    cc = powertcp(PowertcpParams(beta_bytes=beta, init_cwnd_bdp=w / BDP))
    port = Port()
    port.qlen = q
    ack(cc, 10 * US, 0, (port.record(),))
    for k in range(1, 4):
        now = (10 + 10 * k) * US
        ack(cc, now, now - 10 * US, (port.advance(T, 1.0),))
        assert cc.power == approx(1 + q / BDP)
        assert cc.cwnd_bytes == pytest.approx(w, rel=1e-12)


def test_window_is_clamped():
    # floor: a huge queue, Gamma = 1001: 0.9 (62,500 / 1001 + 100) + 6,250 = 6,396 B < 10 MSS
    port = Port()
    port.qlen = 1000 * BDP
    cc, _ = started(PowertcpParams(init_cwnd_bdp=0.5, min_cwnd_mss=10.0, beta_bytes=100.0), [port])
    ack(cc, 20 * US, 10 * US, (port.advance(T, 1.0),))
    assert cc.power == approx(1001.0)
    assert cc.cwnd_bytes == 10 * MSS and cc.old_cwnd_bytes == 10 * MSS
    # cap (below 1 BDP)
    cc, (port,) = started(PowertcpParams(init_cwnd_bdp=0.5, max_cwnd_bdp=0.6))
    ack(cc, 20 * US, 10 * US, (port.advance(T, 0.2),))
    assert cc.cwnd_bytes == approx(0.6 * BDP) and cc.old_cwnd_bytes == approx(0.6 * BDP)


def test_incomparable_records_reset_and_change_nothing_else():
    cc, (p1,) = started()
    p2 = Port(25_000_000_000)
    two = (p1.advance(T, 1.9), p2.record())
    ack(cc, 20 * US, 10 * US, two)  # another hop count
    assert stored(cc) == two and cc.power == 1.0 and cc.cwnd_bytes == approx(HALF)
    assert cc.round_start_ps == 20 * US  # the round bookkeeping still ran
    # timestamp not advancing, counter going back
    stale = (p1.ts - 1, 0.0, p1.tx + 10_000, float(B))
    ack(cc, 21 * US, 20 * US, (stale, p2.record()))
    assert cc.power == 1.0 and cc.cwnd_bytes == approx(HALF) and stored(cc)[0] == stale
    back = (stale[0] + T, 0.0, p1.tx, float(B))
    ack(cc, 22 * US, 21 * US, (back, p2.advance(T, 0.5)))
    assert cc.power == 1.0 and cc.cwnd_bytes == approx(HALF) and stored(cc)[0] == back


def test_ack_without_int_keeps_power_window_and_records():
    cc, (port,) = started(PowertcpParams(init_cwnd_bdp=0.5, beta_bytes=1000.0))
    ack(cc, 20 * US, 10 * US, (port.advance(T, 0.8),))
    ack(cc, 21 * US, 19 * US, (port.advance(T, 1.6),))  # in-round: cwnd != cwnd_old
    w, kept, power = cc.cwnd_bytes, stored(cc), cc.power
    assert cc.old_cwnd_bytes != approx(w)
    ack(cc, 30 * US, 20 * US, ())  # a round-ending ACK without hops: UPDATEOLD only
    assert cc.cwnd_bytes == w and stored(cc) == kept and cc.power == power
    assert cc.old_cwnd_bytes == w and cc.round_start_ps == 30 * US
    # a first ACK without hops starts the round; the first records come later
    cc = powertcp(PowertcpParams(init_cwnd_bdp=0.5))
    cc.on_ack(10 * US, MSS, False, T, 0)
    assert cc.round_start_ps == 10 * US and stored(cc) is None
    first = (Port().record(),)
    ack(cc, 20 * US, 10 * US, first)
    assert stored(cc) == first and cc.cwnd_bytes == approx(HALF) and cc.power == 1.0


def test_loss_reactions():
    cc, (port,) = started()
    ack(cc, 20 * US, 10 * US, (port.advance(T, 0.8),))
    w = cc.cwnd_bytes
    cc.on_nack(25 * US)
    cc.on_timeout(30 * US)
    assert cc.cwnd_bytes == w and cc.old_cwnd_bytes == w
    cc, (port,) = started(PowertcpParams(init_cwnd_bdp=0.5, timeout_cwnd_mss=2.0))
    cc.on_timeout(30 * US)
    assert cc.cwnd_bytes == 2000 and cc.old_cwnd_bytes == 2000
    assert cc.pacing_rate_bps == approx(2000 * 8e12 / T)


def test_pacing_off():
    cc, (port,) = started(PowertcpParams(init_cwnd_bdp=0.5, pacing=False))
    ack(cc, 20 * US, 10 * US, (port.advance(T, 1.0),))
    assert cc.pacing_rate_bps == 0.0


def test_stored_records_live_in_the_state_tail_sized_for_a_packets_records():
    cc = powertcp(PowertcpParams(init_cwnd_bdp=0.5), ctx(int_max_records=2))
    assert len(cc.state) == S.size + 2 * INT_FIELDS and stored(cc) is None
    a, b = Port(), Port()
    ack(cc, 10 * US, 0, (a.record(), b.record()))
    with pytest.raises(ValueError):
        ack(cc, 20 * US, 10 * US, (a.record(), b.record(), Port().record()))


def test_fluid_engine_refuses_powertcp_on_split_routes_naming_the_balancer():
    """The fluid engine computes INT records on single paths: spraying is refused."""
    with pytest.raises(ConfigError) as err:
        uno.run(uno.compose(["engine.kind=fluid", "cc=powertcp", "lb=spray"]))
    assert err.value.field == "lb.algo" and "INT records" in str(err.value)


@pytest.mark.parametrize(
    "field,value",
    [
        ("gamma", 0.0),
        ("gamma", 1.5),
        ("beta_bytes", 0.0),
        ("expected_flows", 0),
        ("init_cwnd_bdp", 0.0),
        ("min_cwnd_mss", 0.0),
        ("max_cwnd_bdp", 0.0),
        ("init_power", -0.1),
        ("timeout_cwnd_mss", -1.0),
    ],
)
def test_check_rejects_out_of_range(field, value):
    params = dataclasses.replace(PowertcpParams(), **{field: value})
    with pytest.raises(ConfigError) as err:
        check_fields(params, "cc.powertcp")
    assert err.value.field == f"cc.powertcp.{field}"


def test_check_accepts_defaults():
    check_fields(PowertcpParams(), "cc.powertcp")
    check_fields(PowertcpParams(gamma=1.0, beta_bytes=500.0), "cc.powertcp")


# ---- end to end: a dumbbell (4 senders, 100 Gb/s links, one receiver) -----------------------
DUMBBELL = [
    "topo=dumbbell", "cc=powertcp", "lb=ecmp", "engine.progress=false",
    "engine.sample_interval_us=5",
]  # fmt: skip


def test_two_flows_on_a_dumbbell_share_the_bottleneck_with_a_small_queue():
    """Two 2 MB flows into one receiver: both finish at about twice the ideal time (half the
    link each), within 2% of each other, and the bottleneck's queue stays small, below 2 beta
    = 0.2 BDP (the queue at which the window update's fixed point puts two flows); their
    windows settle near half the BDP each."""
    r = uno.run(uno.compose([*DUMBBELL, "workload=incast", "workload.n_intra=2",
                             "workload.n_inter=0", "workload.size_bytes=2000000"]))  # fmt: skip
    flows = r.flows
    assert flows["finish_ps"].notna().all() and (flows["retransmits"] == 0).all()
    assert r.summary["packets"]["dropped"] == {}
    fct = flows["fct_ps"].to_numpy(float)
    assert abs(fct[0] - fct[1]) < 0.02 * fct.max()
    assert (flows["slowdown"] < 2.1).all()
    bdp = float(flows["bdp_bytes"].iloc[0])
    q = r.tables["queues"]
    assert q["queue_bytes"].max() < 0.2 * bdp
    cwnd = r.tables["cwnd"]
    late = cwnd[cwnd["time_ps"].between(0.3 * fct.min(), 0.9 * fct.min())]
    mean = late.groupby("flow_id")["cwnd_bytes"].mean()
    assert mean.min() > 0.4 * bdp and mean.max() < 0.7 * bdp
    assert mean.max() - mean.min() < 0.05 * bdp


def test_a_second_flow_takes_its_share_from_the_first():
    """A flow alone, then a second one joining it at 100 us: the first, at line rate alone,
    gives up half; over the second half of their overlap both send about 50 Gb/s."""
    r = uno.run(uno.compose([
        *DUMBBELL, "workload=flows",
        flows_override([(0, 4, 3_000_000, 0.0), (1, 4, 1_500_000, 100.0)]),
    ]))  # fmt: skip
    flows = r.flows.set_index("flow_id")
    assert flows["finish_ps"].notna().all()
    rates = r.tables["rates"]
    alone = rates[(rates["flow_id"] == 0) & rates["time_ps"].between(50 * US, 95 * US)]
    assert alone["acked_gbps"].mean() > 90
    end = min(flows["finish_ps"])
    both = rates[rates["time_ps"].between(100 * US + (end - 100 * US) / 2, end - 5 * US)]
    share = both.groupby("flow_id")["acked_gbps"].mean()
    assert share.min() > 40 and share.max() < 60
    assert r.tables["queues"]["queue_bytes"].max() < 0.2 * float(flows["bdp_bytes"].iloc[0])


def test_the_python_and_compiled_data_planes_give_the_same_run():
    over = [*DUMBBELL, "workload=incast", "workload.n_intra=3", "workload.n_inter=0",
            "workload.size_bytes=300000", "engine.sample_interval_us=0"]  # fmt: skip
    python = uno.run(uno.compose([*over, "engine.dataplane=python"]))
    compiled = uno.run(uno.compose([*over, "engine.dataplane=compiled"]))
    assert python.flows["finish_ps"].notna().all()
    assert python.flows.equals(compiled.flows)


def test_defaults_and_preset_agree():
    cfg = uno.compose(["cc=powertcp"])
    preset = dict(cfg.cc.powertcp)
    assert preset == dataclasses.asdict(PowertcpParams())
    assert cfg.switch.int_telemetry.enabled and not cfg.switch.ecn.enabled
    assert np.isfinite(PowertcpParams().max_cwnd_bdp)
