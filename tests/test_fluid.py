"""The flow-level engines (uno/fluid): every @njit kernel agrees with its pure-Python twin on
random inputs; a lone flow's FCT is its ideal FCT; N long flows share a bottleneck fairly and
fill it; fluid and max-min read the same scenario as the packet engine and write the same
tables; settings they cannot model are refused naming the setting; the packet engine's results
are unchanged by the scenario split."""

from __future__ import annotations

import numpy as np
import pytest

import uno
from uno.cc.law import NO_RECORDS
from uno.cc.registry import LAW_BY_NAME
from uno.core.errors import ConfigError
from uno.fluid import kernels as K
from uno.fluid.engine import FLUID_CC
from uno.fluid.maxmin import maxmin_rates
from uno.metrics.flows import FLOW_COLUMNS

RNG = np.random.default_rng(7)
DUMBBELL = ["topo=dumbbell", "workload=incast", "workload.n_intra=4", "workload.n_inter=0",
            "cc=dctcp", "switch=ecn", "lb=ecmp", "workload.size_bytes=20000000",
            "engine.sample_interval_us=0"]  # fmt: skip


def random_links(n: int) -> np.ndarray:
    ls = np.zeros((n, K.N_LS))
    ls[:, K.LS_CAP] = RNG.uniform(0.001, 0.02, n)
    ls[:, K.LS_BUF] = RNG.uniform(1e4, 1e6, n)
    ls[:, K.LS_Q] = RNG.uniform(0, 1e6, n) * (RNG.random(n) < 0.5)
    ls[:, K.LS_PH] = RNG.uniform(0, 1e5, n)
    ls[:, K.LS_PHSIZE] = RNG.uniform(0, 2e5, n) * (RNG.random(n) < 0.7)
    ls[:, K.LS_PHDRAIN] = ls[:, K.LS_CAP] * 0.9
    ls[:, K.LS_PHKMIN] = 1e4
    ls[:, K.LS_PHKMAX] = 5e4
    ls[:, K.LS_KMIN] = 2e4
    ls[:, K.LS_KMAX] = RNG.choice([2e4, 8e4], n)
    ls[:, K.LS_MODE] = RNG.integers(0, 4, n)
    ls[:, K.LS_PHDROPS] = RNG.integers(0, 2, n)
    ls[:, K.LS_ARR] = RNG.uniform(0, 0.04, n) * (RNG.random(n) < 0.8)
    ls[:, K.LS_EXT] = RNG.uniform(0, 5e4, n) * (RNG.random(n) < 0.5)
    ls[:, K.LS_QF] = ls[:, K.LS_Q] * RNG.random(n)
    ls[:, K.LS_ACK_IN] = RNG.uniform(0, 2e3, n) * (RNG.random(n) < 0.5)
    ls[:, K.LS_PH_ACKS] = RNG.integers(0, 2, n)
    ls[:, K.LS_LISTED] = 1.0
    return ls


def test_link_kernel_matches_python():
    for _ in range(20):
        ls = random_links(50)
        a, b = ls.copy(), ls.copy()
        la, lb = np.arange(50), np.arange(50)
        na = K.update_links(a, la, 50, 1750.0)
        nb = K.update_links.py_func(b, lb, 50, 1750.0)
        assert na == nb
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        assert (a[:, K.LS_Q] <= a[:, K.LS_BUF] + 1e-9).all() and (a[:, K.LS_Q] >= 0).all()
        # the fluid part of a queue is a part of it; the external bytes were taken in
        assert (a[:, K.LS_QF] <= a[:, K.LS_Q] + 1e-9).all() and (a[:, K.LS_QF] >= 0).all()
        assert (a[:, K.LS_EXT] == 0).all() and (a[:, K.LS_ACK_IN] == 0).all()


def test_external_bytes_kernel_matches_python():
    for _ in range(20):
        ls = random_links(40)
        ls[:, K.LS_LISTED] = RNG.random(40) < 0.5
        busy0 = np.zeros(40, dtype=np.int64)
        listed = np.nonzero(ls[:, K.LS_LISTED])[0]
        busy0[: len(listed)] = listed
        links = RNG.choice(40, 10, replace=False).astype(np.int64)
        nbytes = RNG.uniform(0, 1e4, 10)
        out = []
        for fn in (K.add_external, K.add_external.py_func):
            a, busy = ls.copy(), busy0.copy()
            counters = np.array([0, 0, 0, len(listed)], dtype=np.int64)
            fn(a, busy, counters, links, nbytes)
            out.append((a, busy, counters))
        np.testing.assert_array_equal(out[0][0], out[1][0])
        np.testing.assert_array_equal(out[0][1], out[1][1])
        np.testing.assert_array_equal(out[0][2], out[1][2])
        a, busy, counters = out[0]
        np.testing.assert_allclose(a[links, K.LS_EXT], ls[links, K.LS_EXT] + nbytes)
        assert set(busy[: counters[3]]) == set(listed) | set(links)


def test_prefetch_is_a_hint_the_compiled_code_emits_and_changes_nothing():
    import platform
    import re

    from numba import njit

    @njit
    def touch(a, rows):
        for r in rows:
            K.prefetch_row(a, r, a.shape[1])
            K.prefetch(a, r, 0)
            a[r, a.shape[1] - 1] += r

    for n_col in (4, K.N_R_NARROW, K.N_R, K.N_R + 6):
        a = RNG.random((50, n_col))
        b = a.copy()
        rows = RNG.integers(0, 50, 30)
        touch(a, rows)
        touch.py_func(b, rows)
        np.testing.assert_array_equal(a, b)
    if platform.machine() in ("x86_64", "AMD64"):  # (prefetchw, or prefetcht0 without PRFCHW)
        asm = touch.inspect_asm(touch.signatures[0])
        assert re.search(r"^\s*prefetch(w|t0|t1|t2|nta)\s", asm, re.M)


def test_scalar_kernels_match_python():
    for _ in range(200):
        p, n, m = RNG.random(), int(RNG.integers(1, 16)), int(RNG.integers(0, 4))
        # (shares of a probability: a float rounding apart, 1e-16 on a share of 1e-4)
        np.testing.assert_allclose(K.coded_loss_shares(p, n, m),
                                   K.coded_loss_shares.py_func(p, n, m), rtol=1e-12,
                                   atol=1e-15)  # fmt: skip
        lo, hi = sorted(RNG.uniform(0, 1e5, 2))
        x = RNG.uniform(0, 1.2e5)
        assert K.red_probability(x, lo, hi) == K.red_probability.py_func(x, lo, hi)
    # a delay as a delay line holds it: the next step at least, its length - 1 at most
    lengths = np.array([5, 9])
    for lag in (-3, 0, 1, 4, 5, 8, 9, 40):
        for f in (0, 1):
            got = K.clamp_lag(f, lag, lengths)
            assert got == K.clamp_lag.py_func(f, lag, lengths) == min(max(lag, 1), lengths[f] - 1)


def benes_tail(n: int, load: float, x: float) -> float:
    """P(Q > x) of the N*D/D/1 queue: n periodic sources of period D = n / load slots, one
    packet a slot served (the Benes sum)."""
    from math import comb

    d = n / load
    total = 0.0
    for k in range(int(x) + 1, n + 1):
        a = (k - x) / d
        if a < 1.0:
            total += comb(n, k) * a**k * (1 - a) ** (n - k) * (d - n + x) / (d - k + x)
    return total


def test_packet_jitter_is_the_n_d_d_1_queue_tail():
    """The chance a packet meets x packets of queue at a link of n paced streams (load < 1, fluid
    queue empty) is the N*D/D/1 tail: the exact Benes sum up to BENES_MAX_SOURCES streams (and
    between two whole numbers of streams, between their tails); beyond, its Brownian-bridge
    approximation, which bounds the sum from above: within 1.5x where the tail is above 1e-2 at
    loads of 0.8 and more (where UnoCC's phantom queues hold a link), within 4x down to 1e-4
    and at load 0.6. It is a tail (1 at x <= 0, falling in x, rising in n and load); no load,
    no queue; a single stream meets none of its own packets."""
    checked = 0
    for n in (4, 8, 16, 32, 64, 128, 256):
        for load in (0.6, 0.8, 0.9, 0.95):
            for x in (1.0, 2.0, 3.0, 4.0, 6.0, 2.5):
                exact = benes_tail(n, load, x)
                assert K.benes_tail(n, load, x) == pytest.approx(exact, rel=1e-9, abs=1e-15)
                got = K.packet_jitter_exceedance(x, float(n), load)
                assert got == K.packet_jitter_exceedance.py_func(x, float(n), load)
                approx = np.exp(-2 * x * (x / n + 1 - load))  # the Brownian-bridge form
                if n <= K.BENES_MAX_SOURCES and approx >= 1e-4:
                    assert got == pytest.approx(exact, rel=1e-9)
                    # between whole numbers of streams: between their tails
                    half = K.packet_jitter_exceedance(x, n + 0.5, load)
                    if n < K.BENES_MAX_SOURCES:
                        assert min(exact, benes_tail(n + 1, load, x)) <= half
                        assert half <= max(exact, benes_tail(n + 1, load, x))
                elif exact > 1e-4:
                    assert got == approx
                    bound = 1.5 if exact > 1e-2 and load >= 0.8 else 4.0
                    assert exact <= approx <= bound * exact, (n, load, x, approx, exact)
                    checked += 1
    assert checked > 30
    # at a link: n equal streams count n; none where the hybrid's packets cross (their queue
    # is real) or wait
    ls = random_links(3)
    ls[:, K.LS_CAP] = 0.0125  # 100 Gb/s in bytes/ps
    ls[:, K.LS_ARR] = 0.9 * 0.0125
    ls[:, K.LS_ARR2] = 8 * (0.9 * 0.0125 / 8) ** 2
    ls[:, K.LS_Q] = ls[:, K.LS_QF] = 0.0
    ls[:, K.LS_EXT] = [0.0, 5000.0, 0.0]
    ls[2, K.LS_Q] = 4160.0
    assert K.update_links(ls, np.arange(3), 3, 1e6) == 3
    assert list(ls[:, K.LS_PACKETS]) == [0.0, 1.0, 1.0]
    want = K.packet_jitter_exceedance(1e6 * 0.0125 / 4160.0, 8.0, 0.9)
    got = [K.link_jitter_exceedance(ls, link, 1e6, 4160.0) for link in range(3)]
    assert got == [pytest.approx(want, rel=1e-12), 0.0, 0.0] and want > 0.01
    p = K.packet_jitter_exceedance
    assert p(0.0, 8.0, 0.9) == 1.0 and p(3.0, 8.0, 0.0) == 0.0
    assert p(2.0, 8.0, 0.9) > p(3.0, 8.0, 0.9) > p(3.0, 4.0, 0.9) > p(3.0, 4.0, 0.7)
    assert p(3.0, 1.0, 0.9) < 1e-6


def test_uno_gentle_test_sees_packet_queueing_below_saturation():
    """The 4+4 mixed incast (the default scenario, UnoCC with phantom queues): below
    saturation the fluid queue is empty, yet with packets the eight streams collide now and
    then and an epoch's last RTT sample shows queueing, which resets MD_scale (Uno Alg. 1 line
    9). Without that (every congested epoch gentle, MD_scale compounding) the fluid flows
    filled the bottleneck: 0.994 against the packet engine's 0.918. Now some congested epochs
    cut in full and the bottleneck's steady-state utilisation is within 2% of the packet
    engine's on the same scenario and seed."""
    from uno.api import to_run_config
    from uno.build import build_simulation
    from uno.metrics.analysis import bottleneck_utilisation

    util = {}
    for engine in ("packet", "fluid"):
        cfg = uno.compose([f"engine.kind={engine}", "engine.sample_interval_us=500",
                           "engine.sample_cwnd=false", "engine.sample_queues=false"])  # fmt: skip
        util[engine] = bottleneck_utilisation(uno.run(cfg).tables, 500)
    assert util["fluid"] == pytest.approx(util["packet"], rel=0.02), util
    sim = build_simulation(to_run_config(uno.compose(["engine.kind=fluid"])))
    sim.run()
    from uno.cc.uno import S

    mds, gentle = sim.cs[:, S.md_events], sim.cs[:, S.gentle_events]
    assert ((gentle > 0) & (gentle < mds)).all(), (mds, gentle)


def test_links_mark_bytes_as_they_leave_and_the_acks_echo_every_mark():
    """ECN marks are decided as the bytes leave a link (a packet is marked at dequeue, by the
    level then) and carried with them to the receiver, whose ACKs echo each one: on the
    dumbbell, whose bottleneck drops nothing, the marks the flows hear of are the marks the
    port made, and there are some (the ports table reported none before). Marks leave the
    shares of the marked and unmarked bytes queued at a link as they were: a flow's bytes that
    wait at a link while its level rises are marked by the level at their departure."""
    cfg = uno.compose(["topo=dumbbell", "workload=incast", "workload.n_intra=4",
                       "workload.n_inter=0", "cc=dctcp", "switch=ecn", "lb=ecmp",
                       "workload.size_bytes=20000000", "engine.kind=fluid",
                       "engine.progress=false", "engine.sample_interval_us=0"])  # fmt: skip
    result = uno.run(cfg)
    ports = result.tables["ports"]
    assert ports.drops.sum() == 0
    made = ports.ecn_marks.sum()
    assert made > 500
    assert result.flows.ecn_acks.sum() == pytest.approx(made, rel=0.01)


