"""Load balancing in the fluid kernels: ECMP paths hashed as the packet engine's switches hash
them (:mod:`uno.net.hashing`), UnoLB's subflows (Uno paper §4.2, Alg. 2), which move off the
paths that lose bytes, PLB's one path, which moves after congested rounds (PLB's own rules,
:func:`uno.lb.plb.plb_round_end` and :func:`uno.lb.plb.plb_loss_repaths`, on the flow's
feedback batches), and REPS's subflows, which keep their entropies while their rounds come
back unmarked (:func:`reps_acks`).

A flow's ECMP path is the walk :func:`ecmp_path` makes over the routing tables: at each node
with several equal-cost next hops, the one :func:`uno.net.hashing.ecmp_choice` picks for the
flow's key (:func:`uno.net.hashing.flow_key` of (src, dst, entropy)) and the switch's salt.
Spraying needs no kernel (an even split over the equal-cost next hops,
:mod:`uno.fluid.routes`).

Units: time in ps, sizes in bytes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.fluid.columns import (
    ACKS,
    EF_Q,
    LS_FAULT,
    LS_FOLD,
    LS_MARK,
    LS_Q,
    LS_QF,
)
from uno.fluid.draws import next_uniform
from uno.fluid.signals import subflow_delay
from uno.lb.base import ENTROPY_SPACE
from uno.lb.plb import plb_loss_repaths, plb_round_end
from uno.net.hashing import ecmp_choice, flow_key

#: most subflows a fluid UnoLB flow keeps
MAX_SUBFLOWS = 64

#: PLB's settings in ``lb.plb_p`` (on: 1 when the flows balance with PLB)
PLB_ON, PLB_FRACTION, PLB_ROUNDS, PLB_ON_LOSS = 0, 1, 2, 3
#: each PLB flow's state in ``lb.plb_s``: its round's start (ps, -1: none yet), the bytes
#: acknowledged and marked in it, the congested rounds in a row, the last repath on a loss
#: (ps, -1: none), the repaths
PLB_START, PLB_ACKED, PLB_MARKED, PLB_COUNT, PLB_LOSS_AT, PLB_REPATHS = 0, 1, 2, 3, 4, 5
PLB_STATE = 6
#: REPS's settings in ``lb.reps_p`` (on: 1 when the flows balance with REPS; the entropies
#: handed out in turn, ``lb.n_entropies``; a timeout's buffer freeze, ps, ``lb.reps.freeze_us``,
#: 0: none)
REPS_ON, REPS_ENTROPIES, REPS_FREEZE = 0, 1, 2
#: each REPS flow's state in ``lb.reps_s``: its round's start (ps, -1: none yet), the next
#: entropy in turn, the subflows moved, the end of its buffer's freeze (ps, -1: not frozen),
#: the freezes, the bytes its round's ACKs acknowledged marked and those whose ACKs echo it
REPS_START, REPS_NEXT, REPS_MOVES, REPS_FROZEN, REPS_FREEZES, REPS_MARKED, REPS_ECHOED = range(7)
REPS_STATE = 7
#: UnoLB's options in ``lb.uno_p`` (1: ``lb.unolb.affected: silent``, ``reroute: random``)
UNO_SILENT, UNO_RANDOM = 0, 1
#: with ``affected: silent``, each UnoLB subflow's state in ``lb.uno_s[f, s]``: when the ACK of
#: its newest delivered bytes reaches the sender (ps, 0: none yet), its last move (ps)
UNO_ACK_AT, UNO_MOVED_AT = 0, 1


@njit(cache=True, error_model="numpy")
def ecmp_path(src, dst, entropy, host_node, nh_ptr, nh_edges, edge_dst, node_salt, out) -> int:
    """The edges the packet engine's switches hash (src, dst, entropy) onto, into ``out``;
    returns the hop count. ``nh_ptr``/``nh_edges``: CSR of the equal-cost next hops of
    (node, destination host), row node x n_hosts + host; ``node_salt``: each switch's salt."""
    n_hosts = host_node.shape[0]
    # (np.uint64: the Python twin gets a Python int back from the compiled hash)
    key = np.uint64(flow_key(src, dst, entropy))
    node = host_node[src]
    target = host_node[dst]
    hops = 0
    while node != target:
        row = node * n_hosts + dst
        a = nh_ptr[row]
        count = nh_ptr[row + 1] - a
        if count == 1:
            e = nh_edges[a]
        else:
            e = nh_edges[a + ecmp_choice(key, node_salt[node], count)]
        out[hops] = e
        hops += 1
        node = edge_dst[e]
    return hops


