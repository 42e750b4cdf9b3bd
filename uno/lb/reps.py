"""REPS, recycled-entropy packet spraying (Bonato et al., "REPS: Recycling Entropies for Packet
Spraying to Adaptively Explore Paths and Mitigate Failures", §3 and Algorithm 1).

Exploration: while the flow has sent less than one BDP (counted in data packets handed out) and
has not yet tried every entropy, entropies are handed out in turn, ``next_entropy++ mod
n_entropies`` (256). An ACK without ECN echo puts its entropy into a circular buffer of
``buffer_size`` (8) entries (a full buffer drops its oldest entry); a marked ACK adds nothing,
and neither does a NACK (a trimmed packet's: congestion) or a timeout. After exploration each
packet takes the oldest cached entropy (it is used up), or, when the buffer is empty, the next
entropy in turn. The Uno artifact has no REPS (docs/unorc_artifact_notes.md §5).

Failures. In the paper's Algorithm 1 a timeout changes nothing: a path that loses packets stops
sending its entropies back. ``freeze_us`` > 0 adds the failure mode of the authors' htsim code
(``uec_mp.cpp``, ``buffer_reps.cpp``): a timeout while not frozen freezes the buffer for that
long; while frozen every packet takes the buffer's entries in turn without using them up
(entropies of unmarked ACKs still join it); at the first packet after the freeze the buffer is
emptied and the next ``buffer_size`` x 2 packets (the code: 16) take random entropies.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from uno.config.fields import num
from uno.core.units import us_to_ps
from uno.lb.base import LoadBalancer


def explore_packets(bdp_bytes: float, mss_bytes: float, n_entropies: int) -> int:
    """The packets REPS hands entropies out in turn to at the start: one BDP of them, at most
    one per entropy (every engine's REPS starts so)."""
    return min(max(1, round(bdp_bytes / mss_bytes)), n_entropies)


@dataclass
class RepsParams:
    #: entries of the circular buffer of entropies that came back unmarked
    buffer_size: int = num(8, "[1, 65536]")
    #: the authors' failure mode: a timeout freezes the buffer this long (0: off, Algorithm 1)
    freeze_us: float = num(0.0, ">= 0")


class Reps(LoadBalancer):
    name = "reps"
    wants_ack_feedback = True

    def __init__(self, ctx, uniform, cfg):
        super().__init__(ctx, uniform)
        self.n = cfg.n_entropies
        self.cache: deque[int] = deque(maxlen=cfg.reps.buffer_size)
        self.next = 0
        self.explore_packets = explore_packets(ctx.bdp_bytes, ctx.mss_bytes, self.n)
        self.sent = 0
        self.freeze_ps = us_to_ps(cfg.reps.freeze_us)
        self.frozen_until_ps = -1  # -1: not frozen
        self._turn = 0  # while frozen: the buffer entry the next packet takes
        self._random_left = 0  # after a freeze: packets still to take a random entropy
        self.freezes = 0

    def next_entropy(self, now_ps: int) -> int:
        self.sent += 1
        if self.frozen_until_ps >= 0:
            if now_ps < self.frozen_until_ps and self.cache:
                e = self.cache[self._turn % len(self.cache)]
                self._turn += 1
                return e
            if now_ps >= self.frozen_until_ps:
                self.frozen_until_ps = -1
                self.cache.clear()
                self._random_left = 2 * self.cache.maxlen
        if self._random_left:
            self._random_left -= 1
            return self.uniform.integer(self.n)
        if self.sent <= self.explore_packets or not self.cache:
            e = self.next
            self.next = (e + 1) % self.n
            return e
        return self.cache.popleft()

    def on_ack(self, now_ps: int, entropy: int, ecn: bool) -> None:
        if not ecn:
            self.cache.append(entropy)

    def on_timeout(self, now_ps: int, entropies) -> None:
        if self.freeze_ps and self.frozen_until_ps < 0:
            self.frozen_until_ps = now_ps + self.freeze_ps
            self._turn = 0
            self.freezes += 1