def test_acks_echo_the_marked_share_of_the_deliveries_one_return_trip_before():
    """The ACKs that arrive in a step echo the marked share of the bytes the flow's last hop
    delivered one return trip before (``R_MARK`` / ``R_DELIV``), held until the next
    deliveries' share comes back. (Echoing marked bytes, and carrying those beyond a step's
    ACKs to the next, piled marks up after losses cut ACKs: on the paper's traffic some
    inter-DC flows had every ACK marked for 800 ms and stayed at one packet of window.)"""
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = uno.compose(["topo=dumbbell", "workload=incast", "workload.n_intra=2",
                       "workload.n_inter=0", "cc=dctcp", "switch=ecn", "lb=ecmp",
                       "workload.size_bytes=20000000", "engine.kind=fluid"])  # fmt: skip
    sim = build_simulation(to_run_config(cfg))
    k = sim.advance(0, 300)
    f = int(sim.active[0])
    start, length = sim.ring_pool[0][f], sim.ring_pool[1][f]
    lag = int(sim.fs[f, K.FS_BASE_RTT] // sim.dt_ps)
    assert lag > 3  # (this step's deliveries come back after the slots set below)
    # per step: ACKs arriving, bytes delivered a return trip before, of which marked
    slots = [(8000.0, 4000.0, 1000.0), (6000.0, 0.0, 0.0), (5000.0, 2000.0, 2000.0)]
    for i, (acked, deliv, marked) in enumerate(slots):
        row = start + (k + i) % length
        sim.ring[row, K.R_ACK] = acked
        sim.ring[row, K.R_RTTW] = acked * sim.fs[f, K.FS_BASE_RTT]
        sim.ring[row, K.R_DELIV] = deliv
        sim.ring[row, K.R_MARK] = marked
        K.mark_due(sim.calendar, k + i, f)
    echoed = []
    for _ in slots:
        before = sim.fs[f, K.FS_MARKED]
        k = sim.advance(k, k + 1)
        echoed.append(sim.fs[f, K.FS_MARKED] - before)
    assert echoed == pytest.approx([8000 * 0.25, 6000 * 0.25, 5000 * 1.0])


def test_flows_lose_the_bytes_the_links_drop_at_any_step_size():
    """Four 5-MB inter-DC flows into one receiver (ECMP), their first windows at line rate into
    full queues: the bytes the flows count lost and resend are the bytes the links dropped
    (within the Poisson rounding to whole packets), and the result does not depend on the step
    size. Before, a flow's loss was its path's drop fraction at the step it sent: bytes that
    waited in a queue on the way and were dropped downstream later were acknowledged all the
    same, 13% of the dropped bytes at the default step and 29% at a quarter of it, so the
    flows resent less the finer the step (3,608 and 2,648 packets)."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    retransmits = {}
    for frac in (0.125, 0.03125):
        cfg = uno.compose(["engine.kind=fluid", "workload.n_intra=0", "workload.n_inter=4",
                           "workload.size_bytes=5000000", "lb=ecmp",
                           f"engine.fluid_step_intra_rtt={frac}"])  # fmt: skip
        sim = build_simulation(to_run_config(cfg))
        sim.run()
        dropped, lost = sim.ls[:, K.LS_DROP].sum(), sim.fs[:, K.FS_LOST].sum()
        assert dropped > 1e7  # 4 x 5 MB at line rate into one 100 Gb/s port
        assert lost == pytest.approx(dropped, rel=0.05)
        assert (sim.fs[:, K.FS_DELIVERED] >= sim.fs[:, K.FS_SIZE] * (1 - 1e-9)).all()
        assert (sim.fs[:, K.FS_SENT] - sim.fs[:, K.FS_LOST] >= sim.fs[:, K.FS_SIZE] - 1).all()
        retransmits[frac] = sim.flows_table()["retransmits"].sum()
    assert retransmits[0.03125] == pytest.approx(retransmits[0.125], rel=0.05), retransmits


def law_flows(name: str, n: int = 30):
    """The fluid rows of ``n`` flows running law ``name`` on paths of random base RTTs: their
    constants (the packet engines' own) and their state after init, and the flows table."""
    from cc_events import VARIANTS, context, variant_params

    from uno.cc.adapter import make_cc
    from uno.cc.registry import KIND

    variant = next((v for v, (algo, _) in VARIANTS.items() if algo == name), name)
    params = variant_params(variant)[1]
    ctrls = [
        make_cc(name, type("Cfg", (), {name: params})(), context(int(rtt)))
        for rtt in RNG.integers(2_000_000, 200_000_000, n)
    ]
    law = LAW_BY_NAME[name]
    width = max(K.N_P, law.consts_size)
    cp = np.zeros((n, width))
    for f, c in enumerate(ctrls):
        cp[f, : law.consts_size] = c.consts
    cp[:, K.P_KIND] = K.CC_LAW + KIND[name]
    cs = np.zeros((n, max(K.N_C, max(len(c.state) for c in ctrls))))
    fs = np.zeros((n, K.N_FS))
    fs[:, K.FS_DRAWS] = 1.0 if "queueing" in law.signals else 0.0
    fs[:, K.FS_RTTMIN] = 1.0 if "rtt_min" in law.signals else 0.0
    fs[:, K.FS_RATE] = 1.0 if "delivery_rate" in law.signals else 0.0
    if law.cnp_interval_ps is not None:  # (the receiver's CNPs: uno.fluid.control.np_cnps)
        fs[:, K.FS_CNP_GAP] = law.cnp_interval_ps(params)
    for f in range(n):
        K.cc_init(cs, cp, f)
    return cs, cp, fs


@pytest.mark.parametrize("name", [n for n in LAW_BY_NAME if n in FLUID_CC])
def test_law_batches_match_python(name):
    """A law (uno/cc/law.py) in the fluid engine: random batches of ACKs (fractional packets,
    marked shares, carried mark counts, RTT samples, delivery-rate samples, queueing chances
    with draws) and losses, through the compiled driver and its pure-Python twin: the same
    state, carries and draws."""
    cs, cp, fs = law_flows(name)
    a, b = cs.copy(), cs.copy()
    fa, fb = fs.copy(), fs.copy()
    ring = np.zeros((1, K.N_R))
    rng_a = np.arange(len(cs), dtype=np.uint64) * np.uint64(977) + np.uint64(5)
    rng_b = rng_a.copy()
    now = 0.0
    for _ in range(400):
        f = int(RNG.integers(0, len(cs)))
        now += RNG.uniform(0, 2e7)
        if RNG.random() < 0.05:
            nack = bool(RNG.random() < 0.5)
            K.cc_loss(a, cp, f, now, nack)
            K.cc_loss.py_func(b, cp, f, now, nack)
            continue
        acked = RNG.uniform(1, 5e4)
        marked = acked * RNG.random() * (RNG.random() < 0.5)
        rtt = cp[f, K.P_BASE_RTT] * RNG.uniform(1, 1.5)
        ring[0, K.R_SENTMAX] = now - RNG.uniform(0, 3e7)
        ring[0, K.R_RTTMIN] = rtt * RNG.uniform(0.9, 1.0)
        for arr in (fa, fb):
            arr[f, K.FS_ACKED] += acked
            arr[f, K.FS_INFLIGHT] = RNG.uniform(0, 4e5)
        fb[f, K.FS_INFLIGHT] = fa[f, K.FS_INFLIGHT]
        ring[0, K.R_DSENT] = max(0.0, fa[f, K.FS_ACKED] - RNG.uniform(0, 3e5))
        p_queued = RNG.random() * (RNG.random() < 0.5)
        kind = int(cp[f, K.P_KIND]) - K.CC_LAW
        K.law_batch(a, cp, fa, ring, 0, f, kind, now, acked, marked, rtt, p_queued, rng_a,
                    NO_RECORDS, 0, 1e6, 1)  # fmt: skip
        K.law_batch.py_func(b, cp, fb, ring, 0, f, kind, now, acked, marked, rtt, p_queued, rng_b,
                            NO_RECORDS, 0, 1e6, 1)  # fmt: skip
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(fa, fb)
    np.testing.assert_array_equal(rng_a, rng_b)
    assert (a[:, K.C_CWND] > 0).all()


def test_maxmin_kernel_matches_python_and_is_max_min_fair():
    # three links; flows 0,1 share link 0 (cap 10); flow 2 alone on link 1 (cap 3); flow 3 on
    # links 0 and 2 (cap 1): flow 3 gets 1, flows 0,1 split the remaining 9, flow 2 gets 3
    rt_ptr = np.array([0, 1, 2, 3, 5])
    rt_link = np.array([0, 0, 1, 0, 2])
    rt_w = np.ones(5)
    cap = np.array([10.0, 3.0, 1.0])
    nic = np.full(4, 100.0)
    active = np.arange(4)
    out = []
    for fn in (maxmin_rates, maxmin_rates.py_func):
        rates = np.zeros(4)
        fn(active, 4, rt_ptr, rt_link, rt_w, cap, nic, rates, np.zeros(3), np.zeros(3),
           np.zeros(4, dtype=np.int64))  # fmt: skip
        out.append(rates)
    np.testing.assert_allclose(out[0], [4.5, 4.5, 3.0, 1.0])
    np.testing.assert_allclose(out[0], out[1])


@pytest.mark.parametrize(
    "engine,cc", [("fluid", "dctcp"), ("fluid", "mprdma"), ("fluid", "bbr"), ("fluid", "uno"),
                  ("maxmin", "dctcp")]
)  # fmt: skip
def test_lone_flow_fct_is_ideal(engine, cc):
    cfg = uno.compose([*DUMBBELL, "workload.n_intra=1", f"engine.kind={engine}", f"cc={cc}"])
    f = uno.run(cfg).flows
    # the fluid engine resolves the last ACK's arrival exactly; its sender paces nothing here
    assert f["fct_ps"].iloc[0] == pytest.approx(f["ideal_fct_ps"].iloc[0], rel=0.01)


@pytest.mark.parametrize("packets", [2.5, 6.15])
def test_a_window_limited_flow_keeps_its_window_in_whole_packets_as_the_packet_sender(packets):
    """The packet sender sends a whole packet while its bytes in flight are below the window
    (uno/transport/sender.py): a window of 2.5 packets keeps 3 in flight, one of 6.15 keeps 7.
    One 1-MB intra-DC flow, unpaced UnoCC with its window held (initial = cap): the fluid FCT
    is the packet engine's within 1%, and the packet engine's that of round trips of whole
    packets (before: +19.6% and +14.2%, the window's fraction of a packet never sent)."""
    # (two_dc: the flow's RTT is 8 steps; the dumbbell's 5.33)
    base = ["topo=two_dc", "workload=incast", "workload.n_intra=1", "workload.n_inter=0",
            "cc=uno", "lb=ecmp", "workload.size_bytes=1000000",
            "engine.sample_interval_us=0"]  # fmt: skip
    f = uno.run(uno.compose([*base, "engine.kind=fluid"])).flows.iloc[0]
    frac = packets * 4160 / float(f["bdp_bytes"])
    held = [f"cc.uno.init_cwnd_bdp={frac}", f"cc.uno.max_cwnd_bdp={frac}", "cc.uno.pacing=false"]
    fct = {}
    for engine in ("packet", "fluid"):
        flow = uno.run(uno.compose([*base, *held, f"engine.kind={engine}"])).flows.iloc[0]
        fct[engine] = float(flow["fct_ps"])
    round_trips = float(f["packets"]) / np.ceil(packets)
    assert fct["packet"] == pytest.approx(round_trips * float(f["base_rtt_ps"]), rel=0.01)
    assert fct["fluid"] == pytest.approx(fct["packet"], rel=0.01)


@pytest.mark.parametrize("rtt_base_rtts,fires", [(2.2, False), (3.0, True)])
def test_quick_adapt_counts_whole_packets_as_the_packet_controller(rtt_base_rtts, fires):
    """Alg. 1 OnQA compares the bytes acknowledged over a base RTT with beta x cwnd. The packet
    controller checks at an ACK, so it counts whole packets, the one that ends the period
    included. A window of 5 packets whose RTT is 2.2 base RTTs: an ACK every 0.44 base RTT,
    3 packets a period (>= 2.5), no QA; at 3 base RTTs, 2 packets a period, QA to 2 packets.
    The fluid law gets the same ACKs as a stream, a step's worth (1/8 of a base RTT) a step:
    2.27 and 1.67 packets a period, which it counts as the packet controller's 3 and 2 (before,
    it fired at 2.2 base RTTs and cut the window to 2.27 packets)."""
    from uno.cc.adapter import LawControl
    from uno.cc.base import FlowContext
    from uno.cc.registry import KIND
    from uno.cc.uno import S, UnoParams

    mss, base_rtt, window = 4160.0, 14_000_000.0, 5 * 4160.0
    rtt = rtt_base_rtts * base_rtt
    gap = rtt / 5  # one ACK per packet of the window, a round trip apart
    ctx = FlowContext(int(base_rtt), 175_000.0, int(100e9), int(mss), int(base_rtt), 175_000.0,
                      False)  # fmt: skip
    packet = LawControl(LAW_BY_NAME["uno"], KIND["uno"], UnoParams(ai_bdp_frac=1e-9), ctx)
    consts = packet.consts.copy()
    packet.cwnd_bytes = window
    t = 0.0
    while t < 4 * base_rtt:
        t += gap
        packet.on_ack(int(t), int(mss), False, int(rtt), int(t - rtt))
    cp = np.zeros((1, max(K.N_P, len(consts))))
    cp[0, : len(consts)] = consts
    cp[0, K.P_KIND] = K.CC_LAW + KIND["uno"]
    cs = np.zeros((1, max(K.N_C, len(packet.state))))
    K.cc_init(cs, cp, 0)
    cs[0, K.C_CWND] = window
    fs, ring = np.zeros((1, K.N_FS)), np.zeros((1, K.N_R))
    rng = np.ones(1, dtype=np.uint64)
    dt = base_rtt / 8
    for k in range(1, 33):
        now = k * dt
        ring[0, K.R_SENTMAX] = now - rtt
        K.law_batch(
            cs,
            cp,
            fs,
            ring,
            0,
            0,
            KIND["uno"],
            now,
            mss * dt / gap,
            0.0,
            rtt,
            0.0,
            rng,
            NO_RECORDS,
            0,
            dt,
            1,
        )
    assert (packet.qa_events > 0) == fires
    assert (cs[0, S.qa_events] > 0) == fires
    if fires:  # the window after the first QA: the period's whole packets
        assert packet.qa_events == cs[0, S.qa_events] == 1
        assert cs[0, K.C_CWND] == pytest.approx(2 * mss, rel=1e-6)
        assert packet.cwnd_bytes == pytest.approx(2 * mss, rel=1e-6)


@pytest.mark.parametrize("engine", ["fluid", "maxmin"])
def test_long_flows_share_the_bottleneck_fairly_and_fill_it(engine):
    r = uno.run(uno.compose([*DUMBBELL, f"engine.kind={engine}"]))
    f = r.flows
    rates = f["mean_rate_gbps"].to_numpy()
    assert rates.sum() ** 2 / (len(rates) * (rates**2).sum()) > 0.98  # Jain's index
    # 4 x 20 MB through 100 Gb/s: the last flow ends within 5% of 6.4 ms + base RTT
    assert f["finish_ps"].max() / 1e6 == pytest.approx(4 * 20e6 * 1.0156 * 8 / 100e3, rel=0.05)
    assert list(r.flows.columns) == list(FLOW_COLUMNS)


@pytest.mark.parametrize("cc", ["mprdma", "bbr"])
def test_mprdma_and_bbr_laws_agree_with_their_packet_controllers(cc):
    """Four 20-MB flows into one receiver: the fluid laws give the packet controllers' mean FCT
    (within 5%) and the same end (within 2%): MP-RDMA's window held at one BDP, BBR's one
    flow that takes a larger share and the three that share the rest."""
    fct = {}
    for engine in ("packet", "fluid"):
        f = uno.run(uno.compose([*DUMBBELL, f"cc={cc}", f"engine.kind={engine}"])).flows
        fct[engine] = f["fct_ps"]
    assert fct["fluid"].mean() == pytest.approx(fct["packet"].mean(), rel=0.05)
    assert fct["fluid"].max() == pytest.approx(fct["packet"].max(), rel=0.02)


def test_bbr_probe_rtt_in_the_fluid_engine_as_with_packets():
    """BBR's PROBE_RTT (the one law in both engines): with RTprop expiring after 2 ms, four
    20-MB flows into one receiver enter it in the fluid engine as with packets (the state's
    app-limited marking starts there), and finish within the fluid validation's targets: mean
    FCT within 10%, the last flow's within 5%."""
    from uno.api import to_run_config
    from uno.build import build_simulation
    from uno.cc.bbr import S

    fct, entered = {}, {}
    for engine in ("packet", "fluid"):
        sim = build_simulation(to_run_config(uno.compose([
            *DUMBBELL, "cc=bbr", "cc.bbr.min_rtt_window_s=0.002",
            "cc.bbr.probe_rtt_duration_s=0.0005", f"engine.kind={engine}",
        ])))  # fmt: skip
        fct[engine] = sim.run().flows["fct_ps"]
        if engine == "fluid":
            entered[engine] = sim.cs[:, S.app_limited_on].tolist()
        else:
            entered[engine] = [flow.sender.cc.app_limited_on for flow in sim.flows]
    assert entered == {"packet": [1.0] * 4, "fluid": [1.0] * 4}
    assert fct["fluid"].mean() == pytest.approx(fct["packet"].mean(), rel=0.10)
    assert fct["fluid"].max() == pytest.approx(fct["packet"].max(), rel=0.05)


def test_fluid_writes_the_packet_engine_tables(tmp_path):
    cfg = uno.compose(["engine.kind=fluid", "engine.sample_interval_us=50",
                       "workload.size_bytes=2000000"])  # fmt: skip
    r = uno.run(cfg, out_dir=tmp_path / "run")
    for name in ("flows", "rates", "cwnd", "queues", "ports"):
        assert (tmp_path / "run" / f"{name}.parquet").exists(), name
    assert len(r.tables["queues"]) > 0 and set(r.tables["rates"]["flow_id"]) == set(range(8))
    assert r.summary["run"]["engine"] == "fluid" and r.flows["finish_ps"].notna().all()
    sent = r.flows["sent_bytes"].sum()
    assert r.flows["bytes_delivered"].sum() <= sent


@pytest.mark.parametrize(
    "overrides,field",
    [
        (["cc=mprdma_bbr_artifact"], "cc.mprdma.update_on_duplicate_ack"),
        (["lb=unolb", "lb.unolb.affected=silent"], "lb.unolb.affected"),
        (["lb=reps", "lb.reps.freeze_us=100"], "lb.reps.freeze_us"),
        (["faults=border_link_down"], "faults.link_failures"),
        (["engine.kind=hybrid"], "engine.hybrid_packet_max_bytes"),
    ],
)
def test_unsupported_settings_are_refused_naming_them(overrides, field):
    kind = [] if overrides[0].startswith("engine.kind") else ["engine.kind=fluid"]
    with pytest.raises(ConfigError) as err:
        uno.run(uno.compose([*kind, *overrides]))
    assert err.value.field.startswith(field), err.value.field


def _unolb_sim(n_flows=40):
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = uno.compose(["experiment=fig10_load", "workload=mixed_artifact", "scheme=uno",
                       f"workload.n_flows={n_flows}", "engine.kind=fluid"])  # fmt: skip
    return build_simulation(to_run_config(cfg))


def test_ecmp_path_kernel_is_the_packet_engines_hash():
    from uno.fluid.routes import ecmp_path_edges as _ecmp_path

    sim = _unolb_sim()
    host_node, nh_ptr, nh_edges, edge_dst, salt = sim.lb[8:13]
    switch_index = {}
    for i, node in enumerate(sim.scenario.routing.topo.nodes):
        if node.kind != "host":
            switch_index[i] = len(switch_index)
    out = np.zeros(16, dtype=np.int64)
    for _ in range(200):
        src, dst = (int(h) for h in RNG.choice(len(host_node), 2, replace=False))
        entropy = int(RNG.integers(0, 1 << 16))
        hops = K.ecmp_path(src, dst, entropy, host_node, nh_ptr, nh_edges, edge_dst, salt, out)
        assert list(out[:hops]) == _ecmp_path(sim.scenario, src, dst, entropy, switch_index)


def test_coded_loss_shares_split_the_lost_packets_by_their_blocks_fate():
    """Of the packets lost from (n, m) blocks, each lost with chance p: the share in blocks
    that cannot be decoded (more than m lost: resent) and in blocks of which nothing arrived
    (only the sender's timer finds them), against every loss pattern of a block; the rest
    decode (coding absorbs them); and the packets a failed block loses, E[j | j > m]."""
    import itertools

    for _ in range(30):
        n, m, p = int(RNG.integers(1, 7)), int(RNG.integers(0, 3)), RNG.uniform(0.01, 0.99)
        lost = in_failed = in_gone = fails = 0.0  # per block, by the block's fate
        for pattern in itertools.product((0, 1), repeat=n + m):
            j = sum(pattern)
            pr = p**j * (1.0 - p) ** (n + m - j)
            lost += j * pr
            in_failed += j * pr if j > m else 0.0
            in_gone += j * pr if j == n + m else 0.0
            fails += pr if j > m else 0.0
        failed, gone, per_block = K.coded_loss_shares(p, n, m)
        assert failed == pytest.approx(in_failed / lost, rel=1e-9)
        assert gone == pytest.approx(in_gone / lost, rel=1e-9)
        assert per_block == pytest.approx(in_failed / fails, rel=1e-9)
    # (8, 2) at 10%: 1 packet lost a block on average, 0.775 of it in blocks with at most 2
    # lost (0.387 + 2 x 0.194): 22.5% in blocks that fail; at 60%, nearly all
    assert K.coded_loss_shares(0.1, 8, 2)[0] == pytest.approx(0.2252, abs=1e-4)
    assert K.coded_loss_shares(0.6, 8, 2)[0] > 0.99
    assert K.coded_loss_shares(0.0, 8, 2) == (0.0, 0.0, 0.0)


def test_a_blocks_packets_on_subflows_lose_by_each_subflows_chance():
    """UnoLB spreads a block's packets over its subflows round robin (packet j on subflow j mod
    n), so the number a block loses is Poisson-binomial (``spread_loss_shares``), against every
    loss pattern; with equal chances it is ``coded_loss_shares``. One subflow of eight losing 60%
    costs a (8, 2) block at most two packets: coding absorbs all its losses, where the same
    drops taken as one chance for every packet (the lossy subflow's 60%) fail nearly every
    block."""
    import itertools

    for _ in range(30):
        n_sub, n, m = int(RNG.integers(1, 6)), int(RNG.integers(1, 6)), int(RNG.integers(0, 3))
        losses = RNG.random(n_sub) * (RNG.random(n_sub) < 0.7)
        lost = in_failed = in_gone = fails = 0.0
        for pattern in itertools.product((0, 1), repeat=n + m):
            pr = 1.0
            for j, bit in enumerate(pattern):
                q = losses[j % n_sub]
                pr *= q if bit else 1.0 - q
            k = sum(pattern)
            lost += k * pr
            in_failed += k * pr if k > m else 0.0
            in_gone += k * pr if k == n + m else 0.0
            fails += pr if k > m else 0.0
        scratch = RNG.random(m + 3)  # leftovers of an earlier call must not matter
        got = K.spread_loss_shares(losses, n_sub, n, m, scratch)
        twin = K.spread_loss_shares.py_func(losses, n_sub, n, m, RNG.random(m + 3))
        if lost > 0.0:
            assert got[0] == pytest.approx(in_failed / lost, abs=1e-9)
            assert got[1] == pytest.approx(in_gone / lost, abs=1e-9)
        if fails > 1e-9:
            assert got[2] == pytest.approx(in_failed / fails, rel=1e-6)
        np.testing.assert_allclose(got, twin, rtol=1e-12, atol=1e-15)
    same = np.full(10, 0.3)
    np.testing.assert_allclose(K.spread_loss_shares(same, 10, 8, 2, np.zeros(3)),
                               K.coded_loss_shares(0.3, 8, 2), rtol=1e-12)  # fmt: skip
    one_bad = np.array([0.6, 0, 0, 0, 0, 0, 0, 0])
    assert K.spread_loss_shares(one_bad, 8, 8, 2, np.zeros(3))[0] == 0.0
    assert K.coded_loss_shares(0.6, 8, 2)[0] > 0.99


@pytest.mark.parametrize("twin", [False, True])
def test_a_coded_flows_lost_bytes_take_off_what_is_decodable_only_what_failed(twin):
    """A coded flow's slot holds more decodable bytes than ACKs once a loss was absorbed by
    coding: a later cut whose bytes all fail takes exactly them off (scaling the decodable
    bytes by the ACKs kept, as for an uncoded flow, lost decodable bytes that no resend
    brings back: 55 of 590 inter-DC flows of the 3,000-flow Fig. 10 traffic never
    finished)."""
    take = K.take_acks.py_func if twin else K.take_acks
    mss = 4096.0
    fs = np.zeros((1, K.N_FS))
    fs[0, K.FS_EC_N] = 8.0
    ring = np.zeros((20, K.N_R))
    ring_ptr, ring_len = np.zeros(1, dtype=np.int64), np.full(1, 20, dtype=np.int64)
    ring[5, K.R_ACK] = ring[5, K.R_GOOD] = 4 * mss
    take(0, 1, 5, mss, mss, fs, ring, ring_ptr, ring_len)  # absorbed by coding
    assert ring[5, K.R_ACK] == 3 * mss and ring[5, K.R_GOOD] == 4 * mss
    assert ring[5, K.R_FREE] == mss
    take(0, 1, 5, mss, 0.0, fs, ring, ring_ptr, ring_len)  # failed: to resend
    assert ring[5, K.R_ACK] == 2 * mss and ring[5, K.R_GOOD] == 3 * mss


@pytest.mark.parametrize("twin", [False, True])
def test_a_coded_flows_failed_and_gone_bytes_come_in_whole_blocks(twin):
    """A step's lost bytes of a coded flow fail in whole blocks, drawn from the flow's stream:
    a block of 1 + 2 packets (a one-packet flow) is gone whole, with the chance the shares
    give (p^2 once its packet is lost: p^3 in all), or not at all, never a sliver; a (8, 2)
    block's failures come as E[j | j > 2] lost packets, or the step's whole loss when less.
    Over many draws the means are the shares' (within 3%)."""
    whole = K.whole_blocks.py_func if twin else K.whole_blocks
    mss = 4096.0
    fs = np.zeros((1, K.N_FS))
    rng = np.array([12345], dtype=np.uint64)
    p = 0.4
    failed_share, gone_share, per_block = K.coded_loss_shares(p, 1, 2)
    fs[0, K.FS_SIZE] = 3 * mss  # one data and two parity packets
    draws = np.array([whole(0, 3 * mss * p, failed_share, gone_share, per_block, 3, mss, fs, rng)
                      for _ in range(20_000)])  # fmt: skip
    assert set(np.unique(draws[:, 1])) <= {0.0, 3 * mss * p}  # the whole loss, or nothing
    assert (draws[:, 1] <= draws[:, 0]).all() and (draws[:, 0] <= 3 * mss * p).all()
    assert draws[:, 1].mean() == pytest.approx(3 * mss * p * gone_share, rel=0.03)
    fs[0, K.FS_SIZE] = 1e9
    failed_share, gone_share, per_block = K.coded_loss_shares(0.1, 8, 2)
    for lost in (mss, 40 * mss):
        draws = np.array([whole(0, lost, failed_share, gone_share, per_block, 10, mss, fs, rng)
                          for _ in range(20_000)])  # fmt: skip
        chunk = min(per_block * mss, lost)
        assert np.allclose(draws[:, 0] / chunk, np.round(draws[:, 0] / chunk))
        assert draws[:, 0].mean() == pytest.approx(lost * failed_share, rel=0.03)
    assert whole(0, 0.0, 0.0, 0.0, 0.0, 10, mss, fs, rng) == (0.0, 0.0)


@pytest.mark.parametrize("twin", [False, True])
def test_a_coded_flows_loss_report_names_the_subflows_whose_bytes_were_dropped(twin):
    """The packet UnoLB moves the subflows that carried the lost packets (``affected: lost``).
    A coded UnoLB flow's drops are counted per subflow (``lb[15]``): its loss report names
    those whose bytes the links dropped, not every subflow whose path dropped when it sent
    (two lossy paths, one of them lost nothing of this flow's). An uncoded flow, whose drops
    are not counted per subflow, is named by its paths' loss."""
    coded_losses = K.coded_losses.py_func if twin else K.coded_losses
    name = K.name_subflows.py_func if twin else K.name_subflows
    sim = _unolb_sim()
    f = int(np.nonzero((sim.lb[0] > 0) & (sim.fs[:, K.FS_EC_N] > 0))[0][0])
    n_sub, n_ec = int(sim.lb[0][f]), int(sim.fs[f, K.FS_EC_N])
    mss = sim.cp[f, K.P_MSS]
    sub_drops = sim.lb[15]
    sub_drops[f, 2] = (3 * mss, 10 * mss)  # subflow 2: 3 packets' bytes dropped of 10 exposed
    sim.fs[f, K.FS_DROPPED], sim.fs[f, K.FS_EXPOSED] = 3 * mss, 10 * mss
    scratch = np.zeros(n_sub + int(sim.fs[f, K.FS_EC_M]) + 2)
    rng = sim.loss_rng.copy()
    lost, failed, _ = coded_losses(f, n_ec, mss, sim.fs, rng, sim.lb, scratch)
    assert lost > 0.0 and not sub_drops[f].any()  # (read and cleared)
    path_loss = np.zeros(n_sub)
    path_loss[[2, 5]] = 0.3  # subflows 2 and 5 crossed dropping links at the send
    weights = np.zeros((f + 1, n_sub))
    name(f, n_sub, n_ec, path_loss, scratch, weights)
    assert weights[f, 2] == pytest.approx(0.3) and np.count_nonzero(weights) == 1
    weights[:] = 0.0
    name(f, n_sub, 0, path_loss, scratch, weights)
    np.testing.assert_array_equal(weights[f], path_loss)


def _acks_way_back(sim, f):
    """Each subflow's ACK route (``lb[13]``) is the ECMP hash of (dst, src, its entropy)."""
    src, dst = sim.lb[7][f]
    out = np.zeros(16, dtype=np.int64)
    for s in range(sim.lb[0][f]):
        hops = K.ecmp_path(dst, src, sim.lb[3][f, s], *sim.lb[8:13], out)
        assert hops == sim.lb[14][f] and (out[:hops] == sim.lb[13][f, s, :hops]).all()


def test_unolb_moves_the_lossy_subflows_once_per_rtt():
    """Lossy subflows move (with their ACKs' way back), at most once per base RTT."""
    sim = _unolb_sim()
    sub_n, sub_hops, sub_links, sub_ent, sub_lost, lb_last = sim.lb[:6]
    f, rtt = 0, 1e7
    n = sub_n[f]
    _acks_way_back(sim, f)
    assert len({tuple(r) for r in sim.lb[13][f, :n]}) > 1  # the subflows' ACKs part ways
    before = sub_links[f].copy()
    sub_lost[f, :3] = 1.0  # subflows 0..2 lost bytes
    K.unolb_reroute(f, 5e7, rtt, sim.lb)
    for s in range(3):  # each took the path of one of the others
        assert any((sub_links[f, s] == before[g]).all() for g in range(3, n))
        assert sub_ent[f, s] in set(sub_ent[f, 3:])
    assert (sub_links[f, 3:] == before[3:]).all() and (sub_lost[f] == 0).all()
    _acks_way_back(sim, f)
    moved = sub_links[f].copy()
    sub_lost[f, 5] = 1.0  # within one base RTT of the last move: nothing moves
    K.unolb_reroute(f, 5e7 + rtt, rtt, sim.lb)
    assert (sub_links[f] == moved).all() and (sub_lost[f] == 0).all()
    sub_lost[f, :] = 1.0  # every subflow lost: fresh random paths, valid ones
    K.unolb_reroute(f, 5e7 + 3 * rtt, rtt, sim.lb)
    out = np.zeros(16, dtype=np.int64)
    for s in range(n):
        hops = K.ecmp_path(*sim.lb[7][f], sub_ent[f, s], *sim.lb[8:13], out)
        assert hops == sub_hops[f] and (out[:hops] == sub_links[f, s, :hops]).all()
    _acks_way_back(sim, f)
    # the RTT's reverse part: the mean of the subflows' ways back (also the Python twin's)
    ls = random_links(len(sim.ls))
    ls[:, K.LS_DELAY] = RNG.uniform(0, 1e6, len(ls))
    want = np.mean([ls[sim.lb[13][f, s, : sim.lb[14][f]], K.LS_DELAY].sum() for s in range(n)])
    assert K.subflow_reverse_delay(f, ls, sim.lb) == pytest.approx(want, rel=1e-12)
    assert K.subflow_reverse_delay.py_func(f, ls, sim.lb) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("twin", [False, True])
def test_fast_retransmit_reveals_a_loss_only_by_acks_of_bytes_sent_after_it(twin):
    """Fast retransmit's evidence is bytes acknowledged after the lost ones, counted as their
    ACKs arrive from the slot where the lost bytes' own ACKs were due (the packet sender's
    rule: a packet is lost once 3 packets sent after it are acknowledged): ACKs before it
    reveal nothing; within a slot only the bytes after its last lost packet count, ``acked /
    (lost packets + 1)``; a slot's ACKs count whole for the older losses; and a new loss makes
    the evidence start again from it."""
    evidence = K.fast_retransmit_evidence.py_func if twin else K.fast_retransmit_evidence
    mss = 4096.0
    fs = np.zeros((1, K.N_FS))
    fs[0, K.FS_DUPACK_BYTES] = 3 * mss
    fs[0, K.FS_WAIT] = 10 * mss  # (booked at the drops: every lost byte below)
    fs[0, K.FS_LOSS_AT] = -1.0
    evidence(0, 1000.0, 9 * mss, 0.0, mss, fs)  # ACKs before any loss: nothing waits
    assert fs[0, K.FS_EVIDENCE] == 0.0 and fs[0, K.FS_UNREVEALED] == 0.0
    evidence(0, 2000.0, 0.0, 2 * mss, mss, fs)  # a slot all lost: they wait
    assert fs[0, K.FS_UNREVEALED] == 2 * mss and fs[0, K.FS_EVIDENCE] == 0.0
    evidence(0, 3000.0, 2 * mss, 0.0, mss, fs)  # two packets sent after them: not enough
    assert fs[0, K.FS_EVIDENCE] == 2 * mss and fs[0, K.FS_LOSS_AT] == -1.0
    evidence(0, 4000.0, mss, 0.0, mss, fs)  # the third reveals them, now
    assert fs[0, K.FS_LOSS_PENDING] == 2 * mss and fs[0, K.FS_FAST_BYTES] == 2 * mss
    assert fs[0, K.FS_LOSS_AT] == 4000.0 and fs[0, K.FS_WAIT] == 8 * mss
    assert fs[0, K.FS_UNREVEALED] == 0.0 and fs[0, K.FS_VOID_BYTES] == 2 * mss
    # 2 lost among 11 packets: 3 of the 9 acknowledged come after the last, on average
    evidence(0, 5000.0, 9 * mss, 2 * mss, mss, fs)
    assert fs[0, K.FS_LOSS_PENDING] == 4 * mss and fs[0, K.FS_UNREVEALED] == 0.0
    # 1 lost among 6: 2.5 after it, then a packet of the next slot
    evidence(0, 6000.0, 5 * mss, mss, mss, fs)
    assert fs[0, K.FS_UNREVEALED] == mss and fs[0, K.FS_EVIDENCE] == 2.5 * mss
    # the slot's 3 packets reveal the older loss; its own loss waits with 1.5 after it
    evidence(0, 7000.0, 3 * mss, mss, mss, fs)
    assert fs[0, K.FS_LOSS_PENDING] == 5 * mss
    assert fs[0, K.FS_UNREVEALED] == mss and fs[0, K.FS_EVIDENCE] == 1.5 * mss
    # a loss before enough evidence: the count starts again from the newest
    evidence(0, 8000.0, 0.0, mss, mss, fs)
    assert fs[0, K.FS_UNREVEALED] == 2 * mss and fs[0, K.FS_EVIDENCE] == 0.0
    evidence(0, 9000.0, 3 * mss, 0.0, mss, fs)
    assert fs[0, K.FS_LOSS_PENDING] == 7 * mss and fs[0, K.FS_WAIT] == 3 * mss


@pytest.mark.parametrize("twin", [False, True])
def test_a_loss_report_is_counted_and_the_controller_told_once_per_base_rtt(twin):
    """Loss reports found before a timeout (fast retransmit, NACKs) are each counted, and the
    controller hears of at most one per base RTT (DCTCP halves its window on each it hears)."""
    hear = K.hear_loss_report.py_func if twin else K.hear_loss_report
    cs, cp, fs = law_flows("dctcp", n=1)
    fs[0, K.FS_BASE_RTT], fs[0, K.FS_LOSS_NACK] = 100.0, 1.0
    cp[0, K.P_MIN_CWND] = 1.0
    cs[0, K.C_CWND] = 80.0
    for now, cwnd in ((0.0, 40.0), (50.0, 40.0), (150.0, 20.0)):
        hear(cs, cp, 0, now, fs)
        assert cs[0, K.C_CWND] == cwnd
    assert fs[0, K.FS_LOSS_EVENTS] == 3.0 and fs[0, K.FS_LAST_NACK] == 150.0


@pytest.mark.parametrize("twin", [False, True])
def test_the_timer_and_fast_retransmit_take_the_oldest_lost_bytes_once(twin):
    """The retransmission timer and fast retransmit's evidence both take a flow's oldest lost
    bytes, each byte once: a timer entry of bytes evidence revealed is void; the timer takes
    the bytes waiting for evidence first, then bytes whose ACKs' time is still ahead, which
    then do not wait when their slot comes; the newest entry takes all that is left."""
    evidence = K.fast_retransmit_evidence.py_func if twin else K.fast_retransmit_evidence
    timer = K.timer_declares.py_func if twin else K.timer_declares
    mss = 4096.0
    fs = np.zeros((1, K.N_FS))
    fs[0, K.FS_DUPACK_BYTES] = 3 * mss
    fs[0, K.FS_WAIT], fs[0, K.FS_WAIT_LAST] = 5 * mss, 100.0
    fs[0, K.FS_LOSS_AT] = -1.0
    evidence(0, 1000.0, 0.0, mss, mss, fs)
    evidence(0, 2000.0, 3 * mss, 0.0, mss, fs)  # revealed: its timer entry is void
    assert fs[0, K.FS_WAIT] == 4 * mss and fs[0, K.FS_VOID_BYTES] == mss
    assert timer(0, 10, mss, fs) == 0.0 and fs[0, K.FS_VOID_BYTES] == 0.0
    evidence(0, 3000.0, 0.0, mss, mss, fs)  # waits for evidence
    # the timer takes it, and a packet whose slot has not come yet
    assert timer(0, 20, 2 * mss, fs) == 2 * mss
    assert fs[0, K.FS_UNREVEALED] == 0.0 and fs[0, K.FS_TIMED_AHEAD] == mss
    assert fs[0, K.FS_WAIT] == 2 * mss and fs[0, K.FS_LOSS_PENDING] == mss
    evidence(0, 4000.0, 0.0, 2 * mss, mss, fs)  # its slot: one of the two is gone already
    assert fs[0, K.FS_UNREVEALED] == mss and fs[0, K.FS_TIMED_AHEAD] == 0.0
    assert timer(0, 100, 0.5 * mss, fs) == 2 * mss  # the newest entry: all that is left
    assert fs[0, K.FS_WAIT] == 0.0 and fs[0, K.FS_UNREVEALED] == 0.0


def test_fast_retransmit_needs_later_acks_and_the_timer_catches_the_rest():
    """Four DCTCP-without-ECN flows overflow a 100-kB buffer. With the duplicate-ACK rule at 3
    packets the losses show by later ACKs (fast retransmits); at 1,000 packets no 2-MB flow
    sends enough after a loss, so every loss waits for the retransmission timer, as in the
    packet engine (45 timeouts there too)."""
    base = ["topo=dumbbell", "workload=incast", "workload.n_intra=4", "workload.n_inter=0",
            "cc=dctcp", "switch=ecn", "switch.ecn.enabled=false", "topo.buffer_bytes=100000",
            "workload.size_bytes=2000000", "engine.sample_interval_us=0", "engine.kind=fluid"]  # fmt: skip
    fast = uno.run(uno.compose([*base, "transport.dupack_threshold=3"])).flows
    assert fast["fast_retransmits"].sum() > 0
    slow = uno.run(uno.compose([*base, "transport.dupack_threshold=1000"])).flows
    assert slow["fast_retransmits"].sum() == 0 and slow["timeouts"].sum() > 0
    assert slow["finish_ps"].notna().all() and fast["finish_ps"].notna().all()


def test_fast_retransmit_and_the_timer_find_the_losses_the_packet_engine_finds():
    """Four DCTCP-without-ECN flows of 2 MB into host s0 (three from its own switch, one
    across the bottleneck) overflow a 100-kB buffer, with the duplicate-ACK
    rule at 3 packets: the losses among a flow's last packets before it pauses (its window
    out) have too few packets sent after them, and wait for the timer. The packet engine hears
    35 timeouts and finds 23 packets by fast retransmit; the fluid, at seeds 1-3, timeouts
    within 15% and the packets it resends within 10%. (Each step's losses revealed with the
    oldest waiting, as before: 22 timeouts and 39 fast retransmits.)"""
    base = ["topo=dumbbell", "workload=incast", "workload.n_intra=4", "workload.n_inter=0",
            "workload.receiver=0",
            "cc=dctcp", "switch=ecn", "switch.ecn.enabled=false", "topo.buffer_bytes=100000",
            "workload.size_bytes=2000000", "engine.sample_interval_us=0",
            "transport.dupack_threshold=3"]  # fmt: skip
    packet = uno.run(uno.compose([*base, "engine.kind=packet"])).flows
    assert packet["timeouts"].sum() == 35 and packet["fast_retransmits"].sum() == 23
    for seed in (1, 2, 3):
        fluid = uno.run(uno.compose([*base, "engine.kind=fluid", f"seed={seed}"])).flows
        assert fluid["timeouts"].sum() == pytest.approx(packet["timeouts"].sum(), rel=0.15)
        assert fluid["retransmits"].sum() == pytest.approx(packet["retransmits"].sum(), rel=0.1)


#: 4 DCTCP flows into a dumbbell's 100 kB buffer without ECN: losses every few steps, all
#: found by the timer (the duplicate-ACK rule needs 1,000 packets)
TIMER_ONLY = ["topo=dumbbell", "workload=incast", "workload.n_intra=4", "workload.n_inter=0",
              "cc=dctcp", "switch=ecn", "switch.ecn.enabled=false", "topo.buffer_bytes=100000",
              "workload.size_bytes=2000000", "engine.sample_interval_us=0", "engine.kind=fluid",
              "transport.dupack_threshold=1000"]  # fmt: skip


def _timer_trace(sim, column: int):
    """Step ``sim`` to its end one step at a time; per step and flow: the bytes lost, the
    bytes the timer declared lost, ``fs[:, column]`` after the step, and when the flow's
    latest send began (``FS_LAST_SEND``: the send time the step's losses are timed from)."""
    fs, n = sim.fs, len(sim.fs)
    lost, declared, tracked, sent = [], [], [], []
    k = 0
    while sim.counters[2] < n:
        wait, was_lost = fs[:, K.FS_WAIT].copy(), fs[:, K.FS_LOST].copy()
        k = sim.advance(k, k + 1)
        lost.append(fs[:, K.FS_LOST] - was_lost)
        declared.append(wait + lost[-1] - fs[:, K.FS_WAIT])
        tracked.append(fs[:, column].copy())
        sent.append(fs[:, K.FS_LAST_SEND].copy())
    return np.array(lost), np.array(declared), np.array(tracked), np.array(sent)


def _due_an_rto_after_the_send(lost, sent, rto, dt_ps):
    """Per step and flow, the bytes the timer should declare lost: those lost at step k, at
    the first step boundary ``rto[k]`` after their send ``sent[k]`` (the step's start, or the
    flow's start within its first step)."""
    due = np.zeros_like(lost)
    for k, f in zip(*np.nonzero(lost > 0), strict=True):
        d = int(np.ceil((sent[k, f] + rto[k, f]) / dt_ps))
        assert d > k
        if d < len(due):
            due[d, f] += lost[k, f]
    return due


def test_each_loss_times_out_an_rto_after_its_own_send():
    """Without fast retransmit evidence (duplicate-ACK rule at 1,000 packets), the bytes lost
    at step k are declared lost at the first step boundary an RTO after their send (k +
    ceil(RTO / dt) for a send at the step's start), each batch at its own time (the packet
    sender's timer, not one batch an RTO after the first loss), and the controller hears of
    at most one timeout per base RTT."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    sim = build_simulation(to_run_config(uno.compose(TIMER_ONLY)))
    fs, n = sim.fs, len(sim.fs)
    assert (fs[:, K.FS_START] == 0).all()
    lag = np.ceil(fs[:, K.FS_RTO] / sim.dt_ps).astype(np.int64)
    assert (lag < sim.ring_len).all()
    lost, declared, timeouts, sent = _timer_trace(sim, K.FS_TIMEOUTS)
    due = _due_an_rto_after_the_send(lost, sent, np.broadcast_to(fs[:, K.FS_RTO], lost.shape),
                                     sim.dt_ps)  # fmt: skip
    for f in range(n):
        lf = lag[f]
        assert np.count_nonzero(lost[:, f]) > 3  # losses spread over several steps ...
        np.testing.assert_allclose(declared[:, f], due[:, f], atol=1e-6)  # ... each its own
        assert np.abs(declared[:lf, f]).max() < 1e-6
        told = np.nonzero(np.diff(timeouts[:, f], prepend=0.0))[0] * sim.dt_ps
        assert len(told) > 1 and (np.diff(told) >= fs[f, K.FS_BASE_RTT]).all()


def test_dropped_packets_are_binomial_over_the_packets_that_reached_the_links():
    """The whole packets a flow loses in a step are a binomial draw over the packets that
    reached the dropping links, each lost with the drop fraction (the mean is the bytes
    dropped): a flow's last packet through a link that drops 60% is lost 60% of the time (a
    Poisson draw of mean 0.6 lost it 45% of the time, and so shortened chains of
    retransmissions). Both kernels are their Python twins."""
    n = 20_000
    state = np.arange(1, n + 1, dtype=np.uint64) * np.uint64(7919)
    twin = state.copy()
    mss = 4096.0
    for packets, p in ((1.0, 0.6), (12.0, 0.3), (2.5, 0.9), (300.0, 0.01)):
        fs = np.zeros((n, K.N_FS))
        fs[:, K.FS_SIZE] = 1e7
        fs[:, K.FS_EXPOSED] = packets * mss
        fs[:, K.FS_DROPPED] = packets * mss * p
        fs_twin = fs.copy()
        draws = np.array([K.dropped_packets(f, mss, fs, state) for f in range(n)])
        twins = [K.dropped_packets.py_func(f, mss, fs_twin, twin) for f in range(min(n, 300))]
        assert list(draws[:300]) == twins and (state[:300] == twin[:300]).all()
        assert not fs[:, K.FS_DROPPED].any() and not fs[:, K.FS_EXPOSED].any()
        assert (draws == np.round(draws)).all() and (draws <= np.ceil(packets)).all()
        mean = packets * p
        assert abs(draws.mean() - mean) < 4 * np.sqrt(mean / n) + 1e-9
        whole = int(packets)
        var = whole * p * (1 - p) + (packets - whole) * p * (1 - (packets - whole) * p)
        assert draws.var() == pytest.approx(var, rel=0.1)  # binomial, not Poisson (var = mean)
    # the rarer outcome is counted, so that (1 - p)^n never underflows
    assert K.binomial_draw(5000, 0.999, state, 0) >= 4980
    assert K.binomial_draw(0, 0.5, state, 0) == 0.0 and K.binomial_draw(7, 1.0, state, 0) == 7.0
    # beyond POISSON_MAX_MEAN packets: the mean
    fs = np.zeros((1, K.N_FS))
    fs[0, K.FS_SIZE] = 1e7
    fs[0, K.FS_EXPOSED], fs[0, K.FS_DROPPED] = 1e6, 3e5
    assert K.dropped_packets(0, mss, fs, state) == 3e5 / mss


def test_a_packet_is_lost_whole_or_not_at_all():
    """A sliver of a packet that reaches a link dropping everything from its input (a FIFO
    share lets a packet out over several steps) loses the whole packet with the chance sliver /
    packet, not the sliver for certain: with the sliver lost, every flow that met a lock-out
    for one step waited for a timer, and a one-packet flow of the 40%-load Fig. 10 run heard
    its timeout again and again. A flow of less than a data packet has one packet, of its own
    size. Both kernels are their Python twins."""
    n = 40_000
    mss = 4160.0
    state = np.arange(1, n + 1, dtype=np.uint64) * np.uint64(104729)
    for size, sliver in ((2133.0, 264.7), (1e6, 1000.0), (1e6, 2.5 * 4160.0)):
        fs = np.zeros((n, K.N_FS))
        fs[:, K.FS_SIZE] = size
        fs[:, K.FS_EXPOSED] = fs[:, K.FS_DROPPED] = sliver  # all of it dropped
        twin = fs[:200].copy()
        twin_state = state[:200].copy()
        lost = mss * np.array([K.dropped_packets(f, mss, fs, state) for f in range(n)])
        assert list(lost[:200]) == [
            mss * K.dropped_packets.py_func(f, mss, twin, twin_state) for f in range(200)
        ]
        packet = min(size, mss)
        assert set(np.unique(lost)) <= {k * packet for k in range(int(sliver // packet) + 2)}
        assert lost.mean() == pytest.approx(sliver, rel=0.05)  # the bytes dropped, on average


@pytest.mark.parametrize("twin", [False, True])
def test_lost_bytes_come_off_the_latest_acks_due(twin):
    """A tail drop takes the newest bytes at a full queue, so a flow's lost bytes come off the
    ACKs its delay line holds last (newest first), not those due next (which belong to bytes
    delivered before the drop). Lost bytes beyond every ACK still due were acknowledged
    already: they are taken back and return to flight."""
    cut = K.cut_acks.py_func if twin else K.cut_acks
    fs = np.zeros((1, K.N_FS))
    ring = np.zeros((10, K.N_R))
    ring_ptr, ring_len = np.array([0]), np.array([10])
    k = 100
    for step, acked in ((101, 5.0), (102, 5.0), (104, 5.0)):
        ring[step % 10, K.R_ACK] = acked
        ring[step % 10, K.R_RTTW] = acked * 7.0
        ring[step % 10, K.R_GOOD] = acked
    fs[0, K.FS_PENDING] = 15.0
    fs[0, K.FS_ACK_LAST] = 104
    fs[0, [K.FS_DELIVERED, K.FS_ACKED, K.FS_INFLIGHT]] = 50.0, 50.0, 15.0
    cut(0, k, 7.0, 0.0, fs, ring, ring_ptr, ring_len)
    assert list(ring[[1, 2, 4], K.R_ACK]) == [5.0, 3.0, 0.0]  # step 104 first, then 102
    assert ring[2, K.R_RTTW] == pytest.approx(3.0 * 7.0) and ring[2, K.R_GOOD] == 3.0
    assert fs[0, K.FS_PENDING] == 8.0 and fs[0, K.FS_ACK_LAST] == 102
    cut(0, k, 10.0, 0.0, fs, ring, ring_ptr, ring_len)  # 8 still due: 2 were acknowledged already
    assert not ring[:, K.R_ACK].any() and fs[0, K.FS_PENDING] == 0.0
    assert list(fs[0, [K.FS_DELIVERED, K.FS_ACKED, K.FS_INFLIGHT]]) == [48.0, 48.0, 17.0]

    # a coded flow: the bytes of blocks that decode (freed) come off the ACKs but stay
    # decodable and leave flight with them; the rest come off what is decodable too
    ring[:] = 0.0
    ring[4, [K.R_ACK, K.R_GOOD]] = 8.0
    fs[0, K.FS_EC_N] = 8.0
    fs[0, K.FS_ACK_LAST], fs[0, K.FS_PENDING] = 104, 8.0
    fs[0, [K.FS_DELIVERED, K.FS_ACKED, K.FS_INFLIGHT]] = 50.0, 50.0, 8.0
    cut(0, k, 4.0, 1.0, fs, ring, ring_ptr, ring_len)
    assert list(ring[4, [K.R_ACK, K.R_GOOD, K.R_FREE]]) == [4.0, 5.0, 1.0]
    cut(0, k, 8.0, 2.0, fs, ring, ring_ptr, ring_len)  # 4 due, 4 acknowledged already
    assert list(ring[4, [K.R_ACK, K.R_GOOD, K.R_FREE]]) == [0.0, 2.0, 2.0]
    # of the 4 acknowledged: 1 freed stays delivered and out of flight, 3 return to flight
    assert list(fs[0, [K.FS_DELIVERED, K.FS_ACKED, K.FS_INFLIGHT]]) == [47.0, 46.0, 11.0]


def test_incast_acks_clock_what_the_receivers_link_delivers_after_the_first_window():
    """The default incast's four inter-DC flows send a BDP each into the receiver's link at
    once; most of it is dropped. The ACKs of what the link delivers come back one RTT later at
    about its rate (the packet engine: 99 Gb/s from 2 to 4 ms). When the lost bytes came off
    the ACKs due first, the flows heard no ACK from 2 to 4 ms, then three times the link's
    rate (285 Gb/s), and their rates were 7% low on average over seeds, 14% at worst."""
    cfg = uno.compose(["engine.kind=fluid", "engine.progress=false", "engine.max_sim_time_ms=4.5",
                       "engine.sample_interval_us=100", "engine.sample_queues=false"])  # fmt: skip
    rates = uno.run(cfg).tables["rates"]
    inter = rates[(rates.flow_id >= 4) & (rates.time_ps >= 2.2e9) & (rates.time_ps < 4.2e9)]
    acked = inter.groupby("time_ps").acked_gbps.sum()
    assert len(acked) >= 15
    assert acked.mean() == pytest.approx(99.0, rel=0.15)
    assert acked.max() < 130.0


@pytest.mark.parametrize("scheme", ["uno", "mprdma_bbr"])
def test_step_kernel_matches_python(scheme):
    """The whole step loop (``advance``) against its Python twin, from a mid-run state of the
    Fig. 10 traffic: UnoLB subflows, coding and whole-packet losses (``uno``), or MP-RDMA + BBR
    with fast retransmit (``mprdma_bbr``)."""
    import copy

    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = uno.compose(["experiment=fig10_load", "workload=mixed_artifact", f"scheme={scheme}",
                       "workload.n_flows=60", "workload.load=0.6", "engine.kind=fluid"])  # fmt: skip
    sim = build_simulation(to_run_config(cfg))
    k = sim.advance(0, 400)  # compiled, to a state with flows running and queues up
    assert sim.counters[1] > 0 and sim.counters[3] > 0
    names = ("fs", "cs", "ls", "ring", "counters", "active", "busy", "loss_rng", "fx", "calendar",
             "block")  # fmt: skip
    twin = {n: copy.deepcopy(getattr(sim, n)) for n in sim.STEPPED_STATE}
    pool_twin, lb_twin, hops_twin = twin["ring_pool"], twin["lb"], twin["hops"]
    k_fast = sim.advance(k, k + 300)
    with np.errstate(over="ignore"):
        k_py = K.advance.py_func(k, k + 300, *sim.kernel_args(twin))
    assert k_py == k_fast == k + 300
    for n in names:
        if n == "calendar":  # bitsets: exactly
            np.testing.assert_array_equal(sim.calendar, twin[n])
        else:
            np.testing.assert_allclose(getattr(sim, n), twin[n], rtol=1e-9, atol=1e-6, err_msg=n)
    for a, b in zip((*sim.lb, *sim.ring_pool), (*lb_twin, *pool_twin), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-6)
    np.testing.assert_array_equal(sim.hops[0], hops_twin[0])  # levels
    cols = [K.EI_LINK, K.EI_FLOW, K.EI_GSTART, K.EI_NEXT, K.EI_LAG]  # routes (not the lists)
    np.testing.assert_array_equal(sim.hops[2][:, cols], hops_twin[2][:, cols])
    # each entry's bytes: queued, in this step, carried to the next
    np.testing.assert_allclose(sim.hops[3], hops_twin[3], rtol=1e-9, atol=1e-6)


@pytest.mark.parametrize("scheme", ["uno_ecmp", "uno"])
def test_links_conserve_bytes_hop_by_hop(scheme):
    """Every link passes on exactly what it lets go, in the same step: a link's arrivals are
    the flows' sends at their first hop plus the departures of the links before it, never more
    (before, the next hop saw each flow's rate times the departures / arrivals ratio of the hop
    before at the previous step, up to 16x, and dropped bytes its uplink never delivered: on
    the Fig. 10 traffic the ToR -> host ports 'received' 1.8x what the agg -> ToR ports sent).
    Bytes: in = out + dropped + queued at every link, and the downlinks to the hosts, which
    only pass on what their uplinks delivered at line rate, drop nothing here. The step is
    also the Python twin's (``forward.py_func``). A flow that sends nothing is walked from the
    first hop holding its bytes (``FX_FIRST``): no hop before it holds any."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = uno.compose(["experiment=fig10_load", "workload=mixed_artifact", f"scheme={scheme}",
                       "workload.n_flows=300", "workload.load=0.6", "engine.kind=fluid"])  # fmt: skip
    sim = build_simulation(to_run_config(cfg))
    routing = sim.scenario.routing
    ls = sim.ls
    to_host = np.array([routing.topo.nodes[e.dst].kind == "host" for e in routing.edges])
    feeding = np.array([routing.topo.nodes[e.dst].tier == "tor" for e in routing.edges])
    ei, ef = sim.hops[2], sim.hops[3]
    n_rt = int(sim.rt_ptr[-1])
    entry_flow = ei[:n_rt, K.EI_FLOW]
    plain = sim.lb[0][entry_flow] == 0  # (UnoLB flows: their subflow hops, below)
    # UnoLB subflow hop h of subflow s of flow f is entry n_rt + (f S + s) H + h
    sub_n, sub_hops = sim.lb[0], sim.lb[1]
    n_sub_max, n_hop_max = sim.lb[2].shape[1:]
    sub_entry = np.arange(len(ef) - n_rt)
    sub_flow = sub_entry // (n_sub_max * n_hop_max)
    sub_hop = sub_entry % n_hop_max
    sub_real = ((sub_entry // n_hop_max) % n_sub_max < sub_n[sub_flow]) & (
        sub_hop < sub_hops[sub_flow]
    )
    skipped = 0
    sub_skipped = 0
    k = 0
    steps = 0
    while k < 4000 and sim.counters[2] < len(sim.flows):
        # a flow that sends nothing is walked from FX_FIRST: no hop before it holds its bytes
        first = sim.fx[entry_flow, K.FX_FIRST]
        before = plain & (sim.fx[entry_flow, K.FX_NETQ] > 0) & (np.arange(n_rt) < first)
        assert not (ef[:n_rt, K.EF_Q][before] > 0).any()
        assert not (ef[:n_rt, K.EF_CARRY][before] > 0).any()
        # an entry's marked bytes are some of its bytes
        assert (ef[:, K.EF_MQ] <= ef[:, K.EF_Q] * (1 + 1e-9) + 1e-6).all()
        assert (ef[:, K.EF_MCARRY] <= ef[:, K.EF_CARRY] * (1 + 1e-9) + 1e-6).all()
        starts = first[plain & (sim.fx[entry_flow, K.FX_NETQ] > 0)].astype(np.int64)
        assert (ei[starts, K.EI_GSTART] == starts).all()  # a hop's first entry
        skipped += int(before.sum())
        # an UnoLB flow that sends nothing is walked from hop FX_FIRST of every subflow: no
        # subflow holds its bytes at a hop before it
        before = (
            sub_real & (sim.fx[sub_flow, K.FX_NETQ] > 0) & (sub_hop < sim.fx[sub_flow, K.FX_FIRST])
        )
        assert not (ef[n_rt:, K.EF_Q][before] > 0).any()
        assert not (ef[n_rt:, K.EF_CARRY][before] > 0).any()
        sub_skipped += int(before.sum())
        tx0, in0 = ls[:, K.LS_TX].copy(), ls[:, K.LS_IN].copy()
        if steps == 200:  # one step in the Python twin: the same state
            import copy

            twin = {a: copy.deepcopy(getattr(sim, a)) for a in sim.STEPPED_STATE}
            k_py = K.advance.py_func(k, k + 1, *sim.kernel_args(twin))
        k_next = sim.advance(k, k + 1)
        if steps == 200:
            assert k_py == k_next
            np.testing.assert_allclose(sim.ls, twin["ls"], rtol=1e-9, atol=1e-6)
        steps += 1
        dep = ls[:, K.LS_TX] - tx0
        arr = ls[:, K.LS_IN] - in0
        # a ToR's ports to its hosts receive, in each step, what the agg -> ToR and
        # host -> ToR ports let go in it: never more
        assert arr[to_host].sum() <= dep[feeding].sum() * (1 + 1e-9) + 1e-6
        k = k_next
    # in = out + dropped + queued, link by link
    np.testing.assert_allclose(
        ls[:, K.LS_IN], ls[:, K.LS_TX] + ls[:, K.LS_DROP] + ls[:, K.LS_Q], rtol=1e-9, atol=1e-3
    )
    # a ToR's ports to its hosts receive what the agg -> ToR and host -> ToR ports let go
    tor_in = ls[to_host, K.LS_IN].sum()
    assert tor_in <= ls[feeding, K.LS_TX].sum() * (1 + 1e-9)
    assert ls[to_host, K.LS_DROP].sum() == 0.0
    # the walk did start past the first hop
    assert (skipped if scheme == "uno_ecmp" else sub_skipped) > 0


def test_route_parts_match_the_whole_route_and_python():
    """``entries_delay`` and ``entries_exceedance`` over a route's entries before and from any
    split point (a wire flow's before / beyond its WAN link) make up ``path_delay`` and
    ``gentle_exceedance`` of the whole route, and agree with their Python twins."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = uno.compose(["experiment=fig10_load", "workload=mixed_artifact", "scheme=uno_ecmp",
                       "workload.n_flows=40", "engine.kind=fluid"])  # fmt: skip
    sim = build_simulation(to_run_config(cfg))
    ls = random_links(len(sim.ls))
    ls[:, K.LS_DELAY] = RNG.uniform(0, 1e6, len(ls))
    ls[:, K.LS_ARR] = ls[:, K.LS_CAP] * RNG.uniform(0, 1.1, len(ls)) * (RNG.random(len(ls)) < 0.8)
    ls[:, K.LS_ARR2] = ls[:, K.LS_ARR] ** 2 / RNG.uniform(1, 30, len(ls))
    route = (sim.rt_link, sim.rt_w, ls)
    for f in range(len(sim.fs)):
        lo, hi = int(sim.rt_ptr[f]), int(sim.rt_ptr[f + 1])
        nic = int(sim.fs[f, K.FS_NIC_LINK])
        whole = K.path_delay(f, sim.rt_ptr, *route)
        for mid in range(lo, hi + 1):
            parts = [K.entries_delay(a, b, *route) for a, b in ((lo, mid), (mid, hi))]
            assert sum(parts) == pytest.approx(whole, rel=1e-12)
            assert parts[1] == K.entries_delay.py_func(mid, hi, *route)
            for slack in (-1.0, 3e5, 1e6):
                args = [(a, b, slack, nic, *route, 4160.0) for a, b in ((lo, mid), (mid, hi))]
                p = [K.entries_exceedance(*x) for x in args]
                assert p == [K.entries_exceedance.py_func(*x) for x in args]
                full = K.gentle_exceedance(f, slack, nic, sim.rt_ptr, sim.rt_link, sim.rt_w, ls,
                                           sim.lb[:3], 4160.0)  # fmt: skip
                assert 1.0 - (1.0 - p[0]) * (1.0 - p[1]) == pytest.approx(full, rel=1e-12)


def test_path_kernels_match_python():
    sim = _unolb_sim()
    ls = random_links(len(sim.ls))
    ls[:, K.LS_MARK] = RNG.random(len(ls)) * (RNG.random(len(ls)) < 0.5)
    ls[:, K.LS_LOSS] = RNG.random(len(ls)) * (RNG.random(len(ls)) < 0.3)
    ls[:, K.LS_DELAY] = RNG.uniform(0, 1e6, len(ls))
    ls[:, K.LS_ARR] = ls[:, K.LS_CAP] * RNG.uniform(0, 1.1, len(ls)) * (RNG.random(len(ls)) < 0.8)
    ls[:, K.LS_ARR2] = ls[:, K.LS_ARR] ** 2 / RNG.uniform(1, 30, len(ls))
    for f in range(len(sim.fs)):
        for slack in (-1.0, 0.0, 3e5, 1e6):
            nic = int(sim.fs[f, K.FS_NIC_LINK])
            args = (f, slack, nic, sim.rt_ptr, sim.rt_link, sim.rt_w, ls, sim.lb[:3], 4160.0)
            a, b = K.gentle_exceedance(*args), K.gentle_exceedance.py_func(*args)
            assert a == pytest.approx(b, rel=1e-12) and 0.0 <= a <= 1.0
            assert a == 1.0 or slack > 0
        a = K.path_delay(f, sim.rt_ptr, sim.rt_link, sim.rt_w, ls)
        b = K.path_delay.py_func(f, sim.rt_ptr, sim.rt_link, sim.rt_w, ls)
        assert a == pytest.approx(b, rel=1e-12)
        a = K.reverse_delay(f, sim.rv_ptr, sim.rv_link, sim.rv_w, ls)
        b = K.reverse_delay.py_func(f, sim.rv_ptr, sim.rv_link, sim.rv_w, ls)
        assert a == pytest.approx(b, rel=1e-12)
        la, lb = np.zeros(K.MAX_SUBFLOWS), np.zeros(K.MAX_SUBFLOWS)
        a = K.subflow_signals(f, ls, sim.lb, la)
        b = K.subflow_signals.py_func(f, ls, sim.lb, lb)
        np.testing.assert_allclose(a, b, rtol=1e-12)
        np.testing.assert_allclose(la, lb, rtol=1e-12)
    out_a, out_b = np.zeros(16, dtype=np.int64), np.zeros(16, dtype=np.int64)
    for _ in range(50):
        src, dst = (int(h) for h in RNG.choice(256, 2, replace=False))
        entropy = int(RNG.integers(0, 1 << 16))
        with np.errstate(over="ignore"):
            hb = K.ecmp_path.py_func(src, dst, entropy, *sim.lb[8:13], out_b)
        ha = K.ecmp_path(src, dst, entropy, *sim.lb[8:13], out_a)
        assert ha == hb and (out_a[:ha] == out_b[:hb]).all()


def test_ecmp_routes_of_all_flows_are_the_packet_engines_hash():
    """The fluid engine's setup routes every flow at once (array operations, hop by hop):
    each path is the one the packet engine's switches hash the flow onto."""
    from uno.fluid.balance import ecmp_routes as _ecmp_routes
    from uno.fluid.routes import ecmp_path_edges as _ecmp_path

    sim = _unolb_sim()
    host_node, nh_ptr, nh_edges, edge_dst, salt = sim.lb[8:13]
    switch_index = {}
    for i, node in enumerate(sim.scenario.routing.topo.nodes):
        if node.kind != "host":
            switch_index[i] = len(switch_index)
    n = 300
    src = RNG.integers(0, len(host_node), n)
    dst = (src + RNG.integers(1, len(host_node), n)) % len(host_node)
    entropy = RNG.integers(0, 1 << 16, n)
    links, hops = _ecmp_routes(src, dst, entropy, 16, host_node, nh_ptr, nh_edges, edge_dst, salt)
    for i in range(n):
        expect = _ecmp_path(sim.scenario, int(src[i]), int(dst[i]), int(entropy[i]), switch_index)
        assert list(links[i, : hops[i]]) == expect
        assert (links[i, hops[i] :] == 0).all()


def test_first_uniforms_are_each_streams_first_draws():
    """RngStreams.first_uniforms computes many named streams' first draws at once: exactly the
    values their own generators give, and a stream asked for later goes on after them."""
    from uno.core.rng import RngStreams

    names = [f"lb/{i}" for i in range(200)]
    for seed in (0, 1, 7, 2**32 - 1, 2**32 + 5, 2**70 + 3):
        ahead = RngStreams(seed)
        got = ahead.first_uniforms(names, 3)
        ref = RngStreams(seed)
        expect = np.array([[ref.buffered(nm).next() for _ in range(3)] for nm in names])
        assert np.array_equal(got, expect)
        # later draws continue each stream, buffered or as a generator
        fresh = RngStreams(seed)
        assert ahead.buffered(names[5]).next() == [fresh.buffered(names[5]).next()
                                                   for _ in range(4)][3]  # fmt: skip
        assert ahead.stream(names[6]).random() == fresh.stream(names[6]).random(4)[3]
    with pytest.raises(ValueError, match="named twice"):
        RngStreams(1).first_uniforms(["a", "a"], 1)
    used = RngStreams(1)
    used.buffered("b")
    with pytest.raises(ValueError, match="already in use"):
        used.first_uniforms(["b"], 1)


def test_route_drains_add_in_route_order():
    """The delay lines' length reads each route's full-buffer drain time: the sum over its
    switch ports, added in route order as Python's sum adds."""
    from uno.fluid.routes import BYTES_PER_PS_PER_BPS as _BPS
    from uno.fluid.routes import route_drains_ps as _route_drains_ps
    from uno.scenario import is_switch_port

    sim = _unolb_sim()
    routing = sim.scenario.routing
    drains = _route_drains_ps(routing, sim.rt_ptr, sim.rt_link, sim.rt_w)
    for f in range(len(sim.flows)):
        route = sim.rt_link[sim.rt_ptr[f] : sim.rt_ptr[f + 1]].tolist()
        expect = sum(
            routing.edges[e].buffer_bytes / (routing.edges[e].rate_bps * _BPS)
            for e in route
            if is_switch_port(routing, routing.edges[e])
        )
        assert drains[f] == expect


def test_a_sprayed_routes_drain_is_its_longest_paths():
    """A sprayed route lists every link of a split hop, but a byte crosses one of them: its
    full-buffer drain time (which sizes the delay lines) is that of one path, so on the default
    incast (every path of a pair crosses as many ports of the same buffer and rate) each
    sprayed flow's equals the same flow's on its ECMP path, and the delay lines are as long."""
    from uno.api import to_run_config
    from uno.build import build_simulation
    from uno.fluid.routes import route_drains_ps as _route_drains_ps

    sims = {}
    for lb in ("spray", "ecmp"):
        cfg = to_run_config(uno.compose(["engine.kind=fluid", f"lb={lb}"]))
        sims[lb] = build_simulation(cfg)
    spray, ecmp = sims["spray"], sims["ecmp"]
    assert (np.diff(spray.rt_ptr) > np.diff(ecmp.rt_ptr)).all()  # the split hops' links
    routing = spray.scenario.routing

    def drains(sim):  # the data's routes, then the ACKs' way back
        return [_route_drains_ps(routing, sim.rt_ptr, sim.rt_link, sim.rt_w),
                _route_drains_ps(routing, sim.rv_ptr, sim.rv_link, sim.rv_w)]  # fmt: skip

    for sprayed, hashed in zip(drains(spray), drains(ecmp), strict=True):
        np.testing.assert_allclose(sprayed, hashed, rtol=1e-12)
        assert (sprayed > 0).all()
    np.testing.assert_array_equal(spray.ring_len, ecmp.ring_len)


def test_acks_wait_in_the_reverse_paths_queues():
    """A packet receiver sends its ACKs back through the data FIFOs of the reverse path
    (hashed on (dst, src, entropy): uno.transport.receiver, uno.net.port), so the RTT and the
    completion of a flow include the queues its ACKs meet. On the dumbbell, two long flows
    s0, s1 -> r0 fill the left -> right bottleneck; a short flow r0 -> s2 sends its data over
    the empty right -> left direction and its ACKs through that full queue: it finishes about
    one full-queue delay late, not at its ideal FCT (which it did when the fluid RTT held the
    data path's queues only)."""
    from conftest import flows_override

    base = ["topo=dumbbell", "cc=dctcp", "switch=ecn", "switch.ecn.enabled=false",
            "lb=ecmp", "engine.kind=fluid", "engine.sample_interval_us=0"]  # fmt: skip
    flows = flows_override([(0, 4, 20_000_000), (1, 4, 20_000_000), (4, 2, 8_000, 1000.0)])
    cfg = uno.compose([*base, "workload=flows", flows])
    out = uno.run(cfg).flows.set_index("flow_id")
    short = out.loc[2]
    full_queue_ps = 1048576 / (100e9 / 8 / 1e12)  # the bottleneck's buffer at line rate
    assert short["fct_ps"] - short["ideal_fct_ps"] > 0.25 * full_queue_ps
    # the ACKs' route is the packet engine's reverse path: from r0's NIC to s2
    from uno.api import to_run_config
    from uno.build import build_simulation

    sim = build_simulation(to_run_config(cfg))
    edges, host_nodes = sim.scenario.routing.edges, sim.scenario.routing.host_nodes
    back = sim.rv_link[sim.rv_ptr[2] : sim.rv_ptr[3]].tolist()
    assert edges[back[0]].src == host_nodes[2] and edges[back[-1]].dst == host_nodes[4]
    ls = np.zeros_like(sim.ls)
    ls[back[1], K.LS_DELAY] = 5e6
    assert K.reverse_delay(2, sim.rv_ptr, sim.rv_link, sim.rv_w, ls) == 5e6
    assert K.path_delay(2, sim.rt_ptr, sim.rt_link, sim.rt_w, ls) == 0.0
    # with the switches' ACK lane (switch.ack_priority) the ACKs pass the full queue
    lane = uno.compose([*base, "workload=flows", flows, "switch.ack_priority=true"])
    short = uno.run(lane).flows.set_index("flow_id").loc[2]
    assert short["fct_ps"] - short["ideal_fct_ps"] < 0.05 * full_queue_ps
    sim = build_simulation(to_run_config(lane))
    assert K.reverse_delay(2, sim.rv_ptr, sim.rv_link, sim.rv_w, ls) == 0.0


def test_delay_lines_are_reused_without_changing_results(delay_lines_at_end):
    """Running flows take their delay lines from a pool and give them back cleared when they
    finish: the ring rows ever touched follow the flows running at once (here 160 lines for
    400 flows), every finished flow's line is back in the pool, all zero when the run ends,
    and the results are those of a run in which no line is ever reused (each flow its own
    class in the pool)."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = to_run_config(uno.compose(["experiment=fig10_load", "workload=mixed_artifact",
                                     "scheme=mprdma_bbr", "workload.n_flows=400", "workload.load=0.6",
                                     "engine.kind=fluid", "engine.sample_interval_us=0"]))  # fmt: skip
    pooled = build_simulation(cfg)
    apart = build_simulation(cfg)
    n = len(apart.flows)
    ptr, length, _, free_rows, _, free_count, top = apart.ring_pool
    apart.ring_pool = (ptr, length, np.arange(n, dtype=np.int64), free_rows,
                       np.arange(n, dtype=np.int64), np.zeros(n, dtype=np.int64), top)  # fmt: skip
    a, b = pooled.run(), apart.run()
    assert pooled.n_finished == n
    ptr, length, cls, _, _, free_count, top = pooled.ring_pool
    # every line ever handed out is back in the pool, and no row twice
    block_rows = np.zeros(len(free_count), dtype=np.int64)
    block_rows[cls] = length
    assert (ptr == -1).all() and (block_rows * free_count).sum() == top[0]
    assert free_count.sum() < 0.5 * n and top[0] < 0.7 * length.sum()  # reused ...
    assert apart.ring_pool[6][0] == length.sum()  # ... against one line per flow
    assert delay_lines_at_end == [False, False]  # (every line back, cleared)
    flows = a.tables["flows"]
    assert flows["retransmits"].sum() > 0  # losses (and their timers) went through the lines
    import pandas as pd

    pd.testing.assert_frame_equal(flows, b.tables["flows"])


def test_narrow_ring_gives_the_results_of_the_full_ring():
    """Without coded flows and Gemini or BBR flows the delay lines keep only the first
    ``N_R_NARROW`` columns (what is decodable is what is acknowledged; no coding absorbs
    losses; no RTT or delivery sample rides along): the same flows table as with all ``N_R``."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = to_run_config(uno.compose(["experiment=fig10_load", "workload=mixed_artifact",
                                     "scheme=uno_ecmp", "workload.n_flows=400", "workload.load=0.6",
                                     "engine.kind=fluid", "engine.sample_interval_us=0"]))  # fmt: skip
    narrow = build_simulation(cfg)
    full = build_simulation(cfg)
    assert narrow.ring.shape[1] == K.N_R_NARROW
    full.ring = np.zeros((len(full.ring), K.N_R))
    a, b = narrow.run(), full.run()
    flows = a.tables["flows"]
    assert flows["retransmits"].sum() > 0 and flows["finish_ps"].notna().all()
    import pandas as pd

    pd.testing.assert_frame_equal(flows, b.tables["flows"])
    gemini = uno.compose(["experiment=fig10_load", "workload=mixed_artifact", "scheme=gemini",
                          "workload.n_flows=50", "engine.kind=fluid"])  # fmt: skip
    assert build_simulation(to_run_config(gemini)).ring.shape[1] == K.N_R


