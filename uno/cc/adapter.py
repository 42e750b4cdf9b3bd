"""A congestion-control law (:mod:`uno.cc.law`) behind the Python data plane's controller
interface (:class:`uno.cc.base.CongestionControl`).

:class:`LawControl` holds one flow's state and constants rows and calls the law's compiled
functions through the registry's cached entry points (a call costs under a microsecond), or,
with ``py_func=True`` (``engine.cc_py_func``), the laws' pure-Python twins, where a breakpoint
stops. The window and pacing rate the law allows are kept as Python floats after every call
(the transport reads them per packet). The law's named columns read as attributes
(``cc.alpha``, ``cc.ssthresh``), for samplers, tables and tests.
"""

from __future__ import annotations

import functools

import numpy as np

from uno.cc import registry as R
from uno.cc.base import CongestionControl, FlowContext
from uno.cc.law import (
    BPS_PS,
    INT_FIELDS,
    LOSS_NACK,
    LOSS_TIMEOUT,
    NEVER_PS,
    NO_RECORDS,
    P0,
    C,
    Feedback,
    Law,
    no_send,
)
from uno.core.jit_call import direct_entry


class LawControl(CongestionControl):
    """One flow's controller running ``law`` (its registry kind ``kind``)."""

    def __init__(self, law: Law, kind: int, params, ctx: FlowContext, py_func: bool = False):
        super().__init__(ctx)
        self.law = law
        self.name = law.name
        self.kind = kind
        self.p = params
        consts = np.asarray(law.pack(params, ctx), dtype=np.float64)
        consts[P0.kind] = kind
        self.consts = consts
        self.state = np.zeros(law.state_size + law.state_tail(consts))
        self.py_func = py_func
        self.wants_int = "int" in law.signals
        #: whether ACKs' suggested rates reach :meth:`on_report`
        self.hears_reports = "dci" in law.signals
        self.wants_rate_samples = "delivery_rate" in law.signals
        self.wants_send_events = law.on_send is not no_send and (
            law.hears_sends is None or law.hears_sends(consts)
        )
        self.wants_duplicate_acks = bool(consts[P0.dup_acks])
        self.cnp_interval_ps = law.cnp_interval_ps(params) if law.cnp_interval_ps is not None else 0
        if py_func:
            law.init.py_func(self.state, consts)
            self._allows()
        else:
            self._cwnd, self._rate = R.law_init(kind, self.state, consts)
            self._ack = _ack_entry()
            _load_entries()

    def _allows(self) -> None:
        """Keep the window and pacing rate the law allows now (after a ``py_func`` call)."""
        self._cwnd = float(self.state[C.cwnd])
        self._rate = float(self.law.pacing_rate.py_func(self.state, self.consts))

    def state_written(self) -> None:
        """Re-read the window and pacing rate after ``state`` was written other than through
        this controller's hooks (a copy from the compiled data plane, a law function called
        directly on the row)."""
        if self.py_func:
            self._allows()
        else:
            self._cwnd = float(self.state[C.cwnd])
            self._rate = float(R.law_pacing_rate(self.kind, self.state, self.consts))

    # ---- what the transport reads ----------------------------------------------------------
    @property
    def cwnd_bytes(self) -> float:
        return self._cwnd

    @cwnd_bytes.setter
    def cwnd_bytes(self, value: float) -> None:
        if "state" in self.__dict__:  # (the base class sets a first value before the state exists)
            self.state[C.cwnd] = value
            self.state_written()

    @property
    def pacing_rate_bps(self) -> float:
        return self._rate

    @pacing_rate_bps.setter
    def pacing_rate_bps(self, value: float) -> None:
        if "state" in self.__dict__:  # (the base class sets 0 before the state exists)
            raise AttributeError(
                f"{self.name}: the pacing rate follows from the law's state; write the state "
                "and call state_written()"
            )

    @property
    def paced(self) -> bool:
        return bool(self.consts[P0.paced])

    def __getattr__(self, name: str):
        # the law's named columns, for samplers and tests (called only for missing attributes)
        law = self.__dict__.get("law")
        if law is not None:
            if name in law.state._fields and name != "size":
                return float(self.__dict__["state"][getattr(law.state, name)])
            if name in law.consts._fields and name != "size":
                return float(self.__dict__["consts"][getattr(law.consts, name)])
        raise AttributeError(name)

    # ---- feedback -------------------------------------------------------------------------
    def on_ack_batch(
        self,
        now_ps: int,
        acked_bytes: int,
        ecn: bool,
        rtt_ps: int,
        sent_ps: int,
        inflight_bytes: int = 0,
        delivered_bytes: int = 0,
        rate_bytes: int = 0,
        rate_interval_ps: int = 0,
        duplicate: bool = False,
        hops=(),
    ) -> None:
        """One ACK, as a batch of one (:func:`uno.cc.law.ack_feedback`); ``hops``: its INT
        records ``(ts_ps, qlen_bytes, tx_bytes, rate_bps)`` in path order. Times are integer
        picoseconds and sizes integer bytes: the compiled call takes them as ``int64``
        (:func:`uno.core.jit_call.direct_entry`)."""
        rec = _records(hops) if hops else NO_RECORDS
        if self.py_func:
            mark = 1.0 if ecn else 0.0
            fb = Feedback(float(now_ps), float(acked_bytes), mark * acked_bytes, 1.0, mark, mark,
                          float(rtt_ps), float(rtt_ps), float(sent_ps), float(inflight_bytes),
                          float(delivered_bytes), float(rate_bytes), float(rate_interval_ps),
                          1.0 if duplicate else 0.0, 0.0, 1.0, 0.0, float(len(rec)))  # fmt: skip
            self.law.on_feedback.py_func(self.state, self.consts, fb, rec)
            self._allows()
            return
        self._cwnd, self._rate = self._ack(
            self.kind, self.state, self.consts, now_ps, acked_bytes, ecn, rtt_ps, sent_ps,
            inflight_bytes, delivered_bytes, rate_bytes, rate_interval_ps, duplicate, rec,
        )  # fmt: skip

    def on_ack(self, now_ps: int, acked_bytes: int, ecn: bool, rtt_ps: int, sent_ps: int) -> None:
        self.on_ack_batch(now_ps, acked_bytes, ecn, rtt_ps, sent_ps)

    def on_duplicate_ack(self, now_ps, acked_bytes, ecn, rtt_ps, sent_ps) -> None:
        self.on_ack_batch(now_ps, acked_bytes, ecn, rtt_ps, sent_ps, duplicate=True)

    def _loss(self, now_ps: int, kind: int) -> None:
        if self.py_func:
            self.law.on_loss.py_func(self.state, self.consts, float(now_ps), kind)
            self._allows()
        else:
            self._cwnd, self._rate = R.law_loss(self.kind, self.state, self.consts, now_ps, kind)

    def on_timeout(self, now_ps: int) -> None:
        self._loss(now_ps, LOSS_TIMEOUT)

    def on_nack(self, now_ps: int) -> None:
        self._loss(now_ps, LOSS_NACK)

    def on_send(self, now_ps: int, wire_bytes: int) -> None:
        if self.py_func:
            self.law.on_send.py_func(self.state, self.consts, float(now_ps), float(wire_bytes))
            self._allows()
        else:
            self._cwnd, self._rate = R.law_send(self.kind, self.state, self.consts, now_ps,
                                                wire_bytes)  # fmt: skip

    def on_notify(self, now_ps: int, level: int) -> None:
        if self.py_func:
            self.law.on_notify.py_func(self.state, self.consts, float(now_ps), level)
            self._allows()
        else:
            self._cwnd, self._rate = R.law_notify(self.kind, self.state, self.consts, now_ps,
                                                  level)  # fmt: skip

    def on_report(self, now_ps: int, sent_ps: int, rate_bps: float, hops=()) -> None:
        """A DCI switch's INT records ``hops`` of the data packet sent at ``sent_ps``, or the
        rate (bit/s, > 0) the receiver suggests in an ACK (:data:`uno.cc.law.Law.on_report`)."""
        rec = _records(hops) if hops else NO_RECORDS
        if self.py_func:
            self.law.on_report.py_func(self.state, self.consts, float(now_ps), float(sent_ps),
                                       float(rate_bps), rec)  # fmt: skip
            self._allows()
        else:
            self._cwnd, self._rate = R.law_report(self.kind, self.state, self.consts, now_ps,
                                                  sent_ps, float(rate_bps), rec)  # fmt: skip

    # ---- timers -----------------------------------------------------------------------------
    def next_rate_change_ps(self) -> int | None:
        if self.py_func:
            due = self.law.next_timer.py_func(self.state, self.consts)
        else:
            due = R.law_next_timer(self.kind, self.state, self.consts)
        return None if due >= NEVER_PS else int(due)

    def advance(self, now_ps: int) -> None:
        if self.py_func:
            self.law.on_timer.py_func(self.state, self.consts, float(now_ps))
            self._allows()
        else:
            self._cwnd, self._rate = R.law_timer(self.kind, self.state, self.consts, now_ps)

    def pacing_gap_ps(self, wire_bytes: int) -> int:
        """The gap a packet of ``wire_bytes`` leaves at the current pacing rate (ps)."""
        return int(wire_bytes * BPS_PS / self.pacing_rate_bps)


