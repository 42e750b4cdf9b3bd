"""PFC in the hybrid (:mod:`uno.fluid.hybrid`): one set of ingress queues, the packets' kernel's
(:mod:`uno.net.compiled.pfc`), decides every pause, the fluid flows' bytes counting in it.

An ingress queue whose link a fluid flow can cross is *shared* (``PF.shared`` in the fluid's
row of it, :mod:`uno.fluid.pfc`): its level is the bytes its packets brought in and have not
left (counted at each packet event, as in the packet engine) plus the fluid flows' bytes that
entered through its link and are queued at the switch's egress links (the fluid's level,
:func:`uno.fluid.pfc.pfc_step`, set after each fluid step, ``ING.fluid``). Past Xoff it
signals a PAUSE to the upstream port, at Xon or below a RESUME, one signal delay later, at the
packet event or the fluid step that crossed the threshold (:func:`uno.net.compiled.pfc.ingress_signal`).
The fluid bytes drain and refill a queue between steps, which no packet event sees: while it
holds fluid bytes, a queue that paused keeps pausing, a share of each step, until its level is
at Xon, its RESUME timed for when it will have drained to Xon at the pace of the last step
(:func:`uno.fluid.pfc.drain_share`): the fluid engine's own rule.

The fluid link is paused for the share of each step its upstream port was paused by those
signals (``LS_PAUSE``, set before the step: :func:`pause_shares`), so the packets and the
fluid bytes on a link stop together; its paused time and queueing delay follow in the step
as in the fluid engine (:func:`uno.fluid.pfc.pause_link`): the bytes sent in it are timed by
the line their links keep (timed by the full line, an incast's fluid flows finished with a
quarter of their bytes still queued). A queue no fluid flow reaches is the packet
engine's, exactly.

Times in ps, sizes in bytes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.fluid.columns import LS_PAUSE, LS_TX_AT, LS_TXF, LS_TXF_BEFORE
from uno.fluid.pfc import PF as PFC
from uno.fluid.pfc import drain_share
from uno.net.compiled.layout import EID_SHIFT, ING, H, P
from uno.net.compiled.pfc import ingress_signal, paused_through_ps, signal_pause, signal_resume

#: the events a shared queue's step may schedule (a PAUSE, then a RESUME timed by the drain)
PUSHES_PER_QUEUE = 2


def shared_rows(pfc: np.ndarray, reached: np.ndarray) -> np.ndarray:
    """The fluid's ingress rows whose link a fluid flow can cross (``reached``, per link),
    marked ``PF.shared``; returns their indices."""
    if not len(pfc):
        return np.zeros(0, dtype=np.int64)
    rows = np.flatnonzero(reached[pfc[:, PFC.link].astype(np.int64)] != 0).astype(np.int64)
    pfc[rows, PFC.shared] = 1.0
    return rows


@njit(cache=True, inline="always")
def _queue_at(ST, link) -> int:
    """The offset in ST of the kernel's ingress queue on ``link`` (its upstream port's)."""
    ing = ST[ST[H.off_ports] + link * P.size + P.ingress]
    return ST[H.off_ingress] + ing * ING.size


@njit(cache=True)
def fluid_in_queues(ST, pfc, rows) -> bool:
    """Whether a shared ingress queue (``rows`` of the fluid's ``pfc``) counts fluid bytes in
    its level (``ING.fluid``, set by :func:`step_signals`): while none does, the packets' own
    thresholds alone decide every pause."""
    for r in rows:
        if ST[_queue_at(ST, int(pfc[r, PFC.link])) + ING.fluid] != 0:
            return True
    return False


@njit(cache=True)
def pause_shares(ST, ls, pfc, pf_live, rows, k, dt_ps) -> None:
    """Before fluid step ``k`` (from round(k dt_ps) to round((k + 1) dt_ps), now its end): each
    shared queue's link paused for the share of the step its upstream port was, by the
    signals sent so far (``LS_PAUSE``); a queue whose link was paused joins the live list
    (``pf_live``), so the step times the link's queue by the line it kept
    (:func:`uno.fluid.pfc.pfc_step`)."""
    end_ps = int(round((k + 1) * dt_ps))
    for r in rows:
        link = int(pfc[r, PFC.link])
        through = paused_through_ps(ST, _queue_at(ST, link), end_ps)
        share = min(1.0, max(0.0, (through - pfc[r, PFC.signalled_ps]) / dt_ps))
        pfc[r, PFC.signalled_ps] = through
        ls[link, LS_PAUSE] = share
        if share > 0.0 and pfc[r, PFC.listed] == 0.0:
            pfc[r, PFC.listed] = 1.0
            pf_live[1 + pf_live[0]] = r
            pf_live[0] += 1


@njit(cache=True)
def step_signals(ST, ls, pfc, rows, k, dt_ps, eid) -> None:
    """After fluid step ``k`` (at its end): each shared queue's fluid bytes into the kernel's
    row (``ING.fluid``) and the PAUSE or RESUME its level now calls for. While it holds fluid
    bytes, a queue that paused keeps pausing, a share of each step, until its level is at Xon
    (the fluid engine's rule: the bytes refill it within a step, unseen between steps): its
    RESUME is timed by its drain in the last step (:func:`uno.fluid.pfc.drain_share`). The
    events take sub-eids of the engine eid ``eid``."""
    now = int(round((k + 1) * dt_ps))
    ST[H.eid] = eid << EID_SHIFT
    for r in rows:
        link = int(pfc[r, PFC.link])
        ib = _queue_at(ST, link)
        fluid = pfc[r, PFC.level]
        ST[ib + ING.fluid] = int(round(fluid))
        level = float(ST[ib + ING.bytes] + ST[ib + ING.fluid])
        # the bytes that left the switch in the step of those its link brought in: the fluid
        # flows' part of what the link sent, if it was stepped in this step (which began at
        # k dt_ps), and the packets that entered the queue
        stepped = ls[link, LS_TX_AT] == k * dt_ps
        brought = ls[link, LS_TXF] - ls[link, LS_TXF_BEFORE] if stepped else 0.0
        brought += ST[ib + ING.arrived] - pfc[r, PFC.arrived_seen]
        pfc[r, PFC.arrived_seen] = ST[ib + ING.arrived]
        drained = pfc[r, PFC.prev_level] + brought - level
        pfc[r, PFC.prev_level] = level
        ingress_signal(ST, ib, now)
        over = level - ST[ib + ING.xon]
        if fluid <= 0.0 or over <= 0.0:
            pfc[r, PFC.pausing] = 0.0  # (the packets' own thresholds alone)
            continue
        if ST[ib + ING.pausing]:
            pfc[r, PFC.pausing] = 1.0
        elif pfc[r, PFC.pausing] > 0.0:
            signal_pause(ST, ib, now + ST[ib + ING.signal_ps])
        else:
            continue
        share = drain_share(over, drained)
        if share < 1.0:
            signal_resume(ST, ib, now + int(share * dt_ps) + ST[ib + ING.signal_ps])