@pytest.mark.parametrize("twin", [False, True])
def test_ring_pool_hands_out_cleared_lines_of_the_right_length(twin):
    """``ring_take`` / ``ring_give`` (and their Python twins): a line given back is cleared,
    goes to the next flow of its length, never to a flow of another length, and fresh rows
    come after every row handed out before."""
    take = K.ring_take.py_func if twin else K.ring_take
    give = K.ring_give.py_func if twin else K.ring_give
    mark = K.mark_due.py_func if twin else K.mark_due
    length = np.array([5, 3, 5, 5, 3], dtype=np.int64)
    cls = np.array([1, 0, 1, 1, 0], dtype=np.int64)
    pool = (np.full(5, -1, dtype=np.int64), length, cls, np.zeros(5, dtype=np.int64),
            np.array([0, 2], dtype=np.int64), np.zeros(2, dtype=np.int64),
            np.zeros(1, dtype=np.int64))  # fmt: skip
    ring = np.zeros((int(length.sum()), K.N_R))
    fs = np.zeros((5, K.N_FS))
    calendar = np.zeros((7, 1), dtype=np.uint64)
    ptr = pool[0]
    take(pool, 0)
    take(pool, 1)
    assert ptr[0] == 0 and ptr[1] == 5 and pool[6][0] == 8
    # flow 0 finishes at step 10 with feedback still due at steps 11-14 (slots 1-4)
    for step in range(11, 15):
        ring[step % 5] = RNG.uniform(1, 2, K.N_R)
        mark(calendar, step, 0)
    fs[0, K.FS_DUE_LAST] = 14
    give(ring, pool, 0, 10, fs, calendar)
    assert ptr[0] == -1 and not ring.any()
    take(pool, 4)  # length 3: not flow 0's line
    assert ptr[4] == 8 and pool[6][0] == 11
    take(pool, 2)  # length 5: flow 0's line
    assert ptr[2] == 0 and pool[6][0] == 11
    take(pool, 3)
    assert ptr[3] == 11 and pool[6][0] == 16


