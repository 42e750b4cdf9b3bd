"""The columns of the fluid engine's state tables, one name per column (units in the comments).

State is struct-of-arrays: 2-D float64 arrays whose columns are named here (``LS_*`` per link,
``EI_*`` / ``EF_*`` per route entry, ``FS_*`` per flow, ``FX_*`` what every step reads of a
running flow, ``R_*`` per delay-line slot) and, for the congestion controllers, the columns
every law has first (:mod:`uno.cc.law`: ``C_CWND``, ``P_*``). The rows of the hot tables are
laid out by cache line, so the numbers are given by hand here, once, with the line each column
lies on; the kernels read the columns only by these names. The small index sets the kernels
read by position (the counters, the block rows, the phase drops' figures, the settings of the
grids and of the ACKs) are :func:`uno.core.layout.layout` instances.

Units: time in picoseconds, sizes in bytes, rates in bytes per picosecond.
"""

from __future__ import annotations

from uno.cc.law import P0, C
from uno.core.layout import layout

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
#             LS_ARR, the number of sources at the link (uno.fluid.jitter.link_jitter_exceedance)
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
LS_KMIN = 21  # RED on the physical queue, bytes (-1: none)
LS_KMAX = 22
LS_PACKETS = 23  # 1: packets (LS_EXT) crossed the link in the last step or wait in its queue
LS_PHKMIN = 24
LS_PHKMAX = 25
# what the phantom queue counts besides the data it keeps: PH_COUNTS_DROPS (the dropped bytes
# too) + PH_COUNTS_ACKS (the ACK bytes, switch.phantom.count_acks); bits, so that RED's span
# shares the line
LS_PH_COUNTS = 26
LS_KSPAN = 27  # RED's span, bytes: (kmax - kmin) / pmax (switch.ecn.pmax)
# the link's departures this step were back to back (its whole line rate): a packet port then
# sends on a fixed grid of one packet time, whose phase is set where its busy period began
LS_BACKLOG = 28
LS_GRID = 29  # that grid's phase, in [0, 1) of a packet time (-1: not back to back)
LS_MARKS = 30  # bytes the link marked (ECN) as they left it
LS_PAUSE = 31  # the share of this step the link is paused by PFC (uno.fluid.pfc), in [0, 1]
# line 4: a host's NIC shared round-robin by its flows (scratch within a step)
LS_DEMAND = 32  # bytes the host's flows could send this step
LS_NDEM = 33  # how many of them
LS_SATSUM = 34  # demand of those under the even share (LS_EVEN_SHARE)
LS_NBIG = 35  # how many are above it
LS_LEVEL = 36  # the water level: no flow sends more this step
# a host's NIC in the hybrid: the bytes its packet flows claim in this step (what they sent,
# or a whole step's worth while they wait for the NIC), one more claimant of the round robin
# (set by uno.fluid.hybrid before each step; 0 without packets)
LS_PKT_CLAIM = 37
LS_NIC_SENDERS = 38  # a host's NIC: how many of its fluid flows had bytes to send in the last step
LS_EVEN_SHARE = 39  # the line's even share among the claimants (inf: all demands fit)
# line 5: the last packet_jitter_exceedance computed at the link, and what it was computed
# from (its arguments follow from these: a memo, as the flows crossing a link in one step
# mostly ask the same)
LS_JIT_X = 40
LS_JIT_ARR = 41
LS_JIT_ARR2 = 42
LS_JIT_P = 43
# the share of its arrivals a full link drops of a packet that arrives at a random phase of its
# packet time (phases.input_drop_shares; LS_LOSS where no phase drops share it out): the
# hybrid's packets at a full port. Written in a step in which the link drops (LS_LOSS > 0)
LS_PKT_LOSS = 44
# with PFC, or the hybrid's INT records (INTS.keep_sent): the bytes the link had sent (LS_TX)
# before the latest step it was stepped in, and when that step began (ps: a time, which a change
# of the step size leaves in order, where a step's index does not); uno.fluid.pfc reads what an
# ingress queue's link let into its switch
LS_TX_BEFORE = 45
LS_TX_AT = 46
# faults (uno.fluid.faults): the share of the bytes leaving the link that are lost now (1: the
# link is down; p: each packet lost with probability p), and the bytes lost so
LS_FAULT = 47
LS_FDROP = 48
# folded links (uno.fluid.folding): how many alike links this one stands for (1: itself only);
# what a route entry hands it is divided by this, as each member receives that share
LS_FOLD = 49
# kept as LS_TX_BEFORE is: of the bytes sent, the fluid flows' (their ACKs included; the rest
# came from LS_EXT), after and before the latest step; the hybrid's packets add them to their
# port's own in the INT records they carry (uno.net.shared_link.fluid_sent_bytes)
LS_TXF = 50
LS_TXF_BEFORE = 51
LS_TX_END = 52  # (kept with them) when the latest step ended, ps
# of the bytes dropped (LS_DROP), the fluid flows' (their FIFO share; the rest came from LS_EXT,
# whose own drops the hybrid's packet ports decide and count)
LS_DROPF = 53
# the queue's growth rate, bytes/ps: its change per step, averaged over the last steps
# (uno.fluid.links.SLOPE_GAIN); the level the ACKs of bytes sent now meet a forward trip later
# is read ahead by it (uno.fluid.signals.delay_ahead)
LS_QSLOPE = 54
# how long, ps, that growth rate has kept its sign (0: it is 0); a trend is read ahead no longer
# than it has lasted
LS_QTREND = 55
#: the end of lines 0-3, before which lie the columns update_links reads or writes (it
#: prefetches them a few links ahead)
LS_UPDATE_END = LS_PAUSE + 1
N_LS = 56  # (all used: rows of seven whole cache lines, an odd number so that the rows'
#              first lines spread over every cache set; a stride of 4 lines would use a fourth)

