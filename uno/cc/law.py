"""One congestion-control law for every engine.

An algorithm is one module under ``uno/cc/`` that defines, once:

* its parameters: the dataclass the config validates (``cc.<name>``);
* its state and its per-flow constants as named float64 columns (:func:`layout`), from which
  every engine sizes its arrays — no hand-numbered columns;
* ``pack(params, ctx)``: the per-flow constants, worked out from the parameters and what the
  flow knows of its path (:class:`uno.cc.base.FlowContext`);
* pure ``@njit`` functions over a state row ``s`` and a constants row ``p``: ``init``, the
  reaction to a feedback batch (:data:`Feedback`), to a loss (``on_loss``, a
  :data:`LOSS_TIMEOUT` or :data:`LOSS_NACK`), optionally to a data packet sent (``on_send``) and
  to its own timers (``next_timer`` / ``on_timer``) and to a switch's congestion notice
  (``on_notify``), and the pacing rate it allows; the window
  it allows is column 0 of the state (``cwnd``, wire bytes).

A feedback batch carries what any engine can supply: the time, the bytes acknowledged and how
many of them carried an ECN echo, the ACKs counted as packets, an RTT sample and the smallest
of the batch, the latest send time acknowledged, the bytes in flight and delivered, a
delivery-rate sample, and INT records (a separate array). A packet ACK is a batch of one; a
fluid step is a batch of many, for which the fluid driver also says how many whole marked ACKs
a packet sender would have seen (``mark_events``, its carried expectation) and asks for counts
in whole packets where a packet sender counts ACKs whole (``whole_packets``).

The Python data plane runs a law through :class:`uno.cc.adapter.LawControl` (the jitted
functions, or their pure-Python ``.py_func`` twins to set a breakpoint); the compiled data plane
and the fluid engine call them compiled, through the dispatch :mod:`uno.cc.registry` generates
from the list of laws. Units: times in picoseconds, sizes in wire bytes, rates in bit/s — all as
float64, exact for integers below 2**53 (about 2.5 hours of simulated picoseconds).
"""

from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit

from uno.core.layout import layout

#: what a loss report is (``on_loss``): a retransmission timeout, or a loss found before one
#: (fast retransmit's duplicate ACKs, a receiver's NACK)
LOSS_TIMEOUT = 0
LOSS_NACK = 1

#: bits per byte x picoseconds per second: rate_bps = bytes x BPS_PS / ps
BPS_PS = 8e12

#: a time after every event (no timer pending)
NEVER_PS = float(2**62)


#: a feedback batch (every field a float; see the module docstring)
Feedback = namedtuple(
    "Feedback",
    [
        "now_ps",  # when the batch's ACKs arrived (a fluid batch: the start of their step)
        "acked_bytes",  # wire bytes newly acknowledged
        "marked_bytes",  # of those, the bytes whose ACKs carried an ECN echo
        "acks",  # ACKs in the batch, counted as packets (fluid: acked bytes / MSS)
        "marked_acks",  # of those, ECN-echoed (fluid: marked bytes / MSS)
        "mark_events",  # whole ECN-echoed ACKs a packet sender would have seen (0 or 1 per ACK)
        "rtt_ps",  # RTT sample (fluid: the batch's mean)
        "rtt_min_ps",  # smallest RTT sample of the batch
        "sent_ps",  # send time of the latest-sent packet acknowledged
        "inflight_bytes",  # bytes in flight after the batch
        "delivered_bytes",  # bytes acknowledged by the flow so far, the batch included
        "rate_bytes",  # delivery-rate sample: bytes delivered over rate_interval_ps (0: none)
        "rate_interval_ps",
        "duplicate",  # 1: an ACK of a packet already acknowledged (a retransmitted copy's)
        "queued_p",  # chance that the batch's packets met queueing its mean RTT does not show
        "draw",  # a uniform draw in [0, 1) from the flow's stream, to decide on queued_p
        "whole_packets",  # 1: compare byte counts in whole packets (fluid expectations)
        "n_int",  # INT records in the record array (hops of the acknowledged packet's path)
    ],
)

#: the columns of an INT record (:mod:`uno.net.int`): egress time (ps), queue (bytes), bytes
#: transmitted by the port, its line rate (bit/s)
INT_TS, INT_QLEN, INT_TX, INT_RATE = 0, 1, 2, 3
INT_FIELDS = 4