@pytest.mark.parametrize("twin", [False, True])
def test_ring_give_writes_only_the_slots_with_something_due(twin):
    """A finished flow's line is cleared where the calendar says feedback is due after the
    finishing step, up to ``FS_DUE_LAST``, and nowhere else: the slots never reached are not
    touched (no page faults for the unused part of a line sized for the timer). The slots of
    another flow due at the same steps are left alone."""
    give = K.ring_give.py_func if twin else K.ring_give
    mark = K.mark_due.py_func if twin else K.mark_due
    n = 8
    pool = (np.array([0, 8], dtype=np.int64), np.array([n, n], dtype=np.int64),
            np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int64),
            np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
            np.array([16], dtype=np.int64))  # fmt: skip
    ring = np.full((2 * n, K.N_R_NARROW), 7.0)  # 7: stands for "never cleared"
    fs = np.zeros((2, K.N_FS))
    calendar = np.zeros((11, 1), dtype=np.uint64)
    k = 20
    for step in (k + 2, k + 5):  # flow 0: due at two later steps
        mark(calendar, step, 0)
    mark(calendar, k + 3, 1)  # flow 1 (another line) due in between
    fs[0, K.FS_DUE_LAST] = k + 5
    give(ring, pool, 0, k, fs, calendar)
    cleared = sorted({int(r) for r in np.nonzero((ring == 0.0).all(axis=1))[0]})
    assert cleared == sorted([(k + 2) % n, (k + 5) % n])
    assert (ring[n:] == 7.0).all()
    # nothing due after the finishing step (FS_DUE_LAST not later): nothing written
    ring[:] = 7.0
    pool[0][0], pool[5][0] = 0, 0  # flow 0 holds its line again
    fs[0, K.FS_DUE_LAST] = k
    give(ring, pool, 0, k, fs, calendar)
    assert (ring == 7.0).all()


