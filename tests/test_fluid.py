"""The flow-level engines (uno/fluid): every @njit kernel of the links and the laws agrees with
its pure-Python twin on random inputs; a lone flow's FCT is its ideal FCT; N long flows share a
bottleneck fairly and fill it; fluid and max-min read the same scenario as the packet engine and
write the same tables; settings they cannot model are refused naming the setting."""

from __future__ import annotations

import numpy as np
import pytest
from fluid_cases import DUMBBELL, law_flows, random_links

import uno
from uno.cc.law import NO_RECORDS
from uno.cc.registry import LAW_BY_NAME
from uno.core.errors import ConfigError
from uno.fluid import kernels as K
from uno.fluid.maxmin import maxmin_rates
from uno.fluid.support import FLUID_CC
from uno.metrics.flows import FLOW_COLUMNS

RNG = np.random.default_rng(7)


def test_link_kernel_matches_python():
    for _ in range(20):
        ls = random_links(50, RNG)
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
    """The hybrid's packet bytes enter the fluid links they crossed (``LS_EXT``, the links
    join the busy list), but for links no fluid flow can reach, left as they are."""
    for _ in range(20):
        ls = random_links(40, RNG)
        ls[:, K.LS_LISTED] = RNG.random(40) < 0.5
        busy0 = np.zeros(40, dtype=np.int64)
        listed = np.nonzero(ls[:, K.LS_LISTED])[0]
        busy0[: len(listed)] = listed
        links = RNG.choice(40, 10, replace=False).astype(np.int64)
        nbytes = RNG.uniform(0, 1e4, 10)
        reached = (RNG.random(40) < 0.7).astype(np.int64)
        waiting = np.full(10, -1, dtype=np.int64)  # (switch ports: no NIC claims)
        none = np.zeros(0, dtype=np.int64)
        out = []
        for fn in (K.fold_packet_bytes, K.fold_packet_bytes.py_func):
            a, busy = ls.copy(), busy0.copy()
            counters = np.zeros(K.CT.size, dtype=np.int64)
            counters[K.CT.busy] = len(listed)
            fn(a, busy, counters, links, nbytes, waiting, none, reached, np.arange(40), 1000.0)
            out.append((a, busy, counters))
        np.testing.assert_array_equal(out[0][0], out[1][0])
        np.testing.assert_array_equal(out[0][1], out[1][1])
        np.testing.assert_array_equal(out[0][2], out[1][2])
        a, busy, counters = out[0]
        took = reached[links] == 1
        np.testing.assert_allclose(a[links, K.LS_EXT], ls[links, K.LS_EXT] + nbytes * took)
        n_busy = counters[K.CT.busy]
        assert set(busy[:n_busy]) == set(listed) | set(links[took])
    # a folded group (links 0-3, link 0 for all): each port's bytes an even share of each link
    ls = random_links(8, RNG)
    ls[0, K.LS_FOLD] = 4.0
    rep = np.array([0, 0, 0, 0, 4, 5, 6, 7])
    before = ls[:, K.LS_EXT].copy()
    K.fold_packet_bytes(ls, np.zeros(8, dtype=np.int64), np.zeros(K.CT.size, dtype=np.int64),
                        np.array([1, 3]), np.array([400.0, 800.0]), np.full(2, -1),
                        np.zeros(0, dtype=np.int64), np.ones(8, dtype=np.int64), rep, 1000.0)  # fmt: skip
    assert ls[0, K.LS_EXT] == pytest.approx(before[0] + 300.0)
    np.testing.assert_array_equal(ls[1:, K.LS_EXT], before[1:])  # (the members' rows unread)


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
    # a delay as a delay line at its longest holds it: the next step at least, its length - 1
    # at most
    for lag in (-3, 0, 1, 4, 5, 8, 9, 40):
        for f in (0, 1):
            pools = [_pool([5, 9], [5, 9]), _pool([5, 9], [5, 9])]
            ring = np.zeros((14, 3))
            got = K.fit_lag(f, 0, lag, ring, pools[0])
            assert got == K.fit_lag.py_func(f, 0, lag, ring, pools[1])
            assert got == min(max(lag, 1), (5, 9)[f] - 1)


def _pool(first, longest):
    """A pool of one line per flow, each flow's taken (rows from 0 on, lines ``first`` long that
    may grow to ``longest``)."""
    from uno.fluid.arrays import ring_pool
    from uno.fluid.rings import ring_take

    pool = ring_pool(np.array(longest, dtype=np.int64), np.array(first, dtype=np.int64))
    for f in range(len(first)):
        ring_take(pool, f)
    return pool