@njit(cache=True, error_model="numpy")
def ecmp_routes(src, dst, entropy, max_hops, host_node, nh_ptr, nh_edges, edge_dst, node_salt):
    """:func:`ecmp_path` of every flow (``src[i]``, ``dst[i]``, ``entropy[i]``): its edges, a
    row of ``max_hops`` per flow padded with 0, and the hop counts."""
    n = src.shape[0]
    links = np.zeros((n, max_hops), dtype=np.int64)
    hops = np.zeros(n, dtype=np.int64)
    for i in range(n):
        hops[i] = ecmp_path(src[i], dst[i], entropy[i], host_node, nh_ptr, nh_edges, edge_dst,
                            node_salt, links[i])  # fmt: skip
    return links, hops


@njit(cache=True, error_model="numpy", inline="always")
def last_ack_ps(f, s, now, lb) -> float:
    """When UnoLB flow ``f``'s subflow ``s`` last heard an ACK, as of ``now`` (ps; 0: never):
    its newest delivered bytes' ACK time if past, else now (its earlier bytes' ACKs are
    arriving)."""
    at = lb.uno_s[f, s, UNO_ACK_AT]
    return at if at <= now else now


@njit(cache=True, error_model="numpy")
def unolb_moving(f, now, base_rtt, lb) -> int:
    """Which of UnoLB flow ``f``'s subflows a loss report at ``now`` moves, flagged 1 in
    ``lb.lost[f]`` (the rest 0); returns how many (uno/lb/unolb.py). ``affected: lost``: at most
    once per base RTT, those that lost bytes since the last report. ``affected: silent`` (the
    Uno artifact): every subflow that heard no ACK in the last half base RTT and did not move
    in the last base RTT (:func:`last_ack_ps`, from the ACK time of its newest delivery)."""
    sub_lost = lb.lost
    n = lb.n[f]
    n_moving = 0
    if lb.uno_p[UNO_SILENT] > 0.0:
        for s in range(n):
            quiet = now - last_ack_ps(f, s, now, lb) > 0.5 * base_rtt
            moving = quiet and now - lb.uno_s[f, s, UNO_MOVED_AT] > base_rtt
            sub_lost[f, s] = 1.0 if moving else 0.0
            if moving:
                lb.uno_s[f, s, UNO_MOVED_AT] = now
                n_moving += 1
        return n_moving
    for s in range(n):
        if sub_lost[f, s] > 0.0:
            n_moving += 1
    last = lb.last_move_ps[f]
    if n_moving == 0 or (last >= 0.0 and now - last <= base_rtt):
        return 0
    lb.last_move_ps[f] = now
    return n_moving


@njit(cache=True, error_model="numpy", inline="always")
def recently_acked(f, g, now, base_rtt, lb) -> bool:
    """Whether UnoLB flow ``f``'s subflow ``g``, not moving, counts as "a subflow that has
    recently received ACKs" (Uno §4.2): with ``affected: silent``, one acknowledged within the
    last base RTT (the packet UnoLB's rule); with ``lost``, one that lost nothing (the fluid's
    reading: its bytes arrive, so do its ACKs)."""
    if lb.lost[f, g] > 0.0:
        return False
    return lb.uno_p[UNO_SILENT] == 0.0 or now - last_ack_ps(f, g, now, lb) <= base_rtt