def test_per_step_state_rows_start_on_cache_lines():
    """The links', flows' and route entries' rows start on 64-byte boundaries (so a link's or
    an entry's fields that every step reads lie in one cache line; an entry's integer fields
    take half a line) and stay C-contiguous and zero where nothing was set."""
    from uno.api import to_run_config
    from uno.build import build_simulation
    from uno.fluid.memory import zeros_aligned

    for rows, cols, dtype in ((3, 32, np.float64), (5, 8, np.int64), (7, 4, np.float64)):
        a = zeros_aligned(rows, cols, dtype)
        assert a.shape == (rows, cols) and a.dtype == dtype and not a.any()
        assert a.flags.c_contiguous and a.ctypes.data % 64 == 0
    sim = build_simulation(to_run_config(uno.compose([*DUMBBELL, "engine.kind=fluid"])))
    for a in (sim.ls, sim.fs, sim.hops[2], sim.hops[3]):
        assert a.flags.c_contiguous and a.ctypes.data % 64 == 0
    assert sim.ls.strides[0] % 64 == 0 and sim.fs.strides[0] % 64 == 0
    assert sim.hops[2].dtype == np.int32 and sim.hops[2].strides[0] == 32  # two a line


@pytest.mark.parametrize("scheme", ["uno_ecmp", "uno", "mprdma_bbr"])
def test_passing_over_flows_with_nothing_due_changes_nothing(scheme):
    """A step passes over the running flows with nothing due (no feedback in their delay
    line's slot, no timer, no loss report: ``calendar``) that could send nothing at their last
    try (``FX_QUIET``). The same run with every flow marked due and none quiet at every step
    (each flow handled every step, as before the calendar) gives the same flows table."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = to_run_config(uno.compose(["experiment=fig10_load", "workload=mixed_artifact",
                                     f"scheme={scheme}", "workload.n_flows=80",
                                     "workload.load=0.6", "engine.kind=fluid",
                                     "engine.sample_interval_us=0"]))  # fmt: skip
    fast = build_simulation(cfg)
    fast.advance(0, 10**9)
    every = build_simulation(cfg)
    rows = every.calendar.shape[0]
    passed_over = 0
    k = 0
    while every.counters[2] < len(every.flows):
        n = int(every.counters[1])
        quiet = every.fx[every.active[:n], K.FX_QUIET] > 0
        due = np.unpackbits(every.calendar[k % rows].view(np.uint8), bitorder="little")
        passed_over += int((quiet & (due[every.active[:n]] == 0)).sum())
        every.calendar[k % rows] = np.iinfo(np.uint64).max
        every.fx[:, K.FX_QUIET] = 0.0
        k = every.advance(k, k + 1)
    assert passed_over > 1000  # the fast run had flows to pass over
    assert fast.counters[2] == len(fast.flows)
    np.testing.assert_array_equal(fast.fs, every.fs)
    np.testing.assert_array_equal(fast.cs, every.cs)
    np.testing.assert_array_equal(fast.ls, every.ls)


def test_timer_switches_to_the_after_retransmit_timeout():
    """With ``transport.intra.rto_base_rtts_after_retransmit`` (the Uno artifact's MPRDMA:
    2.875 base RTTs, then 2.5 once the flow resends), a flow's timer uses the shorter timeout
    once its first lost bytes go back to be sent, as the packet sender does when it sends its
    first retransmission: bytes lost at step k are declared at the first step boundary
    RTO_after after their send once the batches timed with the first RTO are past. Before, the
    fluid engine ignored the setting."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    sim = build_simulation(to_run_config(uno.compose([
        *TIMER_ONLY, "transport.intra.rto_base_rtts=4",
        "transport.intra.rto_base_rtts_after_retransmit=2"])))  # fmt: skip
    fs, n = sim.fs, len(sim.fs)
    first = fs[:, K.FS_RTO].copy()
    after = fs[:, K.FS_RTO_AFTER].copy()
    np.testing.assert_allclose(first, 2 * after, rtol=1e-6)
    lag_first = np.ceil(first / sim.dt_ps).astype(np.int64)
    lost, declared, rto, sent = _timer_trace(sim, K.FS_RTO)
    due = _due_an_rto_after_the_send(lost, sent, rto, sim.dt_ps)
    checked = 0
    for f in range(n):
        t0 = int(np.argmax(declared[:, f] > 1e-6))  # the first declaration: the switch
        assert t0 > 0 and declared[t0, f] > 1e-6
        assert (rto[:t0, f] == first[f]).all() and (rto[t0:, f] == after[f]).all()
        # every batch an RTO after its send, the RTO in force when it was lost: from t0 +
        # lag_first on, only those lost at t0 or later, at the new RTO
        np.testing.assert_allclose(declared[:, f], due[:, f], atol=1e-6)
        checked += int(np.count_nonzero(declared[t0 + lag_first[f] :, f] > 1e-6))
    assert checked > 3


