"""The load-balancer interface."""

from __future__ import annotations

#: Entropy values are 16-bit, like a UDP source port.
ENTROPY_SPACE = 1 << 16


class LoadBalancer:
    """Chooses the entropy of each data packet of one flow."""

    name = "base"
    #: Whether :meth:`on_ack` does anything (the sender skips the call per ACK otherwise).
    wants_ack_feedback = False

    def next_entropy(self, now_ps: int) -> int:
        raise NotImplementedError

    def on_ack(self, now_ps: int, entropy: int, ecn: bool) -> None:
        """An ACK came back for a packet sent with ``entropy``."""

    def on_nack(self, now_ps: int, entropy: int) -> None:
        """A NACK came back for a packet sent with ``entropy``."""

    def on_timeout(self, now_ps: int) -> None:
        """The flow's retransmission timer fired."""
