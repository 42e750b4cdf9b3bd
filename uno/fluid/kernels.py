"""Numba kernels of the fluid engine: link queues with phantom queues and ECN marking, the
per-flow delay lines, and the congestion-control fluid laws. Every kernel is ``@njit(cache=True, error_model="numpy")``
and its pure-Python twin is ``kernel.py_func`` (tests compare the two on random inputs).

Units: time in picoseconds (float64), sizes in bytes, rates in bytes per picosecond.

State is struct-of-arrays: 2-D float64 arrays whose columns are named by the integer constants
below (``LS_*`` per link, ``FS_*`` per flow, ``C_*`` congestion-control state and ``P_*`` its
parameters per flow), a CSR flow x link routing matrix (``rt_ptr``, ``rt_link``, ``rt_w``: the
fraction of the flow's bytes that crosses each link, in path order) and per-flow rings (the delay
lines: what the network did to the bytes a flow sent comes back one RTT later).
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from uno.cc.law import BPS_PS, LOSS_NACK, LOSS_TIMEOUT, NO_RECORDS, Feedback
from uno.cc.registry import init as law_init
from uno.cc.registry import on_feedback as law_feedback
from uno.cc.registry import on_loss as law_loss
from uno.cc.registry import pacing_rate as law_pacing


# ---- cache hints ---------------------------------------------------------------------------
def prefetch(a, row, byte_offset):
    """Ask the CPU to bring the cache line holding byte ``byte_offset`` of row ``row`` of the
    2-D C-contiguous array ``a`` into its caches ahead of use: in compiled code LLVM's
    ``llvm.prefetch`` (for writing, kept in every level), in Python nothing. A hint only: it
    changes no value and never faults, so a kernel's results and its ``py_func`` twin's are
    the same with it."""


@intrinsic
def _prefetch(typingctx, a, row, byte_offset):
    sig = types.void(a, row, byte_offset)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        zero = context.get_constant(types.intp, 0)
        ptr = cgutils.get_item_pointer2(
            context, builder, data=ary.data, shape=cgutils.unpack_tuple(builder, ary.shape),
            strides=cgutils.unpack_tuple(builder, ary.strides), layout=aryty.layout,
            inds=[args[1], zero], wraparound=False, boundscheck=False,
        )  # fmt: skip
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        # (the typed-pointer name: LLVM 14, numba 0.59's, knows only it; later LLVMs upgrade
        # it to their opaque-pointer "llvm.prefetch.p0")
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
            "llvm.prefetch.p0i8",
        )  # fmt: skip
        offset = context.cast(builder, args[2], signature.args[2], types.intp)
        at = builder.gep(builder.bitcast(ptr, i8p), [offset])
        builder.call(fn, [at, i32(1), i32(3), i32(1)])  # (write, keep in every level, data)
        return context.get_dummy_value()

    return sig, codegen


@overload(prefetch, jit_options={"cache": True})
def _prefetch_impl(a, row, byte_offset):
    def impl(a, row, byte_offset):
        _prefetch(a, row, byte_offset)

    return impl


@njit(cache=True, error_model="numpy", inline="always")
def prefetch_row(a, row, n_cols) -> None:
    """:func:`prefetch` every cache line of the first ``n_cols`` columns of row ``row`` of the
    2-D float64 array ``a`` (a row need not start on a line: its last byte's line too).

    Why, for the delay line: a flow's slots are touched once per step each, one slot after the
    other, while ~1,000 other flows' slots are touched in between (the 40%-load Fig. 10 run's
    ring spans ~200 MB), so each slot's first touch missed every cache. Asking for the slot the
    flow touches next, a step (or a block) ahead, takes that wait out of the step: the fine
    steps ran ~10% faster, with the same results."""
    n_bytes = n_cols * 8
    for off in range(0, n_bytes, 64):
        prefetch(a, row, off)
    prefetch(a, row, n_bytes - 1)


# ---- links ---------------------------------------------------------------------------------
# The columns are laid out by cache line (the engine allocates ``ls`` with 64-byte aligned
# rows of N_LS columns): the first line holds what a step reads or writes for every route
# entry; the next three what update_links reads or writes for every busy link, so that it
# touches four lines of a link's row, not six (a fine step of the 40%-load Fig. 10 run
# advances ~1,500 busy links, and a step's rows outgrow the core's cache); the NIC's scratch
# and the jitter memo come after.
# line 0: every route entry
LS_ARR = 0  # arrival rate this step, bytes/ps (accumulated from the flows)
LS_PASS = 1  # departures / (queue + arrivals): the share of what the link holds that leaves
#             this step (<= 1; each flow's bytes at the link leave in that share, see forward)
LS_LOSS = 2  # fraction of this step's arrivals dropped
LS_LISTED = 3  # 1 while the link is in the busy list
LS_MARK = 4  # marking probability of bytes leaving now
LS_DELAY = 5  # queueing delay, ps
LS_ARR2 = 6  # sum over the route entries of their arrival rate squared, (bytes/ps)^2: with
#             LS_ARR, the number of sources at the link (:func:`link_jitter_exceedance`)
LS_Q = 7  # queue level, bytes
# lines 1-3: every busy link (update_links)
LS_CAP = 8  # service rate, bytes/ps
LS_BUF = 9  # buffer, bytes
LS_PH = 10  # phantom queue level, bytes
LS_PHSIZE = 11  # phantom size (0: no phantom queue)
LS_PHDRAIN = 12  # phantom drain rate, bytes/ps
LS_EXT = 13  # bytes arriving this step from outside the fluid model (hybrid: packets)
# the flows' ACKs where they share the data queue (acks_out): bytes arriving in the next step,
# which a full buffer does not drop (update_links)
LS_ACK_IN = 14
LS_QF = 15  # of the queue, the fluid flows' bytes (FIFO share; the rest came from LS_EXT)
LS_TX = 16  # bytes sent (departed)
LS_DROP = 17  # bytes dropped
LS_IN = 18  # bytes arrived
LS_MAXQ = 19  # largest queue level, bytes
LS_MODE = 20  # which queue marks: MODE_*
LS_KMIN = 21  # RED on the physical queue (-1: none)
LS_KMAX = 22
LS_PACKETS = 23  # 1: packets (LS_EXT) crossed the link in the last step or wait in its queue
LS_PHKMIN = 24
LS_PHKMAX = 25
LS_PHDROPS = 26  # 1: the phantom queue counts dropped bytes too
LS_PH_ACKS = 27  # 1: the phantom queue counts ACK bytes (switch.phantom.count_acks)
# the link's departures this step were back to back (its whole line rate): a packet port then
# sends on a fixed grid of one packet time, whose phase is set where its busy period began
LS_BACKLOG = 28
LS_GRID = 29  # that grid's phase, in [0, 1) of a packet time (-1: not back to back)
LS_MARKS = 30  # bytes the link marked (ECN) as they left it
# line 4: a host's NIC shared round-robin by its flows (scratch within a step)
LS_DEMAND = 32  # bytes the host's flows could send this step
LS_NDEM = 33  # how many of them
LS_SATSUM = 34  # demand of those under the even share
LS_NBIG = 35  # how many are above it
LS_LEVEL = 36  # the water level: no flow sends more this step
# a host's NIC in the hybrid: the bytes its packet flows claim in this step (what they sent,
# or a whole step's worth while they wait for the NIC), one more claimant of the round robin
# (set by uno.fluid.hybrid before each step; 0 without packets)
LS_PKT_CLAIM = 37
LS_NIC_SENDERS = 38  # a host's NIC: how many of its fluid flows had bytes to send in the last step
# line 5: the last packet_jitter_exceedance computed at the link, and what it was computed
# from (its arguments follow from these: a memo, as the flows crossing a link in one step
# mostly ask the same)
LS_JIT_X = 40
LS_JIT_ARR = 41
LS_JIT_ARR2 = 42
LS_JIT_P = 43
#: the end of lines 0-3, before which lie the columns update_links reads or writes (it
#: prefetches them a few links ahead)
LS_UPDATE_END = LS_MARKS + 1
N_LS = 56  # (42 used: rows of seven whole cache lines, an odd number so that the rows'
#              first lines spread over every cache set; a stride of 4 lines would use a fourth)

# ---- route entries (kernels.forward): integer and float fields, one row per entry --------
EI_LINK = 0  # the link (route entries; a subflow's hop reads it from ``sub_links``)
EI_FLOW = 1  # the flow
EI_GSTART = 2  # first entry of its hop (a split hop's links share what reaches the hop)
EI_NEXT = 3  # first entry of the next hop, -1: last
EI_LAG = 4  # 1: the next hop's level is not above this one's (bytes reach it next step);
#            -1: the flow's wire link, whose bytes reach the next hop FS_WIRE_PS later
EI_NXT = 5  # next entry in this step's list of its level
EI_SNXT = 6  # next entry in this step's list of its level's split-hop entries
EI_GROUP = 7  # at a link that drops this step: the entry's input group there (-1: the pool)
N_EI = 8  # (8 used; int32: a row is half a cache line, so the entries of a route, which a step
#            walks one after the other, share lines two by two; with int64 rows the 40%-load
#            Fig. 10 run's engine time was ~3% longer)
EF_Q = 0  # bytes of the flow queued at the link
EF_IN = 1  # bytes into the entry's hop this step
EF_CARRY = 2  # bytes that reach it next step
EF_W = 3  # share of the hop's bytes that takes this link (1: a one-link hop)
# the same three for the flow's ECN-marked bytes (marked as they left an earlier link)
EF_MQ = 4
EF_MIN = 5
EF_MCARRY = 6
EF_LOSS = 7  # the share of its arrivals the link dropped this step (forward; by its input)
N_EF = 8  # (8 used; a row of 8 is one cache line)

#: a link whose departures reach this close to its line rate sends back to back (LS_BACKLOG)
BACKLOG_TOLERANCE = 1e-9
#: inputs of one dropping link told apart (:func:`input_drop_shares`); more join the pool
INPUTS_MAX = 32

#: a flow's bytes at a link below this many (a byte: the least a link carries) leave with the
#: link's departures of the step (:func:`forward`)
RESIDUE_BYTES = 1.0

MODE_NONE = 0
MODE_PHYSICAL = 1
MODE_PHANTOM = 2
MODE_EITHER = 3

# ---- flows ---------------------------------------------------------------------------------
# The columns are laid out by cache line (the engine allocates ``fs`` with 64-byte aligned
# rows): a step reads or writes of every running flow the first three lines only (a fine step
# of the 40%-load Fig. 10 run has ~800 flows running, and a step's rows outgrow the core's
# cache), the lines after them when its feedback or losses come.
# line 0: what a step reads or writes of every running flow: its sends
FS_SIZE = 0  # wire bytes the flow must deliver (coded flows: data + parity)
FS_UNSENT = 1  # bytes waiting to be sent (new or to retransmit)
FS_INFLIGHT = 2
FS_DELIVERED = 3  # wire bytes delivered (for coded flows: of decodable blocks)
FS_SENT = 4
FS_START = 5  # ps
FS_NIC = 6  # bytes/ps
FS_SEND_TIME = 7  # how long this step's bytes take to leave the sender, ps
# line 1: the same: its NIC, its wire link's delay line, its pending losses
FS_NIC_LINK = 8  # the link of its host's NIC
FS_LAST_SEND = 9  # when the flow's latest send began, ps (advance, 3c.)
# propagation on the way out (engine.fluid_wire): the first entry of the hop after the route's
# wire link (its longest, when at least the intra-DC base RTT; -1: none), its propagation (ps)
FS_WIRE_NEXT = 10
FS_WIRE_PS = 11
# when the ACKs of the newest bytes off the wire are due (ps): a drop beyond the wire link takes
# the flow's newest bytes there, whose ACKs are due from then down (lose_acks)
FS_WIRE_ACK = 12
# an UnoLB flow's wire hop (the hop of its subflows' WAN link; -1: none): what its subflows'
# WAN links let go reaches their next hop FS_WIRE_PS later, through R_SUBWIRE
FS_WIRE_HOP = 13
FS_DUPACK_BYTES = 14  # fast retransmit: acked bytes sent after a loss that reveal it (0: none)
FS_LOSS_AT = 15  # when the lost bytes not yet detected (FS_LOSS_PENDING) will be (ps, -1: none)
# line 2: the same: its delay line's writes, its deliveries, its block
FS_ACK_LAST = 16  # the latest step whose delay-line slot may hold ACKs of the flow's sends
FS_DUE_LAST = 17  # the latest step with something due in its delay line (ring_give clears to it)
FS_DELIV_NEW = 18  # bytes the flow's last hop delivered this step (forward)
FS_MARK_NEW = 19  # ECN-marked bytes the flow's last hop delivered this step (forward)
# feedback in blocks (advance, 4b): what the flow sent in its block so far, when (bytes x the
# middle of each send, for the bytes' mean), the latest send's start and its end, ps
FS_BLOCK_BYTES = 20
FS_BLOCK_MIDW = 21
FS_BLOCK_SENT = 22
FS_BLOCK_END = 23
# line 3: the ACKs' arrival (advance, 2.)
FS_STATE = 24  # 0 waiting, 1 active, 2 finished
FS_PENDING = 25  # bytes of ACKs written in the delay line and not arrived yet (not coded flows)
FS_MARK_FRAC = 26  # the marked share of its latest delivered bytes whose echo has come back
# a wire flow's RTT samples: the queueing beyond the wire link as its latest delivered bytes met
# it (ps) and the chance of their packets' queueing there (UnoCC's gentle test)
FS_QBEYOND = 27
FS_PBEYOND = 28
FS_ACKED = 29  # bytes acknowledged
FS_MARKED = 30  # acknowledged bytes carrying an ECN echo
FS_BASE_RTT = 31  # ps, own path
# line 4: the sends' feedback (advance, 5.) and drops
FS_RDELAY = 32  # queueing delay of its ACKs' way back at its latest send, ps
FS_QBEFORE = 33  # a wire flow: the queueing before its wire link at its latest send, ps
FS_DROPPED = 34  # bytes of the flow the links dropped this step (forward; not coded flows)
FS_EXPOSED = 35  # bytes of the flow that reached links that dropped some this step (forward)
FS_WIRE_DROP = 36  # bytes the links beyond its wire link dropped since its losses were booked
FS_LOST = 37  # bytes dropped in the network
FS_EC_N = 38  # data packets per block (0: not coded)
FS_STOP = 39  # 1: the run ends once every such flow has finished (engine.stop_when_done)
# lines 5 and 6: losses, timers and loss reports
FS_LOSS_PENDING = 40  # lost bytes not yet detected
FS_LOSS_DELAY = 41  # coded flows: the receiver's block timer, ps (its NACK: book_losses)
FS_RTO = 42  # retransmission timeout, ps: what fast retransmit misses, the timer catches
FS_RTO_AFTER = 43  # retransmission timeout once the flow has resent, ps (0: FS_RTO stays)
FS_WAIT = 44  # lost bytes waiting for fast retransmit's evidence (FS_DUPACK_BYTES) or the timer
FS_WAIT_LAST = 45  # step at which the newest of them time out (ring column R_TIMEOUT)
FS_EVIDENCE = 46  # bytes acknowledged since the newest of FS_UNREVEALED (fast_retransmit_evidence)
FS_VOID_BYTES = 47  # fast retransmit: bytes revealed whose R_TIMEOUT entries are still ahead (void)
FS_UNREVEALED = 48  # of FS_WAIT, the bytes whose ACKs' time is past, waiting for evidence
FS_TIMED_AHEAD = 49  # fast retransmit: bytes the timer took before their ACKs' time (R_LOSTQ)
FS_FAST_BYTES = 50  # bytes fast retransmit found lost
FS_TIMEOUTS = 51  # retransmission timeouts the controller heard of (one per base RTT at most)
FS_LAST_TIMEOUT = 52  # when the controller last heard of a timeout, ps
FS_LOSS_EVENTS = 53  # loss reports before a timeout: fast retransmit, or the EC receiver's NACK
FS_LOSS_NACK = 54  # 1: losses are reported before a timeout (NACK / duplicate ACKs)
FS_LAST_NACK = 55  # when the controller last heard of losses found before a timeout, ps
# line 7: the rest
FS_EC_M = 56  # parity packets per block
FS_FINISH = 57  # ps, -1 while running
# a law's flow (uno.cc.law): the expected count of marked ACKs carried from batch to batch (a
# batch's whole ones are its ``mark_events``), and whether its law decides on a batch's
# queueing chance (then each batch with one draws from the flow's stream)
FS_MARK_CARRY = 58
FS_DRAWS = 59
# the queueing (ps) beyond its base RTT a packet must meet to count as queued, for a law that
# decides on it (FS_DRAWS); whether its law reads the least RTT sample of a batch (R_RTTMIN) and
# a delivery-rate sample (R_DSENT)
FS_QTHR = 60
FS_RTTMIN = 61
FS_RATE = 62
N_FS = 72  # (63 used: rows of nine cache lines, an odd number, as N_LS)

# ---- what every step reads of every running flow: a compact table ``fx`` -------------------
# (4 flows a cache line, against a row of five lines in ``fs``: a flow with nothing to do this
# step costs no line of ``fs``, ``cs`` or its delay line)
FX_SEND = 0  # bytes sent this step
FX_NETQ = 1  # bytes of the flow held in link queues or carried to the next step (forward)
FX_QUIET = 2  # 1: it could send nothing at its last try and no feedback came since
FX_FIRST = 3  # with FX_NETQ > 0: the first route entry of the hop nearest the sender that
#              holds its bytes, or for an UnoLB flow the first hop index of any of its
#              subflows that holds bytes (forward walks a flow that sends nothing from there)
N_FX = 4

# ---- congestion control --------------------------------------------------------------------
#: a flow whose controller is a law (uno.cc.law): P_KIND = CC_LAW + its registry kind, its state
#: and constants the law's own rows (their common columns are C_CWND and P_MIN_CWND .. P_INIT_CWND)
CC_LAW = 100

C_CWND = 0
N_C = C_CWND + 1  # (the fewest state columns: a law's own are as many as it declares)

# parameters shared by every law
P_KIND = 0
P_MIN_CWND = 1
P_MAX_CWND = 2  # inf: no cap
P_PACED = 3
P_MSS = 4
P_BASE_RTT = 5  # the base RTT the controller knows (ps)
P_INIT_CWND = 6
N_P = P_INIT_CWND + 1  # (the fewest constant columns: a law's own are as many as it declares)

# ---- rings (per-flow delay lines) ----------------------------------------------------------
# A run with no coded flow, no law that reads a batch's least RTT sample or its delivery-rate
# sample and no fast retransmit keeps only the first N_R_NARROW columns (``ring.shape[1]``): the
# ring is the run's largest array (a slot per step of an RTT and an RTO for every flow running
# at once) and the first touch of its pages costs more than steps.
R_ACK = 0  # bytes acknowledged
R_MARK = 1  # ECN-marked bytes of R_DELIV (forward: marked as they left the links, as a
#             packet is marked at dequeue)
R_RTTW = 2  # sum of rtt x acked bytes
R_SENTMAX = 3  # latest send time among the bytes, ps (read only where bytes were acked)
R_ARRIVE = 4  # when the last of them is acknowledged (ps), for completion times
R_TIMEOUT = 5  # lost bytes (not revealed yet) whose retransmission timer expires at this step
R_JITTER = 6  # FS_DRAWS flows (UnoCC): sum of acked x the chance that a packet's RTT sample
#              exceeds FS_QTHR through packet-level queueing (:func:`gentle_exceedance`)
R_DELIV = 7  # bytes delivered one return trip before (their ECN echoes come back now)
R_WIRE = 8  # bytes that left the flow's wire link (its route's long link, FS_WIRE_*) and reach
#             the next hop at this step (forward); R_WIRE_M: the marked ones among them
R_WIRE_M = 9
R_WIRE_ACK = 10  # when the ACKs of the flow's newest sends were due as they left (ps, the latest)
R_QBEYOND = 11  # a wire flow: sum of R_DELIV x the queueing delay beyond its wire link as they
#                 crossed it (ps); R_PBEYOND: x the chance of a packet's queueing there
R_PBEYOND = 12
N_R_NARROW = 13
R_GOOD = 13  # wire bytes of decodable data (narrow ring: the acknowledged bytes)
R_FREE = 14  # bytes lost but absorbed by coding (leave flight with the ACKs; narrow: none)
R_RTTMIN = 15  # smallest RTT sample (0: none; FS_RTTMIN flows)
R_DSENT = 16  # bytes the flow had acknowledged when the latest of them was sent (FS_RATE flows)
R_NACK = 17  # coded bytes lost whose receiver's NACK reaches the sender at this step
R_LOSTQ = 18  # fast retransmit: bytes lost whose ACKs were due at this step (take_acks)
R_LATE_NACK = 19  # coded bytes the sender's timer took whose receiver's NACK arrives now
N_R = 20
# a run whose UnoLB flows have a wire hop (FS_WIRE_HOP) keeps two more columns a subflow: the
# bytes subflow s's WAN link let go that reach its next hop at this step (R_SUBWIRE + 2 s) and
# the marked ones among them (R_SUBWIRE + 2 s + 1)
R_SUBWIRE = N_R


@njit(cache=True, error_model="numpy")
def red_probability(level: float, kmin: float, kmax: float) -> float:
    """RED's marking probability at ``level`` (as ``uno.net.red.RedMarker.probability``)."""
    if level <= kmin:
        return 0.0
    if level > kmax or kmax <= kmin:
        return 1.0
    return (level - kmin) / (kmax - kmin)


