"""In-band network telemetry (INT) as HPCC and Gear use it: every data packet collects, at each
INT-enabled switch egress port it leaves, a record of that port; the receiver echoes the records
in the packet's ACK (the ACK here is the data packet turned round, so the records travel back
with it) and the sender's congestion controller reads them (``CongestionControl.wants_int``).

A record is a tuple ``(ts_ps, qlen_bytes, tx_bytes, rate_bps)``: when the packet's
serialisation ended, the bytes left in the port's data queue behind it, the bytes the port has
transmitted so far (this packet included), and the line rate — HPCC's ``ts``, ``qLen``,
``txBytes`` and ``B`` (Li et al., SIGCOMM 2019, §3.3, Fig. 4) and Gear's ``ts``, ``ql``, ``tx``,
``bw`` (Han et al., §III-B, eq. 1). Values are exact integers; the hardware's 24-bit time,
20-bit byte and 17-bit queue fields (HPCC's ns-3 ``IntHop``) wrap, which a simulator need not
imitate.

At most ``max_records`` records. When they are full, ``replacement``:

* ``none`` — further hops add nothing (HPCC sizes the header for the longest path, 5 hops);
* ``gear`` — Gear §III-B, eq. 3: the new record replaces the stored record with the shortest
  queue-drain time ``ql / bw`` if its own is longer, so the hop with the longest drain time is
  always kept (with one record: exactly eq. 3's argmax).

Wire overhead (``IntTelemetryConfig.overhead_bytes``): every data packet carries a fixed-size INT header of
``header_bytes + max_records x hop_bytes``, reserved by the sender as HPCC's ns-3 model does
(``IntHeader``: a 2-byte hop count and 5 hops of 8 bytes = 42 bytes), and every ACK echoes it;
the transport adds it to the data header and the ACK size when INT is on, so it counts in
serialisation, buffers, BDPs and ideal FCTs alike. Gear carries its records in a 40-byte TCP
option (§IV-A, Fig. 5): kind and length (2 bytes), records of 12 bytes (4-byte ``ql``, ``ts``
and ``tx``; the link capacity ``bw`` is preconfigured at the sender, not carried) and two NOP
bytes of padding, so at most three records: ``max_records: 3, hop_bytes: 12, header_bytes: 4``
(``cc=gear``). A record here still carries the rate, which costs no wire bytes.

Which switches stamp: those whose tier is in ``tiers`` (null: every tier but ``border``; both
papers assume no INT on WAN / DCI switches: Gear §IV-A, MLCC §3), and of their egress ports
those whose link kind is in ``port_kinds`` (empty: all). Where a datacenter's core switches are
its border routers (``topo=gear_two_dc``), ``port_kinds: [host, fabric]`` keeps INT off their
WAN ports: "ECN and INT are only enabled on intra-DC switches" (Gear §IV-A).
"""

from __future__ import annotations

from uno.config.parts import declare_choices

#: switch tiers without INT by default (DCI / border routers)
NO_INT_TIERS = ("border",)

REPLACEMENTS = ("none", "gear")
declare_choices("switch.int_telemetry.replacement", REPLACEMENTS)


class IntStamper:
    """Writes one port's INT record into the data packets leaving it."""

    __slots__ = ("max_records", "gear")

    def __init__(self, max_records: int, replacement: str):
        if replacement not in REPLACEMENTS:
            raise ValueError(f"replacement must be one of {REPLACEMENTS}, got {replacement!r}")
        self.max_records = max_records
        self.gear = replacement == "gear"

    def stamp(self, pkt, now_ps: int, qlen_bytes: int, tx_bytes: int, rate_bps: int) -> None:
        record = (now_ps, qlen_bytes, tx_bytes, rate_bps)
        hops = getattr(pkt, "int_hops", None)
        if hops is None:
            pkt.int_hops = [record]
            return
        if len(hops) < self.max_records:
            hops.append(record)
        elif self.gear:
            # the stored record with the shortest drain time ql / bw (the first such, on ties)
            j = min(range(len(hops)), key=lambda i: hops[i][1] / hops[i][3])
            if qlen_bytes / rate_bps > hops[j][1] / hops[j][3]:
                hops[j] = record


def int_stampers(network, int_cfg) -> dict:
    """The :class:`IntStamper` of every egress port of the INT-enabled switches of
    ``network``, by port name (the ports of the switches whose tier ``int_cfg.tiers`` names;
    null: every tier but :data:`NO_INT_TIERS`; of those, only ports whose link kind
    ``int_cfg.port_kinds`` names, if it names any)."""
    from uno.net.switch import switch_ports

    ports = switch_ports(network, int_cfg.tiers, int_cfg.port_kinds, "switch.int_telemetry.tiers",
                         NO_INT_TIERS)  # fmt: skip
    return {p.name: IntStamper(int(int_cfg.max_records), int_cfg.replacement) for p in ports}


def configure_int(network, int_cfg) -> int:
    """Give every egress port of the INT-enabled switches of ``network`` its stamper
    (:func:`int_stampers`; the ports must be event ports); returns how many ports stamp."""
    stampers = int_stampers(network, int_cfg)
    for port in network.ports:
        stamper = stampers.get(port.name)
        if stamper is not None:
            port.int_stamper = stamper
    return len(stampers)
