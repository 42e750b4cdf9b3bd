"""MP-RDMA congestion control (Lu et al., "Multi-Path Transport for RDMA in Datacenters",
NSDI 2018), as the intra-DC half of the Uno paper's MPRDMA+BBR baseline.

MP-RDMA adjusts its window per ACK, in packets: cwnd += 1/cwnd for an ACK without ECN echo
(one packet per window of ACKs) and cwnd -= 1/2 for an ECN-marked ACK. In wire bytes:

* ACK without ECN: cwnd += MSS x acked_bytes / cwnd (= MSS^2 / cwnd for a full packet);
* ECN-marked ACK: cwnd -= ``ecn_decrease_mss`` x MSS, a fixed amount per marked ACK regardless of
  the ACK's size (each ACK acknowledges one data packet);

then cwnd is clamped to [``min_cwnd_mss`` x MSS, ``max_cwnd_bdp`` x BDP]. There is no slow start
and no once-per-RTT rule; RTT samples are not used. Only the congestion-control loop is modelled
here (MP-RDMA's multi-path/virtual-path machinery is the load balancer's business in uno).

Defaults and sources:

* ``ecn_decrease_mss`` = 0.5: the MP-RDMA paper's 1/2 packet per ECN-marked ACK. The Uno artifact
  (htsim ``MprdmaSrc``, spcl/Uno_SC25 ``sim/mprdma.cpp``, ``x_gain``) uses 0.15.
* ``pacing`` = true, at cwnd / base RTT (Uno artifact: pacer delay = packet x base_rtt / cwnd).
* ``init_cwnd_bdp`` = 1 and ``max_cwnd_bdp`` = 1 (0 = no cap): Uno artifact (cwnd = maxcwnd =
  BDP at flow start).
* ``min_cwnd_mss`` = 1: Uno artifact (cwnd clamped to [MSS, BDP]).
* ``timeout_resets_cwnd`` = false: the Uno artifact only retransmits on a timeout and leaves cwnd
  unchanged. When true, a timeout sets cwnd to the minimum window (additive increase then
  resumes from there; MP-RDMA has no slow start).
* ``update_on_duplicate_ack`` = false: an ACK of a packet already acknowledged (a spuriously
  retransmitted copy) changes nothing. The Uno artifact runs the per-ACK rule on every ACK,
  duplicates included (``MprdmaSrc::processAck``); ``cc=mprdma_bbr_artifact`` sets it, together
  with the artifact's short MPRDMA timeout (transport ``intra`` block: 3 base RTTs less a margin,
  scanned every 4 µs), which makes spurious retransmissions, and so duplicates, common. The law
  then asks for duplicate ACKs (the common constant ``dup_acks``) and reads each as any other.

Window unit: here the window counts wire bytes (4,160 B per full packet); the artifact counts
payload bytes (4,096 B) against a BDP computed in wire bytes, so its 1-BDP window admits 1.6 %
more wire bytes and its 0.15-MSS decrement is 614 B instead of 624 B. Not reproduced.

A feedback batch (:mod:`uno.cc.law`) moves the window once: by MSS x its unmarked bytes / cwnd,
less the decrement times its marked ACKs (``marked_acks``: a packet ACK's 0 or 1, a fluid
step's expected count, fractional), then the clamp. For one ACK, exactly the per-ACK rules
above; for many, their sum with the window held at its value before the batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from uno.cc.law import (
    LOSS_TIMEOUT,
    Law,
    init_window,
    params_layout,
    set_cwnd,
    state_layout,
    window_params,
)
from uno.config.fields import num


@dataclass
class MprdmaParams:
    """MP-RDMA settings. Windows are in multiples of the flow's path BDP or of the MSS."""

    #: window decrement per ECN-marked ACK, in MSS (MP-RDMA paper: 1/2; Uno artifact: 0.15)
    ecn_decrease_mss: float = num(0.5, "> 0")
    #: pace at cwnd / base RTT
    pacing: bool = True
    #: initial window, in flow BDPs
    init_cwnd_bdp: float = num(1.0, "> 0")
    #: window floor, in MSS
    min_cwnd_mss: float = num(1.0, "> 0")
    max_cwnd_bdp: float = num(1.0, ">= 0")  # 0: no cap
    #: a retransmission timeout resets the window to one MSS
    timeout_resets_cwnd: bool = False
    #: apply the per-ACK rule to duplicate ACKs too (ACKs of retransmitted copies of packets
    #: already acknowledged), as the Uno artifact's MprdmaSrc does
    update_on_duplicate_ack: bool = False


#: the window alone
S = state_layout("MprdmaState", ())
#: the decrement per marked ACK (bytes); whether a timeout drops the window to its floor
P = params_layout("MprdmaConsts", ("ecn_decrease_bytes", "timeout_resets_cwnd"))


def pack(params: MprdmaParams, ctx) -> np.ndarray:
    p = np.zeros(P.size)
    window_params(p, ctx, params.init_cwnd_bdp, params.min_cwnd_mss, params.max_cwnd_bdp,
                  params.pacing)  # fmt: skip
    p[P.dup_acks] = 1.0 if params.update_on_duplicate_ack else 0.0
    p[P.ecn_decrease_bytes] = params.ecn_decrease_mss * ctx.mss_bytes
    p[P.timeout_resets_cwnd] = 1.0 if params.timeout_resets_cwnd else 0.0
    return p


@njit(cache=True)
def on_feedback(s, p, fb, rec):
    """+ MSS x unmarked bytes / cwnd, - the decrement per marked ACK (a duplicate ACK, which
    reaches the law only with ``update_on_duplicate_ack``, counts as any other)."""
    cwnd = s[S.cwnd]
    grow = p[P.mss] * (fb.acked_bytes - fb.marked_bytes) / cwnd
    cut = p[P.ecn_decrease_bytes] * fb.marked_acks
    # (grow - cut) first: one of them is 0 for a packet ACK, so its result is the per-ACK rule's
    set_cwnd(s, p, cwnd + (grow - cut))


@njit(cache=True)
def on_loss(s, p, now_ps, loss):
    """A retransmission timeout drops the window to its floor when so configured; a loss found
    before one changes nothing."""
    if loss == LOSS_TIMEOUT and p[P.timeout_resets_cwnd] > 0.0:
        set_cwnd(s, p, p[P.min_cwnd])


LAW = Law(
    name="mprdma",
    params=MprdmaParams,
    state=S,
    consts=P,
    pack=pack,
    init=init_window,
    on_feedback=on_feedback,
    on_loss=on_loss,
    signals=("ecn",),
)
