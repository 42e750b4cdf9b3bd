"""The DCI switches' element (``switch.dci``, :mod:`uno.net.dci`) in the fluid engine: MLCC's
near-source and receiver-driven loops (Zhao et al., "Efficient Cross-Datacenter Congestion
Control with Fast Control Loops", ICPP 2025, §3.2-3.3) for the cross-DC flows that cross a
DCI switch at each end of their wire link (:func:`uno.fluid.arrays.route_wire`).

* **Per-flow queues** (receiver side): what leaves a flow's wire link reaches the receiver-side
  DCI switch a propagation later (its delay line's ``R_WIRE``) and joins the flow's queue there
  (``FS_PFQ``), which lets go at most its dequeue rate R_credit a step (``FS_PFQ_RATE``; a new
  queue drains at ``switch.dci.initial_rate_gbps``, null: the receiving host's line rate) into
  the next hop (:func:`pfq_step`). A wait there of milliseconds, which the send cannot
  foresee: the flow's ACKs are filed as its bytes are delivered, past the queue
  (:func:`uno.fluid.filing.sent_pfq`, :func:`uno.fluid.filing.delivered_acks`), and its RTT
  samples count the queue's delay with the queueing beyond the wire link
  (:func:`uno.fluid.signals.pfq_delay_ps`).
* **The receiver's credit loop** (Algorithm 1, the DQM of Algorithm 2): the bytes delivered in
  a step are that many data packets (the fractions carried, ``FS_RX_CARRY``) the law's receiver
  part hears one by one (:data:`uno.cc.mlcc.RECEIVER`'s ``on_data``), each stamped with the
  credit C_D the queue held as it let them go, with the queue's bytes and the records of the
  stamping links beyond the wire link (the receiver-side DCI switch erased the others), their
  state at the step's end (:func:`credit_loop`). Its ACKs carry C_R and R_credit back to the
  queue, which takes them a propagation round trip between receiver and switch after the
  change (``FS_PFQ_NEXT_*``; the data the queue stamps meets the switch-to-receiver half, the
  ACK the other); they carry R-bar_DQM to the sender, which hears the mean of the rates of a
  step's delivered bytes with their ACKs (a delay-line column, ``ACKS.dqm``).
* **Switch-INT notices** (sender side, ``switch.dci.near_source``): a step's sends cross the
  links up to the wire link in that step; the records of the stamping ones before the wire
  link (the sender-side DCI switch reads and clears them as the packets enter it) go back to
  the sender as a notice, a propagation round trip to the switch and the queueing before it
  after the send (:func:`stamp_near_source`), at most one a step or one per
  ``notice_interval_us``; its law hears it (``on_report``: MLCC's R_NS, HPCC's step on them).

Not modelled: the notices' own bytes on the links, and the DCI switch's shared buffer for the
per-flow queues (128 MiB a switch in MLCC's topology): a queue is never full.

Units: times in ps, sizes in bytes, rates in bytes/ps (``FS_PFQ_RATE``) or bit/s (the law's).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from uno.cc.law import BPS_PS, INT_QLEN, INT_RATE, INT_TS, INT_TX
from uno.cc.mlcc import RECEIVER, RS
from uno.cc.registry import LAW_BY_NAME
from uno.cc.registry import on_report as law_report
from uno.core.errors import ConfigError
from uno.core.units import gbps_to_bps, us_to_ps
from uno.fluid.columns import (
    ACKS,
    CC_LAW,
    EF_CARRY,
    EF_MCARRY,
    EI_LINK,
    FS_DCI_HOP0,
    FS_DCI_RTT,
    FS_NS_BACK,
    FS_NS_GAP,
    FS_NS_HOPS,
    FS_NS_LAST,
    FS_PFQ,
    FS_PFQ_CD,
    FS_PFQ_CD_AT,
    FS_PFQ_CD_PREV,
    FS_PFQ_M,
    FS_PFQ_NEXT_AT,
    FS_PFQ_NEXT_CD,
    FS_PFQ_NEXT_RATE,
    FS_PFQ_RATE,
    FS_RX_CARRY,
    FS_RX_P,
    FS_RX_S,
    FS_WIRE_ACK,
    FS_WIRE_NEXT,
    FX_FIRST,
    FX_NETQ,
    LS_Q,
    LS_TX,
    P_KIND,
    P_MSS,
    R_DELIV,
    R_WIRE,
    R_WIRE_ACK,
    R_WIRE_M,
)
from uno.fluid.int_records import INTS, packet_records, stamp_hops
from uno.fluid.rings import fit_lag, line_row, mark_due, mark_ring_due
from uno.fluid.signals import entries_delay
from uno.net.int import int_record_slot

rx_init = RECEIVER.init
rx_on_data = RECEIVER.on_data


@njit(cache=True, error_model="numpy", inline="always")
def pfq_step(f, k, now, dt_ps, slot, fs, fx, ring, ef, calendar) -> None:
    """Step ``k`` of flow ``f``'s per-flow queue: the bytes that left its wire link a
    propagation ago (delay-line slot ``slot``, taken out of it) join the queue; the credit and
    rate its receiver's ACKs carry arrive when due; the queue lets go at most its rate over the
    step into the next hop (``EF_CARRY``), and while it holds bytes the flow is due next step."""
    wire = ring[slot, R_WIRE]
    if wire > 0.0:
        fs[f, FS_PFQ] += wire
        fs[f, FS_PFQ_M] += ring[slot, R_WIRE_M]
        ring[slot, R_WIRE] = 0.0
        ring[slot, R_WIRE_M] = 0.0
        if ring[slot, R_WIRE_ACK] > fs[f, FS_WIRE_ACK]:
            fs[f, FS_WIRE_ACK] = ring[slot, R_WIRE_ACK]
    due = fs[f, FS_PFQ_NEXT_AT]
    if 0.0 < due <= now:  # Algorithm 1 lines 3-4: C_D and R_credit from the ACKs
        fs[f, FS_PFQ_CD_PREV] = fs[f, FS_PFQ_CD]
        fs[f, FS_PFQ_CD_AT] = now
        fs[f, FS_PFQ_CD] = fs[f, FS_PFQ_NEXT_CD]
        fs[f, FS_PFQ_RATE] = fs[f, FS_PFQ_NEXT_RATE]
        fs[f, FS_PFQ_NEXT_AT] = 0.0
    held = fs[f, FS_PFQ]
    if held <= 0.0:
        return
    out = fs[f, FS_PFQ_RATE] * dt_ps
    if out > held:
        out = held
    share = out / held
    marked = fs[f, FS_PFQ_M] * share
    fs[f, FS_PFQ] = held - out if out < held else 0.0
    fs[f, FS_PFQ_M] -= marked
    e = int(fs[f, FS_WIRE_NEXT])
    ef[e, EF_CARRY] += out
    ef[e, EF_MCARRY] += marked
    fx[f, FX_NETQ] += out
    if e < fx[f, FX_FIRST]:
        fx[f, FX_FIRST] = e
    if fs[f, FS_PFQ] > 0.0:
        mark_due(calendar, k + 1, f)


@njit(cache=True, error_model="numpy")
def mark_queued(k, fs, active, n_active, calendar) -> None:
    """The running flows whose per-flow queue holds bytes are due at step ``k`` (the calendar
    rebuilt for a new step size keeps only what their delay lines hold)."""
    for i in range(n_active):
        f = active[i]
        if fs[f, FS_PFQ] > 0.0:
            mark_due(calendar, k, f)


@njit(cache=True, error_model="numpy", inline="always")
def receiver_records(f, ts_ps, fs, ls, rt_ptr, hops) -> int:
    """The records a data packet of flow ``f`` delivered in the step ending at ``ts_ps``
    carries: those of the stamping links beyond its wire link (the receiver-side DCI switch
    erased the others), each link's level and departures now, in path order, placed by the
    switches' replacement rule into ``hops.int_pkt``. Returns their number."""
    settings = hops.int_set
    pkt = hops.int_pkt
    rec = hops.int_rec[f]
    int_at, ei = hops.int_at, hops.ei
    n = 0
    for j in range(int(fs[f, FS_WIRE_NEXT]), rt_ptr[f + 1]):
        i = int_at[j]
        if i < 0:
            continue
        link = ei[j, EI_LINK]
        q, tx, rate = ls[link, LS_Q], ls[link, LS_TX], rec[i, INT_RATE]
        at = int_record_slot(pkt, n, settings[INTS.max_records], settings[INTS.rule], q, rate,
                             settings[INTS.salt], ts_ps, tx)  # fmt: skip
        if at < 0:
            continue
        pkt[at, INT_TS] = ts_ps
        pkt[at, INT_QLEN] = q
        pkt[at, INT_TX] = tx
        pkt[at, INT_RATE] = rate
        if at == n:
            n += 1
    return n


