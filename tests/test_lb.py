"""Each load balancer's entropy choices under scripted feedback (plain calls, no simulator)."""

from __future__ import annotations

import numpy as np
import pytest

from uno.cc.base import FlowContext
from uno.config.schema import LbConfig
from uno.core.rng import UniformBuffer
from uno.lb.registry import make_lb

US = 1_000_000
RTT = 10 * US
CTX = FlowContext(
    base_rtt_ps=RTT,
    bdp_bytes=20 * 4160.0,
    bottleneck_bps=100 * 10**9,
    mss_bytes=4160,
    intra_rtt_ps=RTT,
    intra_bdp_bytes=20 * 4160.0,
    is_inter_dc=True,
    rto_ps=100 * US,
)


def lb(name, seed=1, **params):
    cfg = LbConfig(algo=name)
    for group, values in params.items():
        for k, v in values.items():
            setattr(getattr(cfg, group), k, v)
    return make_lb(name, cfg, UniformBuffer(np.random.default_rng(seed)), CTX)


def test_ecmp_and_spray():
    e = lb("ecmp")
    assert len({e.next_entropy(t) for t in range(100)}) == 1
    s = lb("spray")
    drawn = [s.next_entropy(t) for t in range(2000)]
    assert min(drawn) >= 0 and max(drawn) < 256 and len(set(drawn)) > 200


def _batch(p, t0, marked_rest):
    """One unmarked ACK at t0 (it closes the round begun a base RTT ago), then nine more ACKs
    of the new round, all marked or all unmarked."""
    p.on_ack(t0, p.entropy, False)
    for i in range(9):
        p.on_ack(t0 + 1 + i, p.entropy, marked_rest)


def test_plb_repaths_after_two_congested_rounds():
    p = lb("plb")
    e0 = p.entropy
    _batch(p, 0, False)  # starts the round clock
    _batch(p, RTT, True)  # closes a clean round; the new round is 9/10 marked
    assert p.congested_count == 0
    _batch(p, 2 * RTT, False)  # closes the congested round
    assert p.congested_count == 1 and p.entropy == e0
    _batch(p, 3 * RTT, True)  # closes a clean round: the count starts again
    assert p.congested_count == 0
    _batch(p, 4 * RTT, True)  # one congested round
    assert p.congested_count == 1 and p.entropy == e0
    _batch(p, 5 * RTT, True)  # two in a row: repath
    assert p.repaths == 1 and p.entropy != e0 and p.next_entropy(0) == p.entropy


def test_plb_repaths_on_loss_once_per_rto():
    p = lb("plb")
    e0 = p.entropy
    p.on_timeout(1000, [e0])
    e1 = p.entropy
    assert e1 != e0
    p.on_nack(1000 + 50 * US, [e1])  # within one RTO: no second repath
    assert p.entropy == e1
    p.on_timeout(1000 + 101 * US, [e1])
    assert p.entropy != e1 and p.repaths == 2


def test_plb_can_start_every_flow_on_entropy_zero():
    firsts = {lb("plb", seed=s, plb={"initial_entropy": "zero"}).entropy for s in range(5)}
    assert firsts == {0}
    assert len({lb("plb", seed=s).entropy for s in range(5)}) > 1  # drawn at random
    p = lb("plb", plb={"initial_entropy": "zero"})
    p.on_timeout(1000, [0])  # a repath draws as usual
    assert p.entropy != 0 and p.repaths == 1


def test_unolb_round_robin_and_reroute_to_a_recently_acked_subflow():
    u = lb("unolb")
    ents = list(u.entropies)
    assert len(ents) == 10 and [u.next_entropy(0) for _ in range(20)] == ents * 2
    t = 5 * RTT
    for e in ents[1:]:
        u.on_ack(t, e, False)  # every subflow but 0 acknowledged recently
    u.on_timeout(t + 1, [ents[0]])
    assert u.entropies[0] in ents[1:] and u.entropies[1:] == ents[1:]
    before = list(u.entropies)
    u.on_nack(t + RTT // 2, [u.entropies[3]])  # within one base RTT: nothing moves
    assert u.entropies == before
    u.on_nack(t + 2 * RTT, [u.entropies[3]])  # later: subflow 3 moves; no ACK is recent now
    assert u.reroutes == 2


def test_unolb_artifact_mode_moves_every_silent_subflow_to_a_fresh_path():
    u = lb("unolb", unolb={"affected": "silent", "reroute": "random"})
    ents = list(u.entropies)
    t = 10 * RTT
    for e in ents[:4]:
        u.on_ack(t, e, False)
    u.on_timeout(t + 1, [])  # no lost entropy needed: silence decides
    assert u.entropies[:4] == ents[:4]
    assert all(a != b for a, b in zip(u.entropies[4:], ents[4:], strict=True))


def test_reps_explores_then_recycles_unmarked_entropies_oldest_first():
    r = lb("reps")
    explore = [r.next_entropy(t) for t in range(20)]  # one BDP = 20 packets
    assert explore == list(range(20))
    for e in (7, 3, 9):
        r.on_ack(0, e, False)
    r.on_ack(0, 11, True)  # marked: not cached
    assert [r.next_entropy(0) for _ in range(3)] == [7, 3, 9]
    assert r.next_entropy(0) == 20  # empty cache: continue in turn
    for e in range(100, 110):  # the buffer keeps the newest 8
        r.on_ack(0, e, False)
    assert r.next_entropy(0) == 102


def test_reps_freezes_on_a_timeout_then_starts_afresh_as_the_authors_code():
    """freeze_us: a timeout freezes the buffer; frozen, packets take its entries in turn
    without using them up; a second timeout does not extend it; after it the buffer is
    emptied and 16 packets take random entropies. Off (the paper's Algorithm 1): a timeout
    changes nothing."""
    us = 1_000_000
    plain = lb("reps")
    for _ in range(20):
        plain.next_entropy(0)
    plain.on_ack(0, 5, False)
    plain.on_timeout(1, [])
    assert plain.next_entropy(2) == 5 and plain.freezes == 0
    r = lb("reps", reps={"freeze_us": 100.0})
    for _ in range(20):
        r.next_entropy(0)
    for e in (4, 6, 9):
        r.on_ack(0, e, False)
    r.on_timeout(10 * us, [])
    r.on_timeout(50 * us, [])  # frozen already
    assert r.freezes == 1
    assert [r.next_entropy(20 * us) for _ in range(7)] == [4, 6, 9, 4, 6, 9, 4]
    after = [r.next_entropy(110 * us) for _ in range(17)]
    assert after[-1] == 20  # after 16 random ones, exploration's turn again (empty buffer)
    assert len(set(after[:16])) > 8 and not r.cache


@pytest.mark.parametrize("name", ["ecmp", "spray", "plb", "unolb", "reps"])
def test_same_seed_same_choices(name):
    a, b = lb(name, seed=3), lb(name, seed=3)
    assert [a.next_entropy(t) for t in range(50)] == [b.next_entropy(t) for t in range(50)]