def test_coded_flows_deliver_only_what_crosses_the_links_and_lost_blocks_wait_for_the_timer():
    """UnoRC's (8,2) blocks over a congested WAN. A coded flow's losses are the links' own
    drops, so every block it counts as decoded had 8 of its packets cross the WAN: the WAN
    ports pass at least the coded flows' data bytes. (The send-time block model before counted
    as delivered bytes the links had dropped: on the 40%-load traffic the WAN passed 1.05 GB
    for 1.72 GB of data, and 0.75 times the data here.) The lost packets of blocks that cannot be decoded are resent once
    the receiver's timer NACKs them; a block none of whose packets arrived leaves the receiver
    nothing to NACK, so the sender's retransmission timer finds it (as the packet sender's)."""
    cfg = uno.compose(["experiment=fig10_load", "workload=mixed_artifact", "scheme=uno",
                       "workload.n_flows=3000", "engine.kind=fluid",
                       "engine.sample_interval_us=0"])  # fmt: skip
    result = uno.run(cfg)
    flows, ports = result.flows, result.tables["ports"]
    assert flows["finish_ps"].notna().all()
    coded = flows[flows["coded"]]
    assert len(coded) > 100  # (the inter-DC flows)
    assert coded["nacks"].sum() > 10 and coded["timeouts"].sum() > 0
    wan = ports[ports["kind"] == "wan"]
    assert wan["drops"].sum() > 0.5 * coded["packets"].sum()  # (a lossy WAN)
    # (the send-time block model: 0.75 x the data bytes)
    assert wan["tx_bytes"].sum() >= coded["size_bytes"].sum()


