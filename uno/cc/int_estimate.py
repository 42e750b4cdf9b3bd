"""Per-hop link utilisation from in-band telemetry, as HPCC and Gear estimate it.

A sender keeps the INT records of the last ACK it read (one ``(ts_ps, qlen_bytes, tx_bytes,
rate_bps)`` row per hop, :data:`uno.cc.law.INT_FIELDS` columns each) in its state row, from
column ``at`` on, and their number in column ``n_col`` (-1: none yet). Against the records of
a new ACK, each hop's utilisation is

    u_i = qlen_i / (B_i T) + txRate_i / B_i,   txRate_i = (tx_i - tx_i') / (ts_i - ts_i')

with ``T`` a normalising RTT (ps) and ``qlen_i`` the hop's queue now, or with ``min_qlen`` the
smaller of its queue now and before: HPCC's Algorithm 1 line 5 (Li et al., SIGCOMM 2019) takes
min(qlen, qlen'), Gear's eq. 1 (Han et al., IEEE/ACM ToN, §III-B) the queue the ACK carries.
The path's sample is the most loaded hop's (HPCC line 6, Gear eq. 2). PowerTCP (Addanki et
al., NSDI 2022, Algorithm 1, NORMPOWER) reads each hop's normalised power instead,

    Gamma_i = (dq_i/dt + txRate_i) (qlen_i + B_i T) / (B_i^2 T),   dq_i/dt = (qlen_i - qlen_i') / dt

(:data:`HOP_POWER`), and takes the most powerful hop the same way.

Records that cannot be compared — none stored yet, another number of hops, or a hop whose
timestamp did not advance or whose byte counter went back (another port in that slot, or a
reordered ACK) — give no sample; either way the new records replace the stored ones.
"""

from __future__ import annotations

from numba import njit

from uno.cc.law import BPS_PS, INT_FIELDS, INT_QLEN, INT_RATE, INT_TS, INT_TX


@njit(cache=True)
def store_records(s, n_col, at, max_records, rec, n):
    """Keep the ``n`` records ``rec`` in ``s[at:]`` (room for ``max_records``)."""
    if n > max_records:
        raise ValueError("INT: more records than the flow's packets hold")
    s[n_col] = n
    for i in range(n):
        for j in range(INT_FIELDS):
            s[at + INT_FIELDS * i + j] = rec[i, j]


#: what a hop's sample is (:func:`most_loaded_hop`): its utilisation with the queue now (Gear
#: eq. 1), with the smaller queue of the two records (HPCC line 5), or its normalised power
#: (PowerTCP)
HOP_UTILIZATION = 0
HOP_UTILIZATION_MIN_QLEN = 1
HOP_POWER = 2


@njit(cache=True)
def most_loaded_hop(s, n_col, at, max_records, rec, n, t_ps, signal):
    """The hop of ``rec`` (``n`` records) with the largest sample ``signal`` against the stored
    records, which ``rec`` then replaces: ``(comparable, sample, tau_ps, rate_bps)`` — the
    hop's sample, the interval between its two records and its line rate (``comparable``
    False: no sample, the rest 0). A hop's power counts its arrival rate (queue gradient plus
    transmit rate) as at least 0: records whose queue fell by more than the port sent are not
    taken as negative arrivals."""
    comparable = s[n_col] == n and n > 0
    u = -1.0
    tau = 0.0
    bw = 0.0
    if comparable:
        for i in range(n):
            base = at + INT_FIELDS * i
            dt = rec[i, INT_TS] - s[base + INT_TS]
            dtx = rec[i, INT_TX] - s[base + INT_TX]
            if dt <= 0.0 or dtx < 0.0:
                comparable = False
                break
            qlen = rec[i, INT_QLEN]
            if signal == HOP_POWER:
                # current (bytes/ps) x voltage (bytes), over the hop's B^2 T (in bytes^2/ps)
                bdp = rec[i, INT_RATE] * t_ps / BPS_PS
                current = (qlen - s[base + INT_QLEN] + dtx) / dt
                if current < 0.0:
                    current = 0.0
                u_hop = BPS_PS * current / rec[i, INT_RATE] * (qlen + bdp) / bdp
            else:
                if signal == HOP_UTILIZATION_MIN_QLEN:
                    qlen0 = s[base + INT_QLEN]
                    if qlen0 < qlen:
                        qlen = qlen0
                # bytes -> bits and ps -> s: rate_bps = bytes x BPS_PS / ps
                u_hop = BPS_PS * (qlen / t_ps + dtx / dt) / rec[i, INT_RATE]
            if u_hop > u:
                u = u_hop
                tau = dt
                bw = rec[i, INT_RATE]
    store_records(s, n_col, at, max_records, rec, n)
    if not comparable:
        return False, 0.0, 0.0, 0.0
    return True, u, tau, bw


@njit(cache=True)
def path_utilization(s, n_col, at, max_records, rec, n, t_ps, min_qlen):
    """The most loaded hop of ``rec`` (``n`` records) against the stored records, which ``rec``
    then replaces: ``(comparable, u, tau_ps, rate_bps)`` — the hop's utilisation, the interval
    between its two records and its line rate (``comparable`` False: no sample, the rest 0)."""
    signal = HOP_UTILIZATION_MIN_QLEN if min_qlen else HOP_UTILIZATION
    return most_loaded_hop(s, n_col, at, max_records, rec, n, t_ps, signal)
