"""The flows' side of the kernel's state: the receivers' rows (and their bitmaps of sequence
numbers got) and the kernel senders' rows, per-packet arrays and law rows, from the flows'
Python endpoints (built and not started: their counters are zero)."""

from __future__ import annotations

from uno.cc.law import no_timer
from uno.lb.spray import Spray
from uno.net.compiled.layout import R, S
from uno.net.compiled.packets import hash_key
from uno.net.compiled.pcg import pcg64_words
from uno.net.compiled.support import fifo_cap


def got_words(flows: list, kernel_rx: list[bool]) -> list[int]:
    """Int64 words of each flow's bitmap of sequence numbers got (0: its receiver is Python's)."""
    return [(f.n_packets + 63) // 64 if k else 0 for f, k in zip(flows, kernel_rx, strict=True)]


def fill_receivers(R_rows, flows: list, kernel_rx: list[bool], got_at: int, words: list) -> None:
    """The flows' receiver rows (``R_rows``, a view of ST; bitmaps from ``got_at`` in ST)."""
    for i, (flow, kernel) in enumerate(zip(flows, kernel_rx, strict=True)):
        row = R_rows[i]
        row[R.complete] = -1
        row[R.last_cnp] = -1
        if flow is None:  # (no flow of the packets has this id)
            continue
        row[R.kernel] = kernel
        row[R.n_packets] = flow.n_packets
        row[R.flow_bytes] = flow.size_bytes
        row[R.ack_bytes] = flow.receiver.ack_bytes
        row[R.got_off] = got_at
        row[R.cnp_interval] = flow.receiver.cnp_interval_ps
        row[R.ack_paths] = flow.receiver.ack_paths
        row[R.next_ack_path] = flow.receiver.next_ack_path
        got_at += words[i]


def law_widths(flows: list, ktx: list[bool]) -> tuple[int, int]:
    """The widest law state and constants of the kernel senders (floats)."""
    laws = [f.sender.cc for f, k in zip(flows, ktx, strict=True) if k]
    return max((len(cc.state) for cc in laws), default=0), max(
        (len(cc.consts) for cc in laws), default=0
    )


def _sender_row(row, flow, arrays_at: int, rng_words: list) -> None:
    """Kernel sender ``flow.sender``'s facts and its arrays' offsets (from ``arrays_at``)."""
    s = flow.sender
    n = flow.n_packets
    row[S.on] = 1
    row[S.src], row[S.dst] = flow.src, flow.dst
    if type(s.lb) is Spray:
        row[S.spray] = 1
        row[S.spray_n] = s.lb.n_entropies
        row[S.spray_rng] = len(rng_words)
        rng_words.extend(pcg64_words(s.lb.uniform))
    else:  # ECMP: the flow's one entropy
        entropy = s.lb.next_entropy(0)
        row[S.entropy] = entropy
        row[S.hkey] = hash_key(flow.src, flow.dst, entropy)
    row[S.n] = n
    row[S.last_seq] = s.last_seq
    row[S.full_wire], row[S.last_wire] = s.full_wire_bytes, s.last_wire_bytes
    row[S.mss], row[S.last_payload] = s.mss_bytes, s.last_payload_bytes
    row[S.gran] = s.timer_granularity_ps
    row[S.rto] = s.rto_ps
    after = s.rto_after_retransmit_ps
    row[S.rto_after] = after if after is not None else -1
    row[S.dupthr] = s.dupack_threshold
    row[S.scan_resend] = s.scan_timers_while_resending
    row[S.every_timeout] = s.report_every_timeout
    row[S.last_fast] = -1
    row[S.base_rtt] = flow.path.base_rtt_ps
    cap = fifo_cap(n)
    row[S.acked_off] = arrays_at
    row[S.out_off] = arrays_at + n
    row[S.fifo_off], row[S.fifo_cap] = arrays_at + 2 * n, cap
    row[S.rq_off] = arrays_at + 2 * n + 2 * cap
    row[S.rq_cap] = n
    row[S.later_off] = arrays_at + 3 * n + 2 * cap


def fill_senders(S_rows, F, flows: list, ktx: list[bool], arrays_at: int, arrays: list[int],
                 frow0: int, law_state_width: int, rng_words: list) -> None:  # fmt: skip
    """The senders' rows (``S_rows``, a view of ST): a kernel sender's facts, its per-packet
    arrays' offsets (from ``arrays_at``, ``arrays[f]`` ints each) and its law's F row
    (``frow0 + f``: its state, then its constants from column ``law_state_width``); a spraying
    sender's random stream joins ``rng_words``. A Python sender's row holds its host only
    (``S.on`` 0: it may wait in its NIC's kernel FIFO)."""
    for f, flow in enumerate(flows):
        if flow is None:
            continue
        row = S_rows[f]
        row[S.host] = flow.src
        if not ktx[f]:
            continue
        _sender_row(row, flow, arrays_at, rng_words)
        cc = flow.sender.cc
        row[S.frow] = frow0 + f
        row[S.law] = cc.kind
        row[S.dup_cc] = cc.wants_duplicate_acks
        F[frow0 + f, : len(cc.state)] = cc.state
        F[frow0 + f, law_state_width : law_state_width + len(cc.consts)] = cc.consts
        row[S.send_cc] = cc.wants_send_events
        row[S.timer_cc] = cc.law.next_timer is not no_timer
        row[S.rate] = cc.wants_rate_samples
        arrays_at += arrays[f]