@njit(cache=True, error_model="numpy")
def unolb_reroute(f, now, base_rtt, lb) -> None:
    """UnoLB on a loss report (Uno paper §4.2, Alg. 2 ``OnAckOrTimeout``; uno/lb/unolb.py): the
    subflows :func:`unolb_moving` names move, with ``reroute: recent_ack`` to the path of a
    random subflow that recently received ACKs (:func:`recently_acked`), or to a fresh random
    entropy when none did; with ``reroute: random`` (the Uno artifact) to a fresh random
    entropy."""
    sub_lost, lb_rng = lb.lost, lb.rng
    n = lb.n[f]
    if unolb_moving(f, now, base_rtt, lb) > 0:
        fresh = lb.uno_p[UNO_RANDOM] > 0.0
        n_good = 0
        for g in range(n):
            if not fresh and recently_acked(f, g, now, base_rtt, lb):
                n_good += 1
        # (a subflow moves when flagged in sub_lost: it is cleared after the moves)
        for s in range(n):
            if sub_lost[f, s] <= 0.0:
                continue
            if n_good > 0:
                pick = int(next_uniform(lb_rng, f) * n_good)
                for g in range(n):
                    if recently_acked(f, g, now, base_rtt, lb):
                        if pick == 0:
                            copy_path(f, s, g, lb)
                            break
                        pick -= 1
            else:
                move_to_entropy(f, s, int(next_uniform(lb_rng, f) * ENTROPY_SPACE), lb)
    for s in range(n):
        sub_lost[f, s] = 0.0


@njit(cache=True, error_model="numpy", inline="always")
def copy_path(f, s, g, lb) -> None:
    """Flow ``f``'s subflow ``s`` takes subflow ``g``'s entropy, path and ACKs' way back."""
    lb.entropy[f, s] = lb.entropy[f, g]
    for h in range(lb.hops[f]):
        lb.links[f, s, h] = lb.links[f, g, h]
    for h in range(lb.ack_links.shape[2]):  # (with ACK priority too)
        lb.ack_links[f, s, h] = lb.ack_links[f, g, h]


@njit(cache=True, error_model="numpy")
def move_to_entropy(f, s, entropy, lb) -> None:
    """Flow ``f``'s subflow ``s`` takes ``entropy``: the path the switches hash it to, and its
    ACKs' way back with it."""
    lb.entropy[f, s] = entropy
    src, dst = lb.ends[f, 0], lb.ends[f, 1]
    ecmp_path(src, dst, entropy, lb.host_node, lb.nh_ptr, lb.nh_edges, lb.edge_dst,
              lb.node_salt, lb.links[f, s])  # fmt: skip
    # (kept with switch.ack_priority too, whose ACKs meet no switch queue, lb.ack_hops 0: the
    # links they cross still drift the grids and lose them to faults, hops.ack_hops)
    ecmp_path(dst, src, entropy, lb.host_node, lb.nh_ptr, lb.nh_edges, lb.edge_dst,
              lb.node_salt, lb.ack_links[f, s])  # fmt: skip


@njit(cache=True, error_model="numpy")
def shift_queued(f, s, lb, hops, base, ls, sign) -> None:
    """The bytes flow ``f``'s subflow ``s`` has queued at each hop out of (``sign`` -1) or into
    (+1) the queue of the link it takes there now. Called either side of a move, they take the
    subflow's queued bytes from its old links' queues to its new links' at the same hops, where
    :func:`uno.fluid.forward.forward` (which keys them by subflow and hop) moves them on: no
    byte leaves the network uncounted, and each still crosses every hop after its own, the
    receiver's links among them. (A packet already sent keeps its old path: the fluid moves a
    moved subflow's queued bytes to links of the same hops.) ``base``: the first subflow hop
    entry."""
    ef = hops.ef
    n_hop_max = lb.links.shape[2]
    j0 = base + (f * lb.links.shape[1] + s) * n_hop_max
    for h in range(lb.hops[f]):
        q = ef[j0 + h, EF_Q]
        if q > 0.0:
            link = lb.links[f, s, h]
            d = sign * q / ls[link, LS_FOLD]
            level = ls[link, LS_Q] + d
            ls[link, LS_Q] = level if level > 0.0 else 0.0
            level = ls[link, LS_QF] + d
            ls[link, LS_QF] = level if level > 0.0 else 0.0


