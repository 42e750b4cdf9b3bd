"""Receiver side of the reliable transport: accepts packets in any order, counts each sequence
number once, and answers every data packet with an ACK that echoes its sequence number, ECN
mark, send time and entropy (the data packet is turned into its ACK in place). The ACK takes the
reverse of the data packet's path, or with ``ack_paths`` > 0 the next of ``ack_paths`` entropies
in turn (:func:`uno.net.hashing.ack_path_entropy`).

With erasure coding (``flow.coding``, Uno paper §4.2) the receiver keeps one block state per
block: once any x of a block's x + y packets arrived it decodes the block (with the real coder,
from the symbols those packets carry, checking the result against what was sent; a mismatch is
an error) and every later ACK for the block says so (``info``). On the first packet of a block
it starts a timer (``coding.receiver_timeout_ps``, or ``coding.retransmit_timeout_ps`` when that
first packet is a retransmission); if the timer expires before the block is
decodable, it sends a NACK listing the block's missing packets and disarms the timer, which the
block's next arriving packet re-arms (as the Uno artifact's ``LcpSink``). The flow is complete
once every block is decoded.

A trimmed packet (``switch.trimming``: a switch cut it to its header) delivers nothing: the
receiver turns it into a NACK naming its sequence number (``info`` None; a coded block's NACK
lists its packets in ``info``), sent at once along the ACKs' route.

With ``cnp_interval_ps`` (DCQCN's notification point, Zhu et al., SIGCOMM 2015, §3.2) an ACK
echoes a mark as a congestion notification (CNP) only if no CNP went to the flow's sender in the
last ``cnp_interval_ps``; the CNP rides on the marked packet's ACK, which leaves at the moment a
separate CNP would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from uno.core.errors import InvariantError
from uno.core.packet import ACK, NACK, Packet
from uno.net.hashing import ack_path_entropy, flow_hash_key

if TYPE_CHECKING:
    from uno.net.host import Host
    from uno.transport.flow import Flow

#: NACKs are sprayed round-robin over this many entropies (htsim's control packets)
_NACK_ENTROPIES = 256
# (interpreted: a compiled call per ACK costs more than the arithmetic)
_ack_route = ack_path_entropy.py_func


class Receiver:
    """Receiving endpoint of one flow."""

    def __init__(
        self,
        engine,
        flow: Flow,
        host: Host,
        ack_bytes: int,
        mss_bytes: int = 0,
        cnp_interval_ps: int = 0,
        ack_paths: int = 0,
        credit_cc=None,
    ):
        self._engine = engine
        self.flow = flow
        self._host = host
        self.ack_bytes = ack_bytes
        self.got = bytearray(flow.n_packets)
        self.n_got = 0
        self.bytes_received = 0  # unique payload bytes (with coding: of decoded blocks)
        self.dup_packets = 0
        self.ecn_packets = 0
        self.trimmed = 0  # trimmed packets NACKed
        self.complete_ps: int | None = None
        self._keys: dict[int, int] = {}  # entropy -> ECMP hash key of the ACK direction
        self.ack_paths = ack_paths
        self.next_ack_path = 0  # with ack_paths: the entropy the next ACK is routed with
        # DCQCN's notification point: ECN echoed as a CNP at most once per interval (0: every
        # marked packet's ACK echoes its mark)
        self._cnp_interval_ps = cnp_interval_ps
        self._last_cnp_ps: int | None = None
        self.cnps_sent = 0
        # a law's receiver part (uno.cc.adapter.ReceiverLawControl: MLCC's credit loop and DQM)
        self.credit_cc = credit_cc
        coding = flow.coding
        self.coding = coding
        if coding is not None:
            self.mss_bytes = mss_bytes
            self.decoded = bytearray(coding.layout.n_blocks)
            self.n_decoded = 0
            self._blocks: dict = {}  # block -> uno.ec.mds.BlockReceiver, until decoded
            self._block_wait: dict[int, int] = {}  # block -> its timer (ps), until decoded
            self._timer_armed: set[int] = set()
            self.nacks_sent = 0
            self._nack_entropy = 0

    @property
    def cnp_interval_ps(self) -> int:
        """The least gap between two CNPs of this flow (0: every marked packet's ACK echoes
        its mark)."""
        return self._cnp_interval_ps

    @property
    def last_cnp_ps(self) -> int | None:
        """When this flow last echoed a CNP (None: never)."""
        return self._last_cnp_ps

    @last_cnp_ps.setter
    def last_cnp_ps(self, value: int | None) -> None:
        self._last_cnp_ps = value

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
            if self.coding is None:
                self.bytes_received += pkt.payload_bytes
                if self.n_got == flow.n_packets:
                    self._complete()
        done = False
        if self.coding is not None:
            done = self._on_coded(seq, pkt.info, pkt.retx)
        if pkt.ecn:
            self.ecn_packets += 1
            if self._cnp_interval_ps:
                now = self._engine._now
                last = self._last_cnp_ps
                if last is None or now - last >= self._cnp_interval_ps:
                    self._last_cnp_ps = now
                    self.cnps_sent += 1
                else:
                    pkt.ecn = False  # no CNP: one was sent for this flow within the interval
        credit_cc = self.credit_cc
        self.turn_into_ack(pkt, done)
        if credit_cc is not None:
            self._credit(credit_cc, pkt)
        self._host.send(pkt)

    def _credit(self, credit_cc, pkt) -> None:
        """MLCC's receiver (:data:`uno.cc.mlcc.RECEIVER`) hears the data packet now an ACK: its
        C_D, its per-flow queue and INT records; the ACK carries C_R, R_credit and R-bar_DQM."""
        pkt.credit, pkt.credit_rate_bps, pkt.dqm_rate_bps = credit_cc.on_data(
            self._engine._now,
            getattr(pkt, "credit", -1),
            getattr(pkt, "pfq_bytes", 0),
            getattr(pkt, "int_hops", None),
        )

    def on_trimmed(self, pkt) -> None:
        """A trimmed copy of packet ``pkt.seq`` arrived: NACK it at once."""
        self.trimmed += 1
        self.turn_into_ack(pkt)
        pkt.kind = NACK
        pkt.info = None
        self._host.send(pkt)

    def turn_into_ack(self, pkt, done: bool = False) -> None:
        """Make data packet ``pkt`` its own ACK in place: ends swapped, the ACK's size and hash
        key, ``info`` = whether its block is decoded (erasure coding). The compiled data plane's
        receivers do the same to their rows and call this on the object (uno.net.compiled)."""
        pkt.kind = ACK
        pkt.size_bytes = self.ack_bytes
        pkt.info = done
        src = pkt.dst
        dst = pkt.src
        pkt.src = src
        pkt.dst = dst
        route = pkt.entropy
        if self.ack_paths:
            route, self.next_ack_path = _ack_route(route, self.next_ack_path, self.ack_paths)
        key = self._keys.get(route)
        if key is None:
            key = self._keys[route] = flow_hash_key(src, dst, route)
        pkt.hkey = key

    def _complete(self) -> None:
        self.complete_ps = self._engine._now
        if self.bytes_received != self.flow.size_bytes:
            raise InvariantError(
                f"flow {self.flow.flow_id}: received {self.bytes_received} B, "
                f"size {self.flow.size_bytes} B"
            )

    # ---- erasure coding -----------------------------------------------------------------
    def _on_coded(self, seq: int, symbols, retx: bool = False) -> bool:
        """Account ``seq`` (a retransmission: ``retx``) in its block; whether the block is
        decoded now."""
        coding = self.coding
        block, pos = coding.layout.locate(seq)
        if self.decoded[block]:
            return True
        rx = self._blocks.get(block)
        if rx is None:
            rx = self._blocks[block] = coding.layout.new_receiver(block)
            # the block's timer: the first packet's (a retransmission may carry another)
            wait = coding.receiver_timeout_ps
            if retx and coding.retransmit_timeout_ps is not None:
                wait = coding.retransmit_timeout_ps
            self._block_wait[block] = wait
        if block not in self._timer_armed:
            self._timer_armed.add(block)
            self._engine.call_in(self._block_wait[block], self._block_timer, block)
        if rx.add(pos, symbols if coding.coder.payload else None):
            coding.coder.decode_block(self.flow.flow_id, block, rx)  # raises on a wrong decode
            self.decoded[block] = 1
            self.n_decoded += 1
            del self._blocks[block]
            del self._block_wait[block]
            lay = coding.layout
            last = lay.n_blocks - 1
            data = lay.data_packets(block) * self.mss_bytes
            if block == last:  # the last data packet carries only what is left of the message
                data -= lay.n_data * self.mss_bytes - self.flow.size_bytes
            self.bytes_received += data
            if self.n_decoded == lay.n_blocks:
                self._complete()
            return True
        return False

    def _block_timer(self, block: int) -> None:
        self._timer_armed.discard(block)
        if self.decoded[block] or self.complete_ps is not None:
            return
        rx = self._blocks[block]
        lay = self.coding.layout
        missing = tuple(lay.wire_seq(block, p) for p in rx.missing())
        flow = self.flow
        entropy = self._nack_entropy
        self._nack_entropy = (entropy + 1) % _NACK_ENTROPIES
        nack = Packet(
            NACK,
            flow.flow_id,
            lay.wire_seq(block, 0),
            self.ack_bytes,
            0,
            flow.dst,
            flow.src,
            entropy,
            flow_hash_key(flow.dst, flow.src, entropy),
            self._engine._now,
        )
        nack.info = missing
        self.nacks_sent += 1
        self._host.send(nack)