@njit(cache=True, error_model="numpy")
def update_links(ls: np.ndarray, links: np.ndarray, n_links: int, dt_ps: float) -> int:
    """Advance the links ``links[:n_links]`` (the busy ones) by one step of ``dt_ps``: queue =
    queue + arrivals (the flows' rates, plus ``LS_EXT`` bytes and the ACKs'
    ``LS_ACK_IN``) - departures at line rate, tail drop beyond the buffer, phantom queue filled
    by the same arrivals (the ACKs where ``LS_PH_ACKS``) and drained at its own rate, and the
    marking probability, loss fraction (drops / data arrivals: a tail drop takes arriving data
    bytes; the ACKs are not dropped, below), queueing delay and pass ratio (departures / (queue
    + arrivals - drops), at most 1: the share of every flow's bytes held at the link, once its
    drops are gone, that leaves this step) that the flows crossing the link see. ``LS_QF``
    keeps the fluid model's part of the queue (the flows' bytes and their ACKs).
    ``LS_BACKLOG``: the link sent at its line rate all step (its packets leave back to back); a
    link that did not loses its departure grid (``LS_GRID`` = -1). Links left empty leave the
    list; returns its new length.

    The ACKs: a full packet port refuses a packet that does not fit in its free bytes. Once
    the buffer is full of data packets, the bytes a departure frees go to the first data
    packet to arrive, and what is left over (a buffer is no whole number of data packets, and
    the ACKs themselves come and go) takes a 64-byte ACK where a 4,160-byte data packet does
    not fit: at the WAN ports of the 40%-load Fig. 10 run, in the windows where they dropped
    data (54% of its packets), the packet engine dropped 5% of the ACKs. Here the ACKs take
    their room first and the drops fall on the data (on ACKs only beyond all of it, bytes no
    flow hears of)."""
    kept = 0
    for i in range(n_links):
        link = links[i]
        if i + 4 < n_links:  # the rows of the links a few ahead (the busy list is scattered)
            prefetch_row(ls, links[i + 4], LS_UPDATE_END)
        arr_fluid = ls[link, LS_ARR] * dt_ps
        acks = ls[link, LS_ACK_IN]
        arr = arr_fluid + ls[link, LS_EXT] + acks
        packets = ls[link, LS_EXT] > 0.0 or ls[link, LS_Q] - ls[link, LS_QF] > 1.0
        ls[link, LS_PACKETS] = 1.0 if packets else 0.0
        ls[link, LS_EXT] = 0.0
        ls[link, LS_ACK_IN] = 0.0
        q = ls[link, LS_Q]
        ph = ls[link, LS_PH]
        if arr <= 0.0 and q <= 0.0 and ph <= 0.0:
            ls[link, LS_MARK] = 0.0
            ls[link, LS_LOSS] = 0.0
            ls[link, LS_DELAY] = 0.0
            ls[link, LS_PASS] = 1.0
            ls[link, LS_LISTED] = 0.0
            ls[link, LS_BACKLOG] = 0.0
            ls[link, LS_GRID] = -1.0
            continue
        links[kept] = link
        kept += 1
        cap = ls[link, LS_CAP] * dt_ps
        total = q + arr
        dep = total if total < cap else cap
        q = total - dep
        # back to back: the grid's phase is kept while it is (forward draws it at the start)
        if dep >= cap * (1.0 - BACKLOG_TOLERANCE):
            ls[link, LS_BACKLOG] = 1.0
        else:
            ls[link, LS_BACKLOG] = 0.0
            ls[link, LS_GRID] = -1.0
        drop = 0.0
        data = arr - acks
        data_drop = 0.0
        if q > ls[link, LS_BUF]:
            drop = q - ls[link, LS_BUF]
            q = ls[link, LS_BUF]
            # (more than the data: the ACKs alone overfill it, and lose bytes no flow hears of)
            data_drop = drop if drop < data else data
        # FIFO: departures and drops take the fluid and external bytes in proportion
        fluid = ls[link, LS_QF] + arr_fluid + acks
        ls[link, LS_QF] = fluid * (q / total) if total > 0.0 else 0.0
        ls[link, LS_LOSS] = data_drop / data if data > 0.0 else 0.0
        # of what the link holds once the drops are gone, the share that leaves
        kept_bytes = total - drop
        ls[link, LS_PASS] = dep / kept_bytes if kept_bytes > 0.0 else 1.0
        ls[link, LS_Q] = q
        ls[link, LS_TX] += dep
        ls[link, LS_DROP] += drop
        ls[link, LS_IN] += arr
        if q > ls[link, LS_MAXQ]:
            ls[link, LS_MAXQ] = q
        size = ls[link, LS_PHSIZE]
        if size > 0.0:
            counted = arr - drop
            if ls[link, LS_PHDROPS] > 0.0:
                counted = arr
            if ls[link, LS_PH_ACKS] == 0.0:
                counted -= acks
            ph = ph + counted - ls[link, LS_PHDRAIN] * dt_ps
            if ph < 0.0:
                ph = 0.0
            elif ph > size:
                ph = size
            ls[link, LS_PH] = ph
        mode = int(ls[link, LS_MODE])
        mark = 0.0
        if mode == MODE_PHYSICAL or mode == MODE_EITHER:
            mark = red_probability(q, ls[link, LS_KMIN], ls[link, LS_KMAX])
        if mode == MODE_PHANTOM or mode == MODE_EITHER:
            p_ph = red_probability(ph, ls[link, LS_PHKMIN], ls[link, LS_PHKMAX])
            mark = 1.0 - (1.0 - mark) * (1.0 - p_ph)
        ls[link, LS_MARK] = mark
        ls[link, LS_DELAY] = q / ls[link, LS_CAP]
    return kept


@njit(cache=True, error_model="numpy")
def add_external(ls, busy, counters, links, nbytes) -> None:
    """Bytes ``nbytes[i]`` arriving at link ``links[i]`` during the next step from outside the
    fluid model (the hybrid engine's packets); the links join the busy list."""
    n_busy = int(counters[3])
    for i in range(len(links)):
        ls[links[i], LS_EXT] += nbytes[i]
        n_busy = join_busy(ls, busy, n_busy, links[i])
    counters[3] = n_busy


@njit(cache=True, error_model="numpy")
def join_busy(ls, busy, n_busy, link) -> int:
    """Link ``link`` joins the busy list ``busy[:n_busy]`` unless it is on it; returns the
    list's length."""
    if ls[link, LS_LISTED] == 0.0:
        ls[link, LS_LISTED] = 1.0
        busy[n_busy] = link
        n_busy += 1
    return n_busy


@njit(cache=True, error_model="numpy")
def acks_out(fs, ls, markers, n_mark, rv_ptr, rv_link, rv_w, lb, busy, n_busy, ack_share) -> int:
    """The ACKs of this step's deliveries (``markers[:n_mark]``, ``FS_DELIV_NEW`` bytes of data
    packets), one of ``ack_share`` of a data packet's bytes per data packet, arrive in the next
    step (``LS_ACK_IN``) at every link of the flow's ACK route where ACKs share the data queue:
    the ``rv_*`` route by its weights (with ``switch.ack_priority`` only the receiver's NIC has
    weight: the switch ports serve ACKs in a lane of their own that delays no data,
    uno.net.port.ControlLane), or a UnoLB flow's subflows' own ACK hops, an equal share each,
    where it has them (``lb[13]``, ``lb[14]``), as :func:`reverse_delay` and
    :func:`subflow_reverse_delay` read those queues. The links join the busy list
    ``busy[:n_busy]``; returns its new length. (The fluid's bytes meet no propagation on their
    way out, all of it is on the way back: the ACKs are at every link of their route in the
    step after the delivery.)"""
    sub_n, sub_rlinks, sub_rhops = lb[0], lb[13], lb[14]
    for i in range(n_mark):
        f = markers[i]
        nbytes = fs[f, FS_DELIV_NEW] * ack_share
        if nbytes <= 0.0:
            continue
        n_s = sub_n[f]
        if n_s > 0 and sub_rhops[f] > 0:
            for s in range(n_s):
                for h in range(sub_rhops[f]):
                    link = sub_rlinks[f, s, h]
                    ls[link, LS_ACK_IN] += nbytes / n_s
                    n_busy = join_busy(ls, busy, n_busy, link)
        else:
            for e in range(rv_ptr[f], rv_ptr[f + 1]):
                if rv_w[e] > 0.0:
                    ls[rv_link[e], LS_ACK_IN] += nbytes * rv_w[e]
                    n_busy = join_busy(ls, busy, n_busy, rv_link[e])
    return n_busy


#: Gauss-Legendre nodes and weights on [0, 1] (8 points: exact for polynomials of degree 15)
_GL_X, _GL_W = np.polynomial.legendre.leggauss(8)
GL_X = (_GL_X + 1.0) / 2.0
GL_W = _GL_W / 2.0


@njit(cache=True, error_model="numpy")
def input_drop_shares(n_g, on_grid, u, phase, arr, pool_arr, pool_u, drop, loss, order):
    """How a full drop-tail link's ``drop`` bytes fall on its inputs in a step: the loss
    fraction of each input group ``loss[:n_g]``, and the pool's (returned).

    A full packet queue frees one slot per departure, and the first packet to arrive after it
    takes the slot; the others arriving in that packet time are dropped. An input is the link
    before (a queue of its own): it delivers at most one packet per packet time of this link
    (same rate), and it delivers one in a share ``u`` of them (its arrivals over the link's
    capacity in the step). An input whose own departures are back to back (``on_grid``) puts
    its packets at a fixed ``phase`` of this link's departure grid; any other input's
    packets fall at random in the packet time (``u`` clamped to 1), and so do the pool's (the
    bytes of flows whose input is not one link: the first hop, a split hop before; many small
    streams, each arriving with chance ``u_r psi`` before phase ``psi``: exp(-pool_u psi)).
    With F(psi) the chance that nothing arrives before phase psi after a departure
    (prod over grid inputs with phase < psi of (1 - u), times prod over the others of
    (1 - u psi), times exp(-pool_u psi)), a grid input's packet takes the slot with chance
    F(phase) and a random input's with the mean of F(psi) / (1 - u psi) over psi, the pool's
    with the mean of F (Gauss-Legendre on the pieces between grid phases). Floyd & Jacobson
    (1992) describe the effect: at a drop-tail gateway fed by periodic streams, which stream's
    packets are dropped is decided by the streams' phases, not by their rates.

    The link's own total of drops (the fluid queue's) is kept: each group's loss is its
    rejection chance 1 - accept times one factor, capped at 1 (the factor found by water
    filling), so inputs that meet the same odds lose the same share, as before. ``order`` is
    scratch of ``n_g`` integers, and ``loss`` is worked in (it allocates nothing: kernels run
    by :func:`advance` cannot). Units: bytes (``arr``, ``pool_arr``, ``drop``), packet
    times (``phase``)."""
    m = 0
    for g in range(n_g):
        if on_grid[g] > 0.0:
            # insertion sort of the grid inputs by phase (a handful)
            t = m
            while t > 0 and phase[order[t - 1]] > phase[g]:
                order[t] = order[t - 1]
                t -= 1
            order[t] = g
            m += 1
    accept = loss  # (each input's acceptance chance, then its rejection chance, then its loss)
    for g in range(n_g):
        accept[g] = 0.0
    accept_pool = 0.0
    c_grid = 1.0
    for i in range(m + 1):
        lo = 0.0 if i == 0 else phase[order[i - 1]]
        hi = 1.0 if i == m else phase[order[i]]
        if i > 0:
            c_grid *= 1.0 - u[order[i - 1]]
        if i < m:  # the grid input at the segment's end: nothing before it in its packet time
            g = order[i]
            f_at = c_grid * math.exp(-pool_u * hi)
            for r in range(n_g):
                if on_grid[r] <= 0.0:
                    f_at *= 1.0 - u[r] * hi
            accept[g] = f_at
        if hi <= lo or c_grid <= 0.0:
            continue
        for q in range(GL_X.shape[0]):
            psi = lo + (hi - lo) * GL_X[q]
            f_psi = c_grid * math.exp(-pool_u * psi)
            for r in range(n_g):
                if on_grid[r] <= 0.0:
                    f_psi *= 1.0 - u[r] * psi
            w = (hi - lo) * GL_W[q]
            accept_pool += w * f_psi
            for r in range(n_g):
                if on_grid[r] <= 0.0:
                    left = 1.0 - u[r] * psi
                    if left > 0.0:
                        accept[r] += w * f_psi / left
    # rejection chances, scaled to the link's drops (water filling at a loss of 1)
    reject_pool = 1.0 - accept_pool if pool_arr > 0.0 else 0.0
    weighted = pool_arr * reject_pool
    total = pool_arr
    for g in range(n_g):
        rej = 1.0 - accept[g]
        accept[g] = rej if rej > 0.0 else 0.0  # (reused: the rejection chance)
        weighted += arr[g] * accept[g]
        total += arr[g]
    if reject_pool < 0.0:
        reject_pool = 0.0
    if weighted <= 1e-12 * total:  # the same odds everywhere: the same share
        share = drop / total if total > 0.0 else 0.0
        for g in range(n_g):
            loss[g] = share
        return share
    left = drop
    for _ in range(n_g + 2):
        factor = left / weighted if weighted > 0.0 else 0.0
        capped = False
        if pool_arr > 0.0 and reject_pool > 0.0 and factor * reject_pool > 1.0:
            left -= pool_arr
            weighted -= pool_arr * reject_pool
            reject_pool = -1.0  # capped: loses everything
            capped = True
        for g in range(n_g):
            if arr[g] > 0.0 and accept[g] > 0.0 and factor * accept[g] > 1.0:
                left -= arr[g]
                weighted -= arr[g] * accept[g]
                accept[g] = -1.0
                capped = True
        if not capped:
            break
    factor = left / weighted if weighted > 1e-12 * total else 0.0
    # what the rejections cannot hold (every input that can be rejected loses all it sent)
    # falls evenly on the rest: the link drops what its queue cannot take
    rest = 0.0
    even = 0.0
    if factor == 0.0 and left > 0.0:
        for g in range(n_g):
            if accept[g] >= 0.0:
                rest += arr[g]
        if reject_pool >= 0.0:
            rest += pool_arr
        even = left / rest if rest > 0.0 else 0.0
    for g in range(n_g):
        loss[g] = 1.0 if accept[g] < 0.0 else factor * accept[g] + even
    return 1.0 if reject_pool < 0.0 else factor * reject_pool + even


@njit(cache=True, error_model="numpy")
def grid_phase(salt, link, k) -> float:
    """The phase, in [0, 1), of the departure grid that link ``link`` starts at step ``k``: a
    U[0, 1) draw hashed from the run's ``salt`` (where in its packet time a busy period
    begins is set by packet-level timing the fluid does not follow)."""
    x = mix64(mix64(salt + np.uint64(link) * _GOLDEN) + np.uint64(k))
    return float(x >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, error_model="numpy", inline="always")
def set_grid(ls, link, inherit, salt, k) -> None:
    """Link ``link``'s departure grid after its update at step ``k``: a busy period that starts
    takes the grid ``inherit`` (the phase of the one link that fed it, -1: none) or else a
    phase drawn from the run's ``salt`` (:func:`grid_phase`); a busy link keeps its grid; an
    idle link fed on a grid takes it (update_links has cleared the grid of a link that is not
    back to back)."""
    if ls[link, LS_BACKLOG] > 0.0:
        if ls[link, LS_GRID] < 0.0:
            ls[link, LS_GRID] = inherit if inherit >= 0.0 else grid_phase(salt, link, k)
    elif inherit >= 0.0:
        ls[link, LS_GRID] = inherit


@njit(cache=True, error_model="numpy", inline="always")
def to_wire(f, k, col, out, out_m, inv_dt, dt_ps, fs, ring, ring_ptr, ring_len, calendar) -> None:
    """Bytes ``out`` (``out_m`` of them marked) leave flow ``f``'s wire link at step ``k``: into
    its delay line's columns ``col`` and ``col + 1`` at the step they reach the next hop,
    ``FS_WIRE_PS`` later, with the ACK frontier the flow has now (``R_WIRE_ACK``)."""
    lag = clamp_lag(f, int(fs[f, FS_WIRE_PS] * inv_dt + 0.5), ring_len)
    slot = ring_ptr[f] + (k + lag) % ring_len[f]
    ring[slot, col] += out
    ring[slot, col + 1] += out_m
    due_ps = fs[f, FS_ACK_LAST] * dt_ps
    if due_ps > ring[slot, R_WIRE_ACK]:
        ring[slot, R_WIRE_ACK] = due_ps
    mark_ring_due(calendar, fs, k + lag, f)
    prefetch_row(ring, ring_ptr[f] + (k + 1 + lag) % ring_len[f], ring.shape[1])