@njit(cache=True, error_model="numpy")
def plb_repath(f, lb, hops, base, ls) -> None:
    """PLB moves flow ``f`` to a fresh random entropy (uno.lb.plb.Plb._repath), its queued
    bytes with it (:func:`shift_queued`)."""
    shift_queued(f, 0, lb, hops, base, ls, -1.0)
    move_to_entropy(f, 0, int(next_uniform(lb.rng, f) * ENTROPY_SPACE), lb)
    shift_queued(f, 0, lb, hops, base, ls, 1.0)
    lb.plb_s[f, PLB_COUNT] = 0.0
    lb.plb_s[f, PLB_REPATHS] += 1.0


# (inlined into the feedback, as reps_acks: called for each flow's batch of ACKs, it returns at
# once in most; a call that is not inlined passes every field of ``lb`` and ``hops``)
@njit(cache=True, error_model="numpy", inline="always")
def plb_acks(f, now, acked, marked, base_rtt, lb, hops, base, ls) -> None:
    """A batch of PLB flow ``f``'s ACKs at ``now`` (ps): ``acked`` bytes, ``marked`` of them
    with an ECN echo, join the round (uno.lb.plb.Plb.on_ack: the round starts at its first ACK
    and ends at the first at least a base RTT, ``base_rtt`` ps, after its start, which it
    counts); a round's end decides by PLB's rule (:func:`uno.lb.plb.plb_round_end`), a repath
    moving the flow's queued bytes between the links' queues in ``ls``
    (:func:`plb_repath`)."""
    st, p = lb.plb_s, lb.plb_p
    if st[f, PLB_START] < 0.0:
        st[f, PLB_START] = now
    st[f, PLB_ACKED] += acked
    st[f, PLB_MARKED] += marked
    if now - st[f, PLB_START] < base_rtt:
        return
    count, repath = plb_round_end(st[f, PLB_ACKED], st[f, PLB_MARKED], int(st[f, PLB_COUNT]),
                                  p[PLB_FRACTION], int(p[PLB_ROUNDS]))  # fmt: skip
    st[f, PLB_COUNT] = count
    st[f, PLB_START] = now
    st[f, PLB_ACKED] = 0.0
    st[f, PLB_MARKED] = 0.0
    if repath:
        plb_repath(f, lb, hops, base, ls)


@njit(cache=True, error_model="numpy", inline="always")
def reps_acks(f, now, base_rtt, marked, echoed, ls, lb, hops, base) -> None:
    """A batch of REPS flow ``f``'s ACKs at ``now`` (ps), ``marked`` bytes of them marked and
    ``echoed`` of those echoed as marked (:func:`uno.fluid.arrivals.echoed_marks`). REPS
    (uno.lb.reps.Reps) sends each packet on the entropy of an ACK that came back unmarked, or,
    with none cached, on the next entropy in turn: a packet's place in the window keeps its
    path while its ACKs come back unmarked and moves on at a marked one. So each subflow (an
    equal share of the window) keeps its entropy for a round of a base RTT (``base_rtt`` ps)
    with the chance that its path leaves its bytes unmarked (``LS_MARK`` of each of its links
    now, of which the round's ACKs echo the echoed share) and their ACKs come back
    (``LS_FAULT`` of its links and of its ACKs' way back: uno.fluid.faults), and otherwise
    moves to the next entropy in turn.

    While its buffer is frozen (``lb.reps.freeze_us``, :func:`reps_timeout`) a packet takes the
    cached entropies only: a subflow that moves takes the path of a random one that stays (the
    next entropy in turn when none does); at the first round after the freeze the buffer is
    empty and the packets take random entropies, twice the buffer's worth: every subflow moves
    to a random entropy (:func:`reps_round`)."""
    st = lb.reps_s
    if st[f, REPS_START] < 0.0:
        st[f, REPS_START] = now
    st[f, REPS_MARKED] += marked
    st[f, REPS_ECHOED] += echoed
    if now - st[f, REPS_START] < base_rtt:
        return
    st[f, REPS_START] = now
    m, e = st[f, REPS_MARKED], st[f, REPS_ECHOED]
    st[f, REPS_MARKED] = 0.0
    st[f, REPS_ECHOED] = 0.0
    reps_round(f, now, e / m if m > 0.0 else 1.0, ls, lb, hops, base)


