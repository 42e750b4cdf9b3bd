"""Erasure-coded blocks in the fluid kernels (UnoRC, Uno paper §4.2): which of a coded flow's
lost packets its blocks absorb, which it must resend (a block with more than m of its n + m
packets lost) and which only the sender's timer finds (a block none of whose packets arrived),
drawn in whole blocks from the flow's stream. The packets it resends are the missing ones of
blocks the receiver holds the rest of: a block needs all but m of them back.

Units: bytes; chances in [0, 1].
"""

from __future__ import annotations

import math

from numba import njit

from uno.fluid.columns import (
    FS_DROPPED,
    FS_EC_M,
    FS_EXPOSED,
    FS_OPEN_SHARE,
    FS_RESEND_SHARE,
    FS_SIZE,
)
from uno.fluid.draws import next_uniform
from uno.fluid.losses import dropped_packets


@njit(cache=True, error_model="numpy")
def coded_loss_shares(p: float, n: int, m: int):
    """Of the packets lost from blocks of ``n`` data + ``m`` parity packets, each lost
    independently with probability ``p``: (the share in blocks that cannot be decoded, which
    the sender resends (uno/transport/sender.py ``_on_nack`` names every missing packet), the
    share in blocks none of whose packets arrived, which only the sender's timer finds). The
    rest are in blocks that decode: coding absorbs them. With j ~ Binomial(n + m, p): E[j; j >
    m] / E[j] and (n + m) p^(n + m) / E[j]; third, the packets a block that cannot be decoded
    loses, E[j | j > m] (:func:`whole_blocks`)."""
    total = n + m
    if p <= 0.0:
        return 0.0, 0.0, 0.0
    if p >= 1.0:
        return 1.0, 1.0, float(total)
    mean = total * p
    failed = 0.0  # E[j; j > m], summed term by term (no cancellation at small p)
    fails = 0.0  # P(j > m)
    comb = 1.0
    for j in range(1, total + 1):
        comb = comb * (total - j + 1) / j
        if j > m:
            term = comb * p**j * (1.0 - p) ** (total - j)
            failed += j * term
            fails += term
    if failed <= 0.0:
        return 0.0, p ** (total - 1), float(m + 1)
    return failed / mean, p ** (total - 1), failed / fails


@njit(cache=True, error_model="numpy")
def spread_loss_shares(losses, n_sub, n, m, dist):
    """:func:`coded_loss_shares` for a block whose packets ride ``n_sub`` subflows round robin
    (packet j on subflow j mod n_sub, lost with ``losses[j mod n_sub]``; UnoLB, Uno paper
    §4.2): the number lost is Poisson-binomial, so a subflow that loses much costs a block only
    its own packets (the three figures of :func:`coded_loss_shares`). ``dist``: scratch of at
    least m + 1 cells."""
    total = n + m
    for k in range(m + 1):
        dist[k] = 0.0
    dist[0] = 1.0  # P(k of the packets so far lost), k <= m
    mean = 0.0
    all_lost = 1.0
    for j in range(total):
        p = losses[j % n_sub]
        mean += p
        all_lost *= p
        if p <= 0.0:
            continue
        for k in range(m, 0, -1):
            dist[k] = dist[k] * (1.0 - p) + dist[k - 1] * p
        dist[0] *= 1.0 - p
    if mean <= 0.0:
        return 0.0, 0.0, 0.0
    ok_lost = 0.0
    ok = dist[0]
    for k in range(1, m + 1):
        ok_lost += k * dist[k]
        ok += dist[k]
    failed = mean - ok_lost
    if failed <= 0.0 or ok >= 1.0:
        return 0.0, total * all_lost / mean, float(m + 1)
    return failed / mean, total * all_lost / mean, failed / (1.0 - ok)