@njit(cache=True, error_model="numpy")
def subflow_hop(r, sub_links):
    """Of UnoLB subflow hop entry ``rt_ptr[-1] + r`` (``sub_links`` of shape (n, S, H)): its
    subflow and its hop."""
    return (r // sub_links.shape[2]) % sub_links.shape[1], r % sub_links.shape[2]


@njit(cache=True, error_model="numpy")
def input_link(j, ei, rt_ptr, base, sub_links) -> int:
    """The link before route entry ``j`` on its flow's way (its input at ``j``'s link), or -1
    where that is not one link (the first hop; after a split hop)."""
    f = ei[j, EI_FLOW]
    r = j - base
    if r >= 0:  # a UnoLB subflow's hop
        s, h = subflow_hop(r, sub_links)
        if h == 0:
            return -1
        return sub_links[f, s, h - 1]
    g = ei[j, EI_GSTART]
    if g <= rt_ptr[f] or ei[g - 1, EI_GSTART] != g - 1:
        return -1
    return ei[g - 1, EI_LINK]


@njit(cache=True, error_model="numpy")
def same_rate(ls, a, b) -> bool:
    """Links ``a`` and ``b`` send at one rate: their packet times are one grid's."""
    return abs(ls[a, LS_CAP] - ls[b, LS_CAP]) <= 1e-9 * ls[b, LS_CAP]


@njit(cache=True, error_model="numpy", inline="always")
def note_input(l_input, link, src) -> None:
    """Link ``link`` receives bytes from link ``src`` this step: ``l_input[link]`` is that link
    while it is the only one (-1: none yet, -2: several, a send or a carry)."""
    seen = l_input[link]
    if seen == -1:
        l_input[link] = src
    elif seen != src:
        l_input[link] = -2


@njit(cache=True, error_model="numpy")
def group_inputs(k, lv, kept, l_buf, ls, ei, ef, e_head, rt_ptr, lb, hops, dt_ps) -> None:
    """At the links of level ``lv`` just advanced (``l_buf[:kept]``): their departure grids
    (``LS_GRID``), and at the links that drop, each input's share of the drops.

    A link fed by one link only this step (``l_input``, noted as bytes are passed on) whose
    packets come on a grid at the same rate passes them on on that grid; a link whose busy
    period starts takes that grid too, or else a phase drawn from the run's seed
    (:func:`grid_phase`); a busy link keeps its grid (:func:`ack_drift` moves it). At each link
    that drops, the route entries are grouped by input (``EI_GROUP``; :func:`input_link`; up to
    ``INPUTS_MAX`` inputs, the rest pooled) and the link's drops shared among the groups
    (:func:`input_drop_shares`, into ``g_val[d, 4]`` of the link's dense index ``d``, which
    ``l_dense`` maps the link to for this level)."""
    salt = hops[9][0]
    l_dense, g_key, g_val, g_n, g_order = hops[10:15]
    sub_links = lb[2]
    base = rt_ptr[rt_ptr.shape[0] - 1]
    nd = 0
    l_input = hops[18]
    for t in range(kept):
        link = l_buf[t]
        # a link fed by one link whose packets come on a grid (at its own rate) passes them
        # on on that grid; a busy period that starts on it keeps it; else a new phase
        src = l_input[link]
        inherit = -1.0
        if src >= 0 and ls[src, LS_GRID] >= 0.0 and same_rate(ls, src, link):
            inherit = ls[src, LS_GRID]
        set_grid(ls, link, inherit, salt, k)
        if ls[link, LS_LOSS] > 0.0:
            l_dense[link] = nd
            g_n[nd] = 0
            g_val[nd, 0, INPUTS_MAX] = 0.0
            nd += 1
    if nd == 0:
        return
    j = e_head[lv]
    while j >= 0:
        r = j - base
        if r >= 0:
            s, h = subflow_hop(r, sub_links)
            link = sub_links[ei[j, EI_FLOW], s, h]
        else:
            link = ei[j, EI_LINK]
        d = l_dense[link]
        if d >= 0:
            w = ef[j, EF_W]
            a = ef[ei[j, EI_GSTART], EF_IN] * w if w < 1.0 else ef[j, EF_IN]
            grp = -1
            if a > 0.0:
                src = input_link(j, ei, rt_ptr, base, sub_links)
                if src >= 0:
                    n_g = g_n[d]
                    for g in range(n_g):
                        if g_key[d, g] == src:
                            grp = g
                            break
                    if grp < 0 and n_g < INPUTS_MAX:
                        grp = n_g
                        g_key[d, grp] = src
                        g_val[d, 0, grp] = 0.0
                        g_n[d] = n_g + 1
                g_val[d, 0, grp if grp >= 0 else INPUTS_MAX] += a
            ei[j, EI_GROUP] = grp
        j = ei[j, EI_NXT]
    for t in range(kept):
        link = l_buf[t]
        d = l_dense[link]
        if d < 0:
            continue
        room = ls[link, LS_CAP] * dt_ps
        n_g = g_n[d]
        fluid = g_val[d, 0, INPUTS_MAX]
        for g in range(n_g):
            src = g_key[d, g]
            arr = g_val[d, 0, g]
            fluid += arr
            g_val[d, 1, g] = arr / room if arr < room else 1.0
            if ls[src, LS_GRID] >= 0.0 and same_rate(ls, src, link):
                g_val[d, 2, g] = 1.0
                ph = ls[src, LS_GRID] - ls[link, LS_GRID]
                g_val[d, 3, g] = ph - math.floor(ph)
            else:
                g_val[d, 2, g] = 0.0
                g_val[d, 3, g] = 0.0
        g_val[d, 4, INPUTS_MAX] = input_drop_shares(
            n_g, g_val[d, 2], g_val[d, 1], g_val[d, 3], g_val[d, 0],
            g_val[d, 0, INPUTS_MAX], g_val[d, 0, INPUTS_MAX] / room,
            ls[link, LS_LOSS] * fluid, g_val[d, 4], g_order,
        )  # fmt: skip


#: ``l_nxt`` of a link in no level's list (:func:`forward`)
NOT_IN_LEVEL = -2


@njit(cache=True, error_model="numpy")
def forward(
    k,
    fx,
    fs,
    ls,
    active,
    n_active,
    busy,
    n_busy,
    rt_ptr,
    lb,
    hops,
    dt_ps,
    droppers,
    n_drop,
    markers,
    n_mark,
    ring,
    ring_ptr,
    ring_len,
    calendar,
):
    """One step of the links, hop by hop: every active flow's bytes go from link to link of its
    route and the links are advanced (:func:`update_links`) in the order of their level, so a
    link's arrivals are what the links before it passed on in this same step. Returns the new
    length of the busy list ``busy``. The bytes each flow lost at the links this step add to
    its ``fs[f, FS_DROPPED]``, out of ``fs[f, FS_EXPOSED]`` bytes that reached those links; the
    flows that lost any are ``droppers[:n_drop[0]]``.

    ECN marks are decided as bytes leave a link, by its marking probability then (a packet is
    marked at dequeue, by the (phantom) queue's level at its departure, uno/net/port.py): each
    entry keeps which of its bytes are marked (``EF_MQ``, ``EF_MIN``, ``EF_MCARRY``, as their
    unmarked twins), the link marks a share ``LS_MARK`` of the unmarked bytes leaving it
    (``LS_MARKS``), and the bytes the last hop delivers add to ``fs[f, FS_DELIV_NEW]``, the
    marked ones among them to ``fs[f, FS_MARK_NEW]``; the flows that delivered any are
    ``markers[:n_mark[0]]``.

    Each route entry ``j`` (flow, link) holds the flow's bytes in that link's queue
    (``ef[j, EF_Q]``). In a step the entry receives ``a`` bytes (the flow's send at the first
    hop, else what the hop before it passed on); of the ``q + a`` bytes the flow then has at
    the link the drops take a share of ``a`` (tail drop: a byte already queued is never
    dropped): ``LS_LOSS`` = drops / arrivals, or with phase drops (``engine.fluid_phase_drops``,
    :func:`group_inputs`) the share of the entry's input (the link before it), which a full
    queue's phases decide (:func:`input_drop_shares`); it is kept in ``EF_LOSS``. Of what is
    left a share ``LS_PASS`` = departures / (queue + arrivals - drops) leaves (the link's bytes
    leave in proportion, the fluid reading of FIFO), and the rest stays queued; a flow's last
    sliver at a link, below ``RESIDUE_BYTES``, leaves with the step's departures (the link's count and level with it): a FIFO empties a flow's bytes from its
    queue in finite time, where the proportional share's tail never ends (with no floor, a third
    of the route entries a step walked on the 40%-load Fig. 10 traffic held less than a byte,
    and two fifths of the deliveries were less than one). What leaves is the next hop's
    arrival. So, as with packets, a byte dropped upstream never reaches the next link, and a
    link passes on exactly its departures (never more than it held, never more than its rate
    but for those slivers): summed over the flows at a link, ``q + a`` is the link's queue plus
    its arrivals (bytes from outside the fluid model, ``LS_EXT``, apart), and
    what leaves is its departures. A flow that sends nothing this step still moves its queued
    bytes on (``fx[f, FX_NETQ]`` > 0); it is walked from the first hop that holds its bytes
    (``fx[f, FX_FIRST]``; an UnoLB flow's subflows each from the first hop index at which any
    of them holds bytes), as the hops before it receive nothing. Past that, a route's hop is
    left out of the step when no bytes reach it (no send, no carry, nothing passed on by the
    hop before in this step: beyond the wire link, say) and none wait at it: nothing would move
    there, and its link joins the step's lists only if it is busy. (A link holding a queue is
    on the busy list.) On the 40%-load Fig. 10 run this leaves out most of the entries
    beyond the WAN links, and the fine steps run ~8% faster with the same results.

    ``hops`` = (``link_lvl``: each link's level, higher than that of any link before it on a
    route where the links allow it; ``n_lvl`` (one-element array); ``ei``: per entry, a row of
    integers ``EI_*``: its link (route entries), flow, the first entry of its hop (the links of
    a split hop share what the hop before passed on by their weight), the first entry of the
    next hop (-1: last), whether the next hop's level is not above this one's (a cycle of
    links: what leaves reaches the next hop at the next step, so no byte is lost or counted
    twice), and the links of the per-level lists of entries and of split-hop entries; ``ef``:
    per entry, a row of floats ``EF_*``: bytes queued, bytes into the entry's hop this step,
    bytes that reach it next step, its weight; ``e_head``, ``s_head``: the lists' heads per
    level; ``l_nxt``, ``l_head``: per-level lists of links (``NOT_IN_LEVEL``: in none;
    the links the step's route entries reach); ``l_buf``: scratch; then for phase
    drops (:func:`group_inputs`): [the grid phases' salt, 1: on], ``l_dense``, the inputs'
    links, their figures ``g_val``, their count, scratch, [an ACK's share of a packet time, a
    data packet's bytes], the ACK routes' weights and each flow's subflows' ACK hops
    (:func:`ack_drift`), and ``l_input``: the one link that fed each link this step (-1: none
    yet, -2: several, a send or a carry)). An entry's
    fields share a row so that a step touches one or two cache lines per entry. UnoLB subflow
    hop ``h`` of subflow ``s`` of flow ``f`` is entry ``rt_ptr[-1] + (f S + s) H + h``
    (``sub_links`` of shape (n, S, H)).

    Propagation on the way out (``engine.fluid_wire``): what leaves a flow's wire link (entry
    ``EI_LAG`` = -1: its route's longest link, a WAN link, when its propagation is at least
    the intra-DC base RTT) goes into the flow's delay line (``ring``, ``R_WIRE``) and reaches
    the next hop ``FS_WIRE_PS`` later (:func:`advance`, 2.), as a packet crosses the link's
    propagation; the bytes the links after it drop add to ``FS_WIRE_DROP`` too (their losses
    are timed from their send, that long before). Every other link's propagation stays on the
    way back. An UnoLB flow's subflows put what leaves their WAN link (hop ``FS_WIRE_HOP``)
    into columns ``R_SUBWIRE + 2 s`` of its delay line, to reach each subflow's next hop that
    propagation later. The flow's RTT samples take the queueing beyond
    the wire link as its bytes meet it, with their ECN echoes (:func:`advance`, 5. and 5c.):
    a packet's RTT holds the queues it crosses when it crosses them."""
    link_lvl, n_lvl_arr, ei, ef, e_head, l_nxt, l_head, l_buf, s_head = hops[:9]
    l_dense, g_val, l_input = hops[10], hops[12], hops[18]
    shape_drops = hops[9][1] != 0
    sub_n, sub_hops, sub_links, sub_drops = lb[0], lb[1], lb[2], lb[15]
    n_sub_max = sub_links.shape[1]
    n_hop_max = sub_links.shape[2]
    base = rt_ptr[rt_ptr.shape[0] - 1]
    n_lvl = n_lvl_arr[0]
    inv_dt = 1.0 / dt_ps
    n_drop[0] = 0
    n_mark[0] = 0
    for lv in range(n_lvl):
        e_head[lv] = -1
        l_head[lv] = -1
        s_head[lv] = -1
    # the links already busy (queues draining, outside bytes, ACKs): they join their level's
    # list with the first route entry that reaches them (below)
    for i in range(n_busy):
        link = busy[i]
        ls[link, LS_ARR] = 0.0
        ls[link, LS_ARR2] = 0.0
        if ls[link, LS_EXT] > 0.0:
            l_input[link] = -2  # the hybrid's packets
    # every flow with bytes to send or bytes in the network: its entries, by level; the
    # arrivals of one-link hops are added when known (the send, a carry, what the hop before
    # passed on), those of split hops (share of the hop's bytes) in their level's first walk
    for i in range(n_active):
        f = active[i]
        send = fx[f, FX_SEND]
        if send <= 0.0:
            if fx[f, FX_NETQ] <= 0.0:
                continue
            send = 0.0
        fx[f, FX_NETQ] = 0.0
        n_s = sub_n[f]
        # the hops before the first that holds bytes get none this step
        first = int(fx[f, FX_FIRST])
        fx[f, FX_FIRST] = sub_hops[f] if n_s > 0 else rt_ptr[f + 1]
        for s in range(n_s if n_s > 0 else 1):
            if n_s > 0:
                j0 = base + (f * n_sub_max + s) * n_hop_max
                j1 = j0 + sub_hops[f]
                j_walk = j0 if send > 0.0 else j0 + first
            else:
                j0 = rt_ptr[f]
                j1 = rt_ptr[f + 1]
                j_walk = j0 if send > 0.0 else first
            # a hop that no bytes reach this step and none wait at is left out: nothing moves
            # there (beyond the wire link, or a queue's hop, the hops after it until bytes
            # wait or arrive again). Reached: the send (the first hop), what the hop before
            # passes on in this same step, a carry (EF_CARRY: the wire's, a cycle's)
            feed = send > 0.0
            skip = False
            for j in range(j_walk, j1):
                if n_s == 0 and ei[j, EI_GSTART] == j:
                    live = feed
                    same_step = False
                    jj = j
                    while jj < j1 and ei[jj, EI_GSTART] == j:
                        if (ef[jj, EF_CARRY] > 0.0 or ef[jj, EF_Q] > 0.0
                                or ef[jj, EF_MQ] > 0.0 or ef[jj, EF_MCARRY] > 0.0):  # fmt: skip
                            live = True
                        if ei[jj, EI_LAG] == 0:
                            same_step = True
                        jj += 1
                    skip = not live
                    feed = live and same_step
                if skip:
                    continue
                link = sub_links[f, s, j - j0] if n_s > 0 else ei[j, EI_LINK]
                a = ef[j, EF_CARRY]
                ef[j, EF_CARRY] = 0.0
                if j == j0:
                    a += send / n_s if n_s > 0 else send
                ef[j, EF_IN] = a
                ef[j, EF_MIN] = ef[j, EF_MCARRY]
                ef[j, EF_MCARRY] = 0.0
                lv = link_lvl[link]
                ei[j, EI_NXT] = e_head[lv]
                e_head[lv] = j
                if l_nxt[link] == NOT_IN_LEVEL:
                    ls[link, LS_LISTED] = 1.0
                    l_nxt[link] = l_head[lv]
                    l_head[lv] = link
                if ef[j, EF_W] < 1.0:
                    ei[j, EI_SNXT] = s_head[lv]
                    s_head[lv] = j
                elif a > 0.0:
                    ls[link, LS_ARR] += a * inv_dt
                if a > 0.0:
                    l_input[link] = -2  # a send or a carry: not from one link now
    # the busy links no route entry reaches this step (ACKs alone, a queue no flow's bytes
    # wait in: the hybrid's packets, a moved subflow's): no flow reads them in this step, so
    # they advance apart, first, and stay out of the level walk (on the 40%-load Fig. 10 run,
    # about half of the busy links of a fine step carry only ACKs)
    n_alone = 0
    for i in range(n_busy):
        link = busy[i]
        if l_nxt[link] == NOT_IN_LEVEL:
            busy[n_alone] = link
            n_alone += 1
    n_busy = update_links(ls, busy, n_alone, dt_ps)
    for t in range(n_busy):
        if shape_drops:  # (no link fed it: a busy period that starts draws its grid)
            set_grid(ls, busy[t], -1.0, hops[9][0], k)
        l_input[busy[t]] = -1
    for lv in range(n_lvl):
        # split hops: each link's share of what the hop before passed on (earlier levels)
        j = s_head[lv]
        while j >= 0:
            a = ef[ei[j, EI_GSTART], EF_IN] * ef[j, EF_W]
            ls[ei[j, EI_LINK], LS_ARR] += a * inv_dt
            if a > 0.0:
                l_input[ei[j, EI_LINK]] = -2  # from every link of the hop before
            j = ei[j, EI_SNXT]
        m = 0
        link = l_head[lv]
        while link >= 0:
            l_buf[m] = link
            m += 1
            nxt = l_nxt[link]
            l_nxt[link] = NOT_IN_LEVEL
            link = nxt
        kept = update_links(ls, l_buf, m, dt_ps)
        for t in range(kept):
            busy[n_busy] = l_buf[t]
            n_busy += 1
        if shape_drops:
            group_inputs(k, lv, kept, l_buf, ls, ei, ef, e_head, rt_ptr, lb, hops, dt_ps)
        # the departures: each flow's share of what the link let go, on to its next hop
        j = e_head[lv]
        while j >= 0:
            w = ef[j, EF_W]
            if w < 1.0:
                g = ei[j, EI_GSTART]
                a = ef[g, EF_IN] * w
                a_m = ef[g, EF_MIN] * w
            else:
                a = ef[j, EF_IN]
                a_m = ef[j, EF_MIN]
            held = ef[j, EF_Q] + a
            if held > 0.0:
                r = j - base  # >= 0: a subflow's hop, whose links change when it moves
                f = ei[j, EI_FLOW]
                if r < 0:
                    link = ei[j, EI_LINK]
                else:
                    s, h = subflow_hop(r, sub_links)
                    link = sub_links[f, s, h]
                # the entry's whole arrival is known now (its hops before are done): one source
                rate_in = a * inv_dt
                ls[link, LS_ARR2] += rate_in * rate_in
                passed = ls[link, LS_PASS]
                loss = ls[link, LS_LOSS]
                if loss > 0.0 and l_dense[link] >= 0:  # by its input (input_drop_shares)
                    grp = ei[j, EI_GROUP]
                    loss = g_val[l_dense[link], 4, grp if grp >= 0 else INPUTS_MAX]
                dropped = a * loss
                ef[j, EF_LOSS] = loss
                held -= dropped
                out = held * passed
                q = held - out
                # the marked bytes leave, and are dropped, in the same shares; the link marks
                # its share of the unmarked ones that leave
                held_m = ef[j, EF_MQ] + a_m * (1.0 - loss)
                out_m = held_m * passed
                q_m = held_m - out_m
                fresh = (out - out_m) * ls[link, LS_MARK]
                if fresh > 0.0:
                    out_m += fresh
                    ls[link, LS_MARKS] += fresh
                if q < RESIDUE_BYTES:
                    if q > 0.0:
                        # the flow's last sliver at the link leaves with this step's
                        # departures: a FIFO empties a flow's bytes from its queue in finite
                        # time, where the proportional share's tail would trickle forever
                        out += q
                        out_m += q_m if q_m > 0.0 else 0.0
                        rest = ls[link, LS_Q] - q
                        ls[link, LS_Q] = rest if rest > 0.0 else 0.0
                        rest = ls[link, LS_QF] - q
                        ls[link, LS_QF] = rest if rest > 0.0 else 0.0
                        ls[link, LS_TX] += q
                    q = 0.0  # (below 0: rounding, the link let everything go)
                    q_m = 0.0
                ef[j, EF_MQ] = q_m if q_m > 0.0 else 0.0
                if dropped > 0.0:
                    if fs[f, FS_DROPPED] == 0.0:
                        fs[f, FS_EXPOSED] = 0.0
                        droppers[n_drop[0]] = f
                        n_drop[0] += 1
                    fs[f, FS_DROPPED] += dropped
                    fs[f, FS_EXPOSED] += a
                    if r < 0 and 0.0 <= fs[f, FS_WIRE_NEXT] <= j:  # beyond the wire link
                        fs[f, FS_WIRE_DROP] += dropped
                    elif r >= 0 and 0.0 <= fs[f, FS_WIRE_HOP] < h:
                        fs[f, FS_WIRE_DROP] += dropped
                    if r >= 0 and fs[f, FS_EC_N] > 0.0:  # a coded UnoLB flow: per subflow
                        sub_drops[f, s, 0] += dropped
                        sub_drops[f, s, 1] += a
                ef[j, EF_Q] = q
                if out > 0.0:
                    last = False
                    if r < 0:
                        nxt = ei[j, EI_NEXT]
                        if nxt >= 0:
                            if ei[j, EI_LAG] < 0:  # on the wire, to the next hop later
                                to_wire(f, k, R_WIRE, out, out_m, inv_dt, dt_ps, fs, ring,
                                        ring_ptr, ring_len, calendar)  # fmt: skip
                            elif ei[j, EI_LAG] > 0:
                                ef[nxt, EF_CARRY] += out
                                ef[nxt, EF_MCARRY] += out_m
                                q += out
                            else:
                                ef[nxt, EF_IN] += out
                                ef[nxt, EF_MIN] += out_m
                                if ef[nxt, EF_W] >= 1.0:
                                    nlink = ei[nxt, EI_LINK]
                                    ls[nlink, LS_ARR] += out * inv_dt
                                    note_input(l_input, nlink, link)
                        else:
                            last = True
                    elif h == fs[f, FS_WIRE_HOP]:  # on the wire, to the subflow's next hop later
                        to_wire(f, k, R_SUBWIRE + 2 * s, out, out_m, inv_dt, dt_ps, fs, ring,
                                ring_ptr, ring_len, calendar)  # fmt: skip
                    elif h + 1 < sub_hops[f]:
                        nlink = sub_links[f, s, h + 1]
                        if link_lvl[nlink] <= link_lvl[link]:
                            ef[j + 1, EF_CARRY] += out
                            ef[j + 1, EF_MCARRY] += out_m
                            q += out
                        else:
                            ef[j + 1, EF_IN] += out
                            ef[j + 1, EF_MIN] += out_m
                            ls[nlink, LS_ARR] += out * inv_dt
                            note_input(l_input, nlink, link)
                    else:
                        last = True
                    if last:  # delivered: their ECN echoes ride on their ACKs
                        if fs[f, FS_DELIV_NEW] == 0.0:
                            markers[n_mark[0]] = f
                            n_mark[0] += 1
                        fs[f, FS_DELIV_NEW] += out
                        fs[f, FS_MARK_NEW] += out_m
                fx[f, FX_NETQ] += q
                if q > 0.0:
                    if r < 0:
                        if ei[j, EI_GSTART] < fx[f, FX_FIRST]:
                            fx[f, FX_FIRST] = ei[j, EI_GSTART]
                    elif h < fx[f, FX_FIRST]:
                        fx[f, FX_FIRST] = h
            j = ei[j, EI_NXT]
        for t in range(kept):
            l_dense[l_buf[t]] = -1
            l_input[l_buf[t]] = -1
    return n_busy


@njit(cache=True, error_model="numpy")
def coded_loss_shares(p: float, n: int, m: int):
    """Of the packets lost from blocks of ``n`` data + ``m`` parity packets, each lost
    independently with probability ``p``: (the share in blocks that cannot be decoded, which
    the sender resends (uno/transport/sender.py ``_on_nack`` names every missing packet), the
    share in blocks none of whose packets arrived, which only the sender's timer finds). The
    rest are in blocks that decode: coding absorbs them. With j ~ Binomial(n + m, p): E[j; j >
    m] / E[j] and (n + m) p^(n + m) / E[j]; third, the packets a block that cannot be decoded
    loses, E[j | j > m] (:func:`whole_blocks`)."""
    total = n + m
    if p <= 0.0:
        return 0.0, 0.0, 0.0
    if p >= 1.0:
        return 1.0, 1.0, float(total)
    mean = total * p
    failed = 0.0  # E[j; j > m], summed term by term (no cancellation at small p)
    fails = 0.0  # P(j > m)
    comb = 1.0
    for j in range(1, total + 1):
        comb = comb * (total - j + 1) / j
        if j > m:
            term = comb * p**j * (1.0 - p) ** (total - j)
            failed += j * term
            fails += term
    if failed <= 0.0:
        return 0.0, p ** (total - 1), float(m + 1)
    return failed / mean, p ** (total - 1), failed / fails


@njit(cache=True, error_model="numpy")
def spread_loss_shares(losses, n_sub, n, m, dist):
    """:func:`coded_loss_shares` for a block whose packets ride ``n_sub`` subflows round robin
    (packet j on subflow j mod n_sub, lost with ``losses[j mod n_sub]``; UnoLB, Uno paper
    §4.2): the number lost is Poisson-binomial, so a subflow that loses much costs a block only
    its own packets (the three figures of :func:`coded_loss_shares`). ``dist``: scratch of at
    least m + 1 cells."""
    total = n + m
    for k in range(m + 1):
        dist[k] = 0.0
    dist[0] = 1.0  # P(k of the packets so far lost), k <= m
    mean = 0.0
    all_lost = 1.0
    for j in range(total):
        p = losses[j % n_sub]
        mean += p
        all_lost *= p
        if p <= 0.0:
            continue
        for k in range(m, 0, -1):
            dist[k] = dist[k] * (1.0 - p) + dist[k - 1] * p
        dist[0] *= 1.0 - p
    if mean <= 0.0:
        return 0.0, 0.0, 0.0
    ok_lost = 0.0
    ok = dist[0]
    for k in range(1, m + 1):
        ok_lost += k * dist[k]
        ok += dist[k]
    failed = mean - ok_lost
    if failed <= 0.0 or ok >= 1.0:
        return 0.0, total * all_lost / mean, float(m + 1)
    return failed / mean, total * all_lost / mean, failed / (1.0 - ok)


# ---- UnoLB: subflows on hashed paths ---------------------------------------------------------
#: most subflows a fluid UnoLB flow keeps
MAX_SUBFLOWS = 64
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, error_model="numpy")
def mix64(x):
    """SplitMix64 finaliser on a uint64 (uno.core.packet.mix64)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, error_model="numpy")
def ecmp_path(src, dst, entropy, host_node, nh_ptr, nh_edges, edge_dst, node_salt, out) -> int:
    """The edges the packet engine's switches hash (src, dst, entropy) onto, into ``out``;
    returns the hop count. ``nh_ptr``/``nh_edges``: CSR of the equal-cost next hops of
    (node, destination host), row node x n_hosts + host; ``node_salt``: each switch's salt."""
    n_hosts = host_node.shape[0]
    key = mix64((np.uint64(src) << np.uint64(40)) ^ (np.uint64(dst) << np.uint64(20))
                ^ np.uint64(entropy))  # fmt: skip
    node = host_node[src]
    target = host_node[dst]
    hops = 0
    while node != target:
        row = node * n_hosts + dst
        a = nh_ptr[row]
        count = nh_ptr[row + 1] - a
        if count == 1:
            e = nh_edges[a]
        else:
            e = nh_edges[a + np.int64(mix64(key ^ node_salt[node]) % np.uint64(count))]
        out[hops] = e
        hops += 1
        node = edge_dst[e]
    return hops