# ---- route entries (uno.fluid.forward): integer and float fields, one row per entry -------
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

#: LS_PH_COUNTS: the bits
PH_COUNTS_DROPS = 1
PH_COUNTS_ACKS = 2

#: LS_MODE: which queue's level decides the marks (the low two bits), and whether the physical
#: queue marks at its mean over the step (MODE_STEP_MEAN added: engine.fluid_mark_step_mean)
MODE_NONE = 0
MODE_PHYSICAL = 1
MODE_PHANTOM = 2
MODE_EITHER = 3
MODE_KIND_BITS = 3
MODE_STEP_MEAN = 4

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
FS_LAST_SEND = 9  # when the flow's latest send began, ps (make_sends)
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
# feedback in blocks (hold_for_block): what the flow sent in its block so far, when (bytes x the
# middle of each send, for the bytes' mean), the latest send's start and its end, ps
FS_BLOCK_BYTES = 20
FS_BLOCK_MIDW = 21
FS_BLOCK_SENT = 22
FS_BLOCK_END = 23
# line 3: the ACKs' arrival (uno.fluid.arrivals)
FS_STATE = 24  # 0 waiting, 1 active, 2 finished
FS_PENDING = 25  # bytes of ACKs written in the delay line and not arrived yet (not coded flows)
FS_MARK_FRAC = 26  # the marked share of its latest delivered bytes whose echo has come back
# a wire flow's RTT samples: the queueing beyond the wire link as its latest delivered bytes met
# it (ps) and the chance of their packets' queueing there (UnoCC's gentle test)
FS_QBEYOND = 27
FS_PBEYOND = 28
FS_ACKED = 29  # bytes acknowledged
FS_MARKED = 30  # acknowledged bytes carrying an ECN echo
FS_BASE_RTT = 31  # ps, own path; a flow under one data packet: its own packet's
# line 4: the sends' feedback (uno.fluid.filing) and drops
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
# bytes acknowledged that were sent after the newest of FS_UNREVEALED: their evidence
# (fast_retransmit_evidence; FS_EVIDENCE_OLDEST, that of the oldest)
FS_EVIDENCE = 46
FS_VOID_BYTES = 47  # fast retransmit: bytes revealed whose R_TIMEOUT entries are still ahead (void)
FS_UNREVEALED = 48  # of FS_WAIT, the bytes whose ACKs' time is past, waiting for evidence
FS_TIMED_AHEAD = 49  # fast retransmit: bytes the timer took before their ACKs' time (R_LOSTQ)
FS_FAST_BYTES = 50  # bytes fast retransmit found lost
FS_TIMEOUTS = 51  # retransmission timeouts the controller heard of (see hear_timeout)
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
# a law that hears CNPs from the receiver's notification point (DCQCN, uno.cc.law's
# cnp_interval_ps): its least gap between CNPs (ps; 0: every whole marked ACK is one), when the
# next may go (ps), and the CNPs sent (uno.fluid.control.np_cnps)
FS_CNP_GAP = 63
FS_CNP_NEXT = 64
FS_CNPS = 65
# 1: the law's own timers run (``next_timer`` / ``on_timer``: advanced before each send) and it
# counts what it sends (``on_send``); uno.fluid.kernels.plan_sends, make_sends
FS_LAW_TIMERS = 66
# the longest feedback batch its law hears (ps; 0: a step): a step longer than this reaches the
# law as step / this batches in a row (uno.fluid.control.law_batch; FluidSimulation._grow_step)
FS_BATCH_PS = 67
# feedback in blocks, a law that reads a batch's least RTT sample (FS_RTTMIN): the least sample
# of the block's sends so far (ps, beyond-wire queueing excluded as R_RTTMIN; 0: none)
FS_BLOCK_RTTMIN = 68
# what its law hears as a packet sender's would, bits (HEARS_*): the bytes in flight before a
# batch as whole packets (``engine.fluid_whole_packets``: uno.fluid.control.in_flight_at_ack),
# a timeout for every packet its timer takes (``transport.*.report_every_timeout``, not one per
# base RTT at most: uno.fluid.control.hear_timeout)
FS_HEARS = 69
HEARS_WHOLE_PACKETS = 1
HEARS_EVERY_TIMEOUT = 2
# the flow's stop time (ps; 0: none; workload.flows[i].stop_us): from then on it sends nothing,
# new or resent, and an ACK arriving later does not finish it (uno.fluid.kernels.plan_sends)
FS_HALT = 70
# switch.trimming: the trimmed packets whose NACKs the flow heard (-1: its losses are dropped
# packets, not trimmed ones; uno.fluid.losses.book_losses, uno.fluid.control.hear_trims)
FS_TRIMS = 71
# of FS_DROPPED, the bytes lost silently, which a trimming switch does not trim: those faults
# took (down or lossy links, on the way out or their ACKs' way back) and those whose ACKs a
# full buffer squeezed out (uno.fluid.faults)
FS_FAULT_LOST = 72
# of the losses a step files for the flow, the share faults took (FS_FAULT_LOST / FS_DROPPED as
# they were drawn): a trimmed flow's others are NACKed, these found as untrimmed losses are
FS_FAULT_SHARE = 73
# switch.qcn (uno.fluid.qcn): the expected count of the switches' congestion notices carried
# from batch to batch (a batch's whole ones are heard), and the notices heard
FS_QCN_CARRY = 74
FS_QCN_HEARD = 75
# 1: other flows start once every flow of this one's tag has finished (workload ``after``): the
# kernel hands back to Python after the step it finishes in (uno.fluid.engine: FluidSimulation
# starts them)
FS_LEADS = 76
# bytes queued to be sent again before new ones: a coded flow's lost bytes, an uncoded flow's
# copies of bytes its timer declared lost though they arrived (spurious retransmissions:
# uno.fluid.losses.resend_copies); a coded flow's share of its latest sends that were such
# bytes, the missing packets of blocks the receiver holds the rest of
# (uno.fluid.coding.coded_losses); an uncoded flow's copies sent and not filed yet (bytes,
# FS_COPIES_UNFILED: their ACKs are duplicates, uno.fluid.filing.split_copies)
FS_RESEND_WAIT = 77
FS_RESEND_SHARE = 78
FS_COPIES_UNFILED = FS_RESEND_SHARE
# a coded flow's block timer at the receiver for a block whose first packet to arrive is a
# retransmission (ec.retransmit_timeout; FS_LOSS_DELAY otherwise), ps; the lost bytes of blocks
# of which nothing arrived that wait for the sender's timer, those of them queued to be sent
# again (a part of FS_RESEND_WAIT), and the share of its latest sends that were such bytes:
# their blocks open at the receiver with a retransmission (uno.fluid.losses.book_losses)
FS_RETX_LOSS_DELAY = 79
# (a flow with fast retransmit is uncoded: its column holds the evidence of the oldest of
# FS_UNREVEALED, uno.fluid.losses.fast_retransmit_evidence)
FS_EVIDENCE_OLDEST = FS_RETX_LOSS_DELAY
FS_OPEN_TIMED = 80
FS_OPEN_WAIT = 81
FS_OPEN_SHARE = 82
# an uncoded flow's copies sent of bytes its timer declared lost though they arrived (bytes, in
# all; the column a coded flow's FS_OPEN_SHARE takes)
FS_COPIES_SENT = FS_OPEN_SHARE
# switch.dci (uno.fluid.dci), a cross-DC flow whose receiver-side DCI switch keeps per-flow
# queues: the bytes its queue holds there and the marked ones among them; the queue's dequeue
# rate (bytes/ps; 0: no such queue) and the credit C_D it stamps on what it lets go (-1: none);
# the credit and rate the receiver's ACKs carry to it next and when the first of them gets
# there (ps; 0: none on the way); the round trip of propagation between the receiver and the
# switch (ps)
FS_PFQ = 83
FS_PFQ_M = 84
FS_PFQ_RATE = 85
FS_PFQ_CD = 86
FS_PFQ_NEXT_CD = 87
FS_PFQ_NEXT_RATE = 88
FS_PFQ_NEXT_AT = 89
FS_DCI_RTT = 90
# a law's receiver part (uno.cc.law.Law.receiver, MLCC's credit loop): the first column of its
# constants in ``cp`` and of its state in ``cs`` (0: none), and the share of a packet delivered
# that it has not heard yet
FS_RX_P = 91
FS_RX_S = 92
FS_RX_CARRY = 93
# the sender-side DCI switch's Switch-INT notices (near-source loop): the stamping hops before
# the flow's wire link (0: no notices), the propagation from the send to the notice's arrival
# at the sender (ps), the least gap between two notices (ps) and when the last was sent (ps)
FS_NS_HOPS = 94
FS_NS_BACK = 95
FS_NS_GAP = 96
FS_NS_LAST = 97
# the credit the per-flow queue stamped before FS_PFQ_CD, and since when it stamps FS_PFQ_CD
# (ps): bytes delivered now left the queue as long before as they queued after it
FS_PFQ_CD_PREV = 98
FS_PFQ_CD_AT = 99
# 1: the flow's law has a pacing rate of its own beyond its window's (uno.cc.law.Law's
# ``pacing_rate``, MLCC's min(R_NS, R-bar_DQM)), which the flow paces at even when its window
# paces (P_PACED)
FS_OWN_PACING = 100
# the first of the flow's stamping hops whose records its ACKs carry (uno.fluid.int_records):
# a cross-DC flow's receiver-side DCI switch erases the records of the hops before it
# (switch.dci, uno.fluid.dci); 0 for the others
FS_DCI_HOP0 = 101
# ps by which a packet sender's last ACK comes before the fluid's last byte's: the last packet's
# ACK is timed from the start of its serialisation at the NIC, and its hops serialise the last
# packet's own size, where the flow's base RTT (FS_BASE_RTT) has a full one's
# (uno.fluid.arrays.last_ack_early_ps; 0 without engine.fluid_last_packet)
FS_LAST_EARLY = 102
# the mean packet-level queueing (ps) the flow's last packet and its ACK meet where other flows'
# packets collide with them, which the fluid levels do not show: set at its last send with
# engine.fluid_last_packet (uno.fluid.jitter.last_packet_wait_ps), 0 before
FS_LAST_WAIT = 103
N_FS = 104  # (all used: rows of thirteen cache lines, an odd number, as N_LS)

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
#: and constants the law's own rows, which begin with the columns every law has (uno.cc.law's C
#: and P0), read here by these names
CC_LAW = 100

