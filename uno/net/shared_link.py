"""The rules of a link that packets share with fluid flows (the hybrid engine,
:mod:`uno.fluid.hybrid`), written once for both data planes: the Python one's
``HybridPort`` calls each function's ``py_func``, the compiled one's ports (
:mod:`uno.net.compiled.ports`, :mod:`uno.net.compiled.queue`) the compiled function.

The fluid model's state of the link, as the packets read it: its fluid flows' part of the
queue (``fluid_q``, bytes), the link's whole queue (``link_q``, bytes, both kinds of bytes
sharing the line), the fluid bytes arriving per ps (``fluid_rate``), its phantom level and the
fraction of arriving bytes it drops (``loss_fraction``). Sizes in bytes, times in ps."""

from __future__ import annotations

from numba import njit

#: a port's coupling with the fluid model: none, a link both kinds of bytes queue on (FIFO at
#: step resolution), a host's NIC (round robin between the host's packet and fluid flows)
SHARED_NONE, SHARED_LINK, SHARED_NIC = 0, 1, 2


@njit(cache=True)
def fluid_on_link(fluid_q, fluid_rate):
    """Whether the fluid flows hold or send bytes on the link (else the port is the packet
    engine's, exactly)."""
    return fluid_q > 0.0 or fluid_rate > 0.0


@njit(cache=True)
def fluid_fills_buffer(queued, fluid_q, size, buffer):
    """Whether the port's own packets (``queued`` bytes) plus the fluid flows' ``fluid_q`` bytes
    leave no room in ``buffer`` for a packet of ``size`` bytes (its own queue admitting it)."""
    return queued + fluid_q + size > buffer


@njit(cache=True)
def packet_loss(link_loss, random_phase_loss):
    """The share of a packet's arrivals its full shared link drops: the fluid model's loss for
    an arrival at a random phase (``random_phase_loss``: uno.fluid.columns.LS_PKT_LOSS) when
    the link dropped in its last step (``link_loss`` > 0), else none (the value of an earlier
    step no longer holds)."""
    return random_phase_loss if link_loss > 0.0 else 0.0


@njit(cache=True)
def squeezed_out(draw, full_bytes, loss_fraction, size, is_data):
    """Whether a packet of ``size`` bytes arriving at a buffer the fluid bytes fill
    (:func:`fluid_fills_buffer`) is dropped, by the uniform ``draw``: with the probability
    ``loss_fraction`` the fluid model drops bytes arriving at the link at a random phase of its
    packet time (a full fluid queue drops only the excess, not every arrival, and by its inputs'
    phases: uno.fluid.phases). A data packet (``is_data``) meets that chance whatever its size:
    the room a departure frees goes to the first packet to arrive, and the crumbs it leaves
    are soon taken by ACKs and short packets, so a full intra-DC packet port refuses a short
    data packet about as often as a full one (at a WAN border port, where most arrivals are
    refused, a short one fits somewhat more often: docs/fluid_engine.md). A control packet (a
    64-B ACK) fits those crumbs far more often: its chance is scaled by its size over a full
    packet's (``full_bytes``)."""
    if is_data:
        return draw < loss_fraction
    return draw * full_bytes < loss_fraction * size


@njit(cache=True)
def behind_fluid_ps(now, link_q, ps_per_byte):
    """The earliest a packet arriving at ``now`` may start to leave: FIFO behind everything the
    link holds (``link_q`` bytes, at ``ps_per_byte``)."""
    return now + int(link_q * ps_per_byte)


@njit(cache=True)
def nic_fluid_gap_ps(size, fluid_rate, bytes_per_ps, fluid_senders, ps_per_byte):
    """At a host's NIC, after a data packet of ``size`` bytes, the time (ps) the line carries
    the host's fluid flows' bytes sent in between: their share ``r`` of the line
    (``fluid_rate`` / ``bytes_per_ps``) makes r / (1 - r) of the packet's size, and the round
    robin at most a packet's worth of each of the ``fluid_senders`` fluid flows with bytes to
    send."""
    if fluid_rate <= 0.0:
        return 0
    share = fluid_rate / bytes_per_ps
    between = share / (1.0 - share) if share < 1.0 else fluid_senders
    if between > fluid_senders:
        between = fluid_senders
    return int(size * between * ps_per_byte)


@njit(cache=True)
def shared_queue_level(remaining, fluid_q, link_q):
    """The queue RED decides on for a packet leaving with ``remaining`` bytes of packets behind
    it: the larger of those plus the fluid bytes and the fluid model's whole queue (bytes)."""
    level = remaining + fluid_q
    return link_q if link_q > level else level


@njit(cache=True)
def fluid_sent_bytes(before, after, from_ps, span_ps, now):
    """The fluid flows' bytes a shared link had sent by ``now`` (ps), as its packets' INT
    records count them: the fluid model's departures of the link's latest step (``before`` to
    ``after`` bytes, cumulative) spread evenly over the ``span_ps`` from ``from_ps`` (that
    step's end). One step late, as the packets read the rest of the fluid state, and never
    decreasing from one record to the next."""
    if now <= from_ps:
        return before
    if now >= from_ps + span_ps:
        return after
    return before + (after - before) * ((now - from_ps) / span_ps)


@njit(cache=True)
def shared_int_record(remaining, own_sent, fluid_on, fluid_q, link_q, fluid_sent):
    """The queue (bytes) and the bytes sent of the INT record a packet takes at a port whose
    link the fluid flows share, leaving with ``remaining`` bytes of packets behind it, the port
    having sent ``own_sent`` bytes and the fluid flows ``fluid_sent`` (:func:`fluid_sent_bytes`):
    the queue RED decides on while the fluid flows hold or send bytes there (``fluid_on``,
    :func:`shared_queue_level`), else the port's own; the bytes sent by both kinds (whole
    bytes)."""
    qlen = remaining
    if fluid_on:
        qlen = int(shared_queue_level(remaining, fluid_q, link_q))
    return qlen, own_sent + int(fluid_sent)
