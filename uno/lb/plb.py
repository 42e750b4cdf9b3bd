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

from numba import njit

from uno.config.fields import choice, num
from uno.lb.base import LoadBalancer


@njit(cache=True)
def plb_round_end(acks, marked, congested_count, congested_fraction, congested_rounds):
    """The end of a PLB round of ``acks`` ACKs, ``marked`` of them with an ECN echo (counts, or
    bytes: only their ratio matters): the consecutive congested rounds counted with it (a round
    is congested when more than ``congested_fraction`` of its ACKs were marked), and whether
    the flow repaths now (``congested_rounds`` in a row; the count then starts again). Every
    engine's PLB decides here."""
    count = congested_count + 1 if marked > congested_fraction * acks else 0
    if count >= congested_rounds:
        return 0, True
    return count, False


@njit(cache=True)
def plb_loss_repaths(now_ps, last_loss_repath_ps, rto_ps):
    """Whether a loss report (timeout or NACK) at ``now_ps`` repaths: at most once per RTO
    after the last one that did (``last_loss_repath_ps`` < 0: none yet). Times in ps."""
    return last_loss_repath_ps < 0 or now_ps - last_loss_repath_ps > rto_ps


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


# (the packet engine's per-ACK calls take the rules' Python twins: no call into compiled code
# per ACK; the fluid kernels take the compiled ones)
_ROUND_END = plb_round_end.py_func
_LOSS_REPATHS = plb_loss_repaths.py_func


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
            self.congested_count, repath = _ROUND_END(
                self.acks, self.marked, self.congested_count, self.p.congested_fraction,
                self.p.congested_rounds,
            )  # fmt: skip
            self.round_start_ps = now_ps
            self.acks = self.marked = 0
            if repath:
                self._repath()

    def _on_loss(self, now_ps: int) -> None:
        if not self.p.repath_on_loss:
            return
        last = -1 if self.last_loss_repath_ps is None else self.last_loss_repath_ps
        if _LOSS_REPATHS(now_ps, last, self.ctx.rto_ps):
            self.last_loss_repath_ps = now_ps
            self._repath()

    def on_nack(self, now_ps: int, entropies: Sequence[int]) -> None:
        self._on_loss(now_ps)

    def on_timeout(self, now_ps: int, entropies: Sequence[int]) -> None:
        self._on_loss(now_ps)
