"""HPCC's law as ``@njit`` functions over per-flow state arrays: the compiled form of
:class:`uno.cc.hpcc.Hpcc` (Li et al., SIGCOMM 2019, Algorithm 1: MeasureInflight, ComputeWind,
NewAck), which stays the per-ACK reference implementation. The compiled data plane's senders
call it with the ACK's INT records, which the kernel's ports wrote into the packet's row of
the pool; it does the Python method's arithmetic in the same order, so windows are the same
doubles bit for bit (``tests/test_compiled_senders.py`` runs both on random ACK sequences).

State of one flow: in its row of ``F`` (``fr``) the window, floor and cap (bytes,
:mod:`uno.cc.window_kernel`), then eta, W_AI (bytes), U, the reference window W^c (bytes) and
the window after a timeout (bytes, 0: unchanged); in ``ST`` from ``ib`` T (ps), maxStage,
incStage, the round (active flag, start in ps), and the stored INT records: their count (-1
before the first) and (ts ps, qlen bytes, tx bytes, rate bit/s) per hop.
"""

from __future__ import annotations

from numba import njit

from uno.cc.window_kernel import W_CWND, W_MAX, load_window, set_cwnd, store_window

F_ETA, F_W_AI, F_U, F_REF, F_TIMEOUT_CWND = 3, 4, 5, 6, 7
N_FLOATS = 8
I_T, I_MAX_STAGE, I_INC_STAGE, I_R_ACTIVE, I_R_START, I_PREV_N, I_PREV = 0, 1, 2, 3, 4, 5, 6
#: fields of one INT record (uno.net.int)
RECORD = 4


def n_ints(max_records: int) -> int:
    """ST ints one flow's state takes with records of up to ``max_records`` hops."""
    return I_PREV + RECORD * max_records


def load(cc, F, fr: int, ST, ib: int) -> None:
    """Copy a :class:`uno.cc.hpcc.Hpcc`'s parameters and state into its rows."""
    load_window(cc, F, fr)
    F[fr, F_ETA] = cc.eta
    F[fr, F_W_AI] = cc.w_ai_bytes
    F[fr, F_U] = cc.utilization
    F[fr, F_REF] = cc.ref_cwnd_bytes
    F[fr, F_TIMEOUT_CWND] = cc.p.timeout_cwnd_mss * cc.ctx.mss_bytes
    ST[ib + I_T] = cc.t_ps
    ST[ib + I_MAX_STAGE] = cc.max_stage
    ST[ib + I_INC_STAGE] = cc.inc_stage
    ST[ib + I_R_ACTIVE] = cc.round.active
    ST[ib + I_R_START] = cc.round.start_ps
    hops = cc.prev_hops
    ST[ib + I_PREV_N] = -1 if hops is None else len(hops)
    for i, record in enumerate(hops or ()):
        ST[ib + I_PREV + RECORD * i : ib + I_PREV + RECORD * (i + 1)] = record


def store(cc, F, fr: int, ST, ib: int) -> None:
    """Copy the rows' state back into the :class:`uno.cc.hpcc.Hpcc`."""
    store_window(cc, F, fr)
    cc.utilization = float(F[fr, F_U])
    cc.ref_cwnd_bytes = float(F[fr, F_REF])
    cc.inc_stage = int(ST[ib + I_INC_STAGE])
    cc.round.active = bool(ST[ib + I_R_ACTIVE])
    cc.round.start_ps = int(ST[ib + I_R_START])
    n = int(ST[ib + I_PREV_N])
    flat = ST[ib + I_PREV : ib + I_PREV + RECORD * max(n, 0)].tolist()
    cc.prev_hops = (
        None if n < 0 else [tuple(flat[i : i + RECORD]) for i in range(0, len(flat), RECORD)]
    )


