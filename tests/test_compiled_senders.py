"""The compiled data plane's senders (uno/net/compiled.py, kernel senders).

* Identity: with every flow's sender in the kernel (DCTCP, UnoCC, GEMINI, MP-RDMA, HPCC, DCQCN over
  ECMP or packet spraying), the flows, sampled rates and
  windows, queues, ports and packet counts are the Python senders' bit for bit — with
  timeouts, fast retransmits, drops, link faults, flows arriving and finishing, and a RTO FIFO
  small enough to compact many times.
* The controllers' kernels (DCTCP, UnoCC, GEMINI, MP-RDMA, HPCC, DCQCN) agree with their Python classes and with
  their twins on random ACK sequences; the sender's kernels agree with their twins from a
  mid-run state.
* Flows the kernel cannot send for keep Python senders beside the kernel's (sharing their hosts'
  NICs, identical results), and the summary says so.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import SMALL_INCAST, run
from test_compiled_dataplane import LOSSY_WAN, _assert_identical, _both, twin_runner

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.cc.base import FlowContext
from uno.net import compiled as cp

SEED = 20261124  # each test draws from its own generator: results do not depend on test order
DCTCP = ["cc=dctcp", "lb=ecmp"]


def _build(overrides: list[str]):
    return build_simulation(to_run_config(uno.compose([*overrides, "engine.dataplane=compiled"])))


INCAST_SAMPLED = [*SMALL_INCAST, "workload.size_bytes=1500000", "engine.sample_interval_us=5",
                  "engine.queue_ports=[busy]"]  # fmt: skip
DROPTAIL = [*SMALL_INCAST, "switch=droptail", "topo.buffer_bytes=60000",
            "workload.size_bytes=2000000", "engine.sample_interval_us=20"]  # fmt: skip
LOSSY = [*SMALL_INCAST, "workload.size_bytes=1500000", "engine.sample_interval_us=0", *LOSSY_WAN]
FIG10 = ["experiment=fig10_load", "workload.n_flows=300", "engine.max_sim_time_ms=20"]


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
        # flows arriving and finishing (Poisson, web-search and WAN sizes), two DCs
        [*FIG10, *DCTCP],
        [*FIG10, "scheme=uno_ecmp", "workload=mixed_artifact"],  # the artifact's switches
        [*FIG10, "scheme=gemini"],
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
# flow, so their NICs take turns between a kernel sender and a Python one (BBR)
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
    "engine.sample_interval_us=5",
    "engine.queue_ports=[busy]",
]


@pytest.mark.parametrize(
    "overrides",
    [
        SHARED_NICS,  # MP-RDMA in the kernel, BBR in Python, packet spraying
        # DCTCP without ECN and PFC in the DCs: pauses reach the shared NICs, whose RESUME
        # the kernel handles for both kinds of sender
        [*SHARED_NICS, "cc.intra=dctcp", "lb=ecmp", "switch.pfc.enabled=true",
         "switch.pfc.port_kinds=[host,fabric]", "switch.ecn.enabled=false"],
        # flows arriving and finishing at random hosts, the Uno paper's MPRDMA+BBR
        ["experiment=fig10_load", "workload.n_flows=150", "engine.max_sim_time_ms=4",
         "scheme=mprdma_bbr"],
    ],
    ids=["spray", "pfc_hosts_paused", "fig10"],
)  # fmt: skip
def test_kernel_and_python_senders_share_a_nic(overrides, monkeypatch):
    """Flows without a compiled form (BBR) keep Python senders beside the kernel's: the kernel
    hands them their ACKs and, at a NIC they share with kernel senders, their turns in the one
    FIFO (``_RUN_NICPY``). Results are the Python data plane's bit for bit."""
    turns = []
    python_turns = cp.CompiledDataplane._python_turns

    def counted(self, flow_id, host, now):
        turns.append(flow_id)
        return python_turns(self, flow_id, host, now)

    monkeypatch.setattr(cp.CompiledDataplane, "_python_turns", counted)
    results = _both(overrides)
    _assert_identical(results)
    comp = results["compiled"]
    note = comp.summary["dataplane"]["senders"]
    assert note.startswith("in the kernel but ") and "bbr" in note
    assert len(turns) > 10  # Python senders took turns at kernel-scheduled NICs
    if "switch.pfc.enabled=true" in overrides:
        assert comp.summary["pfc"] == results["python"].summary["pfc"]
        assert (comp.tables["pauses"]["kind"] == "host").sum() > 0