class ReceiverLawControl:
    """The receiver's part of a law (:attr:`uno.cc.law.Law.receiver`) for one flow: its state
    and constants, and the call per data packet."""

    __slots__ = ("state", "consts", "_on_data", "_cols")

    def __init__(self, rx, params, ctx: FlowContext, init_rate_bps: float, py_func: bool = False):
        st = rx.layout.state
        self._cols = (st.credit, st.credit_rate_bps, st.dqm_avg_bps)
        self.consts = np.asarray(rx.pack(params, ctx, init_rate_bps), dtype=np.float64)
        self.state = np.zeros(rx.state_size(self.consts))
        (rx.init.py_func if py_func else rx.init)(self.state, self.consts)
        self._on_data = rx.on_data.py_func if py_func else rx.on_data

    def on_data(self, now_ps: int, credit: int, queue_bytes: int, hops) -> tuple:
        """A data packet stamped with ``credit`` (-1: none) whose per-flow queue held
        ``queue_bytes`` arrived with INT records ``hops``: what its ACK carries, (C_R,
        R_credit in bit/s, R-bar_DQM in bit/s)."""
        rec = _records(hops) if hops else NO_RECORDS
        s = self.state
        self._on_data(s, self.consts, float(now_ps), float(credit), float(queue_bytes), rec)
        c, r, d = self._cols
        return int(s[c]), float(s[r]), float(s[d])


