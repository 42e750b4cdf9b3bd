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
  scanned every 4 µs), which makes spurious retransmissions, and so duplicates, common.

Window unit: here the window counts wire bytes (4,160 B per full packet); the artifact counts
payload bytes (4,096 B) against a BDP computed in wire bytes, so its 1-BDP window admits 1.6 %
more wire bytes and its 0.15-MSS decrement is 614 B instead of 624 B. Not reproduced.
"""

from __future__ import annotations

from dataclasses import dataclass

from uno.cc.base import FlowContext, WindowedControl
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


class Mprdma(WindowedControl):
    name = "mprdma"

    def __init__(self, ctx: FlowContext, params: MprdmaParams):
        p = params
        super().__init__(ctx, p.init_cwnd_bdp, p.min_cwnd_mss, p.max_cwnd_bdp, p.pacing)
        self.p = p
        self.mss = ctx.mss_bytes
        self.ecn_decrease_bytes = p.ecn_decrease_mss * ctx.mss_bytes
        self.wants_duplicate_acks = p.update_on_duplicate_ack

    def on_ack(self, now_ps: int, acked_bytes: int, ecn: bool, rtt_ps: int, sent_ps: int) -> None:
        if ecn:
            self.set_cwnd(self.cwnd_bytes - self.ecn_decrease_bytes)
        else:
            self.set_cwnd(self.cwnd_bytes + self.mss * acked_bytes / self.cwnd_bytes)

    def on_duplicate_ack(
        self, now_ps: int, acked_bytes: int, ecn: bool, rtt_ps: int, sent_ps: int
    ) -> None:
        """The Uno artifact applies its per-ACK rule to every ACK, duplicates included."""
        self.on_ack(now_ps, acked_bytes, ecn, rtt_ps, sent_ps)

    def on_timeout(self, now_ps: int) -> None:
        if self.p.timeout_resets_cwnd:
            self.set_cwnd(self.min_cwnd)