@pytest.mark.parametrize("twin", [False, True])
def test_a_coded_flows_nack_comes_an_rtt_and_the_receivers_timer_after_the_send(twin):
    """The receiver's timer starts as a block's first packet arrives, a forward trip after its
    send, and its NACK takes the trip back (uno/transport/receiver.py): the sender hears of a
    coded flow's lost bytes at send + RTT + timer (``R_NACK``), each step's at its own time,
    and the blocks of which nothing arrived wait for the sender's timer."""
    book = K.book_losses.py_func if twin else K.book_losses
    dt, mss = 1000.0, 4096.0
    fs = np.zeros((1, K.N_FS))
    fs[0, K.FS_LOSS_DELAY] = 40 * dt  # the receiver's timer
    fs[0, K.FS_RTO] = 150 * dt
    fs[0, K.FS_LOSS_AT] = -1.0
    ring = np.zeros((200, K.N_R))
    ring_ptr, ring_len = np.zeros(1, dtype=np.int64), np.full(1, 200, dtype=np.int64)
    calendar = np.zeros((256, 1), dtype=np.uint64)
    # at step 10, bytes sent at 9,500 ps with a 60.2-step RTT: 4 packets, 1 of them in a block
    # none of whose packets arrived
    book(0, 10, 9_500.0, 60_200.0, 4 * mss, mss, 8, dt, fs, ring, ring_ptr, ring_len, calendar)
    # (a later step's losses: their own time)
    book(0, 30, 30_000.0, 60_000.0, mss, 0.0, 8, dt, fs, ring, ring_ptr, ring_len, calendar)
    due = np.nonzero(ring[:, K.R_NACK])[0]
    # 9,500 + 60,200 + 40,000 = 109,700 ps: step 110; 30,000 + 100,000: step 130
    assert due.tolist() == [110, 130]
    assert ring[110, K.R_NACK] == 3 * mss and ring[130, K.R_NACK] == mss
    assert (int(calendar[110, 0]) & 1) and (int(calendar[130, 0]) & 1)
    assert fs[0, K.FS_LOSS_AT] == -1.0 and fs[0, K.FS_LOSS_PENDING] == 0.0  # nothing heard yet
    # the block none of whose packets arrived: the sender's timer, an RTO after the send
    assert fs[0, K.FS_WAIT] == mss and ring[160, K.R_TIMEOUT] == mss