@njit(cache=True, error_model="numpy")
def coded_losses(f, n_ec, mss, fs, rng_state, lb, dist):
    """Flow ``f``'s losses to the links in this step (:func:`uno.fluid.losses.dropped_packets`,
    bytes): (lost, of them to resend, of those in blocks of which nothing arrived, and of the
    last two those in blocks a retransmission opens: ``FS_OPEN_SHARE``). Uncoded
    (``n_ec`` = 0): all lost bytes are resent. Coded (UnoRC, ``n_ec`` data packets a block):
    the packets that reached the dropping links were each lost with the step's chance
    ``FS_DROPPED`` / ``FS_EXPOSED`` (:func:`coded_loss_shares`; a block's packets leave back to
    back, within a step or two). The drops are the links' own,
    as for uncoded flows: a block model at the send, from the path's loss then, let the coded
    flows count as delivered bytes the links had dropped (on the 40%-load traffic the fluid
    WAN passed 1.05 GB against the 1.72 GB the flows delivered). An UnoLB flow: each subflow's
    own chance (``lb.drops``: its bytes dropped and reaching dropping links this step, from
    :func:`uno.fluid.forward.forward`), a block's packets riding the subflows round robin
    (:func:`spread_loss_shares`): the flow's chance taken for every packet would have a block
    lose on all its packets what one lossy subflow loses on its own. The shares are drawn in
    whole blocks (:func:`whole_blocks`). The share ``FS_RESEND_SHARE`` of the lost bytes that
    were resent packets fails by the blocks those complete (below). ``dist``: the step's
    scratch, whose head is left
    holding each subflow's chance of losing a packet (:func:`uno.fluid.balance.name_subflows`
    reads it) and whose tail takes the block's loss distribution."""
    dropped = fs[f, FS_DROPPED]
    exposed = fs[f, FS_EXPOSED]
    lost = mss * dropped_packets(f, mss, fs, rng_state)
    n_sub = lb.n[f]
    sub_drops = lb.drops
    sub_loss = dist[: sub_drops.shape[1]]
    for sf in range(n_sub if n_ec > 0 else 0):
        hit = sub_drops[f, sf, 1]
        sub_loss[sf] = sub_drops[f, sf, 0] / hit if hit > 0.0 else 0.0
        if sub_loss[sf] > 1.0:
            sub_loss[sf] = 1.0
        sub_drops[f, sf, 0] = 0.0
        sub_drops[f, sf, 1] = 0.0
    if lost <= 0.0 or n_ec == 0:
        return lost, lost, 0.0, 0.0, 0.0
    m = int(fs[f, FS_EC_M])
    p = dropped / exposed if exposed > dropped else 1.0
    tail = dist[sub_drops.shape[1] :]
    failed_share, gone_share, per_block = block_loss_shares(p, sub_loss, n_sub, n_ec, m, tail)
    # the resends of blocks of which nothing arrived open their blocks again: fresh blocks
    opening = lost * fs[f, FS_OPEN_SHARE]
    resent = lost * fs[f, FS_RESEND_SHARE] - opening
    failed, gone, open_failed, open_gone = 0.0, 0.0, 0.0, 0.0
    if opening > 0.0:
        open_failed, open_gone = whole_blocks(f, opening, failed_share, gone_share, per_block,
                                              n_ec + m, mss, fs, rng_state)  # fmt: skip
    if resent > 0.0:
        # the missing packets of blocks the receiver holds the rest of: a block that could not
        # be decoded lost about per_block of its packets, all resent, and it decodes once all
        # but m of them arrive (uno.transport.receiver: the block's state waits for them), a
        # block of per_block - m data packets and m parity. Taken as fresh blocks, the resends
        # of Fig. 13 A's sprayed coded flows (a WAN link of eight down) failed their blocks
        # again 31% of the times they lost a packet, and most flows waited for a second NACK
        # where packets decode at the first (their resends fail a block with a chance of p^m)
        n_re = max(1, int(round(per_block)) - m)
        r_failed, r_gone, r_per = block_loss_shares(p, sub_loss, n_sub, n_re, m, tail)
        failed, gone = whole_blocks(f, resent, r_failed, r_gone, r_per, n_re + m, mss, fs,
                                    rng_state, True)  # fmt: skip
        if n_sub > 0:  # (the tail holds the fresh blocks' distribution: name_subflows)
            block_loss_shares(p, sub_loss, n_sub, n_ec, m, tail)
    fresh_failed, fresh_gone = whole_blocks(
        f, lost - resent - opening, failed_share, gone_share, per_block, n_ec + m, mss, fs,
        rng_state,
    )  # fmt: skip
    failed += fresh_failed + open_failed
    return lost, failed, gone + fresh_gone + open_gone, open_failed, open_gone