@pytest.mark.parametrize("twin", [False, True])
def test_a_delay_line_grows_keeping_each_slot_at_its_step(twin):
    """A delay its line cannot hold grows the line (to the least power of two that holds it
    and doubles it, at most its longest): every slot keeps its step, the old line goes back to
    the pool zeroed, and a delay beyond the longest line is the longest it holds."""
    fit = K.fit_lag.py_func if twin else K.fit_lag
    pool = _pool([4, 4], [12, 4])
    ring = np.zeros((4 + 4 + 8 + 12, 2))
    k = 21  # slots of steps 21..24 of flow 0's line: step s in row s % 4
    for step in range(k, k + 4):
        ring[step % 4] = (step, 1.0)
    assert fit(0, k, 3, ring, pool) == 3 and pool.length[0] == 4  # fits
    assert fit(0, k, 5, ring, pool) == 5 and pool.length[0] == 8
    start = pool.ptr[0]
    assert start == 8 and (ring[:4] == 0).all()  # (flow 1's line: rows 4..7)
    for step in range(k, k + 4):
        assert ring[start + step % 8].tolist() == [step, 1.0]
    assert fit(0, k, 40, ring, pool) == 11 and pool.length[0] == 12  # at its longest
    assert pool.ptr[0] == 16  # (the freed lines are too short: 12 new rows from the top)
    assert ring[pool.ptr[0] + 22 % 12].tolist() == [22, 1.0]
    assert pool.free_count[np.searchsorted(pool.class_len, [4, 8])].tolist() == [1, 1]
    assert fit(1, k, 9, ring, pool) == 3 and pool.length[1] == 4  # (its longest is 4)


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
    ls = random_links(3, RNG)
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


@pytest.mark.parametrize("name", [n for n in LAW_BY_NAME if n in FLUID_CC])
def test_law_batches_match_python(name):
    """A law (uno/cc/law.py) in the fluid engine: random batches of ACKs (fractional packets,
    marked shares, carried mark counts, RTT samples, delivery-rate samples, queueing chances
    with draws) and losses, through the compiled driver and its pure-Python twin: the same
    state, carries and draws."""
    cs, cp, fs = law_flows(name, RNG)
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


@pytest.mark.parametrize("engine", ["fluid", "maxmin"])
def test_a_flow_of_less_than_a_data_packet_finishes_as_its_one_packet_does(engine):
    """Its one packet crosses each hop in its own serialisation time, not a full data
    packet's: with 9000-B packets a 1000-B flow's full-packet base RTT is ~30% longer."""
    base = [*DUMBBELL, "workload.n_intra=1", "workload.size_bytes=1000",
            "transport.mtu_bytes=9000"]  # fmt: skip
    packet = uno.run(uno.compose([*base, "engine.kind=packet"])).flows.iloc[0]
    flow = uno.run(uno.compose([*base, f"engine.kind={engine}"])).flows.iloc[0]
    assert flow["fct_ps"] == pytest.approx(packet["fct_ps"], rel=0.02)
    assert flow["fct_ps"] == pytest.approx(flow["ideal_fct_ps"], rel=0.001)


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
        (["engine.kind=hybrid"], "engine.hybrid_packet_max_bytes"),
        (
            [
                "engine.kind=hybrid",
                "experiment=pfc_spreading",
                "lb=reps",
                "engine.hybrid_packet_tags=[victim]",
            ],
            "switch.pfc.enabled",
        ),
        (["cc=dctcp", "ec=mds"], "transport.dupack_threshold"),
        (
            ["cc=uno", "ec=mds", "transport.inter.dupack_threshold=3"],
            "transport.inter.dupack_threshold",
        ),
        (
            ["cc=dctcp", "ec=mds", "ec.scope=all", "transport.inter.dupack_threshold=0"],
            "transport.dupack_threshold",
        ),
    ],
)
def test_unsupported_settings_are_refused_naming_them(overrides, field):
    kind = [] if overrides[0].startswith("engine.kind") else ["engine.kind=fluid"]
    with pytest.raises(ConfigError) as err:
        uno.run(uno.compose([*kind, *overrides]))
    assert err.value.field.startswith(field), err.value.field


def test_coded_flows_run_once_fast_retransmit_is_off_for_their_class():
    """Fast retransmit is refused for the coded class only: with the inter-DC flows (the
    coded ones) at 0, DCTCP's intra-DC flows keep it; max-min, which finds no losses, takes
    the run as it is."""
    base = ["cc=dctcp", "ec=mds", "workload.size_bytes=200000", "engine.sample_interval_us=0"]
    r = uno.run(uno.compose([*base, "engine.kind=fluid", "transport.inter.dupack_threshold=0"]))
    assert r.flows["finish_ps"].notna().all() and r.flows["coded"].sum() == 4
    assert uno.run(uno.compose([*base, "engine.kind=maxmin"])).flows["finish_ps"].notna().all()


@pytest.mark.parametrize(
    "lb,named", [("ecmp", "ECMP"), ("spray", "even split"), ("unolb", "UnoLB"), ("plb", "PLB"),
                 ("reps", "REPS")],
)  # fmt: skip
def test_the_summary_names_the_balancers_fluid_model(lb, named):
    r = uno.run(uno.compose(["engine.kind=fluid", f"lb={lb}", "topo=fat_tree", "topo.k=4",
                             "workload=permutation", "workload.size_bytes=100000",
                             "engine.sample_interval_us=0"]))  # fmt: skip
    assert named in r.summary["run"]["lb_model"], r.summary["run"]["lb_model"]