#: no INT records (the record array of a batch without any)
NO_RECORDS = np.zeros((0, INT_FIELDS))


@njit(cache=True)
def ack_feedback(
    now_ps, acked_bytes, ecn, rtt_ps, sent_ps, inflight_bytes, delivered_bytes, rate_bytes,
    rate_interval_ps, duplicate, n_int,
):  # fmt: skip
    """The batch of one ACK a packet sender hears: ``ecn`` (0 or 1) marks all of it."""
    mark = 1.0 if ecn else 0.0
    return Feedback(
        float(now_ps), float(acked_bytes), mark * acked_bytes, 1.0, mark, mark, float(rtt_ps),
        float(rtt_ps), float(sent_ps), float(inflight_bytes), float(delivered_bytes),
        float(rate_bytes), float(rate_interval_ps), 1.0 if duplicate else 0.0, 0.0, 1.0, 0.0,
        float(n_int),
    )  # fmt: skip


# ---- what every law's rows begin with -------------------------------------------------------
#: the state columns every law has first: the window it allows (wire bytes)
COMMON_STATE = ("cwnd",)
#: the constant columns every law has first: its kind (the registry's number), the window's
#: floor and cap (inf: none, bytes), whether a window law paces at cwnd / pacing RTT, the MSS
#: (wire bytes of a full packet), the base RTT the flow knows (ps), the window's start (bytes),
#: the RTT its pacing rate divides the window by (ps), and whether duplicate ACKs reach the law
COMMON_PARAMS = (
    "kind", "min_cwnd", "max_cwnd", "paced", "mss", "base_rtt", "init_cwnd", "pacing_rtt",
    "dup_acks",
)  # fmt: skip


def state_layout(name: str, fields: tuple[str, ...]):
    """A law's state columns: :data:`COMMON_STATE`, then ``fields``."""
    return layout(name, COMMON_STATE + tuple(fields))


def params_layout(name: str, fields: tuple[str, ...]):
    """A law's constant columns: :data:`COMMON_PARAMS`, then ``fields``."""
    return layout(name, COMMON_PARAMS + tuple(fields))


#: the common columns, as every engine reads them whatever the law
C = layout("CommonState", COMMON_STATE)
P0 = layout("CommonParams", COMMON_PARAMS)


def window_params(p: np.ndarray, ctx, init_cwnd_bdp: float, min_cwnd_mss: float,
                  max_cwnd_bdp: float, pacing: bool) -> None:  # fmt: skip
    """The common columns of a window law: the window starts at ``init_cwnd_bdp`` BDPs and stays within [``min_cwnd_mss`` MSS,
    ``max_cwnd_bdp`` BDPs] (0: no cap); with ``pacing`` the sender paces at cwnd / base RTT."""
    p[P0.mss] = ctx.mss_bytes
    p[P0.base_rtt] = ctx.base_rtt_ps
    p[P0.pacing_rtt] = ctx.base_rtt_ps
    p[P0.min_cwnd] = min_cwnd_mss * ctx.mss_bytes
    p[P0.max_cwnd] = max_cwnd_bdp * ctx.bdp_bytes if max_cwnd_bdp > 0 else math.inf
    p[P0.init_cwnd] = init_cwnd_bdp * ctx.bdp_bytes
    p[P0.paced] = 1.0 if pacing else 0.0


@njit(cache=True)
def clamp_window(p, cwnd):
    """``cwnd`` within the law's [floor, cap] (bytes)."""
    if cwnd < p[P0.min_cwnd]:
        return p[P0.min_cwnd]
    if not cwnd < p[P0.max_cwnd]:
        return p[P0.max_cwnd]
    return cwnd


@njit(cache=True)
def set_cwnd(s, p, cwnd):
    """The window, clamped to [floor, cap] (the pacing rate follows from it)."""
    s[C.cwnd] = clamp_window(p, cwnd)


@njit(cache=True)
def init_window(s, p):
    """A window law's start: every column 0, the window at its initial size (clamped)."""
    s[:] = 0.0
    set_cwnd(s, p, p[P0.init_cwnd])


@njit(cache=True)
def window_pacing(s, p):
    """A window law's pacing rate (bit/s): cwnd / pacing RTT when it paces, else 0 (none)."""
    if p[P0.paced] > 0.0:
        return s[C.cwnd] * BPS_PS / p[P0.pacing_rtt]
    return 0.0