@njit(cache=True, error_model="numpy", inline="always")
def credit_loop(f, k, dt_ps, deliv, q_links, slot, fs, cs, cp, ls, rt_ptr, ring, hops) -> None:
    """Flow ``f``'s receiver hears the ``deliv`` bytes delivered in step ``k`` as data packets
    (the law's receiver part, once a packet), stamped with the credit the per-flow queue held
    as they left it, ``q_links`` (ps: their queueing on the links after it) before; the credit
    and rate its ACKs carry set off for the per-flow queue when they change; the rate
    R-bar_DQM, times the bytes, goes into the delay-line slot ``slot`` of their ACKs."""
    s0, p0 = int(fs[f, FS_RX_S]), int(fs[f, FS_RX_P])
    s, p = cs[f, s0:], cp[f, p0:]
    now = (k + 1) * dt_ps
    total = fs[f, FS_RX_CARRY] + deliv / cp[f, P_MSS]
    whole = math.floor(total)
    fs[f, FS_RX_CARRY] = total - whole
    if whole >= 1.0:
        n = receiver_records(f, now, fs, ls, rt_ptr, hops)
        rec = hops.int_pkt[:n]
        c_d = fs[f, FS_PFQ_CD]
        if now - q_links < fs[f, FS_PFQ_CD_AT]:  # (they left the queue before it changed)
            c_d = fs[f, FS_PFQ_CD_PREV]
        queued = fs[f, FS_PFQ]
        for _ in range(int(whole)):
            rx_on_data(s, p, now, c_d, queued, rec)
        credit = s[RS.credit]
        rate = s[RS.credit_rate_bps] / BPS_PS
        pending = fs[f, FS_PFQ_NEXT_AT] > 0.0
        held_cd = fs[f, FS_PFQ_NEXT_CD] if pending else fs[f, FS_PFQ_CD]
        held_rate = fs[f, FS_PFQ_NEXT_RATE] if pending else fs[f, FS_PFQ_RATE]
        if credit != held_cd or rate != held_rate:
            fs[f, FS_PFQ_NEXT_CD] = credit
            fs[f, FS_PFQ_NEXT_RATE] = rate
            if not pending:
                fs[f, FS_PFQ_NEXT_AT] = now + fs[f, FS_DCI_RTT]
    col = int(hops.acks[ACKS.dqm])
    ring[slot, col] += deliv * s[RS.dqm_avg_bps]


