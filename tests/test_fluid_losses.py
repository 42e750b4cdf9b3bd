"""The fluid engine's losses and their recovery: coded flows' lost, failed and decodable bytes
in whole packets and blocks, UnoLB's moves of lossy subflows, fast retransmit and the
retransmission timer finding the losses the packet engine finds, each timed from its own send."""

from __future__ import annotations

import numpy as np
import pytest
from fluid_cases import law_flows, random_links, unolb_sim

import uno
from uno.fluid import kernels as K
from uno.fluid.arrays import no_tails, ring_pool
from uno.fluid.state import RingPool
from uno.fluid.timers import far_timer_arrays

RNG = np.random.default_rng(7)


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


def _one_line(length: int) -> RingPool:
    """One flow's delay line of ``length`` slots at the ring's first row, in a wide ring."""
    pool = ring_pool(np.full(1, length, dtype=np.int64), np.full(1, length, dtype=np.int64))
    pool.ptr[0] = 0
    return pool


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
    pool = _one_line(20)
    ring[5, K.R_ACK] = ring[5, K.R_GOOD] = 4 * mss
    take(0, 1, 5, mss, mss, fs, ring, pool)  # absorbed by coding
    assert ring[5, K.R_ACK] == 3 * mss and ring[5, K.R_GOOD] == 4 * mss
    assert ring[5, K.R_FREE] == mss
    take(0, 1, 5, mss, 0.0, fs, ring, pool)  # failed: to resend
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
    sim = unolb_sim()
    f = int(np.nonzero((sim.lb[0] > 0) & (sim.fs[:, K.FS_EC_N] > 0))[0][0])
    n_sub, n_ec = int(sim.lb[0][f]), int(sim.fs[f, K.FS_EC_N])
    mss = sim.cp[f, K.P_MSS]
    sub_drops = sim.lb[15]
    sub_drops[f, 2] = (3 * mss, 10 * mss)  # subflow 2: 3 packets' bytes dropped of 10 exposed
    sim.fs[f, K.FS_DROPPED], sim.fs[f, K.FS_EXPOSED] = 3 * mss, 10 * mss
    scratch = np.zeros(n_sub + int(sim.fs[f, K.FS_EC_M]) + 2)
    rng = sim.loss_rng.copy()
    lost, failed, _, _, _ = coded_losses(f, n_ec, mss, sim.fs, rng, sim.lb, scratch)
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


def test_unolb_silent_moves_the_subflows_without_a_recent_ack():
    """``affected: silent`` (the Uno artifact): a loss report moves every subflow whose last ACK
    is more than half a base RTT old (one never acknowledged too; one whose newest ACK is still
    on its way is not silent), each at most once per base RTT; ``reroute: random`` gives it a
    fresh entropy, hashed as the switches do."""
    sim = unolb_sim(extra=["lb.unolb.affected=silent", "lb.unolb.reroute=random"])
    lb = sim.lb
    f, rtt, now = 0, 1e7, 5e7
    n = int(lb.n[f])
    assert n >= 4
    lb.uno_s[f, :n, K.UNO_ACK_AT] = now - 0.3 * rtt  # heard lately
    lb.uno_s[f, 1, K.UNO_ACK_AT] = now - 0.7 * rtt  # silent
    lb.uno_s[f, 2, K.UNO_ACK_AT] = now + rtt  # its newest ACK on its way: its others arrive
    lb.uno_s[f, 3, K.UNO_ACK_AT] = 0.0  # never acknowledged
    before = lb.entropy[f, :n].copy()
    K.unolb_reroute(f, now, rtt, lb)
    assert set(np.flatnonzero(lb.entropy[f, :n] != before)) == {1, 3}
    out = np.zeros(16, dtype=np.int64)
    for s in (1, 3):
        hops = K.ecmp_path(*lb.ends[f], lb.entropy[f, s], *sim.lb[8:13], out)
        assert hops == lb.hops[f] and (out[:hops] == lb.links[f, s, :hops]).all()
    # half a base RTT on: those heard lately have gone silent; 1 and 3 moved within the base
    # RTT, 2 still hears its ACKs
    before = lb.entropy[f, :n].copy()
    K.unolb_reroute(f, now + 0.5 * rtt, rtt, lb)
    assert set(np.flatnonzero(lb.entropy[f, :n] != before)) == set(range(n)) - {1, 2, 3}
    assert (lb.lost[f] == 0).all()