@njit(cache=True, error_model="numpy")
def reps_round(f, now, echo, ls, lb, hops, base) -> None:
    """The end of REPS flow ``f``'s round at ``now`` (ps): which subflows move, and where
    (:func:`reps_acks`; ``echo``: the share of the round's marked bytes whose ACKs echo the
    mark)."""
    st = lb.reps_s
    n_entropies = int(lb.reps_p[REPS_ENTROPIES])
    n = lb.n[f]
    if 0.0 <= st[f, REPS_FROZEN] <= now:  # the freeze is over
        st[f, REPS_FROZEN] = -1.0
        for s in range(n):
            shift_queued(f, s, lb, hops, base, ls, -1.0)
            move_to_entropy(f, s, int(next_uniform(lb.rng, f) * n_entropies), lb)
            shift_queued(f, s, lb, hops, base, ls, 1.0)
            st[f, REPS_MOVES] += 1.0
        return
    faults = hops.acks[ACKS.faults] != 0.0
    moving = lb.lost  # (REPS reads no lost bytes: the subflows that move this round, flagged)
    n_stay = 0
    for s in range(n):
        unmarked = 1.0
        for h in range(lb.hops[f]):
            link = lb.links[f, s, h]
            unmarked *= 1.0 - ls[link, LS_MARK]
            if faults:  # (a faulty link's lost bytes bring no ACK back)
                unmarked *= 1.0 - ls[link, LS_FAULT]
        for h in range(hops.ack_hops[f] if faults else 0):  # (nor do ACKs lost on the way)
            unmarked *= 1.0 - ls[lb.ack_links[f, s, h], LS_FAULT]
        move = next_uniform(lb.rng, f) < (1.0 - unmarked) * echo
        moving[f, s] = 1.0 if move else 0.0
        n_stay += 0 if move else 1
    frozen = st[f, REPS_FROZEN] >= 0.0
    for s in range(n):
        if moving[f, s] == 0.0:
            continue
        shift_queued(f, s, lb, hops, base, ls, -1.0)
        if frozen and n_stay > 0:  # the cached entropies: a subflow that stays
            pick = int(next_uniform(lb.rng, f) * n_stay)
            for g in range(n):
                if moving[f, g] == 0.0:
                    if pick == 0:
                        copy_path(f, s, g, lb)
                        break
                    pick -= 1
        else:
            entropy = int(st[f, REPS_NEXT])
            st[f, REPS_NEXT] = (entropy + 1) % n_entropies
            move_to_entropy(f, s, entropy, lb)
        shift_queued(f, s, lb, hops, base, ls, 1.0)
        st[f, REPS_MOVES] += 1.0
    for s in range(n):
        moving[f, s] = 0.0


@njit(cache=True, error_model="numpy", inline="always")
def subflow_part(x, f, s, lb) -> float:
    """Subflow ``s``'s part of flow ``f``'s ``x`` (bytes): a REPS subflow's share
    (:func:`reps_shares`), any other subflow's an equal one (UnoLB sends its packets over its
    subflows in turn; a PLB flow is one subflow)."""
    if lb.reps_p[REPS_ON] > 0.0:
        return x * lb.share[f, s]
    return x / lb.n[f]