@njit(cache=True)
def _measure_inflight(F, fr, ST, ib, PK, slot, rec0, n):
    """MeasureInflight (Alg. 1 lines 1-10, :meth:`uno.cc.hpcc.Hpcc._measure_inflight`): U from
    the packet's ``n`` records (row ``slot`` of PK, from column ``rec0``) against the stored
    ones, which they then replace. Returns whether U was updated."""
    n_prev = ST[ib + I_PREV_N]
    comparable = n_prev == n
    t = ST[ib + I_T]
    u = -1.0
    tau = 0
    if comparable:
        for i in range(n):
            at = rec0 + RECORD * i
            prev = ib + I_PREV + RECORD * i
            dt = PK[slot, at] - ST[prev]
            dtx = PK[slot, at + 2] - ST[prev + 2]
            if dt <= 0 or dtx < 0:
                comparable = False
                break
            qlen = PK[slot, at + 1]
            qlen0 = ST[prev + 1]
            u_hop = 8e12 * ((qlen if qlen < qlen0 else qlen0) / t + dtx / dt) / PK[slot, at + 3]
            if u_hop > u:
                u = u_hop
                tau = dt
    ST[ib + I_PREV_N] = n
    for i in range(RECORD * n):
        ST[ib + I_PREV + i] = PK[slot, rec0 + i]
    if not comparable:
        return False
    if tau > t:
        tau = t
    w = tau / t
    F[fr, F_U] = (1.0 - w) * F[fr, F_U] + w * u
    return True


@njit(cache=True)
def _compute_wind(F, fr, ST, ib, update_ref):
    """ComputeWind (Alg. 1 lines 11-20, :meth:`uno.cc.hpcc.Hpcc._compute_wind`)."""
    u = F[fr, F_U]
    eta = F[fr, F_ETA]
    multiplicative = u >= eta or ST[ib + I_INC_STAGE] >= ST[ib + I_MAX_STAGE]
    if multiplicative:
        if u > 0.0:
            w = F[fr, F_REF] / (u / eta) + F[fr, F_W_AI]
        else:
            w = F[fr, W_MAX]
    else:
        w = F[fr, F_REF] + F[fr, F_W_AI]
    set_cwnd(F, fr, w)
    if update_ref:
        F[fr, F_REF] = F[fr, W_CWND]
        ST[ib + I_INC_STAGE] = 0 if multiplicative else ST[ib + I_INC_STAGE] + 1


@njit(cache=True)
def on_ack_int(F, fr, ST, ib, PK, slot, rec0, now_ps, sent_ps):
    """NewAck (Alg. 1 lines 21-27, :meth:`uno.cc.hpcc.Hpcc.on_ack_int`) for an ACK whose row
    ``slot`` of PK holds its data packet's INT records (their count at column ``rec0``, the
    records after it; none: the round bookkeeping only)."""
    n = PK[slot, rec0] if rec0 > 0 else 0
    if not ST[ib + I_R_ACTIVE]:  # the first ACK: store the records, start the first round
        if n:
            ST[ib + I_PREV_N] = n
            for i in range(RECORD * n):
                ST[ib + I_PREV + i] = PK[slot, rec0 + 1 + i]
        ST[ib + I_R_START] = now_ps
        ST[ib + I_R_ACTIVE] = 1
        return
    round_end = sent_ps >= ST[ib + I_R_START]
    if n and _measure_inflight(F, fr, ST, ib, PK, slot, rec0 + 1, n):
        _compute_wind(F, fr, ST, ib, round_end)
    if round_end:
        ST[ib + I_R_START] = now_ps


@njit(cache=True)
def on_timeout(F, fr, ST, ib, now_ps):
    """A timeout (:meth:`uno.cc.hpcc.Hpcc.on_timeout`): with a window after timeouts set, W and
    W^c drop to it and incStage restarts."""
    if F[fr, F_TIMEOUT_CWND] > 0:
        set_cwnd(F, fr, F[fr, F_TIMEOUT_CWND])
        F[fr, F_REF] = F[fr, W_CWND]
        ST[ib + I_INC_STAGE] = 0


@njit(cache=True)
def on_nack(F, fr, ST, ib, now_ps):
    """A fast-retransmit loss: HPCC does nothing (:meth:`uno.cc.hpcc.Hpcc.on_nack`)."""