def test_unolb_moves_the_lossy_subflows_once_per_rtt():
    """Lossy subflows move (with their ACKs' way back), at most once per base RTT."""
    sim = unolb_sim()
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
    ls = random_links(len(sim.ls), RNG)
    ls[:, K.LS_Q] = np.minimum(ls[:, K.LS_Q], ls[:, K.LS_BUF])  # (steady levels: no LS_QSLOPE)
    ls[:, K.LS_DELAY] = ls[:, K.LS_Q] / ls[:, K.LS_CAP] * RNG.uniform(1, 2, len(ls))  # (PFC's)
    want = np.mean([ls[sim.lb[13][f, s, : sim.lb[14][f]], K.LS_DELAY].sum() for s in range(n)])
    for ahead_ps in (0.0, 3e6):
        assert K.subflow_reverse_delay(f, ahead_ps, ls, sim.lb) == pytest.approx(want, rel=1e-12)
        got = K.subflow_reverse_delay.py_func(f, ahead_ps, ls, sim.lb)
        assert got == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("twin", [False, True])
def test_fast_retransmit_reveals_a_loss_only_by_acks_of_bytes_sent_after_it(twin):
    """Fast retransmit's evidence is bytes acknowledged after the lost ones, counted as their
    ACKs arrive from the slot where the lost bytes' own ACKs were due (the packet sender's
    rule: a packet is lost once 3 packets sent after it are acknowledged): ACKs before it
    reveal nothing; within a slot only the bytes after its last lost packet count, ``acked /
    (lost packets + 1)``; a slot's ACKs count whole for the older losses; and a new loss waits
    on its own evidence (``FS_EVIDENCE``, the newest's), the older ones keep theirs."""
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
    # a loss before enough evidence: it waits from none, the older one from 1.5
    evidence(0, 8000.0, 0.0, mss, mss, fs)
    assert fs[0, K.FS_UNREVEALED] == 2 * mss and fs[0, K.FS_EVIDENCE] == 0.0
    assert fs[0, K.FS_EVIDENCE_OLDEST] == 1.5 * mss
    evidence(0, 9000.0, 3 * mss, 0.0, mss, fs)
    assert fs[0, K.FS_LOSS_PENDING] == 7 * mss and fs[0, K.FS_WAIT] == 3 * mss


def _sack_waiting(lost, acked, slots, threshold, rng):
    """The packet sender's rule on slots of ``lost`` and ``acked`` packets each, in random
    order within a slot: after each slot, the lost packets with fewer than ``threshold``
    acknowledged packets sent after them (waiting)."""
    sent, waiting = [], []
    for _ in range(slots):
        slot = [True] * lost + [False] * acked
        rng.shuffle(slot)
        sent += slot
        after, left = 0, 0
        for is_lost in reversed(sent):
            if is_lost:
                left += after < threshold
            else:
                after += 1
        waiting.append(left)
    return waiting


