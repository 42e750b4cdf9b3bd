"""Receiver side of the reliable transport: accepts packets in any order, counts each sequence
number once, and answers every data packet with an ACK that echoes its sequence number, ECN
mark, send time and entropy (the data packet is turned into its ACK in place)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from uno.core.errors import InvariantError
from uno.core.packet import ACK, flow_hash_key

if TYPE_CHECKING:
    from uno.net.host import Host
    from uno.transport.flow import Flow


class Receiver:
    """Receiving endpoint of one flow."""

    def __init__(self, engine, flow: Flow, host: Host, ack_bytes: int):
        self._engine = engine
        self.flow = flow
        self._host = host
        self.ack_bytes = ack_bytes
        self.got = bytearray(flow.n_packets)
        self.n_got = 0
        self.bytes_received = 0  # unique payload bytes
        self.dup_packets = 0
        self.ecn_packets = 0
        self.complete_ps: int | None = None
        self._keys: dict[int, int] = {}  # entropy -> ECMP hash key of the ACK direction

    def on_data(self, pkt) -> None:
        seq = pkt.seq
        flow = self.flow
        if not 0 <= seq < flow.n_packets:
            raise InvariantError(
                f"flow {flow.flow_id}: received seq {seq} outside 0..{flow.n_packets - 1}"
            )
        if self.got[seq]:
            self.dup_packets += 1
        else:
            self.got[seq] = 1
            self.n_got += 1
            self.bytes_received += pkt.payload_bytes
            if self.n_got == flow.n_packets:
                self.complete_ps = self._engine._now
                if self.bytes_received != flow.size_bytes:
                    raise InvariantError(
                        f"flow {flow.flow_id}: received {self.bytes_received} B, size {flow.size_bytes} B"
                    )
        if pkt.ecn:
            self.ecn_packets += 1
        pkt.kind = ACK
        pkt.size_bytes = self.ack_bytes
        src = pkt.dst
        dst = pkt.src
        pkt.src = src
        pkt.dst = dst
        key = self._keys.get(pkt.entropy)
        if key is None:
            key = self._keys[pkt.entropy] = flow_hash_key(src, dst, pkt.entropy)
        pkt.hkey = key
        self._host.send(pkt)