def _live_fifo(ST, sb) -> list[tuple[int, int]]:
    """The RTO FIFO's live (send time, seq) entries, oldest first."""
    off, cap = int(ST[sb + cp._S_FIFO_OFF]), int(ST[sb + cp._S_FIFO_CAP])
    head, n = int(ST[sb + cp._S_FIFO_HEAD]), int(ST[sb + cp._S_FIFO_N])
    out = int(ST[sb + cp._S_OUT_OFF])
    pairs = [(int(ST[off + 2 * ((head + i) % cap)]), int(ST[off + 2 * ((head + i) % cap) + 1]))
             for i in range(n)]  # fmt: skip
    return [(t, q) for t, q in pairs if ST[out + q] == t + 1]


def _logical(ST, sb, n_packets: int) -> tuple:
    """What a kernel sender's state means, whatever the ring layout: counters, outstanding send
    times, the retransmission queue, the acknowledged send times kept, the live FIFO."""
    rq_off, rq_cap = int(ST[sb + cp._S_RQ_OFF]), int(ST[sb + cp._S_RQ_CAP])
    rq_head, rq_n = int(ST[sb + cp._S_RQ_HEAD]), int(ST[sb + cp._S_RQ_N])
    later = int(ST[sb + cp._S_LATER_OFF])
    out = int(ST[sb + cp._S_OUT_OFF])
    counters = [int(ST[sb + c]) for c in (cp._S_INFLIGHT, cp._S_LOST, cp._S_FAST_RETX,
                                          cp._S_TIMEOUTS, cp._S_NEXT_SEQ, cp._S_SENT_PKTS)]  # fmt: skip
    return (
        counters,
        ST[out : out + n_packets].tolist(),
        [int(ST[rq_off + (rq_head + i) % rq_cap]) for i in range(rq_n)],
        ST[later : later + int(ST[sb + cp._S_LATER_N])].tolist(),
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
    sb = int(dp.ST[cp._H_OFF_SND])
    n = int(dp.ST[sb + cp._S_N])
    compactions = {}
    for dupthr in (3, 0):
        wide, narrow = _drive_twice(dp, sb, n, dupthr, rng)
        compactions[dupthr] = narrow
        assert wide[0][sb + cp._S_FAST_RETX] > 0 or dupthr == 0
    # without fast retransmit acknowledged packets pile up behind the oldest outstanding one;
    # with it, at most two can before it is declared lost
    assert compactions[0] > 10


def _drive_twice(dp, sb: int, n: int, dupthr: int, rng):
    """Drive the sender's two copies (full FIFO, 24-entry ring) by the same random steps,
    comparing their meaning after each; returns (the full copy, the ring's compactions)."""
    wide = [dp.ST.copy(), dp.F.copy(), dp.U.copy(), dp.PK.copy()]
    wide[0][sb + cp._S_DUPTHR] = dupthr
    narrow = [a.copy() for a in wide]
    narrow[0][sb + cp._S_FIFO_CAP] = 24
    compactions = 0
    now, seq_next = 0, 0
    for _ in range(3000):
        now += int(rng.integers(1, 400_000))
        st = wide[0]
        out = int(st[sb + cp._S_OUT_OFF])
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
                    cp._retx_pop(ST, sb)
                full = ST[sb + cp._S_FIFO_N] == ST[sb + cp._S_FIFO_CAP]
                compactions += bool(full) and state is narrow
                ST[out + seq] = now + 1
                ST[sb + cp._S_INFLIGHT] += cp._wire_of(ST, sb, seq)
                cp._fifo_push(ST, sb, now, seq)
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
                ST[sb + cp._S_INFLIGHT] -= cp._wire_of(ST, sb, seq)
                if dupthr:
                    cp._detect_losses(ST, state[1], sb, now, sent)
        else:
            if rng.random() < 0.2:  # late enough for the oldest to time out
                now += int(wide[0][sb + cp._S_RTO])
            for state in (wide, narrow):
                cp._on_timer(*state, 0, now)
                # the NIC wake the engine would run: the sender's turn, if it waits there
                cp._nic_wake(*state, int(state[0][sb + cp._S_HOST]), now)
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
    assert bbr.summary["dataplane"]["senders"].startswith("in the kernel but 2 of 4 in Python")
    assert "bbr with spray: no compiled form" in bbr.summary["dataplane"]["senders"]
    sim = _build([*base, "cc=dctcp", "lb=plb"])
    assert not sim.network.dataplane._kernel_tx
    assert sim.network.dataplane.senders_note.startswith("in Python (dctcp with plb")


# ---- kernels against the Python controller and their twins -------------------------------------
def _controllers():
    """(name, class, params, kernel module) for the controllers with a compiled form, with the
    variants their switches select."""
    from uno.cc import gemini_kernel, mprdma_kernel, uno_kernel
    from uno.cc.gemini import Gemini, GeminiParams
    from uno.cc.mprdma import Mprdma, MprdmaParams
    from uno.cc.uno import UnoCC, UnoParams

    return [
        ("uno", UnoCC, UnoParams(), uno_kernel),
        ("uno_artifact_like", UnoCC, UnoParams(gentle_compounds=False, ewma_fall_increase=True,
                                               epoch_period="intra_rtt", timeout_cwnd_mss=1.0,
                                               ecn_ewma_gain=0.65, qa_window_scale=0.96),
         uno_kernel),
        ("gemini", Gemini, GeminiParams(), gemini_kernel),
        ("gemini_artifact_like", Gemini, GeminiParams(alpha_update="base_rtt", t_us=100.0,
                                                      slow_start_exit_on_cut=False,
                                                      timeout_holdoff="rto", max_cwnd_bdp=1.0,
                                                      alpha_init=0.0),
         gemini_kernel),
        ("mprdma", Mprdma, MprdmaParams(), mprdma_kernel),
        ("mprdma_artifact_like", Mprdma, MprdmaParams(ecn_decrease_mss=0.15,
                                                      timeout_resets_cwnd=True,
                                                      max_cwnd_bdp=0.0), mprdma_kernel),
    ]  # fmt: skip


def _context(rtt_ps: int, mss_bytes: int) -> FlowContext:
    """A flow's facts on a 100 Gb/s path of base RTT ``rtt_ps`` (the intra-DC one 2 us)."""
    return FlowContext(
        base_rtt_ps=rtt_ps,
        bdp_bytes=rtt_ps * 100e9 / 8e12,
        bottleneck_bps=100_000_000_000,
        mss_bytes=mss_bytes,
        intra_rtt_ps=2_000_000,
        intra_bdp_bytes=25_000.0,
        is_inter_dc=rtt_ps > 20_000_000,
        rto_ps=4 * rtt_ps,
        ecn_k_bytes=250_000.0,
    )


def _state(cc) -> dict:
    """A controller's plain state: numbers, flags, None, and its send-time rounds."""
    out = {}
    for key, value in vars(cc).items():
        if value is None or isinstance(value, (bool, int, float)):
            out[key] = value
        elif hasattr(value, "start_ps"):
            out[key] = (value.active, value.start_ps)
    return out


def _loaded_twice(kernel, cc, n_ints: int):
    """Controller ``cc`` loaded by ``kernel`` into row 1 of F and ST from 3, and a copy of both
    (for the twin): (F, ST, F2, ST2)."""
    F = np.zeros((2, cp._NFC))
    ST = np.zeros(n_ints, dtype=np.int64)
    kernel.load(cc, F, 1, ST, 3)
    return F, ST, F.copy(), ST.copy()


@pytest.mark.parametrize("name", [c[0] for c in _controllers()])
def test_controller_kernels_match_the_controllers(name):
    """Random ACKs (marked or not, RTTs with and without queueing, sent before or after the
    rounds' starts), timeouts and fast-retransmit losses: after every step the kernel's state,
    stored back into a fresh controller, is the Python controller's exactly, and the twins'
    (``.py_func``) arrays are the kernels'."""
    rng = np.random.default_rng(SEED)
    _, cls, params, kernel = next(c for c in _controllers() if c[0] == name)
    for trial in range(12):
        rtt = int(rng.integers(2_000_000, 200_000_000))
        ctx = _context(rtt, mss_bytes=4160)
        cc = cls(ctx, params)
        F, ST, F2, ST2 = _loaded_twice(kernel, cc, 40)
        now = 0
        for _ in range(300):
            # steps of exactly one base RTT (or a quarter) too: the hold-offs' boundaries
            now += int(rng.choice([int(rng.integers(0, rtt // 2)), rtt, rtt // 4, 0]))
            op = rng.random()
            if op < 0.9:
                acked = int(rng.choice([64, 4160]))
                ecn = bool(rng.random() < 0.3)
                sample = rtt + int(rng.choice([0, 0, int(rng.integers(0, 3 * rtt))]))
                sent = now - sample
                cc.on_ack(now, acked, ecn, sample, sent)
                args = (now, acked, ecn, sample, sent)
                kernel.on_ack(F, 1, ST, 3, *args)
                kernel.on_ack.py_func(F2, 1, ST2, 3, *args)
            else:
                hook = "on_timeout" if op < 0.95 else "on_nack"
                getattr(cc, hook)(now)
                getattr(kernel, hook)(F, 1, ST, 3, now)
                getattr(kernel, hook).py_func(F2, 1, ST2, 3, now)
            np.testing.assert_array_equal(F, F2)
            np.testing.assert_array_equal(ST, ST2)
            view = cls(ctx, params)
            kernel.store(view, F, 1, ST, 3)
            assert _state(view) == _state(cc), trial


def _dcqcn_variants():
    from uno.cc.dcqcn import DcqcnParams

    return {
        "dcqcn": DcqcnParams(),
        # the HPCC evaluation's settings: no byte counter, K = 1 us, one fast-recovery stage
        "dcqcn_hpcc_like": DcqcnParams(alpha_timer_us=1.0, rate_increase_timer_us=300.0,
                                       byte_counter_bytes=10**12, fast_recovery_stages=1,
                                       rate_ai_mbps=20.0, min_rate_mbps=1000.0,
                                       clamp_target_rate=False, cnp_interval_us=4.0),
        "dcqcn_first_cnp_loss": DcqcnParams(rate_on_first_cnp=0.5, loss_as_cnp=True,
                                            byte_counter_bytes=40_000, max_cwnd_bdp=1.5),
    }  # fmt: skip


@pytest.mark.parametrize("name", list(_dcqcn_variants()))
def test_dcqcn_kernel_matches_the_controller(name):
    """DCQCN's kernel against :class:`uno.cc.dcqcn.Dcqcn` and its twins: random sends (the byte
    counter), ACKs with and without a CNP, timeouts and NACKs, bare timer advances and the next
    rate change, at gaps from 0 to several timer periods (the lazy timers' expiries, at line
    rate and below): after every step the same state, stored back into a fresh controller, and
    the same arrays as the twins'."""
    from uno.cc import dcqcn_kernel as qk
    from uno.cc.dcqcn import Dcqcn

    rng = np.random.default_rng(SEED)
    params = _dcqcn_variants()[name]
    seen = {"cut": False, "additive": False, "byte counter": False}
    for trial in range(10):
        ctx = _context(int(rng.integers(2_000_000, 20_000_000)), mss_bytes=4160)
        cc = Dcqcn(ctx, params)
        F, ST, F2, ST2 = _loaded_twice(qk, cc, 40)
        now = 0
        period = cc.rate_period_ps
        cnp_share = 0.3 if trial % 2 else 0.02  # (rare CNPs let the byte counter complete)
        for _ in range(400):
            now += int(
                rng.choice(
                    [
                        0,
                        int(rng.integers(0, period // 4)),
                        period,
                        int(rng.integers(0, 5 * period)),
                    ],
                    p=[0.1, 0.6, 0.1, 0.2],
                )
            )
            op = rng.random()
            if op < 0.5:
                wire = int(rng.choice([4160, 1064]))
                cc.on_send(now, wire)
                for fn in (qk.on_send, qk.on_send.py_func):
                    fn(*((F, 1, ST, 3) if fn is qk.on_send else (F2, 1, ST2, 3)), now, wire)
            elif op < 0.85:
                ecn = bool(rng.random() < cnp_share)
                cc.on_ack(now, 4160, ecn, 0, now)
                qk.on_ack(F, 1, ST, 3, now, ecn)
                qk.on_ack.py_func(F2, 1, ST2, 3, now, ecn)
            elif op < 0.95:
                hook = "on_timeout" if op < 0.9 else "on_nack"
                getattr(cc, hook)(now)
                getattr(qk, hook)(F, 1, ST, 3, now)
                getattr(qk, hook).py_func(F2, 1, ST2, 3, now)
            else:
                cc.advance(now)
                qk.advance(F, 1, ST, 3, now)
                qk.advance.py_func(F2, 1, ST2, 3, now)
            due = cc.next_rate_change_ps()
            assert qk.next_rate_change_ps(F, 1, ST, 3) == (-1 if due is None else due)
            np.testing.assert_array_equal(F, F2)
            np.testing.assert_array_equal(ST, ST2)
            view = Dcqcn(ctx, params)
            qk.store(view, F, 1, ST, 3)
            assert _state(view) == _state(cc), trial
            seen["cut"] |= cc.pacing_rate_bps < cc.line_rate_bps
            seen["additive"] |= cc.timer_stage > params.fast_recovery_stages
            seen["byte counter"] |= cc.byte_stage > 0
    # the runs reached the algorithm's phases (no byte counter in the HPCC-like settings)
    want = {"cut", "additive"} | ({"byte counter"} if params.byte_counter_bytes < 10**9 else set())
    assert {k for k, v in seen.items() if v} >= want


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
    now = int(ST[cp._H_NOW])
    eid = 1 << 30

    both = twin_runner(state, twin, {"_free": (0, 3)})

    seen = set()
    for _ in range(1200):
        op = rng.random()
        f = int(rng.integers(n_flows))
        sb = int(ST[cp._H_OFF_SND]) + f * cp._NSC
        for arr in (state[0], twin[0]):
            arr[cp._H_EID] = eid << cp.EID_SHIFT
        if op < 0.5:
            out = int(ST[sb + cp._S_OUT_OFF])
            live = np.flatnonzero(ST[out : out + int(ST[sb + cp._S_N])] > 0)
            if len(live) and ST[cp._H_POOL_CAP] - ST[cp._H_IN_POOL] >= cp._POOL_ROOM + 1:
                # an ACK of a live packet, in a row of its own as the kernel's receiver makes
                seq = int(rng.choice(live))
                now += int(rng.integers(0, 300_000))
                slot = int(ST[cp._H_FREE])
                ecn = int(rng.random() < 0.3)
                for arr_st, arr_pk in ((state[0], state[3]), (twin[0], twin[3])):
                    arr_st[cp._H_FREE] = arr_pk[slot, cp._K_NEXT]
                    arr_st[cp._H_IN_POOL] += 1
                    arr_pk[slot, [cp._K_SEQ, cp._K_ECN, cp._K_SENT]] = (
                        seq, ecn, arr_st[out + seq] - 1
                    )  # fmt: skip
                seen.add(("ack", both("_sender_on_ack", f, slot, now)))
                both("_free", slot)
        elif op < 0.6:
            now += int(rng.integers(0, 2_000_000))
            both("_on_timer", f, now)
            seen.add("timer")
        elif op < 0.7:
            both("_nic_wake", int(rng.integers(n_hosts)), now)
            seen.add("wake")
        elif op < 0.8 and ST[cp._H_POOL_CAP] - ST[cp._H_IN_POOL] >= cp._POOL_ROOM:
            # a start, ACK or pacing wake (may not pass waiting senders), or a NIC turn
            turn = bool(rng.random() < 0.5)
            both("_try_send", f, now, turn)
            seen.add(("send", turn))
        else:
            eid += 1
            out = both("run", now, 1, eid, eid)
            now = max(now, int(out[4]))
            seen.add("run")
    assert {("ack", 0), "timer", "wake", ("send", False), ("send", True), "run"} <= seen


@pytest.mark.parametrize("max_stage", [5, 0])
def test_hpcc_kernel_matches_the_controller(max_stage):
    """HPCC's kernel against :class:`uno.cc.hpcc.Hpcc` and its twin: random ACKs carrying INT
    records (hop counts that change now and then, records that repeat a timestamp, none at
    all), timeouts and losses; after every step the same U, windows, stage, round and stored
    records, and the same arrays as the twin's."""
    rng = np.random.default_rng(SEED)
    from uno.cc import hpcc_kernel as hk
    from uno.cc.hpcc import Hpcc, HpccParams

    params = HpccParams(max_stage=max_stage, timeout_cwnd_mss=2.0 if max_stage else 0.0)
    rate = 100_000_000_000
    for trial in range(8):
        rtt = int(rng.integers(2_000_000, 20_000_000))
        ctx = _context(rtt, mss_bytes=4202)
        cc = Hpcc(ctx, params)
        F, ST, F2, ST2 = _loaded_twice(hk, cc, 3 + hk.n_ints(6))
        rec0 = 2
        PK = np.zeros((1, rec0 + 1 + hk.RECORD * 6), dtype=np.int64)
        n_hops = int(rng.integers(3, 6))
        tx = [0] * 6
        now = 0
        for _ in range(300):
            now += int(rng.integers(0, rtt // 3))
            op = rng.random()
            if op < 0.9:
                if rng.random() < 0.05:
                    n_hops = int(rng.integers(3, 6))
                n = 0 if rng.random() < 0.05 else n_hops
                hops = []
                for h in range(n):
                    tx[h] += int(rng.integers(0, 200_000))
                    ts = now - (n - h) * 1_000_000 - (0 if rng.random() < 0.05 else 1)
                    hops.append((ts, int(rng.integers(0, 400_000)), tx[h], rate))
                PK[0, rec0] = n
                PK[0, rec0 + 1 : rec0 + 1 + hk.RECORD * n] = [x for r in hops for x in r]
                sent = now - rtt - int(rng.integers(0, rtt))
                cc.on_ack_int(now, 4202, False, now - sent, sent, hops)
                hk.on_ack_int(F, 1, ST, 3, PK, 0, rec0, now, sent)
                hk.on_ack_int.py_func(F2, 1, ST2, 3, PK, 0, rec0, now, sent)
            else:
                hook = "on_timeout" if op < 0.95 else "on_nack"
                getattr(cc, hook)(now)
                getattr(hk, hook)(F, 1, ST, 3, now)
                getattr(hk, hook).py_func(F2, 1, ST2, 3, now)
            np.testing.assert_array_equal(F, F2)
            np.testing.assert_array_equal(ST, ST2)
            view = Hpcc(ctx, params)
            hk.store(view, F, 1, ST, 3)
            assert _state(view) == _state(cc), trial
            assert view.prev_hops == (None if cc.prev_hops is None else list(cc.prev_hops))
