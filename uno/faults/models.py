"""Fault models applied where a packet leaves a link (``uno.net.port.Port``): a packet the model
drops never reaches the next node. Every random draw comes from the link's own seeded stream.

* :class:`LinkDown`: the link black-holes everything it carries from ``start_ps`` on (until
  ``end_ps``, if the link comes back): packets queued or on the wire when it fails are lost too.
  Routing does not change: senders must move away from the dead path themselves (UnoLB, PLB) or
  keep losing packets on it (ECMP, spraying) — as in the paper's Fig. 13 A.
* :class:`IidLoss`: each packet is lost independently with probability ``p``.
* :class:`BlockLoss`: the correlated loss of the Uno paper's Table 1. The link's packets are cut
  into consecutive blocks of ``block_packets`` (10); at the start of a block, k packets of it are
  chosen to be dropped, k = 1, 2, 3... with the configured per-block probabilities (0 otherwise),
  their positions uniformly among the block's. Table 1's "Loss Rate" column is read as these
  per-block probabilities: Setup 1 (3.0e-4, 7.5e-5, 1.6e-5) gives a mean packet loss rate of
  (3.0e-4 + 2 x 7.5e-5 + 3 x 1.6e-5) / 10 = 5.0e-5, the 5.01e-5 the text states (its drop counts,
  read as blocks out of 32 M, would give ten times that).
"""

from __future__ import annotations

from uno.core.rng import UniformBuffer

REASON_DOWN = "link_down"
REASON_RANDOM = "random_loss"
REASON_BLOCK = "block_loss"


class LinkDown:
    reason = REASON_DOWN

    def __init__(self, start_ps: int, end_ps: int | None):
        self.start_ps = start_ps
        self.end_ps = end_ps

    def drops(self, pkt, now_ps: int) -> bool:
        return now_ps >= self.start_ps and (self.end_ps is None or now_ps < self.end_ps)


class IidLoss:
    reason = REASON_RANDOM

    def __init__(self, probability: float, uniform: UniformBuffer):
        self.p = probability
        self._uniform = uniform

    @property
    def uniform(self) -> UniformBuffer:
        """The random stream its draws come from."""
        return self._uniform

    def drops(self, pkt, now_ps: int) -> bool:
        return self._uniform.next() < self.p


def block_loss_rate(block_probabilities: list[float], block_packets: int) -> float:
    """The mean packet loss rate of :class:`BlockLoss`: the expected losses of a block,
    sum of k x P(k losses), over its ``block_packets`` packets (Table 1 Setup 1: 5.0e-5)."""
    lost = sum((k + 1) * p for k, p in enumerate(block_probabilities))
    return lost / block_packets


class BlockLoss:
    reason = REASON_BLOCK

    def __init__(
        self, block_probabilities: list[float], block_packets: int, uniform: UniformBuffer
    ):
        if len(block_probabilities) > block_packets:
            raise ValueError("more loss counts than packets in a block")
        self.cumulative = []
        total = 0.0
        for p in block_probabilities:
            total += p
            self.cumulative.append(total)
        self.block_packets = block_packets
        self._uniform = uniform
        self._index = 0  # position of the next packet in its block
        self._doomed: set[int] = set()
        self.blocks = 0
        self.losses_per_block: list[int] = [0] * (len(block_probabilities) + 1)

    @property
    def uniform(self) -> UniformBuffer:
        """The random stream its draws come from."""
        return self._uniform

    def _new_block(self) -> None:
        u = self._uniform.next()
        k = 0
        for i, c in enumerate(self.cumulative):
            if u < c:
                k = i + 1
                break
        doomed: set[int] = set()
        while len(doomed) < k:
            doomed.add(self._uniform.integer(self.block_packets))
        self._doomed = doomed
        self.blocks += 1
        self.losses_per_block[k] += 1

    def drops(self, pkt, now_ps: int) -> bool:
        i = self._index
        if i == 0:
            self._new_block()
        self._index = i + 1 if i + 1 < self.block_packets else 0
        return i in self._doomed


class FaultyLink:
    """Stands between a port and the next node: passes a packet on unless a model drops it."""

    __slots__ = ("port", "models", "_next", "_network", "_engine", "drops")

    def __init__(self, port, models: list):
        self.port = port
        self.models = models
        self._next = port._next_receive
        self._network = port._network
        self._engine = port._engine
        self.drops = 0

    def receive(self, pkt) -> None:
        now = self._engine._now
        for model in self.models:
            if model.drops(pkt, now):
                self.drops += 1
                self._network.drop(pkt, model.reason, self.port)
                return
        self._next(pkt)
