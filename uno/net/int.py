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
  always kept (with one record: exactly eq. 3's argmax);
* ``qlen`` — the rule Gear §IV-C4 (Fig. 13) compares against, "retaining the INT entry with the
  maximum qlen (if two INT entries have the same qlen, we will randomly select one of them)": the
  new record replaces the stored record with the shortest queue if its own is longer, or, if it
  is as long, on a fair coin. Ties are settled hop by hop, as the paper's pairwise wording reads
  (with one record and three tied hops the last is kept with probability 1/2, the others 1/4).
  The coin is a hash of the port's transmitted bytes and the time, salted from the run's seed
  (stream ``int_ties``), so both data planes toss the same coins.

The rule is one compiled function, :func:`int_record_slot`, that both data planes call (the
Python ports through its ``py_func`` on the packet's list of records).

Wire overhead (``IntTelemetryConfig.overhead_bytes``): every data packet carries a fixed-size INT header of
``header_bytes + max_records x hop_bytes``, reserved by the sender as HPCC's ns-3 model does
(``IntHeader``: a 2-byte hop count and 5 hops of 8 bytes = 42 bytes), and every ACK echoes it;
the transport adds it to the data header and the ACK size when INT is on, so it counts in
serialisation, buffers, BDPs and ideal FCTs alike. Gear carries its records in a 40-byte TCP
option (§IV-A, Fig. 5): kind and length (2 bytes), records of 12 bytes (4-byte ``ql``, ``ts``
and ``tx``; the link capacity ``bw`` is preconfigured at the sender, not carried) and two NOP
bytes of padding, so at most three records: ``max_records: 3, hop_bytes: 12, header_bytes: 4``
(``cc=gear``). A record here still carries the rate, which costs no wire bytes.

Which switches stamp: those whose tier is in ``tiers`` (null: every tier but ``border``: Gear
§IV-A has no INT on WAN / DCI switches), and of their egress ports those whose link kind is in
``port_kinds`` (empty: all). With the DCI switches' element (``switch.dci``, MLCC §3.2) the DCI
switches' ports into their own datacenter stamp too: the receiver-side DCI switch "erases and
reinserts the INT information" (:mod:`uno.net.dci`). Where a datacenter's core switches are
its border routers (``topo=gear_two_dc``), ``port_kinds: [host, fabric]`` keeps INT off their
WAN ports: "ECN and INT are only enabled on intra-DC switches" (Gear §IV-A).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.cc.law import INT_QLEN, INT_RATE
from uno.config.parts import declare_choices
from uno.net.hashing import mix64

#: switch tiers without INT by default (DCI / border routers)
NO_INT_TIERS = ("border",)

#: replacement rules; a rule's code is its index
REPLACEMENTS = ("none", "gear", "qlen")
RULE_NONE, RULE_GEAR, RULE_QLEN = range(3)
declare_choices("switch.int_telemetry.replacement", REPLACEMENTS)

_U20 = np.uint64(20)


@njit(cache=True)
def tie_coin(salt, ts_ps, tx_bytes) -> bool:
    """A fair coin for a tie at the port that had transmitted ``tx_bytes`` at ``ts_ps``
    (``salt``: the run's, a non-negative int)."""
    x = mix64(np.uint64(ts_ps) ^ (np.uint64(tx_bytes) << _U20))
    return (mix64(np.uint64(salt) ^ x) & np.uint64(1)) == np.uint64(1)


@njit(cache=True)
def int_record_slot(records, n_held, max_records, rule, qlen, rate, salt, ts_ps, tx_bytes):
    """Where a port's new record (queue ``qlen`` bytes, line rate ``rate`` bit/s, written at
    ``ts_ps`` after ``tx_bytes`` transmitted) goes among the ``n_held`` records a packet holds
    (``records[i][INT_QLEN]``, ``records[i][INT_RATE]``): the next free index while fewer than
    ``max_records``, then the index ``rule`` replaces, or -1 to leave the records unchanged."""
    if n_held < max_records:
        return n_held
    if rule == RULE_NONE:
        return -1
    # the stored record the rule ranks lowest (the first such)
    j = 0
    lowest = 0.0
    for i in range(n_held):
        if rule == RULE_GEAR:
            rank = records[i][INT_QLEN] / records[i][INT_RATE]
        else:
            rank = float(records[i][INT_QLEN])
        if i == 0 or rank < lowest:
            lowest = rank
            j = i
    own = qlen / rate if rule == RULE_GEAR else float(qlen)
    if own > lowest:
        return j
    if rule == RULE_QLEN and own == lowest and tie_coin(salt, ts_ps, tx_bytes):
        return j
    return -1


_slot_py = int_record_slot.py_func  # (pure Python on a packet's list of records)


class IntStamper:
    """Writes one port's INT record into the data packets leaving it."""

    __slots__ = ("max_records", "rule", "tie_salt")

    def __init__(self, max_records: int, replacement: str, tie_salt: int = 0):
        if replacement not in REPLACEMENTS:
            raise ValueError(f"replacement must be one of {REPLACEMENTS}, got {replacement!r}")
        self.max_records = max_records
        self.rule = REPLACEMENTS.index(replacement)
        self.tie_salt = tie_salt

    def stamp(self, pkt, now_ps: int, qlen_bytes: int, tx_bytes: int, rate_bps: int) -> None:
        record = (now_ps, qlen_bytes, tx_bytes, rate_bps)
        hops = getattr(pkt, "int_hops", None)
        if hops is None:
            pkt.int_hops = [record]
            return
        n = len(hops)
        at = _slot_py(hops, n, self.max_records, self.rule, qlen_bytes, rate_bps, self.tie_salt,
                      now_ps, tx_bytes)  # fmt: skip
        if at == n:
            hops.append(record)
        elif at >= 0:
            hops[at] = record


def int_stampers(network, int_cfg, tie_salt: int = 0) -> dict:
    """The :class:`IntStamper` of every egress port of the INT-enabled switches of
    ``network``, by port name (the ports of the switches whose tier ``int_cfg.tiers`` names;
    null: every tier but :data:`NO_INT_TIERS`; of those, only ports whose link kind
    ``int_cfg.port_kinds`` names, if it names any); ``tie_salt`` salts the ``qlen`` rule's coins."""
    from uno.net.switch import switch_ports

    ports = switch_ports(network, int_cfg.tiers, int_cfg.port_kinds, "switch.int_telemetry.tiers",
                         NO_INT_TIERS)  # fmt: skip
    max_records = int(int_cfg.max_records)
    return {p.name: IntStamper(max_records, int_cfg.replacement, tie_salt) for p in ports}


def configure_int(network, int_cfg, tie_salt: int = 0) -> int:
    """Give every egress port of the INT-enabled switches of ``network`` its stamper
    (:func:`int_stampers`; the ports must be event ports); returns how many ports stamp."""
    stampers = int_stampers(network, int_cfg, tie_salt)
    for port in network.ports:
        stamper = stampers.get(port.name)
        if stamper is not None:
            port.int_stamper = stamper
    return len(stampers)