C_CWND = C.cwnd  # the window the law allows, bytes
N_C = C.size  # (the fewest state columns: a law's own are as many as it declares)

P_KIND = P0.kind  # CC_LAW + the law's registry kind
P_MIN_CWND = P0.min_cwnd
P_MAX_CWND = P0.max_cwnd  # inf: no cap
P_PACED = P0.paced  # 1: the window paces at cwnd / P_BASE_RTT
P_MSS = P0.mss
P_BASE_RTT = P0.base_rtt  # the base RTT the controller knows (ps)
P_INIT_CWND = P0.init_cwnd
P_DUP_ACKS = P0.dup_acks  # 1: duplicate ACKs reach the law
N_P = P0.size  # (the fewest constant columns: a law's own are as many as it declares)

# ---- rings (per-flow delay lines) ----------------------------------------------------------
# The ring is the run's largest array (a slot per step of an RTT for every flow running at
# once), and the first touch of its pages costs more than steps, so a run keeps only the columns
# its flows need (its level, ``RingPool.wide``): the first N_R_NARROW (RING_NARROW); those and
# the samples, up to N_R_SAMPLES, where a law reads a batch's least RTT sample or its
# delivery-rate sample (RING_SAMPLES: GEMINI, BBR, Annulus); up to N_R_RETX where a flow
# retransmits fast (RING_RETX); all N_R where a flow is coded or trimmed (RING_FULL). Any others
# after them are QCN's and INT's.
R_ACK = 0  # bytes acknowledged
R_MARK = 1  # ECN-marked bytes of R_DELIV (forward: marked as they left the links, as a
#             packet is marked at dequeue)
R_RTTW = 2  # sum of rtt x acked bytes
R_SENTMAX = 3  # latest send time among the bytes, ps (read only where bytes were acked)
R_ARRIVE = 4  # when the last of them is acknowledged (ps), for completion times
R_TIMEOUT = 5  # lost bytes (not revealed yet) whose retransmission timer expires at this step
R_JITTER = 6  # FS_DRAWS flows (UnoCC): sum of acked x the chance that a packet's RTT sample
#              exceeds FS_QTHR through packet-level queueing (uno.fluid.jitter)
R_DELIV = 7  # bytes delivered one return trip before (their ECN echoes come back now)
R_WIRE = 8  # bytes that left the flow's wire link (its route's long link, FS_WIRE_*) and reach
#             the next hop at this step (forward); R_WIRE_M: the marked ones among them
R_WIRE_M = 9
R_WIRE_ACK = 10  # when the ACKs of the flow's newest sends were due as they left (ps, the latest)
R_QBEYOND = 11  # a wire flow: sum of R_DELIV x the queueing delay beyond its wire link as they
#                 crossed it (ps); R_PBEYOND: x the chance of a packet's queueing there
R_PBEYOND = 12
R_SPURIOUS = 13  # bytes delivered whose ACKs come back after their retransmission timer, which
#                 expires at this step: the sender resends copies of them (uno.fluid.filing)
N_R_NARROW = 14
R_RTTMIN = 14  # smallest RTT sample (0: none; FS_RTTMIN flows)
R_DSENT = 15  # bytes the flow had acknowledged when the latest of them was sent (FS_RATE flows)
N_R_SAMPLES = 16
R_LOSTQ = 16  # fast retransmit: bytes lost whose ACKs were due at this step (take_acks)
N_R_RETX = 17
R_GOOD = 17  # wire bytes of decodable data (below RING_FULL: the acknowledged bytes)
R_FREE = 18  # bytes lost but absorbed by coding (leave flight with the ACKs; below RING_FULL: none)
R_NACK = 19  # bytes lost whose receiver's NACK reaches the sender at this step (coded, trimmed)
R_LATE_NACK = 20  # coded bytes the sender's timer took whose receiver's NACK arrives now
N_R = 21
#: the ring's levels (``RingPool.wide[0]``) and the columns each keeps
RING_NARROW, RING_SAMPLES, RING_RETX, RING_FULL = 0, 1, 2, 3
RING_WIDTH = (N_R_NARROW, N_R_SAMPLES, N_R_RETX, N_R)
# a run whose UnoLB flows have a wire hop (FS_WIRE_HOP) keeps two more columns a subflow: the
# bytes subflow s's WAN link let go that reach its next hop at this step (R_SUBWIRE + 2 s) and
# the marked ones among them (R_SUBWIRE + 2 s + 1)
R_SUBWIRE = N_R