@njit(cache=True, error_model="numpy", inline="always")
def block_loss_shares(p, sub_loss, n_sub, n, m, dist):
    """:func:`coded_loss_shares` of blocks of ``n`` + ``m`` packets lost each with chance
    ``p``, or for a flow on ``n_sub`` subflows with each subflow's chance
    (:func:`spread_loss_shares`, ``dist`` its scratch)."""
    if n_sub > 0:
        return spread_loss_shares(sub_loss, n_sub, n, m, dist)
    return coded_loss_shares(p, n, m)


@njit(cache=True, error_model="numpy")
def whole_blocks(f, lost, failed_share, gone_share, per_block, block_packets, mss, fs, rng_state,
                 resends=False):  # fmt: skip
    """Of coded flow ``f``'s ``lost`` bytes in this step, those in blocks that cannot be
    decoded and those in blocks of which nothing arrived, drawn in whole blocks from the
    flow's stream: their expected shares (:func:`coded_loss_shares`) would make every step
    that loses a packet lose a sliver of a failed block, and the flow wait for a NACK and a
    resend (or, a sliver of a block of which nothing arrived, for the sender's timer) that the
    packets' blocks mostly never need. On the 40%-load Fig. 10 traffic (``scheme=uno``, seed
    2) 41 of the 53 inter-DC flows of one packet heard a timeout in the fluid against 11 with
    packets (a block of 1 + 2 packets is gone only if all three are lost, p^3), and the
    inter-DC flows of 4-16 kB 242 NACKs against 87 while resending fewer packets (455 against
    758). A failed block holds ``per_block`` lost packets on average (E[j | j > m]; the step's
    lost bytes when fewer: the rest of its packets were lost in another step), a block of which
    nothing arrived all its ``block_packets`` (the flow's wire bytes when fewer); the number of
    each is the expected bytes over that, rounded up with the chance of its fraction, so the
    means are the shares'. ``resends``: the packets are a block's missing ones, resent back to
    back and lost in one step: a failed block is one of ``per_block`` packets even where the
    step lost fewer (its bytes then at most the step's), as a block fails only when that many
    are lost (a chunk the size of the step's loss drew three times the failures of Fig. 13 A's
    resent blocks of three). Returns (failed, gone) bytes, gone <= failed <= lost."""
    unit = fs[f, FS_SIZE] if 0.0 < fs[f, FS_SIZE] < mss else mss
    failed = lost * failed_share
    if failed <= 0.0:
        return 0.0, 0.0
    chunk = per_block * unit
    drawn = in_whole_chunks(f, failed, chunk, max(lost, chunk) if resends else lost, rng_state)
    drawn = min(drawn, lost)
    if drawn <= 0.0:
        return 0.0, 0.0
    # of the failed blocks, those of which nothing arrived (their share of the failed bytes)
    gone = drawn * gone_share / failed_share
    if gone <= 0.0:
        return drawn, 0.0
    block = block_packets * unit
    if block > fs[f, FS_SIZE]:
        block = fs[f, FS_SIZE]
    return drawn, in_whole_chunks(f, gone, block, drawn, rng_state)


@njit(cache=True, error_model="numpy", inline="always")
def in_whole_chunks(f, nbytes, chunk, cap, rng_state) -> float:
    """``nbytes`` expected bytes as whole chunks of ``chunk`` bytes (a chunk at most ``cap``):
    their number rounded up with the chance of its fraction, drawn from flow ``f``'s stream
    (the mean is ``nbytes``); at most ``cap`` bytes."""
    if chunk > cap:
        chunk = cap
    count = nbytes / chunk
    whole = math.floor(count)
    if next_uniform(rng_state, f) < count - whole:
        whole += 1.0
    drawn = whole * chunk
    return drawn if drawn < cap else cap