@njit(cache=True, error_model="numpy")
def reps_shares(f, base_rtt, ls, lb) -> None:
    """Each of REPS flow ``f``'s subflows' share of the bytes it sends now (``lb.share``). REPS
    sends a packet on the entropy of the earliest unmarked ACK it has cached (REPS paper §3,
    Algorithm 1), so an entropy carries its next packet when its last one's ACK is back: each
    subflow carries an equal part of the window once per round trip of its own path, and its
    share of the bytes goes inversely as that RTT (``base_rtt`` ps plus the queueing now,
    ``LS_DELAY``, of its links out and, where its ACKs take their own way, back). An even split
    would send as much over a path that queues as over one that does not."""
    n = lb.n[f]
    total = 0.0
    for s in range(n):
        rtt = subflow_delay(f, s, base_rtt, 0.0, ls, lb)
        lb.share[f, s] = 1.0 / rtt
        total += 1.0 / rtt
    for s in range(n):
        lb.share[f, s] /= total


@njit(cache=True, error_model="numpy")
def reps_timeout(f, now, lb) -> None:
    """REPS flow ``f``'s retransmission timer fired at ``now`` (ps): with
    ``lb.reps.freeze_us`` (the authors' htsim code's failure mode, uno.lb.reps) a flow not
    frozen freezes its buffer that long (:func:`reps_acks`)."""
    st = lb.reps_s
    if lb.reps_p[REPS_FREEZE] > 0.0 and st[f, REPS_FROZEN] < 0.0:
        st[f, REPS_FROZEN] = now + lb.reps_p[REPS_FREEZE]
        st[f, REPS_FREEZES] += 1.0


@njit(cache=True, error_model="numpy")
def on_loss_report(f, now, base_rtt, rto, lb, hops, base, ls) -> None:
    """Flow ``f`` heard of a loss (a timeout, or a coded flow's NACK) at ``now`` (ps): PLB
    repaths at most once per RTO (``rto`` ps; :func:`uno.lb.plb.plb_loss_repaths`, with
    ``lb.plb.repath_on_loss``), UnoLB moves the subflows that lost bytes
    (:func:`reroute_subflows`); REPS does nothing (its Algorithm 1: a lossy path stops
    sending its entropies back)."""
    if lb.reps_p[REPS_ON] > 0.0:
        for s in range(lb.n[f]):
            lb.lost[f, s] = 0.0
        return
    if lb.plb_p[PLB_ON] > 0.0:
        for s in range(lb.n[f]):
            lb.lost[f, s] = 0.0
        st = lb.plb_s
        if lb.plb_p[PLB_ON_LOSS] > 0.0 and plb_loss_repaths(now, st[f, PLB_LOSS_AT], rto):
            st[f, PLB_LOSS_AT] = now
            plb_repath(f, lb, hops, base, ls)
        return
    reroute_subflows(f, now, base_rtt, lb, hops, base, ls)


@njit(cache=True, error_model="numpy")
def reroute_subflows(f, now, base_rtt, lb, hops, base, ls) -> None:
    """:func:`unolb_reroute`, a moved subflow's queued bytes with it (:func:`shift_queued`:
    every subflow's out of its links' queues before, into them after, as the reroute decides
    which move). ``base``: the first UnoLB subflow hop entry."""
    n = lb.n[f]
    for s in range(n):
        shift_queued(f, s, lb, hops, base, ls, -1.0)
    unolb_reroute(f, now, base_rtt, lb)
    for s in range(n):
        shift_queued(f, s, lb, hops, base, ls, 1.0)


@njit(cache=True, error_model="numpy")
def name_subflows(f, n_sub, n_ec, path_loss, counted, sub_lost) -> None:
    """Which of UnoLB flow ``f``'s ``n_sub`` subflows a loss report names, each subflow's
    weight added to ``sub_lost[f]`` (``lb.lost``, :func:`unolb_reroute`): the packet UnoLB names
    the subflows that carried the lost packets (uno/lb/unolb.py, ``affected: lost``). A coded
    flow's drops are counted per subflow (``lb.drops``, :func:`uno.fluid.forward.forward`), and
    :func:`uno.fluid.coding.coded_losses` leaves each subflow's chance of losing a packet in
    ``counted``: the subflows whose bytes the links dropped. An uncoded flow's are not: the
    subflows whose path dropped at the send (``path_loss``,
    :func:`uno.fluid.signals.subflow_signals`)."""
    for s in range(n_sub):
        sub_lost[f, s] += counted[s] if n_ec > 0 else path_loss[s]