@njit(cache=True, error_model="numpy", inline="always")
def hear_dqm(f, now, slot, fs, cs, cp, ring, hops) -> None:
    """The ACKs reaching flow ``f`` now (delay-line slot ``slot``) carry R-bar_DQM: its law
    hears the mean over their bytes (``on_report`` with a rate)."""
    deliv = ring[slot, R_DELIV]
    if deliv <= 0.0:
        return
    rate = ring[slot, int(hops.acks[ACKS.dqm])] / deliv
    if rate > 0.0:
        law_report(int(cp[f, P_KIND]) - CC_LAW, cs[f], cp[f], now, 0.0, rate,
                   hops.int_pkt[:0])  # fmt: skip


@njit(cache=True, error_model="numpy", inline="always")
def stamp_near_source(f, k, now, dt_ps, fs, ls, rt_ptr, rt_link, rt_w, ring, pool, calendar,
                      hops) -> None:  # fmt: skip
    """Flow ``f``'s bytes sent in step ``k`` crossed the links before its wire link: the
    sender-side DCI switch reads their records as they enter it and sends them back in a
    Switch-INT notice, filed in the delay-line slot of its arrival (the propagation to the
    switch and back and the queueing the bytes meet on their way to it); at most one per
    ``FS_NS_GAP``."""
    if now - fs[f, FS_NS_LAST] < fs[f, FS_NS_GAP]:  # (FS_NS_LAST starts far in the past)
        return
    fs[f, FS_NS_LAST] = now
    wire = int(fs[f, FS_WIRE_NEXT]) - 1  # (the wire link's entry: after the switch)
    q_before = entries_delay(rt_ptr[f], wire, rt_link, rt_w, ls)
    lag = fit_lag(f, k, int(math.floor(0.5 + (fs[f, FS_NS_BACK] + q_before) / dt_ps)), ring,
                  pool)  # fmt: skip
    slot = line_row(pool, f, k, lag)
    stamp_hops(rt_ptr[f], wire, slot, now + dt_ps, ls, ring, hops)
    mark_ring_due(calendar, fs, k + lag, f)