@pytest.mark.parametrize("lost, acked", [(1, 1), (2, 1), (3, 2), (1, 4)])
def test_fast_retransmit_finds_the_oldest_losses_while_every_slot_loses_some(lost, acked):
    """A flow that loses some of every slot: each lost packet is found once 3 packets sent
    after it are acknowledged, whatever was lost after it, so the packets waiting for evidence
    settle where the packet sender's do (its rule on random orders within a slot, the mean of
    400), not growing until the timer takes them all. A slot's own losses wait together and
    the fluid finds whole packets, so it may lag by up to two slots' losses while they come
    in, by half a slot's once settled."""
    mss = 4096.0
    slots = 16
    fs = np.zeros((1, K.N_FS))
    fs[0, K.FS_DUPACK_BYTES] = 3 * mss
    fs[0, K.FS_WAIT] = slots * lost * mss
    fs[0, K.FS_LOSS_AT] = -1.0
    fluid = []
    for j in range(slots):
        K.fast_retransmit_evidence(0, 1000.0 * j, acked * mss, lost * mss, mss, fs)
        fluid.append(fs[0, K.FS_UNREVEALED] / mss)
    rng = np.random.default_rng(3)
    packets = np.mean([_sack_waiting(lost, acked, slots, 3, rng) for _ in range(400)], axis=0)
    off = np.array(fluid) - packets
    assert np.abs(off).max() <= 2 * lost
    assert abs(off[-8:].mean()) <= lost / 2 + 0.1  # (+ 0.1: the mean of 400 orders)
    found = fs[0, K.FS_FAST_BYTES] / mss
    assert found == pytest.approx(slots * lost - fluid[-1], rel=1e-9)


