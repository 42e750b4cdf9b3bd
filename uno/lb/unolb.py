"""UnoLB, the load balancing of UnoRC (Uno paper §4.2 "Load Balancing (UnoLB)", Algorithm 2).

The flow keeps ``subflows`` entropies (n paths, drawn at random at start) and sends its packets
round-robin over them (Alg. 2 ``OnSend``), so the packets of an erasure-coded block spread over
n paths and a failed path costs a block at most about one packet. On a NACK or a retransmission
timeout (Alg. 2 ``OnAckOrTimeout``), at most once per base RTT, the affected subflows move off
their path. Two choices the paper leaves open are options:

* which subflows move (``affected``): ``lost`` (default) — those that carried the packets the
  NACK or the timeout reports, the paper's "affected" subflows; ``silent`` — every subflow that
  got no ACK in the last half base RTT, each at most once per base RTT (the Uno artifact,
  ``update_subflow``, docs/unorc_artifact_notes.md §2);
* where they move (``reroute``): ``recent_ack`` (default) — "randomly selecting a subflow that
  has recently received ACKs" (§4.2): the entropy of a random subflow acknowledged within the
  last base RTT, or a fresh one if none was; ``random`` — a fresh random entropy (the artifact).

ECN never reroutes (neither the paper nor the artifact does).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from uno.config.fields import choice, num
from uno.lb.base import LoadBalancer


@dataclass
class UnoLbParams:
    #: n subflows (the artifact: 10, one per packet of an (8, 2) block)
    subflows: int = num(10, "[1, 1024]")
    #: which subflows move on a NACK or timeout: lost (those that carried the lost packets) or
    #: silent (every subflow without an ACK in the last half base RTT, the Uno artifact)
    affected: str = choice("lost", ("lost", "silent"))
    #: where they move: recent_ack (the entropy of a subflow acknowledged within the last base RTT)
    #: or random (a fresh random entropy, the Uno artifact)
    reroute: str = choice("recent_ack", ("recent_ack", "random"))


class UnoLb(LoadBalancer):
    name = "unolb"
    wants_ack_feedback = True
    wants_loss_feedback = True

    def __init__(self, ctx, uniform, cfg):
        super().__init__(ctx, uniform)
        self.p: UnoLbParams = cfg.unolb
        n = self.p.subflows
        self.entropies = [self.random_entropy() for _ in range(n)]
        self.last_ack_ps = [0] * n
        self.last_reroute_ps = [0] * n
        self.index = 0
        self.last_reroute_any_ps: int | None = None
        self.reroutes = 0

    def next_entropy(self, now_ps: int) -> int:
        e = self.entropies[self.index]
        self.index = (self.index + 1) % len(self.entropies)
        return e

    def on_ack(self, now_ps: int, entropy: int, ecn: bool) -> None:
        for i, e in enumerate(self.entropies):
            if e == entropy:
                self.last_ack_ps[i] = now_ps

    def _new_entropy(self, now_ps: int, moving: set[int]) -> int:
        if self.p.reroute == "recent_ack":
            rtt = self.ctx.base_rtt_ps
            good = [
                i
                for i in range(len(self.entropies))
                if i not in moving and self.last_ack_ps[i] and now_ps - self.last_ack_ps[i] <= rtt
            ]
            if good:
                return self.entropies[good[self._uniform.integer(len(good))]]
        return self.random_entropy()

    def _update(self, now_ps: int, entropies: Sequence[int]) -> None:
        rtt = self.ctx.base_rtt_ps
        if self.p.affected == "silent":
            moving = {
                i
                for i in range(len(self.entropies))
                if now_ps - self.last_reroute_ps[i] > rtt
                and now_ps - self.last_ack_ps[i] > rtt // 2
            }
        else:
            last = self.last_reroute_any_ps
            if last is not None and now_ps - last <= rtt:
                return
            lost = set(entropies)
            moving = {i for i, e in enumerate(self.entropies) if e in lost}
            if not moving:
                return
            self.last_reroute_any_ps = now_ps
        for i in sorted(moving):
            self.entropies[i] = self._new_entropy(now_ps, moving)
            self.last_reroute_ps[i] = now_ps
            self.reroutes += 1

    def on_nack(self, now_ps: int, entropies: Sequence[int]) -> None:
        self._update(now_ps, entropies)

    def on_timeout(self, now_ps: int, entropies: Sequence[int]) -> None:
        self._update(now_ps, entropies)