@njit(cache=True, error_model="numpy", inline="always")
def hear_near_source(f, now, dt_ps, slot, fs, cs, cp, ring, hops) -> None:
    """A Switch-INT notice reaching flow ``f`` now (its records in delay-line slot ``slot``,
    taken into the flow's latest records already): its law hears the newest record of each
    stamping hop before the wire link (``on_report``), the packet sent a step before the
    records' time."""
    col0 = hops.int_set[INTS.ring_col]
    ts = ring[slot, col0]
    if ts <= 0.0:
        return
    n = packet_records(f, hops, int(fs[f, FS_NS_HOPS]))
    if n > 0:  # (none before every such hop's first record came back)
        law_report(int(cp[f, P_KIND]) - CC_LAW, cs[f], cp[f], now, ts - dt_ps, 0.0,
                   hops.int_pkt[:n])  # fmt: skip


@njit(cache=True, error_model="numpy", inline="always")
def receiver_init(f, fs, cs, cp) -> None:
    """Flow ``f`` starts: its receiver's part of the law, before the first packet."""
    s0, p0 = int(fs[f, FS_RX_S]), int(fs[f, FS_RX_P])
    rx_init(cs[f, s0:], cp[f, p0:])


# ---- setup -----------------------------------------------------------------------------------
def receivers(cfg, plans) -> np.ndarray:
    """Which flows' laws have a receiver part that runs at their receiver (a cross-DC flow of
    MLCC: :data:`uno.cc.mlcc.RECEIVER`), as the packet engine gives them one; with it, the
    per-flow queues it needs (``switch.dci``)."""
    dci = cfg.switch.dci
    laws = [LAW_BY_NAME.get(p.cc_name) for p in plans]
    wanted = np.array([law is not None and law.receiver is not None and p.cls == "inter"
                       for law, p in zip(laws, plans, strict=True)], dtype=bool)  # fmt: skip
    if wanted.any() and not (dci.enabled and dci.per_flow_queues):
        name = plans[int(np.flatnonzero(wanted)[0])].cc_name
        raise ConfigError(
            "switch.dci.enabled",
            f"cc {name} needs the DCI switches' per-flow queues for its cross-DC flows: "
            "set switch.dci.enabled=true (and switch.dci.per_flow_queues=true)",
        )
    return wanted


def receiver_columns(cfg, plans, wanted, cp: np.ndarray, state_columns: int, nic_rate_bps):
    """The constants and state of the receivers' parts (``wanted`` flows) after the laws' own:
    returns ``cp`` widened with them, the state's columns, and each flow's first column of
    them in ``cp`` and ``cs`` (0: none). A new per-flow queue drains at
    ``switch.dci.initial_rate_gbps`` (null: ``nic_rate_bps[f]``, the receiving host's)."""
    n = len(plans)
    rx_p = np.zeros(n, dtype=np.int64)
    rx_s = np.zeros(n, dtype=np.int64)
    if not wanted.any():
        return cp, state_columns, rx_p, rx_s
    rate = cfg.switch.dci.initial_rate_gbps
    rows, width, state = {}, 0, 0
    for f in np.flatnonzero(wanted):
        plan = plans[f]
        rx = LAW_BY_NAME[plan.cc_name].receiver
        init = float(gbps_to_bps(rate)) if rate is not None else float(nic_rate_bps[f])
        row = np.asarray(rx.pack(getattr(cfg.cc, plan.cc_name), plan.ctx, init), dtype=float)
        rows[f] = row
        width = max(width, len(row))
        state = max(state, rx.state_size(row))
    p0, s0 = cp.shape[1], state_columns
    wide = np.zeros((n, p0 + width))
    wide[:, :p0] = cp
    for f, row in rows.items():
        wide[f, p0 : p0 + len(row)] = row
    rx_p[wanted], rx_s[wanted] = p0, s0
    return wide, s0 + state, rx_p, rx_s