@pytest.mark.parametrize("twin", [False, True])
def test_a_loss_report_is_counted_and_the_controller_told_once_per_base_rtt(twin):
    """Loss reports found before a timeout (fast retransmit, NACKs) are each counted, and the
    controller hears of at most one per base RTT (DCTCP halves its window on each it hears)."""
    hear = K.hear_loss_report.py_func if twin else K.hear_loss_report
    cs, cp, fs = law_flows("dctcp", RNG, n=1)
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
    within 15% over the three (each within 25%) and the packets it resends within 10%. (Each
    step's losses revealed with the oldest waiting: 22 timeouts and 39 fast retransmits.)"""
    base = ["topo=dumbbell", "workload=incast", "workload.n_intra=4", "workload.n_inter=0",
            "workload.receiver=0",
            "cc=dctcp", "switch=ecn", "switch.ecn.enabled=false", "topo.buffer_bytes=100000",
            "workload.size_bytes=2000000", "engine.sample_interval_us=0",
            "transport.dupack_threshold=3"]  # fmt: skip
    packet = uno.run(uno.compose([*base, "engine.kind=packet"])).flows
    assert packet["timeouts"].sum() == 35 and packet["fast_retransmits"].sum() == 23
    timeouts = []
    for seed in (1, 2, 3):
        fluid = uno.run(uno.compose([*base, "engine.kind=fluid", f"seed={seed}"])).flows
        timeouts.append(fluid["timeouts"].sum())
        assert timeouts[-1] == pytest.approx(packet["timeouts"].sum(), rel=0.25)
        assert fluid["retransmits"].sum() == pytest.approx(packet["retransmits"].sum(), rel=0.1)
    assert np.mean(timeouts) == pytest.approx(packet["timeouts"].sum(), rel=0.15)


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
    pool = _one_line(10)
    k = 100
    for step, acked in ((101, 5.0), (102, 5.0), (104, 5.0)):
        ring[step % 10, K.R_ACK] = acked
        ring[step % 10, K.R_RTTW] = acked * 7.0
        ring[step % 10, K.R_GOOD] = acked
    fs[0, K.FS_PENDING] = 15.0
    fs[0, K.FS_ACK_LAST] = 104
    fs[0, [K.FS_DELIVERED, K.FS_ACKED, K.FS_INFLIGHT]] = 50.0, 50.0, 15.0
    cut(0, k, 7.0, 0.0, fs, ring, pool)
    assert list(ring[[1, 2, 4], K.R_ACK]) == [5.0, 3.0, 0.0]  # step 104 first, then 102
    assert ring[2, K.R_RTTW] == pytest.approx(3.0 * 7.0) and ring[2, K.R_GOOD] == 3.0
    assert fs[0, K.FS_PENDING] == 8.0 and fs[0, K.FS_ACK_LAST] == 102
    cut(0, k, 10.0, 0.0, fs, ring, pool)  # 8 still due: 2 were acknowledged already
    assert not ring[:, K.R_ACK].any() and fs[0, K.FS_PENDING] == 0.0
    assert list(fs[0, [K.FS_DELIVERED, K.FS_ACKED, K.FS_INFLIGHT]]) == [48.0, 48.0, 17.0]

    # a coded flow: the bytes of blocks that decode (freed) come off the ACKs but stay
    # decodable and leave flight with them; the rest come off what is decodable too
    ring[:] = 0.0
    ring[4, [K.R_ACK, K.R_GOOD]] = 8.0
    fs[0, K.FS_EC_N] = 8.0
    fs[0, K.FS_ACK_LAST], fs[0, K.FS_PENDING] = 104, 8.0
    fs[0, [K.FS_DELIVERED, K.FS_ACKED, K.FS_INFLIGHT]] = 50.0, 50.0, 8.0
    cut(0, k, 4.0, 1.0, fs, ring, pool)
    assert list(ring[4, [K.R_ACK, K.R_GOOD, K.R_FREE]]) == [4.0, 5.0, 1.0]
    cut(0, k, 8.0, 2.0, fs, ring, pool)  # 4 due, 4 acknowledged already
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
    coded flow's lost bytes at send - the block's lead + RTT + timer (``R_NACK``), each step's
    at its own time,
    and the blocks of which nothing arrived wait for the sender's timer."""
    book = K.book_losses.py_func if twin else K.book_losses
    dt, mss = 1000.0, 4096.0
    fs = np.zeros((1, K.N_FS))
    fs[0, K.FS_LOSS_DELAY] = 40 * dt  # the receiver's timer
    fs[0, K.FS_RTO] = 150 * dt
    fs[0, K.FS_LOSS_AT] = -1.0
    # (8 + 2 packets a block: the block's first packet leads a lost one by 4.5 packet times on
    # average, 500 ps at this line rate)
    fs[0, K.FS_EC_M] = 2
    fs[0, K.FS_NIC] = 4.5 * mss / 500.0
    # a line that starts 64 steps long and may grow to 200 (uno.fluid.rings.fit_lag)
    pool = RingPool(np.zeros(1, dtype=np.int64), np.full(1, 64, dtype=np.int64),
                    np.full(1, 200, dtype=np.int64), np.array([64, 128, 200]),
                    np.zeros(3, dtype=np.int64), np.arange(3, dtype=np.int64),
                    np.zeros(3, dtype=np.int64), np.full(1, 64, dtype=np.int64),
                    np.ones(1, dtype=np.int64), *far_timer_arrays(1),
                    *no_tails(np.full(1, 200)))  # fmt: skip
    ring = np.zeros((64 + 128 + 200, K.N_R))
    calendar = np.zeros((256, 1), dtype=np.uint64)
    # at step 10, bytes sent at 9,500 ps with a 60.2-step RTT: 4 packets, 1 of them in a block
    # none of whose packets arrived
    timer = fs[0, K.FS_LOSS_DELAY]
    book(0, 10, 9_500.0, 60_200.0, 4 * mss, mss, 8, mss, dt, fs, ring, pool, calendar, timer)
    # (a later step's losses: their own time)
    book(0, 30, 30_000.0, 60_000.0, mss, 0.0, 8, mss, dt, fs, ring, pool, calendar, timer)
    assert pool.length[0] == 128 and pool.free_count.tolist() == [1, 0, 0]  # grown once

    def due(col):
        start, n = pool.ptr[0], pool.length[0]
        return {s: ring[start + s % n, col] for s in range(30, 30 + n) if ring[start + s % n, col]}

    # 9,500 - 500 + 60,200 + 40,000 = 109,200 ps: step 110; 30,000 - 500 + 100,000: step 130
    assert due(K.R_NACK) == {110: 3 * mss, 130: mss}
    assert (int(calendar[110, 0]) & 1) and (int(calendar[130, 0]) & 1)
    assert fs[0, K.FS_LOSS_AT] == -1.0 and fs[0, K.FS_LOSS_PENDING] == 0.0  # nothing heard yet
    # the block none of whose packets arrived: the sender's timer, an RTO after the send; its
    # resend opens the block again at the receiver (FS_OPEN_TIMED). Beyond the line's end, the
    # timer waits apart (uno.fluid.timers) and enters the line at its step
    assert fs[0, K.FS_WAIT] == mss and due(K.R_TIMEOUT) == {}
    assert fs[0, K.FS_OPEN_TIMED] == mss
    assert pool.far_meta[0] == 1 and pool.far[0, [0, 3]].tolist() == [160.0, mss]
    drain = K.drain_far_timers.py_func if twin else K.drain_far_timers
    drain(159, fs, ring, pool, calendar)
    assert pool.far_meta[0] == 1  # (not yet)
    drain(160, fs, ring, pool, calendar)
    assert pool.far_meta[0] == 0 and ring[pool.ptr[0] + 160 % 128, K.R_TIMEOUT] == mss
    assert int(calendar[160, 0]) & 1


@pytest.mark.parametrize("twin", [False, True])
def test_a_block_a_retransmission_opened_is_nacked_after_the_retransmit_timeout(twin):
    """``ec.retransmit_timeout``: the receiver times a block whose first packet to arrive is a
    retransmission with ``FS_RETX_LOSS_DELAY`` (uno/transport/receiver.py), so the bytes lost
    in such blocks are NACKed that long after the trip, the others after ``FS_LOSS_DELAY``."""
    from uno.fluid.filing import book_coded
    from uno.fluid.state import DelayLines

    book = book_coded.py_func if twin else book_coded
    dt, mss = 1000.0, 4096.0
    fs = np.zeros((1, K.N_FS))
    fs[0, K.FS_LOSS_DELAY], fs[0, K.FS_RETX_LOSS_DELAY] = 40 * dt, 100 * dt
    fs[0, K.FS_RTO], fs[0, K.FS_LOSS_AT], fs[0, K.FS_EC_M] = 300 * dt, -1.0, 2
    fs[0, K.FS_NIC] = 4.5 * mss / 500.0  # (a lost packet's block leads it by 500 ps)
    pool = RingPool(np.zeros(1, dtype=np.int64), np.full(1, 256, dtype=np.int64),
                    np.full(1, 256, dtype=np.int64), np.array([256]), np.zeros(1, dtype=np.int64),
                    np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
                    np.full(1, 256, dtype=np.int64), np.ones(1, dtype=np.int64),
                    *far_timer_arrays(1), *no_tails(np.full(1, 256)))  # fmt: skip
    ring = np.zeros((256, K.N_R))
    lines = DelayLines(ring, pool, np.zeros((512, 1), dtype=np.uint64))
    # 4 packets failed at step 10, 2 of them in blocks their resends opened
    book(0, 10, 9_500.0, 60_200.0, 4 * mss, 0.0, 2 * mss, 0.0, 8, mss, dt, fs, lines)
    nacks = {s: ring[s, K.R_NACK] for s in range(256) if ring[s, K.R_NACK]}
    # 9,500 - 500 + 60,200 + 40,000 (or 100,000) ps: steps 110 and 170
    assert nacks == {110: 2 * mss, 170: 2 * mss}


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


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_resent_packets_fail_their_blocks_only_when_more_than_m_of_them_are_lost(share):
    """A coded flow's resends are the missing packets of blocks the receiver holds the rest
    of: a block that lost 3 of its 8 + 2 packets (p = 1/8: E[j | j > 2] = 3.27) needs one of
    the three back, so a lost resend fails its block with a chance of p^2 (1.6%), where a
    fresh packet's loss is in a failed block 31% of the time (``coded_loss_shares``)."""
    from types import SimpleNamespace

    from uno.fluid import columns as C
    from uno.fluid.coding import coded_losses

    mss, p, n, m = 4160.0, 0.125, 8, 2
    fs = np.zeros((1, C.N_FS))
    fs[0, C.FS_EC_N], fs[0, C.FS_EC_M], fs[0, C.FS_SIZE] = n, m, 1e12
    fs[0, C.FS_RESEND_SHARE] = share
    lb = SimpleNamespace(n=np.zeros(1, dtype=np.int64), drops=np.zeros((1, 0, 2)))
    rng = np.array([12345], dtype=np.uint64)
    lost = failed = 0.0
    for _ in range(20000):
        fs[0, C.FS_EXPOSED], fs[0, C.FS_DROPPED] = 80 * mss, 80 * mss * p
        step_lost, step_failed, gone, _, _ = coded_losses.py_func(0, n, mss, fs, rng, lb,
                                                                 np.zeros(8))  # fmt: skip
        assert gone <= step_failed <= step_lost
        lost, failed = lost + step_lost, failed + step_failed
    expected = p**2 if share else K.coded_loss_shares(p, n, m)[0]
    assert failed / lost == pytest.approx(expected, rel=0.12)


@pytest.mark.parametrize("twin", [False, True])
def test_copies_of_bytes_the_timer_also_declares_lost_leave_nothing_in_flight(twin):
    """An uncoded flow's bytes whose ACKs would come after its timeout are taken as arrived:
    at the timeout copies of them are queued and leave flight (``resend_copies``), and a
    copy's ACK is a duplicate. Where those bytes were lost after all (their drops are booked
    after their ACKs are filed), the timer declares them lost too: the bytes in flight then go
    below zero by the copies not sent yet, so that once the copies and the resends are sent
    and the resends acknowledged nothing is left in flight. A floor at 0 left the copies in
    flight for good: a flow whose window they filled waited for an ACK that never came. A
    coded flow, which sends no such copies, stays at 0."""
    resend = K.resend.py_func if twin else K.resend
    copies = K.resend_copies.py_func if twin else K.resend_copies
    mss = 4160.0
    fs = np.zeros((2, K.N_FS))
    fs[:, K.FS_INFLIGHT] = 4 * mss  # four packets sent, all lost on the way
    copies(fs, 0, 1.25 * mss)  # a part of them taken as arrived late: copies queued
    resend(fs, 0, 4 * mss)  # the timer declares the four lost
    queued = fs[0, K.FS_RESEND_WAIT]
    assert queued == 1.25 * mss and fs[0, K.FS_UNSENT] == 5.25 * mss
    # the copies sent (their ACKs duplicates), the resends sent and acknowledged
    assert fs[0, K.FS_INFLIGHT] + queued + 4 * mss - 4 * mss == pytest.approx(0.0)
    fs[1, K.FS_EC_N] = 8.0
    resend(fs, 1, 5 * mss)
    assert fs[1, K.FS_INFLIGHT] == 0.0


@pytest.mark.parametrize("twin", [False, True])
def test_acks_heard_while_copies_wait_leave_them_their_place_in_flight(twin):
    """ACKs that come while copies wait to be sent take the bytes in flight down to minus
    those copies, not to 0: sending the copies then brings them back to 0."""
    leave = K.leave_flight.py_func if twin else K.leave_flight
    copies = K.resend_copies.py_func if twin else K.resend_copies
    fs = np.zeros((1, K.N_FS))
    fs[0, K.FS_INFLIGHT] = 3000.0
    copies(fs, 0, 1000.0)
    leave(fs, 0, 2500.0)  # more ACKs than the bytes left in flight: the copies' originals'
    assert fs[0, K.FS_INFLIGHT] == -500.0
    leave(fs, 0, 900.0)
    assert fs[0, K.FS_INFLIGHT] == -1000.0  # not below the copies waiting


def test_mprdma_bbr_flows_all_finish_with_acks_read_ahead():
    """The paper's traffic under MPRDMA+BBR with ACKs' queueing read ahead makes batches whose
    ACKs come after the timeout and whose bytes are dropped later: every flow finishes (with
    the bytes in flight floored at 0 one flow waited forever)."""
    result = uno.run(uno.compose([
        "experiment=fig10_load", "workload.load=0.4", "workload.n_flows=2000",
        "scheme=mprdma_bbr", "engine=fluid_fast", "engine.fluid_ack_read_ahead=true",
        "engine.sample_interval_us=0", "engine.max_sim_time_ms=2000"]))  # fmt: skip
    assert result.flows["finish_ps"].notna().all()
    assert result.summary["fluid"]["late_ack_bytes"] > 0


def test_a_running_flow_with_bytes_in_flight_nothing_will_release_counts_as_stalled():
    """``stalled_flows``: only a running uncoded flow that holds bytes in flight with none on
    their way back, none waiting for a timer or evidence, and that has neither sent nor timed
    out for ten of its timeouts; not one whose ACKs are on their way, that sent lately, that
    is coded or that finished."""
    from uno.fluid.results import STALL_RTOS, stalled_flows

    rto = 1e6
    fs = np.zeros((6, K.N_FS))
    fs[:, K.FS_STATE] = 1.0
    fs[:, K.FS_INFLIGHT] = 4160.0
    fs[:, K.FS_RTO] = rto
    fs[:, K.FS_LAST_SEND] = 1e6
    now = 1e6 + (STALL_RTOS + 1) * rto
    fs[1, K.FS_PENDING] = 4160.0  # its ACKs on their way
    fs[2, K.FS_LAST_SEND] = now - rto  # sent lately
    fs[3, K.FS_EC_N] = 8.0  # coded
    fs[4, K.FS_STATE] = 2.0  # finished
    fs[5, K.FS_WAIT] = 4160.0  # its timer will declare them lost
    assert stalled_flows(fs, now).tolist() == [0]
    assert stalled_flows(fs, now - 2 * rto).tolist() == []  # not quiet long enough


def _stall_flow_after(sim, advance_name: str, flow: int, at_step: int) -> None:
    """From the first call of ``sim.<advance_name>`` past step ``at_step`` on, fluid flow
    ``flow`` holds a terabyte more in flight than it sent: a window that no ACK and no timer
    will open again (the fault ``stalled_flows`` names)."""
    fluid = getattr(sim, "fluid", sim)
    step = getattr(sim, advance_name)

    def stalling(k, *args):
        out = step(k, *args)
        if k >= at_step and fluid.fs[flow, K.FS_INFLIGHT] < 1e12:
            fluid.fs[flow, K.FS_INFLIGHT] += 1e12
        return out

    setattr(sim, advance_name, stalling)


@pytest.mark.parametrize("kind", ["fluid", "hybrid"])
def test_a_run_whose_flows_left_have_all_stalled_stops_and_says_so(kind):
    """Once every flow left has stalled (and, in the hybrid, every packet flow has finished),
    the run stops at the next of its looks (a multiple of ``STALL_CHECK_STEPS`` steps, the
    same steps in every run) instead of stepping to ``engine.max_sim_time_ms``, and its status
    line says why the flows are unfinished."""
    from uno.api import to_run_config
    from uno.build import build_simulation
    from uno.fluid.results import STALL_CHECK_STEPS, STALL_RTOS
    from uno.metrics.summary import status_line

    over = ["workload.n_intra=2", "workload.n_inter=1", "workload.size_bytes=20000000",
            f"engine.kind={kind}", "engine.hybrid_packet_tags=[inter]", "engine.progress=false",
            "engine.sample_interval_us=0", "engine.max_sim_time_ms=1000"]  # fmt: skip
    cfg = to_run_config(uno.compose(over))
    sim = build_simulation(cfg)
    if kind == "fluid":
        _stall_flow_after(sim, "advance", 0, 1)
    else:
        _stall_flow_after(sim, "_after_step", 0, 2)
    result = sim.run()
    run = {**result.summary["run"], **uno.api.run_status(cfg.engine, result.flows)}
    flows = result.flows.set_index("flow_id")
    assert flows["finish_ps"].isna().tolist() == [True, False, False]
    assert run["stopped_stalled"] is True
    fluid = sim.fluid if kind == "hybrid" else sim
    rto_ps = fluid.fs[0, K.FS_RTO]
    assert run["sim_time_us"] * 1e6 >= STALL_RTOS * rto_ps
    assert run["sim_time_us"] < 100_000  # not the 1,000 ms stop time
    assert fluid.k_done % STALL_CHECK_STEPS == 0
    line = status_line(run)
    assert line.startswith(f"run stopped at {run['sim_time_us'] / 1000:g} ms simulated")
    assert "1 of 3 required flows unfinished" in line