@njit(cache=True)
def in_whole_packets(nbytes, mss):
    """``nbytes`` rounded up to whole packets of ``mss`` bytes, as a packet sender counts them
    (a rounding hair above a whole number of packets stays on it); no window at all (a
    rate-based law's, infinite) stays infinite."""
    if nbytes == math.inf:
        return nbytes
    return math.ceil(nbytes / mss - 1e-9) * mss


@njit(cache=True)
def no_send(s, p, now_ps, wire_bytes):
    """``on_send`` of a law that does not count what it sends."""


@njit(cache=True)
def no_notify(s, p, now_ps, level):
    """``on_notify`` of a law that does not hear switches' congestion notices."""


@njit(cache=True)
def no_report(s, p, now_ps, sent_ps, rate_bps, rec):
    """``on_report`` of a law that hears no reports from the network's DCI switches."""


@njit(cache=True)
def no_timer(s, p):
    """``next_timer`` of a law without timers."""
    return NEVER_PS


@njit(cache=True)
def no_on_timer(s, p, now_ps):
    """``on_timer`` of a law without timers."""


def no_tail(p: np.ndarray) -> int:
    """State columns a law needs beyond its layout, for constants ``p`` (none)."""
    return 0


@dataclass(frozen=True)
class Law:
    """A congestion-control algorithm, declared once (see the module docstring).

    ``signals``: what the law reads besides ACK counts and times, for the engines that cannot
    supply everything: "ecn", "rtt" (the batch's RTT sample), "rtt_min" (its least sample),
    "queueing" (the chance of queueing an RTT sample does not show, ``Feedback.queued_p``),
    "delivery_rate", "int" (INT records), "timers" (its own rate timers), "cnp" (congestion
    notifications coalesced at the receiver), "qcn" (congestion notices switches send straight
    to the sender, ``on_notify``), "dci" (reports of DCI switches and receivers, ``on_report``). ``state_tail``: extra state columns for
    constants ``p`` (per-hop records, a filter's slots)."""

    name: str
    params: type
    state: tuple
    consts: tuple
    pack: Callable
    init: Callable
    on_feedback: Callable
    on_loss: Callable
    pacing_rate: Callable = window_pacing
    on_send: Callable = no_send
    next_timer: Callable = no_timer
    on_timer: Callable = no_on_timer
    #: a congestion notice a switch sent straight to the sender (``uno.net.qcn``): its
    #: quantised feedback ``level`` (1..63), heard at ``now_ps``
    on_notify: Callable = no_notify
    #: a report from the path's DCI switches (``uno.net.dci``), heard at ``now_ps``: a
    #: switch's INT records ``rec`` of the data packet sent at ``sent_ps`` (MLCC's Switch-INT),
    #: or, with ``rate_bps`` > 0, the rate the receiver suggests in an ACK (bit/s)
    on_report: Callable = no_report
    #: the receiver's part of a law whose receiver computes (``uno.cc.mlcc.RECEIVER``): None
    receiver: object | None = None
    state_tail: Callable = no_tail
    signals: tuple[str, ...] = ("ecn",)
    #: the span (ps) of the law's own periodic rules for a flow of constants ``p``: an engine
    #: that hands the law its ACKs in batches splits one longer than that into pieces of at
    #: most it. None: the flow's base RTT (GEMINI's hold-off, DCTCP's window of marks, BBR's
    #: rounds); UnoCC's epochs and Gear's and MLCC's utilisation EWMA span an intra-DC RTT
    period_ps: Callable | None = None
    #: the receiver coalesces ECN echoes into one per this many ps (DCQCN's notification point)
    cnp_interval_ps: Callable | None = None
    #: for a law with ``on_send``: whether a flow with constants ``p`` needs its sends (None:
    #: always; the transports skip the call otherwise)
    hears_sends: Callable | None = None
    #: for a law that reads "queueing": the queueing beyond the base RTT (ps) that counts as
    #: queued, from its constants (the fluid engine's chance of it, ``Feedback.queued_p``)
    queue_threshold: Callable | None = None
    doc: str = ""

    @property
    def state_size(self) -> int:
        return self.state.size

    @property
    def consts_size(self) -> int:
        return self.consts.size
