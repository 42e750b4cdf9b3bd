"""The load-balancer interface.

A balancer chooses the entropy of each data packet of one flow (switches hash it, with the
flow's endpoints and a per-switch salt, to pick among equal-cost ports) and is told what came
back for an entropy: an ACK with or without ECN echo, a NACK or a duplicate-ACK loss (with the
entropies of the packets the receiver misses), a retransmission timeout (with the entropies of
the packets declared lost). It knows its flow's path facts (base RTT, BDP, RTO) from the same
:class:`uno.cc.base.FlowContext` its congestion controller gets, and draws from the flow's own
seeded stream.
"""

from __future__ import annotations

from collections.abc import Sequence

from uno.cc.base import FlowContext
from uno.core.rng import UniformBuffer

#: Entropy values are 16-bit, like a UDP source port.
ENTROPY_SPACE = 1 << 16


class LoadBalancer:
    """Chooses the entropy of each data packet of one flow."""

    name = "base"
    #: Whether :meth:`on_ack` does anything (the sender skips the call per ACK otherwise).
    wants_ack_feedback = False
    #: Whether the sender should remember each packet's entropy to report losses by entropy.
    wants_loss_feedback = False

    def __init__(self, ctx: FlowContext, uniform: UniformBuffer, cfg=None):
        self.ctx = ctx
        self._uniform = uniform

    @property
    def uniform(self) -> UniformBuffer:
        """The flow's own random stream, which the balancer draws from."""
        return self._uniform

    def next_entropy(self, now_ps: int) -> int:
        raise NotImplementedError

    def on_ack(self, now_ps: int, entropy: int, ecn: bool) -> None:
        """An ACK came back for a packet sent with ``entropy``."""

    def on_nack(self, now_ps: int, entropies: Sequence[int]) -> None:
        """The receiver reported packets missing (or the duplicate-ACK rule found them lost);
        ``entropies`` are the entropies they were sent with (empty unless
        ``wants_loss_feedback``)."""

    def on_timeout(self, now_ps: int, entropies: Sequence[int]) -> None:
        """The retransmission timer declared packets lost, sent with ``entropies``."""

    def random_entropy(self) -> int:
        """A fresh entropy, uniform over the 16-bit space."""
        return self._uniform.integer(ENTROPY_SPACE)