def reinserting_links(routing, dci_cfg) -> np.ndarray:
    """Whether each link is a DCI switch's port into its own datacenter: it writes INT records
    whatever ``switch.int_telemetry.tiers`` says (the receiver-side DCI switch "erases and
    reinserts the INT information", MLCC §3.2; :func:`uno.net.dci.dci_int_stampers`)."""
    nodes = routing.topo.nodes
    if not dci_cfg.enabled:
        return np.zeros(len(routing.edges), dtype=bool)
    tier = dci_cfg.tier
    return np.array([nodes[e.src].tier == tier and nodes[e.dst].tier != tier
                     and nodes[e.dst].dc == nodes[e.src].dc for e in routing.edges],
                    dtype=bool)  # fmt: skip


def set_dci(cfg, fs, plans, wanted, rx_p, rx_s, routing, rt_ptr, rt_link, int_at, has_int: bool,
            init_rate_bps) -> None:  # fmt: skip
    """Each cross-DC flow's part in the DCI switches' element (``switch.dci``; after the wire
    links, :func:`uno.fluid.arrays.route_wire`): its per-flow queue (``per_flow_queues``: a
    wire link between two DCI switches), its receiver's part (``wanted``: at ``rx_p`` in
    ``cp``, ``rx_s`` in ``cs``), its Switch-INT notices (``near_source``, where the laws
    read INT: ``has_int``) and the first of its stamping hops whose records its ACKs carry
    (the receiver-side switch erases those before it: ``FS_DCI_HOP0``). ``init_rate_bps``:
    each flow's new queue's rate."""
    fs[:, FS_RX_P] = rx_p
    fs[:, FS_RX_S] = rx_s
    dci = cfg.switch.dci
    if not dci.enabled:
        return
    nodes = routing.topo.nodes
    delay = np.fromiter((e.delay_ps for e in routing.edges), dtype=np.float64,
                        count=len(routing.edges))  # fmt: skip
    for f, plan in enumerate(plans):
        if plan.cls != "inter":
            continue
        nxt = int(fs[f, FS_WIRE_NEXT])
        wire = routing.edges[int(rt_link[nxt - 1])] if nxt > 0 else None
        at_dcis = wire is not None and nodes[wire.src].tier == nodes[wire.dst].tier == dci.tier
        if not at_dcis:
            if wanted[f]:
                raise ConfigError(
                    "switch.dci.enabled",
                    f"engine.kind=fluid models the DCI switches' element on a cross-DC flow whose "
                    f"WAN link joins two switches of tier {dci.tier!r} (engine.fluid_wire on); "
                    f"flow {plan.spec.flow_id}'s does not",
                )
            continue
        first, last = int(rt_ptr[f]), int(rt_ptr[f + 1])
        if dci.per_flow_queues:
            fs[f, FS_PFQ_RATE] = init_rate_bps[f] / BPS_PS
            fs[f, FS_PFQ_CD] = -1.0
            fs[f, FS_PFQ_CD_PREV] = -1.0
            fs[f, FS_DCI_RTT] = 2.0 * delay[rt_link[nxt:last]].sum()
        if has_int:  # (the receiver-side switch erases the records of the hops before it)
            fs[f, FS_DCI_HOP0] = float((int_at[first:nxt] >= 0).sum())
        if dci.near_source and has_int:
            fs[f, FS_NS_HOPS] = float((int_at[first : nxt - 1] >= 0).sum())
            fs[f, FS_NS_BACK] = 2.0 * delay[rt_link[first : nxt - 1]].sum()
            fs[f, FS_NS_GAP] = us_to_ps(dci.notice_interval_us)
            fs[f, FS_NS_LAST] = -1e300  # (none sent yet)
