"""REPS, recycled-entropy packet spraying (Bonato et al., "REPS: Recycling Entropies for Packet
Spraying to Adaptively Explore Paths and Mitigate Failures", §3 and Algorithm 1).

Exploration: while the flow has sent less than one BDP (counted in data packets handed out) and
has not yet tried every entropy, entropies are handed out in turn, ``next_entropy++ mod
n_entropies`` (256). An ACK without ECN echo puts its entropy into a circular buffer of
``buffer_size`` (8) entries (a full buffer drops its oldest entry); a marked ACK adds nothing.
After exploration each packet takes the oldest cached entropy (it is used up), or, when the
buffer is empty, the next entropy in turn. REPS has no failure mode of its own in this paper:
losses and timeouts do not change its choices (they only stop good entropies from coming back).
The Uno artifact has no REPS (docs/unorc_artifact_notes.md §5).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from uno.config.fields import num
from uno.lb.base import LoadBalancer


@dataclass
class RepsParams:
    #: entries of the circular buffer of entropies that came back unmarked
    buffer_size: int = num(8, "[1, 65536]")


class Reps(LoadBalancer):
    name = "reps"
    wants_ack_feedback = True

    def __init__(self, ctx, uniform, cfg):
        super().__init__(ctx, uniform)
        self.n = cfg.n_entropies
        self.cache: deque[int] = deque(maxlen=cfg.reps.buffer_size)
        self.next = 0
        self.explore_packets = min(max(1, round(ctx.bdp_bytes / ctx.mss_bytes)), self.n)
        self.sent = 0

    def next_entropy(self, now_ps: int) -> int:
        self.sent += 1
        if self.sent <= self.explore_packets or not self.cache:
            e = self.next
            self.next = (e + 1) % self.n
            return e
        return self.cache.popleft()

    def on_ack(self, now_ps: int, entropy: int, ecn: bool) -> None:
        if not ecn:
            self.cache.append(entropy)