def make_receiver_cc(name: str, cc_cfg, ctx: FlowContext, init_rate_bps: float,
                     py_func: bool = False) -> ReceiverLawControl | None:  # fmt: skip
    """The receiver's part of algorithm ``name`` for a flow, if the algorithm has one."""
    rx = R.LAW_BY_NAME[name].receiver
    if rx is None:
        return None
    return ReceiverLawControl(rx, getattr(cc_cfg, name), ctx, init_rate_bps, py_func)


def make_cc(name: str, cc_cfg, ctx: FlowContext, py_func: bool = False) -> LawControl:
    """The controller of one flow: algorithm ``name`` with its parameters ``cc_cfg.<name>``
    (``py_func``: run the law's pure-Python twins)."""
    return LawControl(R.LAW_BY_NAME[name], R.KIND[name], getattr(cc_cfg, name), ctx, py_func)


def _records(hops) -> np.ndarray:
    """INT records ``(ts_ps, qlen_bytes, tx_bytes, rate_bps)`` as the law reads them."""
    return np.asarray(hops, dtype=np.float64).reshape(-1, INT_FIELDS)


@functools.cache
def _ack_entry():
    # the one signature every ACK call has: integer ps and bytes, bool flags, float64 rows
    row = np.zeros(1)
    return direct_entry(R.law_ack, 0, row, row, 0, 0, False, 0, 0, 0, 0, 0, 0, False, NO_RECORDS)


@functools.cache
def _load_entries() -> None:
    # the other calls' compiled forms, loaded (or compiled) with the first controller rather
    # than at a run's first loss or timer: no pause, and no garbage of Numba's, mid-run
    row = np.zeros(1)
    direct_entry(R.law_loss, 0, row, row, 0, 0)
    direct_entry(R.law_send, 0, row, row, 0, 0)
    direct_entry(R.law_timer, 0, row, row, 0)
    direct_entry(R.law_next_timer, 0, row, row)
    direct_entry(R.law_notify, 0, row, row, 0, 0)