# ---- the index sets the kernels read by position ----------------------------------------------
#: ``counters`` (int64): the next flow of ``order`` to start, the running flows, the flows
#: finished, the busy links, the flows marked ``FS_STOP`` not finished yet (-1: none marked),
#: the flows marked ``FS_LEADS`` finished; the batches whose ACKs came back later than their
#: flow's retransmission timeout after their send and their bytes
#: (:func:`uno.fluid.filing.late_acks`)
CT = layout(
    "Counters",
    ("next_start", "running", "finished", "busy", "waiting", "led", "late_batches", "late_bytes"),
)
#: the rows of ``block`` (int64, a column per flow and one more): each flow's block in steps (a
#: power of two; 1: every step), the last column the largest; the flows with something held for
#: their block's end, the last column their count; 1 for those flows
BL = layout("BlockRows", ("steps", "held", "is_held"))
#: the departure grids' settings (uint64): the salt of their phases, 1: phase drops on
GRID = layout("GridSettings", ("salt", "on"))
#: the ACKs' settings (float64): an ACK's share of a data packet's bytes (and of its time on a
#: link), a data packet's bytes, 1: the ACKs cross the links as bytes, 1: a batch's ACKs count
#: in the steps they arrive in (``engine.fluid_ack_spread``), 1: some link has a fault (a
#: batch's ACKs may be lost on their way back: uno.fluid.faults.ack_loss_share), the first of
#: the two delay-line columns of the switches' congestion notices (-1: no link is a QCN
#: congestion point, uno.fluid.qcn), the delay-line column of the rate the receivers' ACKs
#: carry, times the bytes delivered (MLCC's R-bar_DQM, uno.fluid.dci; -1: none), the chance
#: of a full buffer's data drops an ACK meets in its queue (0: ACKs never dropped there),
#: 1: the ACKs' reverse queueing is read ahead (``engine.fluid_ack_read_ahead``), 1: an UnoLB
#: flow's batch comes back subflow by subflow, each at its own RTT
#: (``engine.fluid_subflow_rtts``), the delay-line column of the duplicate ACKs of the copies
#: a timer resent of bytes that arrived, where a law hears them (-1: none,
#: uno.fluid.filing.late_acks), 1: a step's losses on either side of a flow's wire link are
#: booked each on its own side (``engine.fluid_wire_loss_sides``, uno.fluid.losses.beyond_share)
ACKS = layout(
    "AckSettings",
    ("share", "packet_bytes", "as_bytes", "spread", "faults", "qcn", "dqm", "squeeze", "ahead",
     "by_subflow", "dup", "sides"),
)  # fmt: skip
#: the figures of a dropping link's inputs (``g_val[link, figure, input]``): bytes arriving
#: through the input this step, the share of the link's packet times it fills (at most 1), 1:
#: its packets come on a grid at the link's rate, their phase on the link's grid, its loss
FIG = layout("InputFigures", ("arrivals", "slot_share", "on_grid", "phase", "loss"))