@njit(cache=True, error_model="numpy")
def next_uniform(lb_rng, f) -> float:
    """A U[0, 1) draw from flow ``f``'s SplitMix64 stream (seeded from the run's seed)."""
    lb_rng[f] += _GOLDEN
    return float(mix64(lb_rng[f]) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


#: expected lost packets per step above which a flow's losses are taken as their mean
POISSON_MAX_MEAN = 20.0


@njit(cache=True, error_model="numpy")
def binomial_draw(n, p, rng_state, f) -> float:
    """Successes among ``n`` (an integer >= 0) trials of chance ``p``: by inversion from the
    flow's stream, counting the rarer outcome (no underflow of (1 - p)^n)."""
    if n <= 0 or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return float(n)
    q = p if p <= 0.5 else 1.0 - p
    u = next_uniform(rng_state, f)
    k = 0
    term = (1.0 - q) ** n
    cdf = term
    ratio = q / (1.0 - q)
    while u > cdf and k < n:
        term *= (n - k) / (k + 1) * ratio
        k += 1
        cdf += term
    return float(k) if p <= 0.5 else float(n - k)


@njit(cache=True, error_model="numpy")
def dropped_packets(f, mss, fs, rng_state) -> float:
    """Whole packets flow ``f`` lost to the links in this step (and its drop record cleared),
    in data packets of ``mss`` bytes: its ``FS_EXPOSED`` bytes that reached links that dropped
    some are that many packets (a flow of less than a data packet: its one packet, of its own
    size), each lost with the chance ``FS_DROPPED`` / ``FS_EXPOSED``: a binomial draw, and for
    the slice of a packet beyond the whole ones a packet lost with the chance slice x that
    chance (the mean is the bytes dropped). Beyond ``POISSON_MAX_MEAN`` packets, the mean.
    (A Poisson draw, as before, lost the last packet of a flow crossing a link that drops 60%
    of what reaches it with a chance of 45%, and so shortened the flows' chains of
    retransmissions.) A slice that met a link dropping all of it is a whole packet lost with
    the chance slice / packet too: losing the slice itself would make a packet the upstream
    FIFO share lets out over several steps lose a sliver whenever one of them met a locked-out
    input, and its flow wait for the timer every time (at load 0.6 of the Fig. 10 traffic the
    fluid's timed-out intra-DC flows hear 1.57 timeouts each, the packet engine's 1.54; 1.74
    with slices lost)."""
    dropped = fs[f, FS_DROPPED]
    exposed = fs[f, FS_EXPOSED]
    fs[f, FS_DROPPED] = 0.0
    fs[f, FS_EXPOSED] = 0.0
    if dropped <= 0.0:
        return 0.0
    mean = dropped / mss
    if mean >= POISSON_MAX_MEAN:
        return mean
    # a flow of less than a data packet has one packet, of its size
    unit = fs[f, FS_SIZE] if 0.0 < fs[f, FS_SIZE] < mss else mss
    p = dropped / exposed if exposed > dropped else 1.0
    packets = exposed / unit
    whole = int(packets)
    lost = binomial_draw(whole, p, rng_state, f)
    if next_uniform(rng_state, f) < (packets - whole) * p:
        lost += 1.0
    return lost * unit / mss


@njit(cache=True, error_model="numpy")
def unolb_reroute(f, now, base_rtt, lb) -> None:
    """UnoLB on a loss report (Uno paper §4.2, Alg. 2 ``OnAckOrTimeout``; uno/lb/unolb.py,
    ``affected: lost``, ``reroute: recent_ack``): at most once per base RTT, the subflows that
    lost bytes since the last report move to the path of a random subflow that did not (the fluid
    reading of "recently received ACKs"), or to a fresh random entropy when every one lost."""
    (sub_n, sub_hops, sub_links, sub_ent, sub_lost, lb_last, lb_rng, ends, host_node, nh_ptr,
     nh_edges, edge_dst, node_salt, sub_rlinks, sub_rhops, _sub_drops) = lb  # fmt: skip
    n = sub_n[f]
    n_moving = 0
    for s in range(n):
        if sub_lost[f, s] > 0.0:
            n_moving += 1
    last = lb_last[f]
    if n_moving == 0 or (last >= 0.0 and now - last <= base_rtt):
        for s in range(n):
            sub_lost[f, s] = 0.0
        return
    lb_last[f] = now
    n_good = n - n_moving
    # (a subflow moves when it lost bytes: sub_lost is cleared after the moves)
    for s in range(n):
        if sub_lost[f, s] <= 0.0:
            continue
        if n_good > 0:
            pick = int(next_uniform(lb_rng, f) * n_good)
            for g in range(n):
                if sub_lost[f, g] <= 0.0:
                    if pick == 0:
                        sub_ent[f, s] = sub_ent[f, g]
                        for h in range(sub_hops[f]):
                            sub_links[f, s, h] = sub_links[f, g, h]
                        for h in range(sub_rhops[f]):
                            sub_rlinks[f, s, h] = sub_rlinks[f, g, h]
                        break
                    pick -= 1
        else:
            entropy = int(next_uniform(lb_rng, f) * 65536.0)
            sub_ent[f, s] = entropy
            ecmp_path(ends[f, 0], ends[f, 1], entropy, host_node, nh_ptr, nh_edges, edge_dst,
                      node_salt, sub_links[f, s])  # fmt: skip
            if sub_rhops[f] > 0:  # its ACKs' way back moves with it
                ecmp_path(ends[f, 1], ends[f, 0], entropy, host_node, nh_ptr, nh_edges, edge_dst,
                          node_salt, sub_rlinks[f, s])  # fmt: skip
    for s in range(n):
        sub_lost[f, s] = 0.0


@njit(cache=True, error_model="numpy")
def reroute_subflows(f, now, base_rtt, lb, hops, base, before) -> None:
    """:func:`unolb_reroute`, and the bytes a moved subflow had queued on its old path are no
    longer followed (:func:`forward` keys them by subflow and hop; they still drain from the old
    links' queues). ``before``: scratch of the most subflows a flow has (integers)."""
    sub_ent, sub_links = lb[3], lb[2]
    n = lb[0][f]
    for s in range(n):
        before[s] = sub_ent[f, s]
    unolb_reroute(f, now, base_rtt, lb)
    ef = hops[3]
    n_sub_max = sub_links.shape[1]
    n_hop_max = sub_links.shape[2]
    for s in range(n):
        if sub_ent[f, s] != before[s]:
            j0 = base + (f * n_sub_max + s) * n_hop_max
            for h in range(n_hop_max):
                ef[j0 + h, EF_Q] = 0.0
                ef[j0 + h, EF_CARRY] = 0.0
                ef[j0 + h, EF_MQ] = 0.0
                ef[j0 + h, EF_MCARRY] = 0.0


@njit(cache=True, error_model="numpy")
def subflow_signals(f, ls, lb, losses) -> float:
    """Queueing delay in ps of UnoLB flow ``f``, the mean over its subflows (each carries an
    equal share); each subflow's loss probability into ``losses`` (which subflows a loss report
    names). (Losses and ECN marks are decided as the bytes cross the links: :func:`forward`.)"""
    sub_n, sub_hops, sub_links = lb[0], lb[1], lb[2]
    n = sub_n[f]
    delay = 0.0
    for s in range(n):
        kept = 1.0
        for h in range(sub_hops[f]):
            link = sub_links[f, s, h]
            kept *= 1.0 - ls[link, LS_LOSS]
            delay += ls[link, LS_DELAY]
        losses[s] = 1.0 - kept
    return delay / n


@njit(cache=True, error_model="numpy")
def subflow_reverse_delay(f, ls, lb) -> float:
    """Queueing delay in ps of UnoLB flow ``f``'s ACKs on their way back, the mean over its
    subflows: each subflow's ACKs carry its entropy, hashed on (dst, src, entropy)
    (:func:`reverse_delay`), so they take its own way back (``lb[13]``, ``lb[14]`` hops), which
    :func:`unolb_reroute` moves with the subflow."""
    sub_n, sub_rlinks, sub_rhops = lb[0], lb[13], lb[14]
    n = sub_n[f]
    delay = 0.0
    for s in range(n):
        for h in range(sub_rhops[f]):
            delay += ls[sub_rlinks[f, s, h], LS_DELAY]
    return delay / n


@njit(cache=True, error_model="numpy", inline="always")
def path_delay(f: int, rt_ptr, rt_link, rt_w, ls: np.ndarray) -> float:
    """Queueing delay in ps of flow ``f``'s path, split routes weighing each link by the share
    of the flow's bytes that crosses it. (Losses and ECN marks are decided as the bytes cross
    the links: :func:`forward`.)"""
    return entries_delay(rt_ptr[f], rt_ptr[f + 1], rt_link, rt_w, ls)


@njit(cache=True, error_model="numpy", inline="always")
def entries_delay(lo: int, hi: int, rt_link, rt_w, ls: np.ndarray) -> float:
    """Queueing delay in ps of the route entries ``lo`` to ``hi - 1`` (:func:`path_delay`)."""
    delay = 0.0
    for j in range(lo, hi):
        delay += rt_w[j] * ls[rt_link[j], LS_DELAY]
    return delay


#: up to this many streams at a link the N*D/D/1 tail is the exact Benes sum, beyond it the
#: Brownian-bridge approximation (within 1.1x of the sum there at loads of 0.8 and more)
BENES_MAX_SOURCES = 64
# log n! and log((n - k) / (k + 1)) for the whole numbers the Benes sums meet (up to one past
# BENES_MAX_SOURCES streams), the values math.lgamma and math.log give them: tables instead of
# three lgamma and one log a term
_LOG_FACT = np.array([math.lgamma(i + 1.0) for i in range(BENES_MAX_SOURCES + 2)])
_LOG_RATIO = np.array(
    [[math.log(j / (k + 1.0)) if j > 0 else 0.0 for k in range(BENES_MAX_SOURCES + 2)]
     for j in range(BENES_MAX_SOURCES + 2)]
)  # fmt: skip


@njit(cache=True, error_model="numpy")
def benes_tail(n: int, load: float, x: float) -> float:
    """P(Q > x) of the N*D/D/1 queue: ``n`` periodic streams with independent phases, period
    D = n / load slots, one packet served a slot (``load`` < 1); ``x`` in packets. The Benes
    sum: sum over k > x of C(n, k) a^k (1 - a)^(n - k) (D - n + x) / (D - k + x), a = (k -
    x) / D (the N*D/D/1 queue of J. W. Roberts and J. T. Virtamo, "The superposition of
    periodic cell arrival streams in an ATM multiplexer", IEEE Trans. Commun. 39(2), 1991)."""
    d = n / load
    total = 0.0
    k0 = int(math.floor(x)) + 1
    if k0 > n:
        return 0.0
    # log C(n, k), carried from k to k + 1 by the ratio (n - k) / (k + 1) (tables up to
    # BENES_MAX_SOURCES + 1 streams, the only sums packet_jitter_exceedance asks for)
    tables = n < _LOG_FACT.shape[0]
    if tables:
        log_binom = _LOG_FACT[n] - _LOG_FACT[k0] - _LOG_FACT[n - k0]
    else:
        log_binom = math.lgamma(n + 1.0) - math.lgamma(k0 + 1.0) - math.lgamma(n - k0 + 1.0)
    for k in range(k0, n + 1):
        a = (k - x) / d
        if a >= 1.0:
            break
        log_term = log_binom + k * math.log(a) + (n - k) * math.log1p(-a)
        total += math.exp(log_term) * (d - n + x) / (d - k + x)
        if k < n:
            log_binom += _LOG_RATIO[n - k, k] if tables else math.log((n - k) / (k + 1.0))
    return total


@njit(cache=True, error_model="numpy")
def packet_jitter_exceedance(x_pkts: float, n_sources: float, load: float) -> float:
    """Chance that a packet finds more than ``x_pkts`` packets' worth of bytes queued ahead of
    it at a link whose fluid queue is empty, fed by ``n_sources`` paced packet streams of
    total ``load`` (arrival rate / service rate): the tail of the N*D/D/1 queue (superposed
    periodic streams with independent phases). Up to ``BENES_MAX_SOURCES`` streams the exact
    Benes sum (:func:`benes_tail`, linear between the whole numbers of streams around
    ``n_sources``), beyond it, and where even the approximation is below 1e-4, its
    Brownian-bridge approximation exp(-2 x (x / N + 1 - load)), which bounds the sum from above
    (tests/test_fluid.py compares the two). No such queue at or above load 1: there the fluid
    queue itself carries the delay. A fluid link has none below it: its level stays 0, while
    with packets the streams' collisions queue a few packets now and then."""
    if x_pkts <= 0.0:
        return 1.0
    if load <= 0.0 or n_sources <= 0.0 or load >= 1.0:
        return 0.0
    approx = math.exp(-2.0 * x_pkts * (x_pkts / n_sources + 1.0 - load))
    if n_sources > BENES_MAX_SOURCES or approx < 1e-4:
        return approx
    lo = int(math.floor(n_sources))
    if lo < 1:
        lo = 1
    w = n_sources - lo if n_sources > lo else 0.0
    tail = benes_tail(lo, load, x_pkts)
    if w > 0.0:
        tail = (1.0 - w) * tail + w * benes_tail(lo + 1, load, x_pkts)
    return tail


@njit(cache=True, error_model="numpy")
def link_jitter_exceedance(ls, link, slack_ps, pkt_bytes) -> float:
    """:func:`packet_jitter_exceedance` at ``link`` for a queueing delay above ``slack_ps``
    (ps), packets of ``pkt_bytes``: the link's sources are its route entries' arrivals this
    step, counted as (sum r)^2 / sum r^2 (``n`` equal streams count ``n``). None at a link
    real packets cross (the hybrid's, ``LS_PACKETS``): their queue, which the fluid flows' RTT
    includes, is made of packets already."""
    arr = ls[link, LS_ARR]
    if arr <= 0.0 or ls[link, LS_PACKETS] > 0.0:
        return 0.0
    sq = ls[link, LS_ARR2]
    cap = ls[link, LS_CAP]
    x = slack_ps * cap / pkt_bytes
    if x == ls[link, LS_JIT_X] and arr == ls[link, LS_JIT_ARR] and sq == ls[link, LS_JIT_ARR2]:
        return ls[link, LS_JIT_P]
    n = arr * arr / sq if sq > 0.0 else 1.0
    p = packet_jitter_exceedance(x, n, arr / cap)
    ls[link, LS_JIT_X] = x
    ls[link, LS_JIT_ARR] = arr
    ls[link, LS_JIT_ARR2] = sq
    ls[link, LS_JIT_P] = p
    return p


@njit(cache=True, error_model="numpy", inline="always")
def gentle_exceedance(f, slack_ps, nic, rt_ptr, rt_link, rt_w, ls, subs, pkt_bytes) -> float:
    """Chance that the RTT sample of one of flow ``f``'s packets sent now exceeds the fluid one
    by more than ``slack_ps`` (ps) through packet-level queueing at the links of its path
    (:func:`link_jitter_exceedance`; independent links; a split hop's links weighed by their
    share; an UnoLB flow: the mean over its subflows). ``slack_ps`` <= 0: 1. The host's own
    NIC link ``nic`` is left out: it serves its flows round robin (uno/net/host.py), and a
    packet's RTT starts when it leaves it. ``subs``: the UnoLB subflows (``lb[:3]``: each flow's
    number of subflows, their hops and their links; the three arrays alone, as the whole tuple
    costs every step its sixteen arrays' reference counts).

    UnoCC's gentle decrease (Uno paper Alg. 1 lines 9-13) reads one packet's RTT sample
    (uno/cc/uno.py ``_end_epoch``): where the fluid queue is empty below saturation, a packet
    still meets the other flows' packets now and then, and that resets MD_scale."""
    if slack_ps <= 0.0:
        return 1.0
    if subs[0][f] > 0:
        return subflow_part_exceedance(f, 0, subs[1][f], slack_ps, nic, ls, subs, pkt_bytes)
    return entries_exceedance(rt_ptr[f], rt_ptr[f + 1], slack_ps, nic, rt_link, rt_w, ls, pkt_bytes)


@njit(cache=True, error_model="numpy")
def subflow_part_exceedance(f, h_lo, h_hi, slack_ps, nic, ls, subs, pkt_bytes) -> float:
    """:func:`gentle_exceedance` of UnoLB flow ``f`` over its subflows' hops ``h_lo`` to
    ``h_hi - 1`` alone: the mean over its subflows."""
    if slack_ps <= 0.0:
        return 1.0
    sub_n, sub_links = subs[0], subs[2]
    n = sub_n[f]
    total = 0.0
    for s in range(n):
        stay = 1.0
        for h in range(h_lo, h_hi):
            link = sub_links[f, s, h]
            if link != nic:
                stay *= 1.0 - link_jitter_exceedance(ls, link, slack_ps, pkt_bytes)
        total += 1.0 - stay
    return total / n


@njit(cache=True, error_model="numpy")
def subflow_part_delay(f, h_lo, h_hi, ls, subs) -> float:
    """Queueing delay in ps of UnoLB flow ``f``'s subflows' hops ``h_lo`` to ``h_hi - 1``, the
    mean over its subflows (:func:`subflow_signals`)."""
    sub_n, sub_links = subs[0], subs[2]
    n = sub_n[f]
    delay = 0.0
    for s in range(n):
        for h in range(h_lo, h_hi):
            delay += ls[sub_links[f, s, h], LS_DELAY]
    return delay / n


@njit(cache=True, error_model="numpy", inline="always")
def delay_beyond_wire(f, fs, rt_ptr, rt_link, rt_w, ls, subs) -> float:
    """Queueing delay in ps of flow ``f``'s links beyond its wire link (``FS_WIRE_NEXT``, an
    UnoLB flow's ``FS_WIRE_HOP``); 0 for a flow without one."""
    nxt = int(fs[f, FS_WIRE_NEXT])
    if nxt >= 0:
        return entries_delay(nxt, rt_ptr[f + 1], rt_link, rt_w, ls)
    hop = int(fs[f, FS_WIRE_HOP])
    if hop >= 0:
        return subflow_part_delay(f, hop + 1, subs[1][f], ls, subs)
    return 0.0


@njit(cache=True, error_model="numpy", inline="always")
def wire_side_exceedance(f, beyond, slack_ps, nic, fs, rt_ptr, rt_link, rt_w, ls, subs, pkt_bytes):
    """:func:`gentle_exceedance` of flow ``f`` over its links before its wire link (``beyond``
    false: the whole path for a flow without one) or beyond it (0 for a flow without one)."""
    nxt = int(fs[f, FS_WIRE_NEXT])
    if nxt >= 0:
        lo, hi = (nxt, rt_ptr[f + 1]) if beyond else (rt_ptr[f], nxt)
        return entries_exceedance(lo, hi, slack_ps, nic, rt_link, rt_w, ls, pkt_bytes)
    hop = int(fs[f, FS_WIRE_HOP])
    if hop >= 0:
        lo, hi = (hop + 1, subs[1][f]) if beyond else (0, hop + 1)
        return subflow_part_exceedance(f, lo, hi, slack_ps, nic, ls, subs, pkt_bytes)
    if beyond:
        return 0.0
    return gentle_exceedance(f, slack_ps, nic, rt_ptr, rt_link, rt_w, ls, subs, pkt_bytes)


@njit(cache=True, error_model="numpy", inline="always")
def entries_exceedance(lo, hi, slack_ps, nic, rt_link, rt_w, ls, pkt_bytes) -> float:
    """:func:`gentle_exceedance` over the route entries ``lo`` to ``hi - 1`` alone."""
    if slack_ps <= 0.0:
        return 1.0
    stay = 1.0
    for j in range(lo, hi):
        link = rt_link[j]
        if link != nic:
            stay *= 1.0 - rt_w[j] * link_jitter_exceedance(ls, link, slack_ps, pkt_bytes)
    return 1.0 - stay


@njit(cache=True, error_model="numpy", inline="always")
def reverse_delay(f: int, rv_ptr, rv_link, rv_w, ls: np.ndarray) -> float:
    """Queueing delay in ps of flow ``f``'s ACKs on their way back (receiver -> sender, the
    reverse route ``rv_*``, each link weighed by the share of the ACKs that crosses it).

    The packet receiver turns each data packet into an ACK and sends it through its host's NIC
    and the switches' output ports towards the sender (``uno.transport.receiver.Receiver.on_data``,
    hashed on (dst, src, entropy)); without ``switch.ack_priority`` an ACK waits in the same FIFO
    as the data (``uno.net.port.Port.receive``), behind the queue of the reverse path's ports.
    So the packet sender's RTT samples, its ACK clock and the flow's completion (its last ACK)
    include this delay. ACKs are not carried as bytes here (1.5 % of the data's bytes), only the
    delay they meet."""
    delay = 0.0
    for j in range(rv_ptr[f], rv_ptr[f + 1]):
        delay += rv_w[j] * ls[rv_link[j], LS_DELAY]
    return delay


@njit(cache=True, error_model="numpy", inline="always")
def in_whole_packets(nbytes: float, mss: float) -> float:
    """``nbytes`` rounded up to whole packets of ``mss`` bytes, as the packet sender and
    controller count them (a window's room: uno/transport/sender.py sends a packet while the
    bytes in flight are below cwnd; Quick Adapt's ACKs: the check runs at an ACK and counts it
    whole). A rounding hair above a whole number of packets stays on it."""
    return math.ceil(nbytes / mss - 1e-9) * mss


@njit(cache=True, error_model="numpy")
def cc_init(cs: np.ndarray, cp: np.ndarray, f: int) -> None:
    """A flow's controller state at its start: its law's ``init``, as in the packet engines."""
    for c in range(cs.shape[1]):
        cs[f, c] = 0.0
    law_init(int(cp[f, P_KIND]) - CC_LAW, cs[f], cp[f])


@njit(cache=True, error_model="numpy")
def law_batch(cs, cp, fs, ring, slot, f, kind, now, acked, marked, rtt, p_queued, rng):
    """The feedback batch (:data:`uno.cc.law.Feedback`) of flow ``f``'s ACKs arriving in one
    step (delay-line slot ``slot``), to its law: ``acked`` bytes of which ``marked`` carried
    ECN, counted in packets of the MSS; the whole marked ACKs a packet sender would have seen
    (the expected count carried over from batch to batch, ``FS_MARK_CARRY``); the batch's mean
    RTT ``rtt`` and, for a law that reads it, its least sample (``R_RTTMIN``); its latest send
    time; a delivery-rate sample (the bytes acknowledged since the latest of them was sent,
    over its flight time, ``R_DSENT``); a draw from the flow's stream when its law decides on
    the chance ``p_queued`` that the packets met queueing the mean RTT does not show."""
    mss = cp[f, P_MSS]
    carry = fs[f, FS_MARK_CARRY] + marked / mss
    events = math.floor(carry)
    fs[f, FS_MARK_CARRY] = carry - events
    draw = 1.0
    if p_queued > 0.0 and fs[f, FS_DRAWS] > 0.0:
        draw = next_uniform(rng, f)
    sent_max = ring[slot, R_SENTMAX]
    rtt_min = rtt
    if fs[f, FS_RTTMIN] > 0.0 and ring[slot, R_RTTMIN] > 0.0:
        rtt_min = ring[slot, R_RTTMIN] + fs[f, FS_QBEYOND]
    rate_bytes = 0.0
    rate_ps = 0.0
    if fs[f, FS_RATE] > 0.0 and now > sent_max:
        rate_bytes = fs[f, FS_ACKED] - ring[slot, R_DSENT]
        rate_ps = now - sent_max
    fb = Feedback(now, acked, marked, acked / mss, marked / mss, events, rtt, rtt_min, sent_max,
                  fs[f, FS_INFLIGHT], fs[f, FS_ACKED], rate_bytes, rate_ps, 0.0, p_queued, draw,
                  1.0, 0.0)  # fmt: skip
    law_feedback(kind, cs[f], cp[f], fb, NO_RECORDS)


@njit(cache=True, error_model="numpy")
def cc_loss(cs, cp, f, now, nack):
    """A loss episode detected (a retransmission timeout, or a NACK for coded flows): the
    flow's law hears of a ``LOSS_TIMEOUT`` or a ``LOSS_NACK``."""
    law_loss(int(cp[f, P_KIND]) - CC_LAW, cs[f], cp[f], now, LOSS_NACK if nack else LOSS_TIMEOUT)


@njit(cache=True, error_model="numpy")
def hear_loss_report(cs, cp, f, now, fs) -> None:
    """Flow ``f`` hears a loss report found before a timeout (fast retransmit's evidence, a
    coded flow's NACK) at ``now``: counted (``FS_LOSS_EVENTS``), and its controller told of at
    most one such report per base RTT, as the packet sender's (uno.transport.sender:
    ``_detect_losses``, ``_on_nack``)."""
    if fs[f, FS_LOSS_EVENTS] == 0.0 or now - fs[f, FS_LAST_NACK] >= fs[f, FS_BASE_RTT]:
        fs[f, FS_LAST_NACK] = now
        cc_loss(cs, cp, f, now, fs[f, FS_LOSS_NACK] > 0.0)
    fs[f, FS_LOSS_EVENTS] += 1.0


@njit(cache=True, error_model="numpy")
def ring_take(ring_pool, f) -> None:
    """Give flow ``f``, starting, its delay line: ``ring_len[f]`` all-zero rows of the ring,
    a block a finished flow of the same length gave back, else the next rows never used.
    ``ring_pool`` = (``ring_ptr``: each flow's first row, ``ring_len``, ``ring_class``: index
    of the flow's length among the distinct lengths, ``free_rows``: per class a stack of free
    blocks' first rows, from ``free_base[class]``, ``free_count``, ``top``: one-element array,
    the first row never used). Only the running flows hold rows, so the rows touched (and the
    memory the ring occupies: np.zeros leaves untouched pages unmapped) follow the number of
    flows running at once, not the workload's length, and reused rows are warm in cache."""
    ring_ptr, ring_len, ring_class, free_rows, free_base, free_count, top = ring_pool
    c = ring_class[f]
    if free_count[c] > 0:
        free_count[c] -= 1
        ring_ptr[f] = free_rows[free_base[c] + free_count[c]]
    else:
        ring_ptr[f] = top[0]
        top[0] += ring_len[f]


@njit(cache=True, error_model="numpy")
def ring_give(ring, ring_pool, f, k, fs, calendar) -> None:
    """Flow ``f`` finished at step ``k``: its delay line goes back to the pool
    (:func:`ring_take`), cleared (feedback still due for it is never read).

    Only the slots of the steps after ``k``, up to ``FS_DUE_LAST``, whose calendar bit says
    something is due for ``f`` can hold anything (every earlier slot was read and zeroed at its
    step, and every write marks its step, :func:`mark_due`); only those are written. Clearing
    the whole line instead touched every page of it: most of a short flow's line (sized for
    its retransmission timeout) is never reached, and the first touch of a page is a fault."""
    ring_ptr, ring_len, ring_class, free_rows, free_base, free_count = ring_pool[:6]
    start = ring_ptr[f]
    n = ring_len[f]
    span = calendar.shape[0]
    word = f >> 6
    bit = np.uint64(1) << np.uint64(f & 63)
    last = int(fs[f, FS_DUE_LAST])
    if last > k + n - 1:  # (a write's step is at most n - 1 after its own)
        last = k + n - 1
    for step in range(k + 1, last + 1):
        if calendar[step % span, word] & bit:
            row = start + step % n
            for c in range(ring.shape[1]):
                ring[row, c] = 0.0
    c = ring_class[f]
    free_rows[free_base[c] + free_count[c]] = start
    free_count[c] += 1
    ring_ptr[f] = -1


@njit(cache=True, error_model="numpy")
def resend(fs, f, lost) -> None:
    """Flow ``f``'s ``lost`` bytes leave flight and go back to be sent. From then on its timer
    uses ``FS_RTO_AFTER`` when set (``transport.*.rto_base_rtts_after_retransmit``; the packet
    sender switches ``rto_ps`` when it sends its first retransmission,
    uno/transport/sender.py). Timers already running keep the timeout they were set with."""
    fs[f, FS_INFLIGHT] -= lost
    if fs[f, FS_INFLIGHT] < 0.0:
        fs[f, FS_INFLIGHT] = 0.0
    fs[f, FS_UNSENT] += lost
    if fs[f, FS_RTO_AFTER] > 0.0:
        fs[f, FS_RTO] = fs[f, FS_RTO_AFTER]


@njit(cache=True, error_model="numpy")
def step_not_before(at, dt_ps) -> int:
    """The first step whose start is not before ``at`` ps (:func:`advance` sees a report due
    at ``at`` there: it compares the step's start with it)."""
    step = int(at // dt_ps)
    while step * dt_ps < at:
        step += 1
    return step


@njit(cache=True, error_model="numpy", inline="always")
def mark_due(calendar, step, f) -> None:
    """Flow ``f`` has something due at step ``step`` (feedback in its delay line, a timer, a
    loss report): its bit in the calendar (rows: steps modulo their number, longer than any
    delay; each row a bitset of the flows, 64 a word). A step handles the feedback of the
    flows whose bit its row holds and passes over the others (:func:`advance`)."""
    calendar[step % calendar.shape[0], f >> 6] |= np.uint64(1) << np.uint64(f & 63)


@njit(cache=True, error_model="numpy", inline="always")
def mark_ring_due(calendar, fs, step, f) -> None:
    """Flow ``f`` wrote to its delay line's slot of step ``step``: its calendar bit
    (:func:`mark_due`) and its latest due step (``FS_DUE_LAST``, up to which
    :func:`ring_give` clears)."""
    mark_due(calendar, step, f)
    if step > fs[f, FS_DUE_LAST]:
        fs[f, FS_DUE_LAST] = step


@njit(cache=True, error_model="numpy", inline="always")
def clamp_lag(f, lag, ring_len) -> int:
    """A delay of ``lag`` steps as flow ``f``'s delay line holds it: at least the next step,
    at most its length - 1 (the engine sizes the lines so that the longest RTT and timeout
    fit)."""
    if lag < 1:
        return 1
    if lag >= ring_len[f]:
        return ring_len[f] - 1
    return lag


@njit(cache=True, error_model="numpy")
def schedule_timeout(f, k, sent_at, lost, dt_ps, fs, ring, ring_ptr, ring_len, calendar) -> None:
    """Bytes ``lost`` from the batch flow ``f`` sent at ``sent_at`` (step ``k``) wait for
    the retransmission timer: they time out at the first step boundary ``FS_RTO`` after their
    send, as a packet the sender's timer declares lost ``rto_ps`` after its own send."""
    lag = clamp_lag(f, int(math.ceil((sent_at + fs[f, FS_RTO]) / dt_ps)) - k, ring_len)
    ring[ring_ptr[f] + (k + lag) % ring_len[f], R_TIMEOUT] += lost
    mark_ring_due(calendar, fs, k + lag, f)
    fs[f, FS_WAIT] += lost
    fs[f, FS_WAIT_LAST] = k + lag


@njit(cache=True, error_model="numpy")
def cut_acks(f, k, lost, freed, fs, ring, ring_ptr, ring_len) -> None:
    """Flow ``f``'s ``lost`` bytes (dropped by the links at step ``k``) come off its latest ACKs
    still due, newest first (``FS_ACK_LAST`` down): a tail drop takes the bytes arriving at a
    full queue, the flow's newest there, whose ACKs its delay line holds last. (Taking them
    off the ACKs due first instead, as before, starved the ACK clock after a burst of drops:
    an incast's inter-DC flows heard no ACK for two milliseconds after their first window,
    though the receiver's link delivered at line rate, then a burst of three times it.)

    Lost bytes beyond every ACK still due belonged to batches whose ACKs already came (the
    bytes waited on the way longer than the RTT their send foresaw): they are taken back from
    what was acknowledged and return to flight, which their retransmission takes them out of
    (:func:`resend`).

    Coded flows: ``freed`` of the ``lost`` bytes (those in blocks that decode,
    :func:`coded_loss_shares`) stay decodable (``R_GOOD``) and leave flight with the ACKs that
    would have carried them (``R_FREE``), as the packet sender stops tracking a decoded
    block's packets; the rest are taken off what is decodable too, until resent (uncoded
    flows: ``freed`` = 0)."""
    step, left = take_acks(f, k, int(fs[f, FS_ACK_LAST]), lost, freed, fs, ring, ring_ptr,
                           ring_len)  # fmt: skip
    fs[f, FS_ACK_LAST] = step
    if left > 0.0:
        if fs[f, FS_DUPACK_BYTES] > 0.0:  # (their ACKs' time is past: they wait for evidence)
            fs[f, FS_UNREVEALED] += left
        free_share = freed / lost
        fs[f, FS_DELIVERED] -= left * (1.0 - free_share)
        fs[f, FS_ACKED] -= left
        fs[f, FS_INFLIGHT] += left * (1.0 - free_share)


@njit(cache=True, error_model="numpy")
def cut_wire_acks(f, k, newest, lost, freed, fs, ring, ring_ptr, ring_len) -> None:
    """:func:`cut_acks` for bytes a link beyond the flow's wire link dropped: they left the
    wire link a propagation before, and their ACKs are due at step ``newest`` and before
    (:func:`lose_acks`); they come off those ACKs first, newest first, and what is left as
    :func:`cut_acks` takes it."""
    _, left = take_acks(f, k, newest, lost, freed, fs, ring, ring_ptr, ring_len)
    if left > 0.0:
        cut_acks(f, k, left, freed * left / lost, fs, ring, ring_ptr, ring_len)


@njit(cache=True, error_model="numpy")
def beyond_wire(f, fs) -> bool:
    """Whether most of the bytes flow ``f`` lost since its losses were last booked were
    dropped beyond its wire link (``FS_WIRE_DROP``, :func:`forward`); starts the next count."""
    beyond = fs[f, FS_WIRE_DROP] > 0.0 and fs[f, FS_WIRE_DROP] >= 0.5 * fs[f, FS_DROPPED]
    fs[f, FS_WIRE_DROP] = 0.0
    return beyond


@njit(cache=True, error_model="numpy")
def lose_acks(f, k, lost, freed, beyond, dt_ps, fs, ring, ring_ptr, ring_len) -> None:
    """Flow ``f``'s ``lost`` bytes come off its ACKs due (:func:`cut_acks`); when they were
    dropped beyond its wire link (``beyond``), off those of the newest bytes off the wire, due
    from ``FS_WIRE_ACK`` down (:func:`cut_wire_acks`): a drop there takes the flow's newest
    bytes at that link, which left the wire link a propagation ago, when the flow's newest
    ACKs were due then."""
    if beyond:
        newest = int(fs[f, FS_WIRE_ACK] / dt_ps)
        if newest < fs[f, FS_ACK_LAST]:
            cut_wire_acks(f, k, newest, lost, freed, fs, ring, ring_ptr, ring_len)
            return
    cut_acks(f, k, lost, freed, fs, ring, ring_ptr, ring_len)


@njit(cache=True, error_model="numpy")
def take_acks(f, k, newest, lost, freed, fs, ring, ring_ptr, ring_len):
    """The walk of :func:`cut_acks`: ``lost`` bytes (``freed`` of them absorbed by coding)
    come off flow ``f``'s ACKs due from step ``newest`` down to step ``k + 1``. With fast
    retransmit the bytes each slot loses are filed in it (``R_LOSTQ``): what the sender's ACKs
    say of them begins when theirs would have come (:func:`fast_retransmit_evidence`).
    Returns (the step it stopped at: every slot after it, up to ``newest``, emptied; the bytes
    left that no ACK still due carried)."""
    n = ring_len[f]
    start = ring_ptr[f]
    wide = ring.shape[1] > R_GOOD
    file_lost = fs[f, FS_DUPACK_BYTES] > 0.0
    coded = fs[f, FS_EC_N] > 0.0
    step = newest
    free_share = freed / lost if lost > 0.0 else 0.0
    left = lost
    while left > 0.0 and step > k:
        row = start + step % n
        acked = ring[row, R_ACK]
        if acked > 0.0:
            cut = left if left < acked else acked
            kept = (acked - cut) / acked
            ring[row, R_ACK] = acked - cut
            if file_lost:
                ring[row, R_LOSTQ] += cut
            ring[row, R_RTTW] *= kept
            ring[row, R_JITTER] *= kept
            if wide:
                if coded:
                    # (the slot's decodable bytes may exceed its ACKs, by bytes absorbed
                    # before: only the cut's failed part comes off them)
                    ring[row, R_GOOD] -= cut * (1.0 - free_share)
                    ring[row, R_FREE] += cut * free_share
                else:
                    ring[row, R_GOOD] *= kept
            left -= cut
            if left <= 0.0:
                break  # (this slot may keep some)
        step -= 1
    fs[f, FS_PENDING] -= lost - left
    return step, left


@njit(cache=True, error_model="numpy")
def fast_retransmit_evidence(f, now, acked, lostq, mss, fs) -> None:
    """Fast retransmit (SACK "IsLost", uno/transport/sender.py ``_detect_losses``): a packet
    is lost once ``dupack_threshold`` packets sent after it are acknowledged
    (``FS_DUPACK_BYTES``). One slot of flow ``f``'s delay line arrives now: ``acked`` bytes
    acknowledged, and ``lostq`` bytes lost whose ACKs were due in it (:func:`take_acks` files
    each lost byte where its ACK would have been, so the slots come in the order of the sends).
    The lost bytes whose ACKs' time is past wait for evidence (``FS_UNREVEALED``), and
    ``FS_EVIDENCE`` counts the bytes acknowledged since the newest of them: for the older ones
    every byte of this slot; for the slot's own, those acknowledged after its last lost packet,
    ``acked / (lost packets + 1)`` (its lost packets fall at random among its packets). Once it
    reaches the threshold the waiting bytes are revealed now (the step reports them,
    :func:`advance`) and their timer entries are void (``FS_VOID_BYTES``). So the losses among
    the last packets a flow sends before it pauses (a flow's tail, its whole window out) wait
    for the retransmission timer, as the packet sender's do: with the loss of each step filed
    at the drop and revealed with the oldest, GEMINI's inter-DC flows on the 40%-load Fig. 10
    traffic heard 758 timeouts against the packet engine's 1,361 and finished 29% early.
    ``FS_TIMED_AHEAD``: bytes the timer took before their slot came (:func:`timer_declares`),
    not waiting any more."""
    ahead = fs[f, FS_TIMED_AHEAD]
    if ahead > 0.0 and lostq > 0.0:
        skip = lostq if lostq < ahead else ahead
        fs[f, FS_TIMED_AHEAD] = ahead - skip
        lostq -= skip
    if fs[f, FS_UNREVEALED] > 0.0:
        fs[f, FS_EVIDENCE] += acked
        if fs[f, FS_EVIDENCE] >= fs[f, FS_DUPACK_BYTES]:
            reveal_losses(f, now, fs)
    if lostq > 0.0:
        fs[f, FS_UNREVEALED] += lostq
        fs[f, FS_EVIDENCE] = acked / (lostq / mss + 1.0)
        if fs[f, FS_EVIDENCE] >= fs[f, FS_DUPACK_BYTES]:
            reveal_losses(f, now, fs)


@njit(cache=True, error_model="numpy")
def reveal_losses(f, now, fs) -> None:
    """Fast retransmit finds flow ``f``'s bytes waiting for evidence (``FS_UNREVEALED``) lost
    now: they are reported (``FS_LOSS_PENDING``, at ``now``) and their timer entries, still
    ahead, are void (``FS_VOID_BYTES``)."""
    found = fs[f, FS_UNREVEALED]
    if found > fs[f, FS_WAIT]:
        found = fs[f, FS_WAIT]
    fs[f, FS_UNREVEALED] = 0.0
    fs[f, FS_EVIDENCE] = 0.0
    if found <= 0.0:
        return
    fs[f, FS_WAIT] -= found
    fs[f, FS_VOID_BYTES] += found
    fs[f, FS_LOSS_PENDING] += found
    fs[f, FS_FAST_BYTES] += found
    if fs[f, FS_LOSS_AT] < 0.0:
        fs[f, FS_LOSS_AT] = now


@njit(cache=True, error_model="numpy")
def timer_declares(f, k, due, fs) -> float:
    """The retransmission timer entries of flow ``f`` due at step ``k`` hold ``due`` bytes
    (lost an RTO ago, :func:`schedule_timeout`): returns the bytes it declares lost now, taken
    from the waiting ones (``FS_WAIT``); at the newest entry (``FS_WAIT_LAST``) all that is
    left. With fast retransmit the timer and the evidence both take the oldest lost bytes:
    entries of bytes evidence revealed are void (``FS_VOID_BYTES``), and the timer takes those
    waiting for evidence first (``FS_UNREVEALED``), then bytes whose ACKs' time is still
    ahead (``FS_TIMED_AHEAD``: they are not waiting when their slot comes)."""
    if fs[f, FS_DUPACK_BYTES] > 0.0:
        void = fs[f, FS_VOID_BYTES]
        if void > 0.0:
            cut = due if due < void else void
            fs[f, FS_VOID_BYTES] = void - cut
            due -= cut
    wait = fs[f, FS_WAIT]
    if due > wait or k >= fs[f, FS_WAIT_LAST]:
        due = wait  # the newest waiting bytes: all that is left
    if due <= 0.0:
        return 0.0
    fs[f, FS_WAIT] = wait - due
    if fs[f, FS_DUPACK_BYTES] > 0.0:
        waiting = fs[f, FS_UNREVEALED]
        taken = due if due < waiting else waiting
        fs[f, FS_UNREVEALED] = waiting - taken
        fs[f, FS_TIMED_AHEAD] += due - taken
        if fs[f, FS_UNREVEALED] <= 0.0:
            fs[f, FS_EVIDENCE] = 0.0
    return due


@njit(cache=True, error_model="numpy")
def coded_losses(f, n_ec, mss, fs, rng_state, lb, dist):
    """Flow ``f``'s losses to the links in this step (:func:`dropped_packets`, bytes): (lost,
    of them to resend, of those in blocks of which nothing arrived). Uncoded (``n_ec`` = 0):
    all lost bytes are resent. Coded
    (UnoRC, ``n_ec`` data packets a block): the packets that reached the dropping links were
    each lost with the step's chance ``FS_DROPPED`` / ``FS_EXPOSED`` (:func:`coded_loss_shares`;
    a block's packets leave back to back, within a step or two). The drops are the links' own,
    as for uncoded flows: a block model at the send, from the path's loss then, let the coded
    flows count as delivered bytes the links had dropped (on the 40%-load traffic the fluid
    WAN passed 1.05 GB against the 1.72 GB the flows delivered). An UnoLB flow: each subflow's
    own chance (``lb[15]``: its bytes dropped and reaching dropping links this step, from
    :func:`forward`), a block's packets riding the subflows round robin
    (:func:`spread_loss_shares`): the flow's chance taken for every packet would have a block
    lose on all its packets what one lossy subflow loses on its own. The shares are drawn in
    whole blocks (:func:`whole_blocks`)."""
    dropped = fs[f, FS_DROPPED]
    exposed = fs[f, FS_EXPOSED]
    lost = mss * dropped_packets(f, mss, fs, rng_state)
    n_sub = lb[0][f]
    sub_drops = lb[15]
    sub_loss = dist[: sub_drops.shape[1]]
    for sf in range(n_sub if n_ec > 0 else 0):
        hit = sub_drops[f, sf, 1]
        sub_loss[sf] = sub_drops[f, sf, 0] / hit if hit > 0.0 else 0.0
        if sub_loss[sf] > 1.0:
            sub_loss[sf] = 1.0
        sub_drops[f, sf, 0] = 0.0
        sub_drops[f, sf, 1] = 0.0
    if lost <= 0.0 or n_ec == 0:
        return lost, lost, 0.0
    m = int(fs[f, FS_EC_M])
    if n_sub > 0:
        failed_share, gone_share, per_block = spread_loss_shares(
            sub_loss, n_sub, n_ec, m, dist[sub_drops.shape[1] :]
        )
    else:
        p = dropped / exposed if exposed > dropped else 1.0
        failed_share, gone_share, per_block = coded_loss_shares(p, n_ec, m)
    failed, gone = whole_blocks(
        f, lost, failed_share, gone_share, per_block, n_ec + m, mss, fs, rng_state
    )
    return lost, failed, gone


@njit(cache=True, error_model="numpy")
def whole_blocks(f, lost, failed_share, gone_share, per_block, block_packets, mss, fs, rng_state):
    """Of coded flow ``f``'s ``lost`` bytes in this step, those in blocks that cannot be
    decoded and those in blocks of which nothing arrived, drawn in whole blocks from the
    flow's stream: their expected shares (:func:`coded_loss_shares`) would make every step
    that loses a packet lose a sliver of a failed block, and the flow wait for a NACK and a
    resend (or, a sliver of a block of which nothing arrived, for the sender's timer) that the
    packets' blocks mostly never need. On the 40%-load Fig. 10 traffic (``scheme=uno``, seed
    2) 41 of the 53 inter-DC flows of one packet heard a timeout in the fluid against 11 with
    packets (a block of 1 + 2 packets is gone only if all three are lost, p^3), and the
    inter-DC flows of 4-16 kB 242 NACKs against 87 while resending fewer packets (455 against
    758). A failed block holds ``per_block`` lost packets on average (E[j | j > m]; the step's
    lost bytes when fewer: the rest of its packets were lost in another step), a block of which
    nothing arrived all its ``block_packets`` (the flow's wire bytes when fewer); the number of
    each is the expected bytes over that, rounded up with the chance of its fraction, so the
    means are the shares'. Returns (failed, gone) bytes, gone <= failed <= lost."""
    unit = fs[f, FS_SIZE] if 0.0 < fs[f, FS_SIZE] < mss else mss
    failed = lost * failed_share
    if failed <= 0.0:
        return 0.0, 0.0
    drawn = in_whole_chunks(f, failed, per_block * unit, lost, rng_state)
    if drawn <= 0.0:
        return 0.0, 0.0
    # of the failed blocks, those of which nothing arrived (their share of the failed bytes)
    gone = drawn * gone_share / failed_share
    if gone <= 0.0:
        return drawn, 0.0
    block = block_packets * unit
    if block > fs[f, FS_SIZE]:
        block = fs[f, FS_SIZE]
    return drawn, in_whole_chunks(f, gone, block, drawn, rng_state)


@njit(cache=True, error_model="numpy", inline="always")
def in_whole_chunks(f, nbytes, chunk, cap, rng_state) -> float:
    """``nbytes`` expected bytes as whole chunks of ``chunk`` bytes (a chunk at most ``cap``):
    their number rounded up with the chance of its fraction, drawn from flow ``f``'s stream
    (the mean is ``nbytes``); at most ``cap`` bytes."""
    if chunk > cap:
        chunk = cap
    count = nbytes / chunk
    whole = math.floor(count)
    if next_uniform(rng_state, f) < count - whole:
        whole += 1.0
    drawn = whole * chunk
    return drawn if drawn < cap else cap


@njit(cache=True, error_model="numpy")
def name_subflows(f, n_sub, n_ec, path_loss, counted, sub_lost) -> None:
    """Which of UnoLB flow ``f``'s ``n_sub`` subflows a loss report names, each subflow's
    weight added to ``sub_lost[f]`` (``lb[4]``, :func:`unolb_reroute`): the packet UnoLB names
    the subflows that carried the lost packets (uno/lb/unolb.py, ``affected: lost``). A coded
    flow's drops are counted per subflow (``lb[15]``, :func:`forward`), and
    :func:`coded_losses` leaves each subflow's chance of losing a packet in ``counted``: the
    subflows whose bytes the links dropped. An uncoded flow's are not: the subflows whose path
    dropped at the send (``path_loss``, :func:`subflow_signals`)."""
    for s in range(n_sub):
        sub_lost[f, s] += counted[s] if n_ec > 0 else path_loss[s]


@njit(cache=True, error_model="numpy")
def book_losses(
    f,
    k,
    sent_at,
    rtt,
    failed,
    gone,
    n_ec,
    dt_ps,
    fs,
    ring,
    ring_ptr,
    ring_len,
    calendar,
):
    """How flow ``f`` learns of ``failed`` bytes lost at step ``k`` (``sent_at``: when, for
    its timer; ``rtt``: the round trip, ps, of bytes sent then; a coded flow: ``gone`` of the
    failed bytes in blocks of which nothing arrived). Uncoded: the retransmission timer, an
    RTO after the send; with fast retransmit (``FS_DUPACK_BYTES`` > 0) unless enough bytes sent
    after them are acknowledged first (:func:`fast_retransmit_evidence`, from when their ACKs
    would have come: :func:`take_acks` files them there); coded: the receiver's NACK, ``rtt``
    + its timer (``FS_LOSS_DELAY``) after the send (ring column ``R_NACK``: each step's losses
    at their own time), the sender's timer for blocks it never saw."""
    if n_ec == 0:
        schedule_timeout(f, k, sent_at, failed, dt_ps, fs, ring, ring_ptr, ring_len, calendar)
    else:  # coded: the receiver's NACK, or the sender's timer when it expires first
        if failed > gone:
            # the receiver's timer starts as the block's first packet arrives, a forward trip
            # after the send, and its NACK takes the trip back (uno/transport/receiver.py
            # ``_block_timer``): the sender hears of the loss an RTT and the timer after the
            # send, in the first step whose start is not before then. Timed
            # from the drop, as before, inter-DC flows heard of their first losses ~670 us
            # after their start, a third of their base RTT (the packet engine: never before
            # it), and UnoLB moved their subflows that much early
            nack_at = sent_at + rtt + fs[f, FS_LOSS_DELAY]
            step = step_not_before(nack_at, dt_ps)
            lag = clamp_lag(f, step - k, ring_len)
            if nack_at < sent_at + fs[f, FS_RTO]:
                ring[ring_ptr[f] + (k + lag) % ring_len[f], R_NACK] += failed - gone
            else:
                # the sender's timer (an RTO after the packet's send: by default the base RTT
                # and the path's drain, the receiver's timer being that drain) declares them
                # lost first, as the packet sender's does whenever the packets met a queue;
                # the NACK that follows is only heard (R_LATE_NACK). Waiting for the NACK
                # instead, the fluid's inter-DC flows of 16-64 kB on the 40%-load Fig. 10
                # traffic (scheme=uno, seed 2) would hear a timeout in 76 of 308 flows against
                # 268 with packets
                ring[ring_ptr[f] + (k + lag) % ring_len[f], R_LATE_NACK] += failed - gone
                gone = failed
            mark_ring_due(calendar, fs, k + lag, f)
        if gone > 0.0:
            schedule_timeout(f, k, sent_at, gone, dt_ps, fs, ring, ring_ptr, ring_len, calendar)


@njit(cache=True, error_model="numpy")
def coarsen(factor, k, dt_new_ps, fs, cp, ring, ring_pool, active, n_active, calendar, fx) -> int:
    """The step grows ``factor``-fold (to ``dt_new_ps``) at step ``k``, a multiple of
    ``factor``: returns the same instant's step at the new size, ``k // factor``. What each
    running flow's delay line holds for fine step ``j`` moves to the coarse step ``j //
    factor`` (the one whose span holds it), slots meeting there merged (bytes added; the
    latest send and the last ACK's arrival, their maxima; the least RTT sample (``R_RTTMIN``),
    the smaller; the acknowledged bytes at the latest send, the later slot's). The calendar is
    rebuilt for the new steps (a loss report due at ``FS_LOSS_AT`` in the first coarse step
    whose start is not before it, :func:`step_not_before`), and so are the flows' step fields
    (``FS_DUE_LAST``, ``FS_ACK_LAST``, ``FS_WAIT_LAST``). Bytes and times are untouched:
    only where the feedback is filed changes. The delay lines keep their lengths (sized for
    the fine step, they hold the coarse one's lags with room to spare)."""
    ring_ptr, ring_len = ring_pool[0], ring_pool[1]
    n_col = ring.shape[1]
    span = calendar.shape[0]
    k_new = k // factor
    longest = 1
    for i in range(n_active):
        if ring_len[active[i]] > longest:
            longest = ring_len[active[i]]
    held = np.zeros((longest, n_col))
    held_step = np.zeros(longest, dtype=np.int64)
    fresh = np.zeros_like(calendar)
    for i in range(n_active):
        f = active[i]
        start = ring_ptr[f]
        n = ring_len[f]
        word = f >> 6
        bit = np.uint64(1) << np.uint64(f & 63)
        m = 0
        # (nothing is due after FS_DUE_LAST: ring_give)
        last = min(k + n - 1, int(fs[f, FS_DUE_LAST]))
        for j in range(k, last + 1):
            if calendar[j % span, word] & bit:
                row = start + j % n
                for c in range(n_col):
                    held[m, c] = ring[row, c]
                    ring[row, c] = 0.0
                held_step[m] = j
                m += 1
        rtt_min = fs[f, FS_RTTMIN] > 0.0
        for t in range(m):
            j_new = held_step[t] // factor
            row = start + j_new % n
            fresh[j_new % span, word] |= bit
            later = held[t, R_SENTMAX] >= ring[row, R_SENTMAX]
            for c in range(n_col):
                v = held[t, c]
                if c == R_SENTMAX or c == R_ARRIVE or c == R_WIRE_ACK:
                    if v > ring[row, c]:
                        ring[row, c] = v
                elif c == R_RTTMIN:
                    if rtt_min and v > 0.0 and (ring[row, c] == 0.0 or v < ring[row, c]):
                        ring[row, c] = v
                elif c == R_DSENT:
                    if later:
                        ring[row, c] = v
                else:
                    ring[row, c] += v
        at = fs[f, FS_LOSS_AT]
        if at >= 0.0:
            step = step_not_before(at, dt_new_ps)
            fresh[(step if step > k_new else k_new) % span, word] |= bit
        fx[f, FX_QUIET] = 0.0
    for r in range(span):
        for w in range(calendar.shape[1]):
            calendar[r, w] = fresh[r, w]
    for f in range(fs.shape[0]):
        for c in (FS_DUE_LAST, FS_ACK_LAST, FS_WAIT_LAST):
            fs[f, c] = math.floor(fs[f, c] / factor)
    return k_new


@njit(cache=True, error_model="numpy")
def hold_for_block(k, now, senders, n_senders, droppers, n_drop, markers, n_mark, block, fs, fx):
    """Feedback in blocks (:func:`advance`, 4b.): the flows of this step's ``senders``,
    ``droppers`` and ``markers`` whose block (``block[0, f]``) is more than a step leave those
    lists and are held (``block[1]``): their sends add up in ``FS_BLOCK_*`` (bytes, the bytes'
    mean time, the latest send), their drops in ``FS_DROPPED`` / ``FS_EXPOSED`` and their
    deliveries in ``FS_DELIV_NEW`` / ``FS_MARK_NEW`` (:func:`forward` adds to what is there).
    At its block's last step (``k + 1`` a multiple of the block) a held flow returns to the
    lists, once, and the step files it as one batch: the block's sends with the RTT sampled
    then, its drops drawn in whole packets, its deliveries' echoes from the block's middle.
    Returns the number of senders left.

    The blocks and the step's growth are powers of two, aligned on the step count, so no
    block spans a change of step size; a flow still held when its block becomes a step is
    filed at the end of that step all the same."""
    n_flows = fs.shape[0]
    held, is_held = block[1], block[2]
    n_held = held[n_flows]
    kept = 0
    for i in range(n_senders):
        f = senders[i]
        if block[0, f] == 1 and is_held[f] == 0:
            senders[kept] = f
            kept += 1
            continue
        send = fx[f, FX_SEND]
        sent_at = now if fs[f, FS_START] <= now else fs[f, FS_START]
        fs[f, FS_BLOCK_BYTES] += send
        fs[f, FS_BLOCK_MIDW] += send * (sent_at + 0.5 * fs[f, FS_SEND_TIME])
        fs[f, FS_BLOCK_SENT] = sent_at
        fs[f, FS_BLOCK_END] = sent_at + fs[f, FS_SEND_TIME]
        if is_held[f] == 0:
            is_held[f] = 1
            held[n_held] = f
            n_held += 1
    n_senders = kept
    for lst, n_in in ((droppers, n_drop), (markers, n_mark)):
        kept = 0
        for i in range(n_in[0]):
            f = lst[i]
            if block[0, f] == 1 and is_held[f] == 0:
                lst[kept] = f
                kept += 1
            elif is_held[f] == 0:
                is_held[f] = 1
                held[n_held] = f
                n_held += 1
        n_in[0] = kept
    # the blocks ending with this step: their flows back in the lists, once each
    kept = 0
    for i in range(n_held):
        f = held[i]
        if (k + 1) % block[0, f] != 0:
            held[kept] = f
            kept += 1
            continue
        is_held[f] = 0
        if fs[f, FS_STATE] != 1.0:  # finished: nothing waits for them
            for c in (FS_DROPPED, FS_EXPOSED, FS_DELIV_NEW, FS_MARK_NEW, FS_BLOCK_BYTES,
                      FS_BLOCK_MIDW):  # fmt: skip
                fs[f, c] = 0.0
            continue
        if fs[f, FS_BLOCK_BYTES] > 0.0:
            senders[n_senders] = f
            n_senders += 1
        elif fs[f, FS_DROPPED] > 0.0:
            droppers[n_drop[0]] = f
            n_drop[0] += 1
        if fs[f, FS_DELIV_NEW] > 0.0:
            markers[n_mark[0]] = f
            n_mark[0] += 1
    held[n_flows] = kept
    return n_senders


@njit(cache=True, error_model="numpy")
def ack_drift(fs, ls, markers, n_mark, rv_ptr, rv_link, lb, hops) -> None:
    """The receivers of this step's deliveries (``markers[:n_mark]``, ``FS_DELIV_NEW``) send one
    ACK per data packet back along their ACK routes, and each ACK delays the departures after
    it at every link it crosses by its own transmission time: a back-to-back link's grid
    (``LS_GRID``) moves by ack_bytes / packet_bytes of a packet time per ACK, so the phases of
    two grids drift apart by the difference of the ACKs they carry (input_drop_shares)."""
    ack_share, pkt_bytes = hops[15][0], hops[15][1]
    rv_w, sub_rhops = hops[16], hops[17]
    sub_n, sub_rlinks = lb[0], lb[13]
    for i in range(n_mark):
        f = markers[i]
        shift = fs[f, FS_DELIV_NEW] / pkt_bytes * ack_share
        n_s = sub_n[f]
        if n_s > 0:  # UnoLB: the packets, so their ACKs, ride the subflows round robin
            shift /= n_s
            for s in range(n_s):
                for h in range(sub_rhops[f]):
                    shift_grid(ls, sub_rlinks[f, s, h], shift)
        else:
            for e in range(rv_ptr[f], rv_ptr[f + 1]):
                shift_grid(ls, rv_link[e], shift * rv_w[e])


@njit(cache=True, error_model="numpy")
def shift_grid(ls, link, packet_times) -> None:
    """Move link ``link``'s departure grid, if it has one, later by ``packet_times`` (mod 1)."""
    g = ls[link, LS_GRID]
    if g >= 0.0:
        g += packet_times
        ls[link, LS_GRID] = g - math.floor(g)


# Compiled without Numba's runtime (``_nrt=False``, and so is every kernel it calls): no array
# reference counts. With them, each array handed to a helper in the step loop cost an atomic
# increment and decrement (the inlined helpers' too: NRT_incref alone took ~9% of the 40%-load
# Fig. 10 run). The price: nothing in the step loop allocates; its working arrays come in
# ``scratch``.
@njit(cache=True, error_model="numpy", _nrt=False)
def advance(
    k_start,
    k_stop,
    dt_ps,
    fs,
    cs,
    cp,
    ls,
    rt_ptr,
    rt_link,
    rt_w,
    rv_ptr,
    rv_link,
    rv_w,
    ring,
    ring_pool,
    order,
    counters,
    active,
    busy,
    lb,
    loss_rng,
    hops,
    fx,
    calendar,
    block,
    scratch,
):
    """Run steps ``k_start`` .. ``k_stop - 1`` (step k covers [k dt, (k+1) dt)). ``order``
    lists the flows by start time; ``counters`` = [next flow of ``order`` to start, number of
    active flows, flows finished, number of busy links, flows marked ``FS_STOP`` not finished
    yet (-1: none marked)]; ``active[:n_active]`` are the running
    flows, ``busy[:n_busy]`` the links with arrivals or a non-empty (phantom) queue. Returns the
    step reached: ``k_stop``, or earlier when every flow has finished or, at the end of the step
    in which the last of them finished, every flow marked ``FS_STOP`` has. ``loss_rng``: each
    flow's SplitMix64 state for its packet losses (:func:`dropped_packets`). ``lb``: the UnoLB
    subflows (``sub_n[f]`` > 0: flow ``f`` spreads over them instead of its ``rt_*`` route; see
    :func:`unolb_reroute`). ``ring_pool``: where each running flow's delay line lies in ``ring``
    (:func:`ring_take`, :func:`ring_give`). ``rv_*``: the route of each flow's ACKs back to its sender, whose
    queueing delay its RTT includes (:func:`reverse_delay`). ``fx``: what each step reads of
    every running flow (``FX_*``), ``calendar``: which flows have something due at which step
    (:func:`mark_due`); a flow with nothing due that could send nothing at its last try
    (``FX_QUIET``) is passed over, its state untouched, until something is due for it.
    ``hops``: the links' levels and each route entry's bytes in the network
    (:func:`forward`). ``block``: feedback in blocks (``engine.fluid_blocks_per_rtt``):
    ``block[0, f]`` flow ``f``'s block in steps (a power of two; 1: every step) and
    ``block[0, n_flows]`` the largest; ``block[1, :block[1, n_flows]]`` the flows with
    something held for their block's end, ``block[2, f]`` 1 for them (:func:`hold_for_block`).
    ``scratch``: the step's working arrays, (each subflow's loss chance, a coded block's loss
    distribution (:func:`coded_losses`), the subflows' entropies before a move
    (:func:`reroute_subflows`), the step's NICs, senders, flows that lost bytes, their count,
    flows that delivered bytes, their count); their contents do not outlive a step."""
    n_flows = fs.shape[0]
    ring_ptr, ring_len = ring_pool[0], ring_pool[1]
    wide = ring.shape[1] > R_GOOD  # R_GOOD and after kept (N_R_NARROW: not)
    sub_n, sub_links, sub_lost, sub_rhops = lb[0], lb[2], lb[4], lb[14]
    subs = (lb[0], lb[1], lb[2])  # (the subflows' arrays alone: gentle_exceedance)
    n_sub_max, n_hop_max = sub_links.shape[1], sub_links.shape[2]
    base = rt_ptr[rt_ptr.shape[0] - 1]  # (UnoLB subflow hop entries from here: forward)
    ef = hops[3]
    sub_loss, block_dist, ent_before, nics, senders, droppers, n_drop, markers, n_mark = scratch
    k = k_start
    while k < k_stop:
        now = k * dt_ps
        nxt = int(counters[0])
        n_active = int(counters[1])
        if n_active == 0:
            if nxt >= n_flows:
                break
            # idle network: jump to the next start (queues keep draining meanwhile)
            first = int(fs[order[nxt], FS_START] // dt_ps)
            if first > k:
                if counters[3] == 0:
                    k = min(first, k_stop)
                    continue
        # 1. flows starting within this step
        step_end = now + dt_ps
        while nxt < n_flows and fs[order[nxt], FS_START] < step_end:
            f = order[nxt]
            fs[f, FS_STATE] = 1.0
            ring_take(ring_pool, f)
            cc_init(cs, cp, f)
            fx[f, FX_QUIET] = 0.0
            mark_due(calendar, k, f)
            active[n_active] = f
            n_active += 1
            nxt += 1
        counters[0] = nxt
        # 2. feedback arriving now: ACKs (one RTT after the send) and detected losses
        kept = 0
        row = k % calendar.shape[0]
        for i in range(n_active):
            f = active[i]
            if (calendar[row, f >> 6] >> np.uint64(f & 63)) & np.uint64(1) == 0:
                active[kept] = f  # nothing due: its delay line's slot is empty
                kept += 1
                continue
            fx[f, FX_QUIET] = 0.0
            slot = ring_ptr[f] + k % ring_len[f]
            wire = ring[slot, R_WIRE]
            if wire > 0.0:  # bytes off the wire link: they reach its next hop now (forward)
                e = int(fs[f, FS_WIRE_NEXT])
                ef[e, EF_CARRY] += wire
                ef[e, EF_MCARRY] += ring[slot, R_WIRE_M]
                fx[f, FX_NETQ] += wire
                if e < fx[f, FX_FIRST]:
                    fx[f, FX_FIRST] = e
                if ring[slot, R_WIRE_ACK] > fs[f, FS_WIRE_ACK]:
                    fs[f, FS_WIRE_ACK] = ring[slot, R_WIRE_ACK]
            elif fs[f, FS_WIRE_HOP] >= 0.0:  # an UnoLB flow's subflows: each to its next hop
                h_next = int(fs[f, FS_WIRE_HOP]) + 1
                e0 = base + f * n_sub_max * n_hop_max + h_next
                for s in range(sub_n[f]):
                    wire = ring[slot, R_SUBWIRE + 2 * s]
                    if wire > 0.0:
                        e = e0 + s * n_hop_max
                        ef[e, EF_CARRY] += wire
                        ef[e, EF_MCARRY] += ring[slot, R_SUBWIRE + 2 * s + 1]
                        fx[f, FX_NETQ] += wire
                        if h_next < fx[f, FX_FIRST]:
                            fx[f, FX_FIRST] = h_next
                if ring[slot, R_WIRE_ACK] > fs[f, FS_WIRE_ACK]:
                    fs[f, FS_WIRE_ACK] = ring[slot, R_WIRE_ACK]
            acked = ring[slot, R_ACK]
            ring_arrive = ring[slot, R_ARRIVE]
            due = ring[slot, R_TIMEOUT]
            free = ring[slot, R_FREE] if wide else 0.0
            nack = ring[slot, R_NACK] if wide else 0.0
            late_nack = ring[slot, R_LATE_NACK] if wide else 0.0
            # the ACKs that arrive now echo the marks of the bytes delivered one return trip
            # ago: their marked share (the ACKs' times were foreseen at the send, so the two
            # need not meet in one slot; the latest share holds until the next)
            deliv = ring[slot, R_DELIV]
            if deliv > 0.0:
                fs[f, FS_MARK_FRAC] = ring[slot, R_MARK] / deliv
                if fs[f, FS_WIRE_PS] > 0.0:  # (so do the queueing beyond the wire link's)
                    fs[f, FS_QBEYOND] = ring[slot, R_QBEYOND] / deliv
                    fs[f, FS_PBEYOND] = ring[slot, R_PBEYOND] / deliv
            if acked > 0.0 or free > 0.0:
                rtt = ring[slot, R_RTTW] / acked if acked > 0.0 else fs[f, FS_BASE_RTT]
                good = ring[slot, R_GOOD] if wide else acked
                p_queued = ring[slot, R_JITTER] / acked if acked > 0.0 else 0.0
                if fs[f, FS_WIRE_PS] > 0.0 and acked > 0.0:
                    rtt += fs[f, FS_QBEYOND]
                    p_queued = 1.0 - (1.0 - p_queued) * (1.0 - fs[f, FS_PBEYOND])
                fs[f, FS_PENDING] -= acked
                marked = acked * fs[f, FS_MARK_FRAC]
                fs[f, FS_INFLIGHT] -= acked + free
                if fs[f, FS_INFLIGHT] < 0.0:
                    fs[f, FS_INFLIGHT] = 0.0
                fs[f, FS_DELIVERED] += good
                fs[f, FS_ACKED] += acked
                fs[f, FS_MARKED] += marked
                if acked > 0.0:
                    kind = int(cp[f, P_KIND]) - CC_LAW
                    law_batch(cs, cp, fs, ring, slot, f, kind, now, acked, marked, rtt, p_queued,
                              loss_rng)  # fmt: skip
            if fs[f, FS_DUPACK_BYTES] > 0.0:  # (the wide ring: R_LOSTQ)
                lostq = ring[slot, R_LOSTQ]
                if acked > 0.0 or lostq > 0.0:
                    fast_retransmit_evidence(f, now, acked, lostq, cp[f, P_MSS], fs)
            for c in range(ring.shape[1]):
                ring[slot, c] = 0.0
            prefetch_row(ring, ring_ptr[f] + (k + 1) % ring_len[f], ring.shape[1])
            if nack > 0.0:  # a coded flow's NACKs arriving now (book_losses)
                fs[f, FS_LOSS_PENDING] += nack
                fs[f, FS_LOSS_AT] = now
            elif late_nack > 0.0:
                # NACKs of bytes the sender's timer took already: nothing to resend and no
                # subflow named (uno.transport.sender.Sender._on_nack)
                hear_loss_report(cs, cp, f, now, fs)
            if fs[f, FS_LOSS_AT] >= 0.0 and fs[f, FS_LOSS_AT] <= now:
                lost = fs[f, FS_LOSS_PENDING]
                fs[f, FS_LOSS_PENDING] = 0.0
                fs[f, FS_LOSS_AT] = -1.0
                resend(fs, f, lost)
                hear_loss_report(cs, cp, f, now, fs)
                if sub_n[f] > 0:
                    reroute_subflows(
                        f, now, cp[f, P_BASE_RTT], lb, hops, rt_ptr[n_flows], ent_before
                    )
            lost = 0.0
            if due > 0.0 and (fs[f, FS_WAIT] > 0.0 or fs[f, FS_VOID_BYTES] > 0.0):
                lost = timer_declares(f, k, due, fs)
            if lost > 0.0:
                # losses no later ACK revealed (a flow's tail, a lost window): the timer's,
                # each an RTO after its own send (uno.transport.sender.Sender._on_timer);
                # the controller hears of at most one timeout per base RTT
                resend(fs, f, lost)
                if fs[f, FS_TIMEOUTS] == 0.0 or now - fs[f, FS_LAST_TIMEOUT] >= fs[f, FS_BASE_RTT]:
                    fs[f, FS_TIMEOUTS] += 1.0
                    fs[f, FS_LAST_TIMEOUT] = now
                    cc_loss(cs, cp, f, now, False)
                if sub_n[f] > 0:
                    reroute_subflows(
                        f, now, cp[f, P_BASE_RTT], lb, hops, rt_ptr[n_flows], ent_before
                    )
            if fs[f, FS_DELIVERED] >= fs[f, FS_SIZE] * (1.0 - 1e-9) - RESIDUE_BYTES:
                # the last byte's ACK arrives at ``ring_arrive``: its batch is counted in the
                # step of its mean arrival, so up to a step after this one's end (less than a
                # byte short: the rounding of the shares its bytes were split into, on a flow
                # with nothing left to send or in flight, which waited for it forever)
                fs[f, FS_FINISH] = ring_arrive if ring_arrive > 0.0 else now
                fs[f, FS_STATE] = 2.0
                counters[2] += 1
                if fs[f, FS_STOP] > 0.0:
                    counters[4] -= 1
                ring_give(ring, ring_pool, f, k, fs, calendar)
            else:
                active[kept] = f
                kept += 1
        for w in range(calendar.shape[1]):
            calendar[row, w] = 0
        n_active = kept
        counters[1] = n_active
        # 3. sends
        # 3a. what each flow could send (window, pacing, NIC rate, bytes left); those with
        # anything to send listed in ``senders[:n_cand]`` (3b. and 3c. read them alone)
        n_nics = 0
        n_cand = 0
        for i in range(n_active):
            f = active[i]
            if fx[f, FX_QUIET] > 0.0:
                continue  # still nothing to send: window full or nothing left (FX_SEND = 0)
            span = dt_ps
            if fs[f, FS_START] > now:
                span = step_end - fs[f, FS_START]
            cwnd = cs[f, C_CWND]
            room = in_whole_packets(cwnd, cp[f, P_MSS]) - fs[f, FS_INFLIGHT]
            rate = fs[f, FS_NIC]
            if cp[f, P_PACED] > 0.0:
                paced = cwnd / cp[f, P_BASE_RTT]
                if paced < rate:
                    rate = paced
            elif cp[f, P_KIND] >= CC_LAW:  # a law that paces at a rate of its own
                paced = law_pacing(int(cp[f, P_KIND]) - CC_LAW, cs[f], cp[f]) / BPS_PS
                if 0.0 < paced < rate:
                    rate = paced
            send = rate * span
            if room < send:
                send = room
            if fs[f, FS_UNSENT] < send:
                send = fs[f, FS_UNSENT]
            if send <= 0.0:
                fx[f, FX_SEND] = 0.0
                if span == dt_ps:  # (a flow starting mid-step could send more next step)
                    fx[f, FX_QUIET] = 1.0
                continue
            fx[f, FX_SEND] = send
            senders[n_cand] = f
            n_cand += 1
            fs[f, FS_SEND_TIME] = send / rate
            nic = int(fs[f, FS_NIC_LINK])
            if ls[nic, LS_NDEM] == 0.0:
                nics[n_nics] = nic
                n_nics += 1
            ls[nic, LS_DEMAND] += send
            ls[nic, LS_NDEM] += 1.0
        # 3b. the host's NIC serves its flows round robin, one packet each (uno/net/nic.py):
        # max-min shares of the step's line capacity, by one round of water filling (the
        # hybrid's packet flows at the host take their turns too: LS_PKT_CLAIM)
        for j in range(n_nics):
            nic = nics[j]
            cap = ls[nic, LS_CAP] * dt_ps
            claim = ls[nic, LS_PKT_CLAIM]
            n_claims = ls[nic, LS_NDEM] + (1.0 if claim > 0.0 else 0.0)
            level = np.inf if ls[nic, LS_DEMAND] + claim <= cap else cap / n_claims
            ls[nic, LS_LEVEL] = level
            if claim > 0.0:
                if claim < level:
                    ls[nic, LS_SATSUM] += claim
                else:
                    ls[nic, LS_NBIG] += 1.0
        for i in range(n_cand):  # (each with FX_SEND > 0)
            f = senders[i]
            send = fx[f, FX_SEND]
            nic = int(fs[f, FS_NIC_LINK])
            if send < ls[nic, LS_LEVEL]:
                ls[nic, LS_SATSUM] += send
            else:
                ls[nic, LS_NBIG] += 1.0
        for j in range(n_nics):
            nic = nics[j]
            ls[nic, LS_NIC_SENDERS] = ls[nic, LS_NDEM]
            if ls[nic, LS_NBIG] > 0.0:
                cap = ls[nic, LS_CAP] * dt_ps
                ls[nic, LS_LEVEL] = (cap - ls[nic, LS_SATSUM]) / ls[nic, LS_NBIG]
        # 3c. the sends (their bytes go on their way in 4.)
        n_senders = 0
        for i in range(n_cand):
            f = senders[i]  # (the list is compacted in place: n_senders <= i)
            send = fx[f, FX_SEND]
            level = ls[int(fs[f, FS_NIC_LINK]), LS_LEVEL]
            if send > level:  # its share of a busy NIC, spread over the step
                send = level
                fx[f, FX_SEND] = send
                fs[f, FS_SEND_TIME] = dt_ps
            if send > 0.0:
                senders[n_senders] = f
                n_senders += 1
                fs[f, FS_LAST_SEND] = now if fs[f, FS_START] <= now else fs[f, FS_START]
            fs[f, FS_UNSENT] -= send
            fs[f, FS_INFLIGHT] += send
            fs[f, FS_SENT] += send
        for j in range(n_nics):
            nic = nics[j]
            ls[nic, LS_DEMAND] = 0.0
            ls[nic, LS_NDEM] = 0.0
            ls[nic, LS_SATSUM] = 0.0
            ls[nic, LS_NBIG] = 0.0
        # 4. the links, hop by hop: what the flows' bytes do on their way
        n_busy = forward(k, fx, fs, ls, active, n_active, busy, int(counters[3]), rt_ptr, lb, hops,
                         dt_ps, droppers, n_drop, markers, n_mark, ring, ring_ptr, ring_len,
                         calendar)  # fmt: skip
        counters[3] = n_busy
        # 4b. a flow whose block is more than a step (a long RTT) keeps what happened to its
        # sends, drops and deliveries for its block's last step, and files them there as one
        # batch (5., 5b., 5c.): its feedback at that time scale, its bytes moving every step
        if block[0, n_flows] > 1 or block[1, n_flows] > 0:
            n_senders = hold_for_block(k, now, senders, n_senders, droppers, n_drop, markers,
                                       n_mark, block, fs, fx)  # fmt: skip
        if hops[9][1] != 0:
            ack_drift(fs, ls, markers, n_mark[0], rv_ptr, rv_link, lb, hops)
        if hops[15][2] != 0.0:  # the deliveries' ACKs, bytes on their way back
            counters[3] = acks_out(fs, ls, markers, n_mark[0], rv_ptr, rv_link, rv_w, lb, busy,
                                   int(counters[3]), hops[15][0])  # fmt: skip
        # 5. what happens to this step's bytes, fed back one RTT later
        for i in range(n_senders):
            f = senders[i]
            send = fx[f, FX_SEND]
            n_sub = sub_n[f]
            if n_sub > 0:  # (each subflow's loss in sub_loss, for the loss reports below)
                qdelay = subflow_signals(f, ls, lb, sub_loss)
            else:
                qdelay = path_delay(f, rt_ptr, rt_link, rt_w, ls)
            # the RTT sample: base RTT + the data's queueing + the ACKs' on the reverse path
            if n_sub > 0 and sub_rhops[f] > 0:
                rdelay = subflow_reverse_delay(f, ls, lb)
            else:
                rdelay = reverse_delay(f, rv_ptr, rv_link, rv_w, ls)
            rtt = fs[f, FS_BASE_RTT] + qdelay + rdelay
            fs[f, FS_RDELAY] = rdelay
            # a wire flow's RTT samples take the queueing beyond its wire link as its bytes
            # meet it, a propagation after the send (5c.), and so does the slack of its gentle
            # test's chance of packet-level queueing; its ACKs' times take it now (the ACK
            # clock). Sampled now, a queue the bytes never meet made UnoCC's gentle test see
            # physical queueing (a full cut) ~3x as often as packets in the long-flow incast
            q_beyond = 0.0
            if fs[f, FS_WIRE_PS] > 0.0:
                q_beyond = delay_beyond_wire(f, fs, rt_ptr, rt_link, rt_w, ls, subs)
            fs[f, FS_QBEFORE] = qdelay - q_beyond
            n_ec = int(fs[f, FS_EC_N])
            # whole packets: the bytes of the flow the links dropped in this step (forward; its
            # bytes sent earlier and queued on the way, or sent now), in whole packets
            # (dropped_packets). This batch's ACKs are written whole and the lost bytes come
            # off the latest ACKs due (cut_acks, below): the bytes lost are the bytes not
            # acked, however long the bytes wait on the way. Coded flows: of them, those in
            # blocks that decode are absorbed, the rest resent (coded_losses)
            mss = cp[f, P_MSS]
            beyond, lost, failed, gone = False, 0.0, 0.0, 0.0
            if fs[f, FS_DROPPED] > 0.0:  # (nothing dropped: nothing to draw or reset)
                beyond = beyond_wire(f, fs)
                lost, failed, gone = coded_losses(f, n_ec, mss, fs, loss_rng, lb, block_dist)
            if n_sub > 0 and failed > 0.0:  # the subflows a loss report will name
                name_subflows(f, n_sub, n_ec, sub_loss, block_dist, sub_lost)
            if fs[f, FS_BLOCK_BYTES] > 0.0:  # the block's sends (4b.)
                ack = fs[f, FS_BLOCK_BYTES]
                sent_at = fs[f, FS_BLOCK_SENT]
                middle = fs[f, FS_BLOCK_MIDW] / ack
                sent_end = fs[f, FS_BLOCK_END]
                fs[f, FS_BLOCK_BYTES] = 0.0
                fs[f, FS_BLOCK_MIDW] = 0.0
            else:
                ack = send
                sent_at = now if fs[f, FS_START] <= now else fs[f, FS_START]
                middle = sent_at + 0.5 * fs[f, FS_SEND_TIME]
                sent_end = sent_at + fs[f, FS_SEND_TIME]
            arrive = sent_end + rtt
            # the batch's ACKs return from sent_at + rtt to ``arrive``; they count in the step
            # their mean arrival falls in, whose sends (spread over the step, as the ACKs) they
            # clock. Counting them one step boundary later would add half a step to every RTT
            # and cost a window-limited flow dt / (2 RTT) of its rate.
            lag = int(math.floor((middle + rtt - now) / dt_ps))
            lag = clamp_lag(f, lag, ring_len)
            slot = ring_ptr[f] + (k + lag) % ring_len[f]
            ring[slot, R_ACK] += ack
            if wide:  # (narrow: no coding, so what is decodable is what is acknowledged)
                ring[slot, R_GOOD] += ack
            ring[slot, R_RTTW] += ack * (rtt - q_beyond)
            mark_ring_due(calendar, fs, k + lag, f)
            prefetch_row(ring, ring_ptr[f] + (k + block[0, f] + lag) % ring_len[f], ring.shape[1])
            fs[f, FS_PENDING] += ack
            if k + lag > fs[f, FS_ACK_LAST]:
                fs[f, FS_ACK_LAST] = k + lag
            if lost > 0.0:
                lose_acks(f, k, lost, lost - failed, beyond, dt_ps, fs, ring, ring_ptr, ring_len)
            if fs[f, FS_DRAWS] > 0.0 and ack > 0.0:
                thr = fs[f, FS_QTHR]
                slack = thr - (rtt - q_beyond - cp[f, P_BASE_RTT])
                nic = int(fs[f, FS_NIC_LINK])
                # (the links before the wire link: the rest in 5c.)
                p_queued = wire_side_exceedance(
                    f, False, slack, nic, fs, rt_ptr, rt_link, rt_w, ls, subs, cp[f, P_MSS]
                )
                ring[slot, R_JITTER] += ack * p_queued
            sample = rtt - q_beyond
            if fs[f, FS_RTTMIN] > 0.0 and (
                ring[slot, R_RTTMIN] == 0.0 or sample < ring[slot, R_RTTMIN]
            ):
                ring[slot, R_RTTMIN] = sample
            if sent_at >= ring[slot, R_SENTMAX]:
                ring[slot, R_SENTMAX] = sent_at
                if fs[f, FS_RATE] > 0.0:
                    ring[slot, R_DSENT] = fs[f, FS_ACKED]
            if arrive > ring[slot, R_ARRIVE]:
                ring[slot, R_ARRIVE] = arrive
            fs[f, FS_LOST] += lost
            if failed > 0.0:
                if beyond:  # (sent a wire propagation before the drop, at the latest)
                    sent_at = min(sent_at, now - fs[f, FS_WIRE_PS])
                book_losses(
                    f, k, sent_at, rtt, failed, gone, n_ec, dt_ps, fs, ring, ring_ptr, ring_len,
                    calendar,
                )  # fmt: skip
        # 5b. the bytes the links dropped of flows that sent nothing this step (their earlier
        # bytes, queued on the way): lost all the same. Their timer runs from their send, at
        # the latest the flow's last (the packet sender's runs from a packet's own send): from
        # the drop, the bytes of one packet that a FIFO share lets out over many steps and a
        # full queue drops step by step would each time out apart, a timeout a sliver, where
        # the packet engine's one packet times out once (a one-packet flow of the 40%-load
        # Fig. 10 run heard 9)
        for i in range(n_drop[0]):
            f = droppers[i]
            if fs[f, FS_DROPPED] <= 0.0:
                continue  # a sender: counted above
            n_ec = int(fs[f, FS_EC_N])
            beyond = beyond_wire(f, fs)
            lost, failed, gone = coded_losses(f, n_ec, cp[f, P_MSS], fs, loss_rng, lb, block_dist)
            if lost <= 0.0:
                continue
            lose_acks(f, k, lost, lost - failed, beyond, dt_ps, fs, ring, ring_ptr, ring_len)
            fs[f, FS_LOST] += lost
            if failed <= 0.0:
                continue  # (coding absorbs them all)
            if sub_n[f] > 0:  # the subflows a loss report will name
                if n_ec == 0:
                    subflow_signals(f, ls, lb, sub_loss)
                name_subflows(f, sub_n[f], n_ec, sub_loss, block_dist, sub_lost)
            sent_at = fs[f, FS_LAST_SEND]
            if beyond:  # (sent a wire propagation before the drop, at the latest)
                sent_at = min(sent_at, now - fs[f, FS_WIRE_PS])
            # (the round trip as the flow's latest samples saw it)
            rtt = fs[f, FS_BASE_RTT] + fs[f, FS_QBEFORE] + fs[f, FS_QBEYOND] + fs[f, FS_RDELAY]
            book_losses(
                f, k, sent_at, rtt, failed, gone, n_ec, dt_ps, fs, ring, ring_ptr, ring_len,
                calendar,
            )  # fmt: skip
        # 5c. the bytes delivered this step and their marks: their ECN echoes return with the
        # ACKs of this step's deliveries, a base RTT (the fluid's bytes meet no propagation on
        # their way out but their wire link's: the rest is on the way back) and the ACKs'
        # queueing on from the middle of it; a wire flow's, with the queueing beyond its wire
        # link they met (its RTT samples', 5.)
        for i in range(n_mark[0]):
            f = markers[i]
            deliv = fs[f, FS_DELIV_NEW]
            marks = fs[f, FS_MARK_NEW]
            fs[f, FS_DELIV_NEW] = 0.0
            fs[f, FS_MARK_NEW] = 0.0
            if fs[f, FS_STATE] != 1.0:
                continue  # (finished: nothing waits for them)
            # (a block's deliveries: from its middle step; a flow with a wire link crossed its
            # propagation on the way out)
            back = (fs[f, FS_BASE_RTT] - fs[f, FS_WIRE_PS] + fs[f, FS_RDELAY]) / dt_ps
            back -= 0.5 * (block[0, f] - 1)
            lag = clamp_lag(f, int(math.floor(0.5 + back)), ring_len)
            slot = ring_ptr[f] + (k + lag) % ring_len[f]
            ring[slot, R_DELIV] += deliv
            ring[slot, R_MARK] += marks
            prefetch_row(ring, ring_ptr[f] + (k + block[0, f] + lag) % ring_len[f], ring.shape[1])
            if fs[f, FS_WIRE_PS] > 0.0:  # the queueing the bytes met beyond the wire link
                q_beyond = delay_beyond_wire(f, fs, rt_ptr, rt_link, rt_w, ls, subs)
                ring[slot, R_QBEYOND] += deliv * q_beyond
                kind = cp[f, P_KIND]
                if fs[f, FS_DRAWS] > 0.0:
                    thr = fs[f, FS_QTHR]
                    slack = thr - (fs[f, FS_QBEFORE] + q_beyond + fs[f, FS_RDELAY])
                    p_beyond = wire_side_exceedance(
                        f, True, slack, int(fs[f, FS_NIC_LINK]), fs, rt_ptr, rt_link, rt_w, ls,
                        subs, cp[f, P_MSS],
                    )  # fmt: skip
                    ring[slot, R_PBEYOND] += deliv * p_beyond
            mark_ring_due(calendar, fs, k + lag, f)
        k += 1
        if counters[4] == 0:
            break  # every flow the run waits for has finished (engine.stop_when_done)
    return k
