"""A flow: endpoints, size, path facts, and its outcome."""

from __future__ import annotations

from dataclasses import dataclass

from uno.topo.routing import PathInfo


@dataclass(frozen=True)
class FlowSpec:
    """A flow as a workload describes it: pure data, times in integer picoseconds."""

    flow_id: int
    src: int
    dst: int
    size_bytes: int
    start_ps: int
    tag: str = ""
    #: start ``start_ps`` after every flow tagged ``after`` has finished ("": at ``start_ps``)
    after: str = ""
    #: the sender stops at this time (ps), finished or not: no packet, new or resent, after it
    #: (None: it runs to its end)
    stop_ps: int | None = None


@dataclass(frozen=True)
class FlowCoding:
    """Erasure coding of one flow: the shared block coder (uno.ec.mds.BlockCoder), this flow's
    block layout (wire sequence numbers: each block's data packets, then its parity packets),
    and the receiver's block timer in ps (``retransmit_timeout_ps``: for a block whose first
    packet to arrive is a retransmission)."""

    coder: object
    layout: object
    receiver_timeout_ps: int
    retransmit_timeout_ps: int | None = None


class Flow:
    """Runtime record of one flow. ``cls`` is "intra" or "inter" (datacenter class)."""

    __slots__ = (
        "flow_id",
        "src",
        "dst",
        "size_bytes",
        "start_ps",
        "tag",
        "cls",
        "path",
        "n_packets",
        "wire_bytes",
        "ideal_fct_ps",
        "rto_ps",
        "cc_name",
        "lb_name",
        "sender",
        "receiver",
        "finish_ps",
        "coding",
        "after",
        "stop_ps",
    )

    def __init__(
        self,
        spec: FlowSpec,
        cls: str,
        path: PathInfo,
        n_packets: int,
        wire_bytes: int,
        rto_ps: int,
        cc_name: str,
        lb_name: str,
        ideal_base_rtt_ps: int | None = None,
        coding: FlowCoding | None = None,
    ):
        self.flow_id = spec.flow_id
        self.src = spec.src
        self.dst = spec.dst
        self.size_bytes = spec.size_bytes
        self.start_ps = spec.start_ps
        self.tag = spec.tag
        self.cls = cls
        self.path = path
        self.n_packets = n_packets
        self.wire_bytes = wire_bytes
        # Ideal FCT: base RTT + serialisation of every byte (payload + headers) at the
        # bottleneck. The base RTT is taken with this flow's own largest packet, so a flow of
        # less than one MTU is not charged full-size serialisations it never makes.
        base_rtt = ideal_base_rtt_ps if ideal_base_rtt_ps is not None else path.base_rtt_ps
        self.ideal_fct_ps = base_rtt + -(-wire_bytes * 8 * 10**12 // path.bottleneck_bps)
        self.rto_ps = rto_ps
        self.cc_name = cc_name
        self.lb_name = lb_name
        self.sender = None
        self.receiver = None
        self.finish_ps: int | None = None
        #: erasure coding; ``n_packets`` then counts wire packets (data and parity) while
        #: ``wire_bytes`` and the ideal FCT are the message's own
        self.coding = coding
        #: the tag this flow waits for; ``start_ps`` is then its delay after that group finishes,
        #: replaced by the actual start time once it starts
        self.after = spec.after
        #: when the sender stops, finished or not (None: never before its end)
        self.stop_ps = spec.stop_ps

    @property
    def fct_ps(self) -> int | None:
        return None if self.finish_ps is None else self.finish_ps - self.start_ps

    def __repr__(self) -> str:
        return f"Flow({self.flow_id}: {self.src}->{self.dst} {self.size_bytes} B {self.cls})"
