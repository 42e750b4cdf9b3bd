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
"""

from __future__ import annotations

from dataclasses import dataclass

from uno.cc.base import CongestionControl, FlowContext
from uno.config.fields import num


@dataclass
class MprdmaParams:
    """MP-RDMA settings. Windows are in multiples of the flow's path BDP or of the MSS."""

    #: window decrement per ECN-marked ACK, in MSS (MP-RDMA paper: 1/2; Uno artifact: 0.15)
    ecn_decrease_mss: float = num(0.5, "> 0")
    pacing: bool = True
    init_cwnd_bdp: float = num(1.0, "> 0")
    min_cwnd_mss: float = num(1.0, "> 0")
    max_cwnd_bdp: float = num(1.0, ">= 0")  # 0: no cap
    timeout_resets_cwnd: bool = False


class Mprdma(CongestionControl):
    name = "mprdma"

    def __init__(self, ctx: FlowContext, params: MprdmaParams):
        super().__init__(ctx)
        p = params
        self.p = p
        self.mss = ctx.mss_bytes
        self.min_cwnd = p.min_cwnd_mss * ctx.mss_bytes
        self.max_cwnd = p.max_cwnd_bdp * ctx.bdp_bytes if p.max_cwnd_bdp > 0 else float("inf")
        self.ecn_decrease_bytes = p.ecn_decrease_mss * ctx.mss_bytes
        self.cwnd_bytes = max(self.min_cwnd, min(self.max_cwnd, p.init_cwnd_bdp * ctx.bdp_bytes))
        self._update_pacing()

    def _update_pacing(self) -> None:
        if self.p.pacing:
            self.pacing_rate_bps = self.cwnd_bytes * 8e12 / self.ctx.base_rtt_ps
        else:
            self.pacing_rate_bps = 0.0

    def on_ack(self, now_ps: int, acked_bytes: int, ecn: bool, rtt_ps: int, sent_ps: int) -> None:
        if ecn:
            cwnd = self.cwnd_bytes - self.ecn_decrease_bytes
        else:
            cwnd = self.cwnd_bytes + self.mss * acked_bytes / self.cwnd_bytes
        self.cwnd_bytes = max(self.min_cwnd, min(self.max_cwnd, cwnd))
        self._update_pacing()

    def on_timeout(self, now_ps: int) -> None:
        if self.p.timeout_resets_cwnd:
            self.cwnd_bytes = self.min_cwnd
            self._update_pacing()
