"""PLB, Protective Load Balancing (Qureshi et al., SIGCOMM 2022), as the Uno paper's baseline.

The flow uses one path (one entropy, as ECMP). Time is cut into rounds of one base RTT (a round
ends at the first ACK at least one base RTT after it began); a round is congested when more than
``congested_fraction`` of its ACKs carried an ECN echo. After ``congested_rounds`` consecutive
congested rounds the flow repaths: it draws a fresh random entropy and starts counting again.
A retransmission timeout (or a NACK) also repaths, at most once per RTO.

Defaults are the Uno artifact's (``LcpSrc``, ``-strat plb``; docs/unorc_artifact_notes.md §3):
25 % marked ACKs, 2 rounds. PLB's own Linux defaults are gentler (50 %, 12 rounds, and a long
pause of repathing after a timeout); set them with ``lb.plb.*``. The first entropy is drawn at
random (as ECMP); the artifact starts every flow on entropy 0 (``initial_entropy: zero``; the
switches' hash still spreads flows, as it includes their ends).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from uno.config.fields import choice, num
from uno.lb.base import LoadBalancer


@dataclass
class PlbParams:
    #: a round is congested when more than this fraction of its ACKs were ECN-marked
    congested_fraction: float = num(0.25, "[0, 1]")
    #: consecutive congested rounds before a repath
    congested_rounds: int = num(2, "[1, 1000000]")
    #: a timeout or NACK repaths (at most once per RTO)
    repath_on_loss: bool = True
    #: a flow's first entropy: "random" (as ECMP) or "zero" (the Uno artifact's PLB)
    initial_entropy: str = choice("random", ("random", "zero"))


class Plb(LoadBalancer):
    name = "plb"
    wants_ack_feedback = True

    def __init__(self, ctx, uniform, cfg):
        super().__init__(ctx, uniform)
        self.p: PlbParams = cfg.plb
        self.entropy = self.random_entropy() if self.p.initial_entropy == "random" else 0
        self.round_start_ps: int | None = None
        self.acks = 0
        self.marked = 0
        self.congested_count = 0
        self.last_loss_repath_ps: int | None = None
        self.repaths = 0

    def next_entropy(self, now_ps: int) -> int:
        return self.entropy

    def _repath(self) -> None:
        self.entropy = self.random_entropy()
        self.congested_count = 0
        self.repaths += 1

    def on_ack(self, now_ps: int, entropy: int, ecn: bool) -> None:
        if self.round_start_ps is None:
            self.round_start_ps = now_ps
        self.acks += 1
        if ecn:
            self.marked += 1
        if now_ps - self.round_start_ps >= self.ctx.base_rtt_ps:
            if self.marked > self.p.congested_fraction * self.acks:
                self.congested_count += 1
            else:
                self.congested_count = 0
            self.round_start_ps = now_ps
            self.acks = self.marked = 0
            if self.congested_count >= self.p.congested_rounds:
                self._repath()

    def _on_loss(self, now_ps: int) -> None:
        if not self.p.repath_on_loss:
            return
        last = self.last_loss_repath_ps
        if last is None or now_ps - last > self.ctx.rto_ps:
            self.last_loss_repath_ps = now_ps
            self._repath()

    def on_nack(self, now_ps: int, entropies: Sequence[int]) -> None:
        self._on_loss(now_ps)

    def on_timeout(self, now_ps: int, entropies: Sequence[int]) -> None:
        self._on_loss(now_ps)
