"""The switch features' settings beside queueing and marking: INT, QCN congestion points,
trimming and the DCI switches' element (``switch.*``; :class:`uno.config.schema.SwitchConfig`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from uno.config.fields import choice, num
from uno.config.parts import names_of


@dataclass
class IntTelemetryConfig:
    """In-band network telemetry records in data packets, echoed in ACKs (uno/net/int.py)."""

    #: INT-enabled switch egress ports append a record to every data packet
    enabled: bool = False
    #: switch tiers whose egress ports add a record; null: every tier but "border" (DCI)
    tiers: list[str] | None = None
    #: link kinds whose switch egress ports add a record (empty: all), e.g. [host, fabric] for
    #: INT on intra-DC links only (Gear §IV-A)
    port_kinds: list[str] = field(default_factory=list)
    #: records a packet holds
    max_records: int = num(5, "[1, 64]")
    #: when the records are full: "none" (later hops add nothing), "gear" (Gear eq. 3: keep
    #: the records with the longest queue-drain time) or "qlen" (keep the longest queues, ties
    #: on a seeded coin: the rule Gear's Fig. 13 compares against)
    replacement: str = choice("none", names_of("switch.int_telemetry.replacement"))
    #: wire bytes per record and of the INT header (HPCC's ns-3 IntHeader: 8 and 2)
    hop_bytes: int = num(8, "[0, 1024]")
    #: wire bytes of the INT header (records: hop_bytes each)
    header_bytes: int = num(2, "[0, 1024]")

    def overhead_bytes(self) -> int:
        """Bytes INT adds to every data packet and every ACK (0 when INT is off): the header
        and room for ``max_records`` records, reserved by the sender (uno/net/int.py)."""
        if not self.enabled:
            return 0
        return int(self.header_bytes + self.max_records * self.hop_bytes)


@dataclass
class QcnConfig:
    """QCN congestion points: switch ports that send their feedback straight to the source of
    a sampled data packet, Annulus's near-source loop (uno/net/qcn.py)."""

    #: the ports below sample the data they accept and notify its sources
    enabled: bool = False
    #: switch tiers whose egress ports are congestion points (Annulus: the ToR switches)
    tiers: list[str] = field(default_factory=lambda: ["tor"])
    #: link kinds of those ports (empty: all)
    port_kinds: list[str] = field(default_factory=list)
    #: Q_eq, the queue the feedback holds the port at
    qeq_bytes: int = num(34000, "> 0")
    #: w, the weight of the queue's growth since the last sample
    w: float = num(2.0, ">= 0")
    #: a sample every this many data bytes accepted
    sample_bytes: int = num(150000, "> 0")
    #: wire size of a notice
    message_bytes: int = num(64, "> 0")


@dataclass
class TrimmingConfig:
    """Packet trimming (uno/net/overflow.py): a data packet that does not fit a switch port's
    buffer is cut to its header, which goes on ahead of data; the receiver NACKs it and the
    sender resends it at once. Turns on the switch ports' control lanes (ACKs, NACKs and
    headers ahead of data, as switch.ack_priority)."""

    #: switch ports trim instead of dropping
    enabled: bool = False
    #: wire size of a trimmed packet (htsim's UEC transport: 64)
    header_bytes: int = num(64, "[1, 65536]")


@dataclass
class DciConfig:
    """The DCI switches' element (uno/net/dci.py): the border switch where a datacenter meets
    the long-distance links returns the INT of cross-DC data leaving its datacenter to the
    sender (MLCC's near-source loop, §3.2) and holds cross-DC data entering it in per-flow
    queues drained at the rate the receiver credits (MLCC's receiver-driven loop, §3.2)."""

    #: the border switches run the element (any scheme; MLCC needs it for cross-DC flows)
    enabled: bool = False
    #: switch tier of the DCI switches
    tier: str = "border"
    #: the sender-side DCI switch reads, clears and returns the INT records of cross-DC data
    near_source: bool = True
    #: at most one Switch-INT notice per flow per this interval (0: one per data packet)
    notice_interval_us: float = num(0.0, ">= 0")
    #: wire size of a Switch-INT notice, its records included
    notice_bytes: int = num(64, "> 0")
    #: the receiver-side DCI switch holds cross-DC data in per-flow queues
    per_flow_queues: bool = True
    #: a new per-flow queue's drain rate before the receiver's first credit; null: the
    #: receiving host's line rate
    initial_rate_gbps: float | None = num(None, "> 0")
