"""Faults in the fluid engine (``faults``): links that fail (``faults.link_failures``: down from
``at_us``, until ``until_us`` if set) and links that lose each packet with a probability
(``faults.losses[i].probability``), as the packet engine's :mod:`uno.faults.models` apply them
where a packet leaves a link.

A link's row holds the share of the bytes leaving it that are lost now (``LS_FAULT``: 1 while
it is down, else its loss probability), which :class:`FaultSchedule` sets at the first step
whose start is not before each failure or repair. The bytes a flow's route entry lets go there
are lost in that share (:func:`uno.fluid.forward.depart_level`), with the links' drops: drawn
in whole packets, taken off the flow's ACKs and found by fast retransmit or the timer (a
trimming switch does not trim them: ``FS_FAULT_LOST``). A batch's ACKs are lost in the share
their way back loses (:func:`ack_loss_share`): the packet sender's ACKs each settle one packet,
so a lost ACK is a packet the sender must find lost and resend, though its receiver had it.

In the hybrid the fluid links change at the same times (an event of the packet engine's loop
each), and the packet ports' own fault models drop its packets. Max-min refuses faults: its
rates never see a loss.

The Table 1 correlated losses (``faults.losses[i].block_probabilities``) lose their mean packet
loss rate (:func:`uno.faults.models.block_loss_rate`: Setup 1's 5.0e-5), as independent losses.
Not modelled: the clusters within a link's blocks of consecutive packets. They matter where a
cluster fails a coded block (more than ``ec.parity_packets`` of its packets lost): an 8 + 2 coded
block crossing a Setup 1 link back to back, as a flow alone on the link sends it, fails with a
chance of 7.2e-6, against 1.5e-11 for independent losses at the mean rate. An uncoded flow
resends each lost packet either way.

Units: time in ps, sizes in bytes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.core.units import us_to_ps
from uno.faults.models import block_loss_rate
from uno.faults.ports import ports_matching
from uno.fluid.columns import (
    ACKS,
    FS_BLOCK_BYTES,
    FS_DROPPED,
    FS_EC_N,
    FS_EXPOSED,
    FS_FAULT_LOST,
    FS_FAULT_SHARE,
    FX_SEND,
    LS_FAULT,
    LS_LOSS,
    LS_PKT_LOSS,
)
from uno.net.shared_link import packet_loss


class FaultSchedule:
    """The links' fault shares over time: each link's loss probability, and its failures and
    repairs in time order (ps); :meth:`apply` writes the shares in force at a time."""

    def __init__(self, faults_cfg, port_names: list[str]):
        index = {name: i for i, name in enumerate(port_names)}
        self.loss = np.zeros(len(port_names))
        for i, loss in enumerate(faults_cfg.losses):
            names = ports_matching(port_names, list(loss.ports), loss.both_directions,
                                   f"faults.losses[{i}]")  # fmt: skip
            # (the packet ports apply a block model after the independent one, to the packets
            # that survive it: a packet survives both)
            survive = 1.0 - loss.probability
            if loss.block_probabilities:
                rate = block_loss_rate(list(loss.block_probabilities), loss.block_packets)
                survive *= 1.0 - rate
            for name in names:
                link = index[name]
                self.loss[link] = 1.0 - (1.0 - self.loss[link]) * survive
        events = []  # (time ps, +1 down / -1 up, link)
        for i, lf in enumerate(faults_cfg.link_failures):
            names = ports_matching(port_names, list(lf.ports), lf.both_directions,
                                   f"faults.link_failures[{i}]")  # fmt: skip
            for name in names:
                events.append((us_to_ps(lf.at_us), 1, index[name]))
                if lf.until_us is not None:
                    events.append((us_to_ps(lf.until_us), -1, index[name]))
        events.sort()
        self._events = events
        self._next = 0
        self._started = False
        self._down = np.zeros(len(port_names), dtype=np.int64)  # failures in force
        self.any = bool(events) or bool((self.loss > 0.0).any())

    def faulty_links(self) -> np.ndarray:
        """The links with a fault at some time: a loss probability or a failure."""
        failed = [link for _, _, link in self._events]
        return np.union1d(np.nonzero(self.loss > 0.0)[0], np.array(failed, dtype=np.int64))

    def change_times_ps(self) -> list[int]:
        """The times of the failures and repairs still to come (ps), each once."""
        return sorted({t for t, _, _ in self._events[self._next :]})

    @property
    def next_ps(self) -> int | None:
        """When the next failure or repair comes (ps; None: no more)."""
        return self._events[self._next][0] if self._next < len(self._events) else None

    def apply(self, now_ps: float, ls: np.ndarray) -> None:
        """The shares in force at ``now_ps`` into the links' ``LS_FAULT``: every failure and
        repair due by then applied."""
        if not self._started:
            ls[:, LS_FAULT] = self.loss
            self._started = True
        events = self._events
        while self._next < len(events) and events[self._next][0] <= now_ps:
            _, change, link = events[self._next]
            self._down[link] += change
            ls[link, LS_FAULT] = 1.0 if self._down[link] > 0 else self.loss[link]
            self._next += 1


@njit(cache=True, error_model="numpy", inline="always")
def link_ack_loss(ls, link, faults, squeeze) -> float:
    """The chance that an ACK crossing ``link`` is lost: its fault's share (``faults``: the run
    has faults) and, where the link's full buffer dropped data in its last step, the chance a
    control packet is squeezed out there (``squeeze``: an ACK's bytes over a full data
    packet's; 0 where the ACKs never meet a full data queue): the rule that drops the hybrid's
    packets at a full fluid link (:func:`uno.net.shared_link.squeezed_out`, at the loss a
    packet arriving at a random phase meets, :func:`uno.net.shared_link.packet_loss`)."""
    chance = ls[link, LS_FAULT] if faults else 0.0
    if squeeze > 0.0:
        chance += packet_loss(ls[link, LS_LOSS], ls[link, LS_PKT_LOSS]) * squeeze
    return chance


@njit(cache=True, error_model="numpy", inline="always")
def ack_loss_share(f, ls, rv_ptr, rv_link, ack_w, lb, ack_hops, faults, squeeze) -> float:
    """The share of flow ``f``'s ACKs lost on the way back (:func:`link_ack_loss` at each link):
    on a route, the shares of its ACKs crossing each link times that link's chance, added up
    (at most 1: exact where the ACKs cross one lossy link, or one at a time); an UnoLB, PLB or
    REPS flow's, the mean over its subflows' ways back (``lb.ack_links``, ``ack_hops`` hops;
    none with ``transport.ack_paths``: the receiver's cycled ACK route, as a route's).
    ``ack_w``: every ACK route's weights, whichever lane the ACKs wait in."""
    n_s = lb.n[f]
    if n_s > 0 and ack_hops[f] > 0:
        lost = 0.0
        for s in range(n_s):
            share = 0.0
            for h in range(ack_hops[f]):
                share += link_ack_loss(ls, lb.ack_links[f, s, h], faults, squeeze)
            lost += share if share < 1.0 else 1.0
        return lost / n_s
    share = 0.0
    for e in range(rv_ptr[f], rv_ptr[f + 1]):
        share += ack_w[e] * link_ack_loss(ls, rv_link[e], faults, squeeze)
    return share if share < 1.0 else 1.0


@njit(cache=True, error_model="numpy", inline="always")
def lose_batch_acks(f, fs, fx, ls, rv_ptr, rv_link, lb, hops) -> None:
    """The ACKs of the batch flow ``f`` files now (this step's sends, or its block's) lost on
    their way back (:func:`ack_loss_share`: faults, and full buffers where
    ``hops.acks[ACKS.squeeze]`` > 0): its bytes lost in that share, as drops (``FS_DROPPED``
    of ``FS_EXPOSED``, drawn in whole packets with the links' drops) lost silently, as faults'
    (``FS_FAULT_LOST``: a trimming switch trims no ACK). Not a coded flow's: any ACK of a block
    that comes back says whether it decoded (uno.transport.sender), so a lost one costs it
    nothing."""
    batch = fs[f, FS_BLOCK_BYTES] if fs[f, FS_BLOCK_BYTES] > 0.0 else fx[f, FX_SEND]
    if batch <= 0.0 or fs[f, FS_EC_N] > 0.0:
        return
    faults = hops.acks[ACKS.faults] != 0.0
    share = ack_loss_share(f, ls, rv_ptr, rv_link, hops.ack_w, lb, hops.ack_hops, faults,
                           hops.acks[ACKS.squeeze])  # fmt: skip
    if share <= 0.0:
        return
    if fs[f, FS_DROPPED] == 0.0:
        fs[f, FS_EXPOSED] = 0.0
    fs[f, FS_DROPPED] += batch * share
    fs[f, FS_EXPOSED] += batch
    fs[f, FS_FAULT_LOST] += batch * share


@njit(cache=True, error_model="numpy", inline="always")
def note_fault_share(f, fs) -> None:
    """Of flow ``f``'s drops about to be drawn (``FS_DROPPED``), the share faults took, into
    ``FS_FAULT_SHARE`` (read as its losses are filed); ``FS_FAULT_LOST`` starts again."""
    dropped = fs[f, FS_DROPPED]
    share = fs[f, FS_FAULT_LOST] / dropped if dropped > 0.0 else 0.0
    fs[f, FS_FAULT_SHARE] = share if share < 1.0 else 1.0
    fs[f, FS_FAULT_LOST] = 0.0