def test_inter_dc_coded_flows_hear_of_no_loss_before_an_rtt_and_the_receivers_timer():
    """The 40%-load Fig. 10 traffic with UnoRC: a coded inter-DC flow's first loss report
    (its receiver's NACK) comes no earlier than its base RTT + the receiver's timer after its
    start, as with packets. (Timed from the drop, the fluid's came ~670 us after the start, a
    third of the 1,795-us base RTT, and UnoLB moved the subflows that early.)"""
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = uno.compose(["experiment=fig10_load", "workload=mixed_artifact", "scheme=uno",
                       "workload.n_flows=1500", "workload.load=0.4", "engine.kind=fluid"])  # fmt: skip
    sim = build_simulation(to_run_config(cfg))
    fs = sim.fs
    coded = np.nonzero(fs[:, K.FS_EC_N] > 0)[0]
    first = np.full(len(fs), np.nan)
    k, chunk = 0, int(50e6 // sim.dt_ps)  # 50 us: less than any two reports of a flow apart
    while k * sim.dt_ps < 8e9:
        k = sim.advance(k, k + chunk)
        new = coded[(fs[coded, K.FS_LOSS_EVENTS] > 0) & np.isnan(first[coded])]
        first[new] = fs[new, K.FS_LAST_NACK]
    heard = coded[~np.isnan(first[coded])]
    assert len(heard) > 20
    earliest = fs[heard, K.FS_START] + fs[heard, K.FS_BASE_RTT] + fs[heard, K.FS_LOSS_DELAY]
    assert (first[heard] >= earliest).all()


@pytest.mark.parametrize("scheme", ["uno", "mprdma_bbr", "gemini"])
def test_coarsen_moves_each_slot_to_the_coarse_step_holding_it(scheme):
    """The step grows 4-fold mid-run (:func:`kernels.coarsen`): the kernel agrees with its
    Python twin, and each running flow's delay line holds the same feedback filed by the coarse
    steps: per flow, the bytes of every summed column unchanged (the bytes on the wire among
    them), the latest send, the last arrival and the wire's ACK frontier unchanged, the
    calendar due exactly at the coarse steps holding something (and at a pending loss
    report's), and the step fields divided by the factor. Coded UnoLB flows
    (``uno``: the wide ring), the least RTT sample and the delivered count at the latest send (``R_RTTMIN``, ``R_DSENT``)."""
    import copy

    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = uno.compose(["experiment=fig10_load", "workload=mixed_artifact", f"scheme={scheme}",
                       "workload.n_flows=60", "workload.load=0.6", "engine.kind=fluid"])  # fmt: skip
    sim = build_simulation(to_run_config(cfg))
    k = sim.advance(0, 400)
    n_active = int(sim.counters[1])
    assert n_active > 0
    active = sim.active[:n_active].copy()
    ptr, length = sim.ring_pool[0], sim.ring_pool[1]
    rows_span = sim.calendar.shape[0]

    def lines(ring, calendar, step0, factor):
        """Per running flow: {step: its slot's row} of the steps with something due."""
        out = {}
        for f in active:
            due = {}
            for j in range(step0, step0 + length[f] // factor):
                if (int(calendar[j % rows_span, f >> 6]) >> (int(f) & 63)) & 1:
                    due[j] = ring[ptr[f] + j % length[f]].copy()
            out[int(f)] = due
        return out

    before = lines(sim.ring, sim.calendar, k, 1)
    assert sum(len(d) for d in before.values()) > n_active  # feedback on its way
    if scheme != "uno":  # inter-DC bytes on their WAN link's wire (UnoLB's subflows: none)
        assert sum(r[K.R_WIRE] for d in before.values() for r in d.values()) > 0.0
    fs_before = sim.fs.copy()
    twin = {n: copy.deepcopy(getattr(sim, n)) for n in ("fs", "ring", "calendar", "fx")}
    dt4 = 4 * sim.dt_ps
    k4 = K.coarsen(4, k, dt4, sim.fs, sim.cp, sim.ring, sim.ring_pool, sim.active, n_active,
                   sim.calendar, sim.fx)  # fmt: skip
    k4_py = K.coarsen.py_func(4, k, dt4, twin["fs"], sim.cp, twin["ring"], sim.ring_pool,
                              sim.active, n_active, twin["calendar"], twin["fx"])  # fmt: skip
    assert k4 == k4_py == k // 4
    for n in ("fs", "ring", "fx"):
        np.testing.assert_array_equal(getattr(sim, n), twin[n], err_msg=n)
    np.testing.assert_array_equal(sim.calendar, twin["calendar"])
    after = lines(sim.ring, sim.calendar, k4, 4)
    latest = (K.R_SENTMAX, K.R_ARRIVE, K.R_WIRE_ACK)  # (times: the maxima)
    summed = [c for c in range(sim.ring.shape[1]) if c not in (*latest, K.R_RTTMIN, K.R_DSENT)]
    for f in active:
        f = int(f)
        old, new = before[f], after[f]
        want_steps = {j // 4 for j, row in old.items() if row.any()}
        at = fs_before[f, K.FS_LOSS_AT]
        loss_step = max(int(np.ceil(at / dt4)), k4) if at >= 0 else None
        assert want_steps <= set(new) <= want_steps | {loss_step}, f
        for c in summed:
            assert sum(r[c] for r in new.values()) == pytest.approx(
                sum(r[c] for r in old.values()), rel=1e-12, abs=1e-9
            )
        for c in latest:
            assert max((r[c] for r in new.values()), default=0.0) == max(
                (r[c] for r in old.values()), default=0.0
            )
        for j4, row in new.items():  # each coarse slot: the maxima of its fine slots
            fine = [r for j, r in old.items() if j // 4 == j4]
            if fine:
                assert row[K.R_ARRIVE] == max(r[K.R_ARRIVE] for r in fine)
                assert row[K.R_WIRE_ACK] == max(r[K.R_WIRE_ACK] for r in fine)
    for c in (K.FS_DUE_LAST, K.FS_ACK_LAST, K.FS_WAIT_LAST):
        np.testing.assert_array_equal(sim.fs[:, c], np.floor(fs_before[:, c] / 4))
    assert (sim.fx[active, K.FX_QUIET] == 0).all()


def test_the_step_grows_once_only_long_rtt_flows_are_left():
    """On the Uno Fig. 10 traffic (300 flows) the step grows 8-fold (to the intra-DC base
    RTT, ``engine.fluid_step_max_intra_rtt``) once the last intra-DC flow finished, and
    only then: every intra-DC flow's result is that of the fixed-step run, to the bit; the
    inter-DC flows, which run on with the coarser step, all finish, with the mean and p99 FCT
    of the fixed-step run within 2% and 5% and their retransmissions within 5%, in a third
    fewer steps, and the same whether or not the run samples. A lone inter-DC flow's FCT stays
    its ideal FCT."""
    import pandas as pd

    base = ["experiment=fig10_load", "workload=mixed_artifact", "scheme=uno_ecmp",
            "workload.n_flows=300", "workload.load=0.4", "engine.kind=fluid",
            "engine.sample_interval_us=0"]  # fmt: skip
    fixed = uno.run(uno.compose([*base, "engine.fluid_step_max_intra_rtt=0.125"]))
    grown = uno.run(uno.compose(base))
    assert fixed.summary["run"]["fluid_step_last_us"] == fixed.summary["run"]["fluid_step_us"]
    assert grown.summary["run"]["fluid_step_last_us"] == pytest.approx(
        8 * grown.summary["run"]["fluid_step_us"]
    )
    assert grown.summary["run"]["fluid_steps"] < 0.67 * fixed.summary["run"]["fluid_steps"]
    a, b = fixed.flows, grown.flows
    intra = a["cls"] == "intra"
    cols = ["fct_ps", "retransmits", "timeouts", "sent_bytes"]
    np.testing.assert_array_equal(a.loc[intra, cols], b.loc[intra, cols])
    assert b["finish_ps"].notna().all()
    inter_a, inter_b = a.loc[~intra, "fct_ps"], b.loc[~intra, "fct_ps"]
    assert inter_b.mean() == pytest.approx(inter_a.mean(), rel=0.02)
    assert inter_b.quantile(0.99) == pytest.approx(inter_a.quantile(0.99), rel=0.05)
    assert b.loc[~intra, "retransmits"].sum() == pytest.approx(
        a.loc[~intra, "retransmits"].sum(), rel=0.05
    )
    # the step grows at the same steps whether or not the run samples its rates and queues
    sampled = uno.run(uno.compose([*base, "engine.sample_interval_us=10"]))
    pd.testing.assert_frame_equal(sampled.flows, grown.flows)
    times = sampled.tables["rates"]["time_ps"].unique() / 1e6  # at the interval's multiples
    off = np.abs(times - 10 * np.round(times / 10))
    assert off.max() <= grown.summary["run"]["fluid_step_last_us"]
    lone = uno.run(uno.compose(["engine.kind=fluid", "workload.n_intra=0", "workload.n_inter=1",
                                "lb=ecmp", "workload.size_bytes=20000000",
                                "engine.sample_interval_us=0"])).flows  # fmt: skip
    assert lone["fct_ps"].iloc[0] == pytest.approx(lone["ideal_fct_ps"].iloc[0], rel=0.01)


def test_a_flows_bytes_leave_a_link_in_finite_time():
    """The fluid FIFO passes each flow's bytes at a link in the link's departures / (queue +
    arrivals) share, whose tail never ends: a flow's last sliver below a byte
    (``kernels.RESIDUE_BYTES``) now leaves with the step's departures, so after every step no
    route entry holds a positive amount under a byte (before: a third of the entries walked
    on the 40%-load Fig. 10 traffic did), the link's counters take it (in = out + dropped +
    queued at every link) and every flow still delivers exactly its bytes."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = uno.compose(["experiment=fig10_load", "workload=mixed_artifact", "scheme=uno_ecmp",
                       "workload.n_flows=300", "workload.load=0.6", "engine.kind=fluid",
                       "engine.sample_interval_us=0"])  # fmt: skip
    sim = build_simulation(to_run_config(cfg))
    ef = sim.hops[3]
    held_steps = 0
    k = 0
    while k < 2000:
        k = sim.advance(k, k + 1)
        q = ef[:, K.EF_Q]
        held_steps += int((q > 0).any())
        assert not ((q > 0) & (q < 1.0)).any(), k
    assert held_steps > 1000  # queues held bytes most of the time
    sim.advance(k, 10**9)
    assert sim.counters[2] == len(sim.flows)
    ls, fs = sim.ls, sim.fs
    np.testing.assert_allclose(
        ls[:, K.LS_IN], ls[:, K.LS_TX] + ls[:, K.LS_DROP] + ls[:, K.LS_Q], rtol=1e-9, atol=1e-3
    )
    np.testing.assert_allclose(fs[:, K.FS_DELIVERED], fs[:, K.FS_SIZE], rtol=1e-9)


@pytest.mark.parametrize("twin", [False, True])
def test_a_long_rtt_flow_is_held_for_its_block_and_filed_once_at_its_end(twin):
    """Feedback in blocks (``kernels.hold_for_block``): a flow whose block is a step is filed
    every step; a flow with a 4-step block leaves the step's senders, droppers and markers,
    its sends add up (bytes, their mean time, the latest send), and it returns to the lists
    once, at the block's last step: as a sender if it sent, else as a dropper if it lost
    bytes, and as a marker if it delivered. A flow that finished meanwhile files nothing."""
    hold = K.hold_for_block.py_func if twin else K.hold_for_block
    n = 4
    fs = np.zeros((n, K.N_FS))
    fx = np.zeros((n, K.N_FX))
    fs[:, K.FS_STATE] = [1.0, 1.0, 1.0, 2.0]
    fs[:, K.FS_SEND_TIME] = 100.0
    block = np.zeros((3, n + 1), dtype=np.int64)
    block[0, :n] = [1, 4, 4, 2]
    block[0, n] = 4
    lists = [np.zeros(n, dtype=np.int64) for _ in range(3)]
    n_drop, n_mark = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    dt = 1000.0
    sends = {1: [10.0, 0.0, 30.0, 0.0], 0: [5.0] * 4}
    filed = []
    for k in range(4):
        now = k * dt
        senders = [f for f in (0, 1) if sends[f][k] > 0.0]
        for f in (0, 1):
            fx[f, K.FX_SEND] = sends[f][k]
        lists[0][: len(senders)] = senders
        droppers = [2] if k == 1 else []  # flow 2 loses bytes at step 1, sends nothing
        markers = [1, 3] if k == 2 else []  # deliveries (flow 3 finished since)
        if k == 1:
            fs[2, K.FS_DROPPED], fs[2, K.FS_EXPOSED] = 4096.0, 8192.0
        if k == 2:
            fs[1, K.FS_DELIV_NEW], fs[3, K.FS_DELIV_NEW] = 10.0, 7.0
        lists[1][: len(droppers)], n_drop[0] = droppers, len(droppers)
        lists[2][: len(markers)], n_mark[0] = markers, len(markers)
        n_send = hold(k, now, lists[0], len(senders), lists[1], n_drop, lists[2], n_mark, block,
                      fs, fx)  # fmt: skip
        filed.append((list(lists[0][:n_send]), list(lists[1][: n_drop[0]]),
                      list(lists[2][: n_mark[0]])))  # fmt: skip
    assert filed[0] == ([0], [], []) and filed[1] == ([0], [], []) and filed[2] == ([0], [], [])
    # step 3 ends the 4-step blocks (and flow 3's 2-step one, which files nothing: finished)
    assert filed[3] == ([0, 1], [2], [1])
    assert fs[1, K.FS_BLOCK_BYTES] == 40.0
    mean_at = (10.0 * (0 + 50.0) + 30.0 * (2 * dt + 50.0)) / 40.0
    assert fs[1, K.FS_BLOCK_MIDW] / fs[1, K.FS_BLOCK_BYTES] == pytest.approx(mean_at)
    assert fs[1, K.FS_BLOCK_SENT] == 2 * dt and fs[1, K.FS_BLOCK_END] == 2 * dt + 100.0
    assert fs[2, K.FS_DROPPED] == 4096.0 and fs[2, K.FS_BLOCK_BYTES] == 0.0
    assert fs[3, K.FS_DELIV_NEW] == 0.0  # finished: cleared
    assert block[1, n] == 0 and not block[2, :n].any()  # nothing held after the blocks' end
    # a flow still held when its block becomes a step (were a block to span the step's
    # growth): what it sends then joins what it holds, and it is filed once, at that step's end
    fs[1, K.FS_BLOCK_BYTES], fs[1, K.FS_BLOCK_MIDW] = 40.0, 40.0 * mean_at
    block[1, 0], block[1, n], block[2, 1] = 1, 1, 1
    block[0, 1] = 1
    fx[1, K.FX_SEND] = 20.0
    lists[0][:2] = [0, 1]
    n_drop[0] = n_mark[0] = 0
    n_send = hold(4, 4 * dt, lists[0], 2, lists[1], n_drop, lists[2], n_mark, block, fs, fx)
    assert list(lists[0][:n_send]) == [0, 1] and fs[1, K.FS_BLOCK_BYTES] == 60.0
    assert block[1, n] == 0 and block[2, 1] == 0


def test_feedback_in_blocks_changes_the_long_rtt_flows_little_and_the_short_ones_less():
    """``engine.fluid_blocks_per_rtt`` (default 256): on the Uno Fig. 10 traffic (300 flows,
    the step fixed at 1/8 of the intra-DC RTT, where the inter-DC flows' blocks are 4 steps)
    every flow finishes and delivers its bytes, the intra-DC flows' mean and p99 FCT stay
    within 2% and 5% of every flow filed every step (``= 0``), the inter-DC flows' within 2%
    and 5%, and their retransmissions within 5%. A lone inter-DC flow still finishes at its
    ideal FCT, to the picosecond, whatever its block. Drops fall evenly on a full queue's
    arrivals here (``engine.fluid_phase_drops=false``): with phase drops, which flow a full
    queue locks out turns on its grids' phases, which any change of timing reshuffles, and
    the p99 of 54 flows is then a draw, not a measure of the blocks."""
    base = ["experiment=fig10_load", "workload=mixed_artifact", "scheme=uno_ecmp",
            "workload.n_flows=300", "workload.load=0.4", "engine.kind=fluid",
            "engine.sample_interval_us=0", "engine.fluid_step_max_intra_rtt=0.125",
            "engine.fluid_phase_drops=false"]  # fmt: skip
    every = uno.run(uno.compose([*base, "engine.fluid_blocks_per_rtt=0"]))
    blocks = uno.run(uno.compose(base))
    a, b = every.flows, blocks.flows
    assert b["finish_ps"].notna().all()
    np.testing.assert_array_equal(b["bytes_delivered"], b["size_bytes"])
    for cls in ("intra", "inter"):
        sel = a["cls"] == cls
        fa, fb = a.loc[sel, "fct_ps"], b.loc[sel, "fct_ps"]
        assert fb.mean() == pytest.approx(fa.mean(), rel=0.02), cls
        assert fb.quantile(0.99) == pytest.approx(fa.quantile(0.99), rel=0.05), cls
    inter = a["cls"] == "inter"
    assert b.loc[inter, "retransmits"].sum() == pytest.approx(
        a.loc[inter, "retransmits"].sum(), rel=0.05
    )
    assert (a["fct_ps"] != b["fct_ps"]).any()  # (the blocks are on)
    for per_rtt in (256, 16):  # blocks of 4 and 64 steps: the last ACK's arrival, exactly
        lone = uno.run(uno.compose(["engine.kind=fluid", "workload.n_intra=0",
                                    "workload.n_inter=1", "lb=ecmp",
                                    "workload.size_bytes=20000000",
                                    "engine.fluid_step_max_intra_rtt=0.125",
                                    f"engine.fluid_blocks_per_rtt={per_rtt}",
                                    "engine.sample_interval_us=0"])).flows  # fmt: skip
        assert lone["fct_ps"].iloc[0] == pytest.approx(lone["ideal_fct_ps"].iloc[0], rel=1e-9)


def test_link_levels_follow_the_routes():
    """Each link's level is one past the deepest link feeding it on any route (a split hop's
    links each feed every link of the next hop); the links of a cycle come after all others,
    and a link no route uses is on level 0."""
    from uno.fluid.arrays import hop_state as _hop_state

    routes = [
        ([0, 1, 2], [1.0, 1.0, 1.0]),
        ([3, 1, 4], [1.0, 1.0, 1.0]),
        ([8, 9, 10, 2], [1.0, 0.5, 0.5, 1.0]),  # 8, then 9 or 10 (a split hop), then 2
        ([5, 6], [1.0, 1.0]),
        ([6, 5], [1.0, 1.0]),  # 5 and 6 feed each other
    ]
    rt_ptr = np.cumsum([0] + [len(r[0]) for r in routes]).astype(np.int64)
    rt_link = np.array([x for r in routes for x in r[0]], dtype=np.int64)
    rt_w = np.array([x for r in routes for x in r[1]])
    n = len(routes)
    hops = _hop_state(11, rt_ptr, rt_link, rt_w, np.zeros(n, dtype=np.int64),
                      np.zeros(n, dtype=np.int64), np.zeros((n, 1, 4), dtype=np.int64))  # fmt: skip
    # 0, 3, 8: nothing before them; 1 after 0 and 3; 9, 10 after 8; 2 after 1, 9 and 10;
    # 4 after 1; 7 unused; 5 and 6: a cycle, after the deepest level (2)
    assert hops[0].tolist() == [0, 1, 2, 0, 2, 3, 3, 0, 0, 1, 1]
    assert hops[1][0] == 4


def test_concat_ranges_lists_each_range_in_order():
    from uno.core.arrays import concat_ranges

    got = concat_ranges(np.array([5, 0, 9]), np.array([2, 0, 3]))
    assert got.tolist() == [5, 6, 9, 10, 11] and got.dtype == np.int64
    assert concat_ranges(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)).size == 0
