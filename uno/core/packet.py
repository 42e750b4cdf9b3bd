"""The packet record. One mutable object per packet in flight; a receiver turns a data packet
into its ACK in place (swapping ends), which saves an allocation per packet."""

from __future__ import annotations

DATA = 0
ACK = 1
NACK = 2
#: a switch's congestion notification to a data packet's source (uno.net.qcn)
CN = 3
#: a data packet a full switch buffer cut to its header (``switch.trimming``): it goes on to the
#: receiver ahead of data, which NACKs it
TRIM = 4
KIND_NAMES = ("data", "ack", "nack", "cn", "trim")


class Packet:
    """A packet on the wire.

    ``flow_id`` names its flow (the network's ``flows_by_id``: hosts hand the packet to that
    flow's receiver or sender), an integer as the compiled data plane's pool rows hold it.
    ``size_bytes`` is the wire size (payload + header); ``payload_bytes`` the transport payload.
    ``sent_ps`` is the sender's transmit time of the data packet (echoed in its ACK).
    ``hkey`` is the ECMP hash key of (src, dst, entropy) for the current direction.
    ``dep_ps`` is the departure time from the queue it currently sits in (engine bookkeeping).
    ``info`` carries what erasure coding needs (see the attribute's comment).
    ``tx_delivered`` / ``tx_delivered_ps`` are the sender's delivered-bytes count and the time it
    last advanced, when this packet was sent (echoed for delivery-rate estimation).
    """

    __slots__ = (
        "kind",
        "flow_id",
        "seq",
        "size_bytes",
        "payload_bytes",
        "src",
        "dst",
        "entropy",
        "hkey",
        "ecn",
        "sent_ps",
        "dep_ps",
        "retx",
        "tx_delivered",
        "tx_delivered_ps",
        "info",
        # set only where used (read with getattr): the PFC ingress queue the packet entered its
        # current switch through (uno.net.pfc), its INT records (uno.net.int); MLCC's credit
        # loop (uno.net.dci, uno.cc.mlcc): a data packet's C_D and the bytes its per-flow queue
        # held as it left, an ACK's C_R, R_credit and R-bar_DQM (bit/s)
        "ingress",
        "int_hops",
        "credit",
        "pfq_bytes",
        "credit_rate_bps",
        "dqm_rate_bps",
    )

    def __init__(
        self,
        kind: int,
        flow_id: int,
        seq: int,
        size_bytes: int,
        payload_bytes: int,
        src: int,
        dst: int,
        entropy: int,
        hkey: int,
        sent_ps: int,
        retx: bool = False,
    ):
        self.kind = kind
        self.flow_id = flow_id
        self.seq = seq
        self.size_bytes = size_bytes
        self.payload_bytes = payload_bytes
        self.src = src
        self.dst = dst
        self.entropy = entropy
        self.hkey = hkey
        self.ecn = False
        self.sent_ps = sent_ps
        self.dep_ps = 0
        self.retx = retx
        self.tx_delivered = 0
        self.tx_delivered_ps = 0
        # erasure coding: a data packet's coded symbols, an ACK's "block decoded" flag, a NACK's
        # missing sequence numbers
        self.info = None

    def __repr__(self) -> str:
        return (
            f"Packet({KIND_NAMES[self.kind]} flow={self.flow_id} "
            f"seq={self.seq} {self.src}->{self.dst} size={self.size_bytes} ecn={self.ecn})"
        )
