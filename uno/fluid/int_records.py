"""In-band telemetry (INT) in the fluid engine: the records an ACK batch carries to a law that
reads them (``signals`` "int": HPCC, PowerTCP, Gear), computed from the fluid links' state.

A packet collects, at each stamping switch port it leaves (``switch.int_telemetry``: the
ports :func:`uno.net.switch.port_picker` picks, as the packet engine's stampers), the record
``(ts_ps, qlen_bytes, tx_bytes, rate_bps)`` of that port (:mod:`uno.net.int`). In the fluid
engine a flow's bytes cross the links of its route in the step they are sent, up to its wire
link, and the links beyond it in the step they leave the wire (:mod:`uno.fluid.forward`). So
a stamping link's record is its state at the end of the step the flow's bytes crossed it: the
step's end (ps), the link's level after the step (``LS_Q``, bytes), its cumulative
departures (``LS_TX``, bytes, the ACKs it carried included, as a port's transmitted bytes)
and its line rate (bit/s). The records of the hops up to the wire link are taken as the
step's sends are filed (:func:`stamp_hops` from :func:`uno.fluid.filing.file_sends`) into the
delay-line slot of their ACKs; those beyond it as the bytes are delivered
(:func:`uno.fluid.filing.file_deliveries`) into the slot of their ECN echoes. Each comes back
one RTT later (:func:`take_records`) and replaces the flow's record of that hop if newer
(``hops.int_rec[f]``, one row a stamping hop of its route, in path order). A batch of ACKs
carries the newest packet's records: the flow's latest record of every stamping hop, put into
a packet's ``max_records`` by the replacement rule the switches apply hop by hop
(:func:`packet_records`, :func:`uno.net.int.int_record_slot`), as the packet engines hand a
law the records of the newest ACK of a batch. A batch before every hop's first record came
back carries none.

A delay-line slot holds three columns a stamping hop (time, level, departures; the rate is
the link's own), from ``int_set[INTS.ring_col]`` on; a run without a law reading INT keeps
none. Single-path routes only (ECMP): a split flow's packets would carry the records of the
path each took (:func:`uno.fluid.support.check_fluid_support` refuses the others).

Units: time in ps, sizes in bytes, rates in bit/s (the records).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.cc.law import INT_FIELDS, INT_QLEN, INT_RATE, INT_TS, INT_TX
from uno.core.layout import layout
from uno.fluid.columns import EI_LINK, FS_WIRE_NEXT, LS_Q, LS_TX
from uno.net.int import NO_INT_TIERS, REPLACEMENTS, int_record_slot
from uno.net.switch import port_picker
from uno.topo.base import HOST

#: the INT settings (int64, ``hops.int_set``): the first delay-line column of the records, the
#: most stamping hops on a flow's route (0: no records), the records a packet holds, the
#: replacement rule (:data:`uno.net.int.REPLACEMENTS`), the salt of its coins; 1 where the
#: links keep what they sent before each step, and the fluid flows' part of it (``LS_TX_BEFORE``,
#: ``LS_TXF``: the hybrid's packets count them in their records, :mod:`uno.net.shared_link`)
INTS = layout("IntSettings", ("ring_col", "hops", "max_records", "rule", "salt", "keep_sent"))
#: delay-line columns a stamping hop: the step's end, the link's level, its departures
SLOT_FIELDS = 3


def stamping_links(routing, int_cfg) -> np.ndarray:
    """Whether each link (a routing edge: the egress port at its tail) writes INT records:
    a switch port picked by ``switch.int_telemetry.tiers`` and ``port_kinds``, as
    :func:`uno.net.int.int_stampers` picks the packet ports."""
    nodes = routing.topo.nodes
    known = {n.tier for n in nodes if n.kind != HOST}
    picked = port_picker(known, int_cfg.tiers, int_cfg.port_kinds,
                         "switch.int_telemetry.tiers", NO_INT_TIERS)  # fmt: skip
    return np.array(
        [nodes[e.src].kind != HOST and picked(nodes[e.src].tier, e.kind) for e in routing.edges],
        dtype=bool,
    )


def int_state(routing, int_cfg, rt_ptr, rt_link, n_entries: int, salt: int, ring_col: int,
              also=None):  # fmt: skip
    """The INT arrays of :data:`uno.fluid.state.Hops`: each route entry's index among its
    flow's stamping hops (-1: its link does not stamp), the settings (:data:`INTS`), each
    flow's latest record per stamping hop (the rates set, the rest 0: none yet) and a
    packet's records (scratch). ``ring_col``: the first delay-line column of the records;
    ``also``: links that stamp whatever the settings say (the DCI switches' ports into their
    datacenter, :func:`uno.fluid.dci.reinserting_links`)."""
    stamps = stamping_links(routing, int_cfg)
    if also is not None:
        stamps = stamps | also
    n = len(rt_ptr) - 1
    n_rt = len(rt_link)
    int_at = np.full(n_entries, -1, dtype=np.int32)
    on = stamps[rt_link] if n_rt else np.zeros(0, dtype=bool)
    flow_of = np.repeat(np.arange(n), np.diff(rt_ptr))
    # each stamping entry's rank among its flow's (entries are in path order)
    rank = np.cumsum(on) - 1
    first = np.concatenate(([0], np.cumsum(on)))[rt_ptr[:-1]] if n else np.zeros(0, np.int64)
    int_at[:n_rt][on] = (rank - first[flow_of])[on]
    n_hops = int(np.bincount(flow_of[on], minlength=n).max(initial=0)) if n_rt else 0
    settings = np.zeros(INTS.size, dtype=np.int64)
    settings[INTS.ring_col] = ring_col
    settings[INTS.hops] = n_hops
    settings[INTS.max_records] = int(int_cfg.max_records)
    settings[INTS.rule] = REPLACEMENTS.index(int_cfg.replacement)
    settings[INTS.salt] = salt
    rec = np.zeros((n, n_hops, INT_FIELDS))
    rate = np.array([e.rate_bps for e in routing.edges], dtype=np.float64)
    entries = np.flatnonzero(int_at[:n_rt] >= 0)
    rec[flow_of[entries], int_at[entries], INT_RATE] = rate[rt_link[entries]]
    packet = np.zeros((int(int_cfg.max_records), INT_FIELDS))
    return int_at, settings, rec, packet


def no_int_state(n_entries: int):
    """The INT arrays of a run whose laws read no records (none kept)."""
    return (np.full(n_entries, -1, dtype=np.int32), np.zeros(INTS.size, dtype=np.int64),
            np.zeros((0, 0, INT_FIELDS)), np.zeros((0, INT_FIELDS)))  # fmt: skip


@njit(cache=True, error_model="numpy", inline="always")
def stamp_hops(j0, j1, slot, ts_ps, ls, ring, hops) -> None:
    """The records of the stamping links of route entries ``j0`` .. ``j1 - 1`` at ``ts_ps``
    (the end of the step the flow's bytes crossed them: each link's level and departures
    now) into delay-line slot ``slot``: the newest packet's, so a later record replaces an
    earlier one filed in the same slot."""
    col0 = hops.int_set[INTS.ring_col]
    int_at, ei = hops.int_at, hops.ei
    for j in range(j0, j1):
        i = int_at[j]
        if i < 0:
            continue
        c = col0 + SLOT_FIELDS * i
        if ts_ps >= ring[slot, c]:
            link = ei[j, EI_LINK]
            ring[slot, c] = ts_ps
            ring[slot, c + 1] = ls[link, LS_Q]
            ring[slot, c + 2] = ls[link, LS_TX]


@njit(cache=True, error_model="numpy", inline="always")
def stamp_sent(f, slot, ts_ps, fs, ls, rt_ptr, ring, hops) -> None:
    """Flow ``f``'s bytes sent in the step ending at ``ts_ps`` crossed the links of its route
    up to its wire link (all of them without one): their records, into the slot of their ACKs."""
    j1 = rt_ptr[f + 1]
    if fs[f, FS_WIRE_NEXT] >= 0.0:
        j1 = int(fs[f, FS_WIRE_NEXT])
    stamp_hops(rt_ptr[f], j1, slot, ts_ps, ls, ring, hops)


@njit(cache=True, error_model="numpy", inline="always")
def stamp_delivered(f, slot, ts_ps, fs, ls, rt_ptr, ring, hops) -> None:
    """A wire flow's bytes delivered in the step ending at ``ts_ps`` crossed the links beyond
    its wire link in it: their records, into the slot of their ECN echoes."""
    if fs[f, FS_WIRE_NEXT] >= 0.0:
        stamp_hops(int(fs[f, FS_WIRE_NEXT]), rt_ptr[f + 1], slot, ts_ps, ls, ring, hops)


@njit(cache=True, error_model="numpy", inline="always")
def take_records(f, slot, ring, hops) -> None:
    """The records arriving in flow ``f``'s delay-line slot ``slot`` replace its latest
    record of their hop where newer."""
    col0 = hops.int_set[INTS.ring_col]
    rec = hops.int_rec[f]
    for i in range(rec.shape[0]):
        c = col0 + SLOT_FIELDS * i
        ts = ring[slot, c]
        if ts > 0.0 and ts >= rec[i, INT_TS]:
            rec[i, INT_TS] = ts
            rec[i, INT_QLEN] = ring[slot, c + 1]
            rec[i, INT_TX] = ring[slot, c + 2]


@njit(cache=True, error_model="numpy", inline="always")
def packet_records(f, hops, n_hops=-1, first=0) -> int:
    """The records of flow ``f``'s newest packet into ``hops.int_pkt``: its latest record of
    every stamping hop from its ``first`` (after the hops a receiver-side DCI switch erased)
    (``n_hops`` >= 0: up to its ``n_hops``-th, those a sender-side DCI switch reads:
    :mod:`uno.fluid.dci`), in path order, each taking its place among the packet's
    ``max_records`` as the switches' replacement rule puts it
    (:func:`uno.net.int.int_record_slot`). Returns their number (0: a hop's first record has
    not come back yet, or no hop stamps)."""
    settings = hops.int_set
    rec = hops.int_rec[f]
    pkt = hops.int_pkt
    max_records = settings[INTS.max_records]
    rule = settings[INTS.rule]
    salt = settings[INTS.salt]
    n = 0
    for i in range(first, rec.shape[0] if n_hops < 0 else n_hops):
        if rec[i, INT_RATE] <= 0.0:
            break  # (the flow's stamping hops end here)
        if rec[i, INT_TS] <= 0.0:
            return 0
        at = int_record_slot(pkt, n, max_records, rule, rec[i, INT_QLEN], rec[i, INT_RATE], salt,
                             rec[i, INT_TS], rec[i, INT_TX])  # fmt: skip
        if at < 0:
            continue
        for c in range(INT_FIELDS):
            pkt[at, c] = rec[i, c]
        if at == n:
            n += 1
    return n
