"""DCTCP (Alizadeh et al., "Data Center TCP", SIGCOMM 2010, §3.1 "Algorithm").

The sender keeps ``alpha``, an EWMA (gain ``g`` = 1/16) of the fraction of bytes whose ACKs
carried an ECN echo, updated once per window of data (§3.1, eq. 1: alpha <- (1-g) alpha + g F).
On ECN echoes it cuts the window at most once per window: cwnd <- cwnd x (1 - alpha/2) (§3.1,
eq. 2). Otherwise it grows like TCP: slow start below ``ssthresh``, then one MSS per window of
ACKs (cwnd += MSS x acked / cwnd). A retransmission timeout sets ssthresh = cwnd/2 and restarts
from one MSS; a loss found by fast retransmit (DCTCP keeps TCP's loss recovery, §3.1;
``cc=dctcp`` turns on the transport's duplicate-ACK rule, ``transport.dupack_threshold: 3``)
halves the window, as TCP's fast recovery (RFC 5681). Windows are delimited by send times (see
:class:`uno.cc.base.SendTimeWindow`). Pacing (off by default) is at cwnd / base RTT.

The initial window defaults to the path BDP (line rate), as the datacenter transports in the
Uno paper do; ``alpha_init`` defaults to 1 (Linux's ``dctcp_alpha_on_init``).
"""

from __future__ import annotations

from dataclasses import dataclass

from uno.cc.base import FlowContext, SendTimeWindow, WindowedControl
from uno.config.fields import num


@dataclass
class DctcpParams:
    """DCTCP settings. Windows are in multiples of the flow's path BDP or of the MSS."""

    #: gain of the EWMA of the marked fraction (alpha)
    g: float = num(1.0 / 16.0, "(0, 1]")
    #: alpha at the flow's start
    alpha_init: float = num(1.0, "[0, 1]")
    #: initial window, in flow BDPs
    init_cwnd_bdp: float = num(1.0, "> 0")
    #: window floor, in MSS
    min_cwnd_mss: float = num(1.0, "> 0")
    max_cwnd_bdp: float = num(0.0, ">= 0")  # 0: no cap
    #: pace at cwnd / base RTT
    pacing: bool = False


class Dctcp(WindowedControl):
    name = "dctcp"

    def __init__(self, ctx: FlowContext, params: DctcpParams):
        p = params
        super().__init__(ctx, p.init_cwnd_bdp, p.min_cwnd_mss, p.max_cwnd_bdp, p.pacing)
        self.p = p
        self.mss = ctx.mss_bytes
        self.ssthresh = float("inf")
        self.alpha = p.alpha_init
        self.window = SendTimeWindow()
        self.cwr = SendTimeWindow()  # no second cut until this round ends
        self.acked_in_window = 0
        self.marked_in_window = 0

    def on_ack(self, now_ps: int, acked_bytes: int, ecn: bool, rtt_ps: int, sent_ps: int) -> None:
        self.acked_in_window += acked_bytes
        if ecn:
            self.marked_in_window += acked_bytes
        window = self.window
        if not window.active:
            window.restart(now_ps)
        elif sent_ps >= window.start_ps:
            frac = self.marked_in_window / self.acked_in_window
            self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g * frac
            self.acked_in_window = 0
            self.marked_in_window = 0
            window.restart(now_ps)
        if ecn:
            if not self.cwr.active or sent_ps >= self.cwr.start_ps:
                self.set_cwnd(self.cwnd_bytes * (1.0 - self.alpha / 2.0))
                self.ssthresh = self.cwnd_bytes
                self.cwr.restart(now_ps)
        elif self.cwnd_bytes < self.ssthresh:
            self.set_cwnd(self.cwnd_bytes + acked_bytes)
        else:
            self.set_cwnd(self.cwnd_bytes + self.mss * acked_bytes / self.cwnd_bytes)

    def on_timeout(self, now_ps: int) -> None:
        self.ssthresh = max(self.min_cwnd, self.cwnd_bytes / 2.0)
        self.set_cwnd(self.min_cwnd)
        self.cwr.restart(now_ps)

    def on_nack(self, now_ps: int) -> None:
        """Fast retransmit (the transport's duplicate-ACK rule): TCP's fast recovery halves the
        window (RFC 5681 §3.2, as DCTCP keeps TCP's loss response, §3.1)."""
        self.ssthresh = max(self.min_cwnd, self.cwnd_bytes / 2.0)
        self.set_cwnd(self.ssthresh)
        self.cwr.restart(now_ps)
