"""The fluid kernels' arguments: the state arrays grouped by what they describe.

Numba takes a namedtuple of arrays as one argument and reads its fields by name at no cost, so
:func:`uno.fluid.kernels.advance` takes these groups instead of two dozen positional arrays. The
columns of the 2-D tables are named in :mod:`uno.fluid.columns`. Every group is also a tuple in
its fields' order (the engine's attributes ``lb``, ``hops``, ``ring_pool`` are these objects).

Units: time in picoseconds, sizes in bytes, rates in bytes per picosecond.
"""

from __future__ import annotations

from collections import namedtuple

#: the flows: their state ``fs`` (``FS_*``), their controllers' state ``cs`` and constants
#: ``cp`` (rows of their laws), the compact table every step reads ``fx`` (``FX_*``), the flows
#: by start time ``order``, the running ones ``active[:counters[CT.running]]``, the run's
#: ``counters`` (``CT``), each flow's SplitMix64 state for its packet losses ``loss_rng`` and
#: the feedback blocks ``block`` (rows ``BL``)
Flows = namedtuple(
    "Flows", ["fs", "cs", "cp", "fx", "order", "active", "counters", "loss_rng", "block"]
)

#: the links: their state ``ls`` (``LS_*``) and the busy list ``busy[:counters[CT.busy]]`` (the
#: links with arrivals or a non-empty (phantom) queue)
#: the links' rows and the busy list; PFC's ingress queues (uno.fluid.pfc: their rows, and which
#: of them each route entry's queued bytes count in, CSR ``pf_ptr`` / ``pf_row`` / ``pf_w``, the
#: live list of those the step visits, ``pf_live``, and each link's row, ``pf_of``, -1: none,
#: which a subflow's hop reads by the link its previous hop takes now:
#: :func:`uno.fluid.pfc.pfc_step`)
Links = namedtuple("Links", ["ls", "busy", "pfc", "pf_ptr", "pf_row", "pf_w", "pf_live", "pf_of"])

#: each flow's route (CSR: ``rt_ptr[f]`` to ``rt_ptr[f + 1]`` in ``rt_link``, with the share of
#: its bytes crossing each link ``rt_w``, in path order) and its ACKs' route back (``rv_*``; with
#: ``switch.ack_priority`` only the receiver's NIC has weight)
Routes = namedtuple("Routes", ["rt_ptr", "rt_link", "rt_w", "rv_ptr", "rv_link", "rv_w"])

#: where each running flow's delay line lies in the ring (:func:`uno.fluid.rings.ring_take`):
#: each flow's first row (-1: none), its length now (steps), the longest it may grow to
#: (:func:`uno.fluid.rings.fit_lag`), the lengths a line can have (sorted: its classes), per
#: class a stack of free lines' first rows (from ``free_base[class]``, ``free_count`` of them)
#: and, in one-element arrays, the first row never handed out and the ring's level (the ``R_*``
#: columns it keeps: ``RING_NARROW``, ``RING_SAMPLES``, ``RING_RETX`` or ``RING_FULL``, any
#: others after them being QCN's and INT's, :mod:`uno.fluid.columns`); then the retransmission
#: timers beyond the end of their flow's line (:mod:`uno.fluid.timers`): a heap of them, its
#: rows in use and the next place in their filing order, each flow's timers in it; then
#: each flow's reach (the longest delay, steps, its feedback may meet: beyond ``cap``, in its
#: tail, :func:`uno.fluid.rings.tail_lag`), its tail's first row (-1: none) and its slots'
#: width in steps (0: the flow has no tail), and, in a two-element array, a tail's slots and
#: the ring's first INT column (-1: none)
RingPool = namedtuple(
    "RingPool",
    ["ptr", "length", "cap", "class_len", "free_rows", "free_base", "free_count", "top", "wide",
     "far", "far_meta", "far_count", "reach", "tail_ptr", "tail_width", "tail_meta"],
)  # fmt: skip

#: the delay lines: the ring (a row per slot, ``R_*`` columns), its pool (:data:`RingPool`) and
#: the calendar of the steps at which each flow has something due (a bitset row per step modulo
#: its span, :func:`uno.fluid.rings.mark_due`)
DelayLines = namedtuple("DelayLines", ["ring", "pool", "calendar"])

#: UnoLB's subflows (``n[f]`` > 0: flow ``f`` spreads over them instead of its route): each
#: flow's number of subflows, their hops and links (``links[f, s, h]``), their entropies, the
#: bytes each lost since the last loss report, when the flow last moved subflows (ps, -1:
#: never), the flow's SplitMix64 state for its moves, its (src, dst) hosts, the routing tables
#: the switches hash on (:func:`uno.fluid.balance.ecmp_path`: each host's node, the CSR of the
#: equal-cost next hops of (node, destination host), each edge's head, each node's salt), each
#: subflow's ACK links and their count (moved with it), each coded subflow's bytes dropped
#: and reaching dropping links in a step (``drops[f, s, 0]``, ``drops[f, s, 1]``); PLB's
#: settings ``plb_p`` and each flow's PLB state ``plb_s`` (:mod:`uno.fluid.balance`: a PLB
#: flow is one subflow that moves), REPS's ``reps_p`` and ``reps_s``, UnoLB's options
#: ``uno_p`` and, with ``affected: silent``, its subflows' ACK times ``uno_s``; each REPS
#: subflow's share of its flow's bytes ``share`` (:func:`uno.fluid.balance.reps_shares`; the
#: other balancers' subflows carry equal shares)
Subflows = namedtuple(
    "Subflows",
    ["n", "hops", "links", "entropy", "lost", "last_move_ps", "rng", "ends", "host_node",
     "nh_ptr", "nh_edges", "edge_dst", "node_salt", "ack_links", "ack_hops", "drops", "plb_p",
     "plb_s", "reps_p", "reps_s", "uno_p", "uno_s", "share"],
)  # fmt: skip

#: the route entries and the links by level (:func:`uno.fluid.forward.forward`): each link's
#: level, the number of levels (one-element array), each entry's integer fields ``ei``
#: (``EI_*``) and float fields ``ef`` (``EF_*``), the heads of the per-level lists of entries,
#: the per-level lists of links (``l_nxt``, ``l_head``), scratch of a level's links, the heads
#: of the per-level lists of split-hop entries; for the phase drops
#: (:func:`uno.fluid.phases.group_inputs`) the grids' settings (``GRID``), each link's dense
#: index while it drops (-1), the inputs' links, their figures (``FIG``), their count, scratch;
#: the ACKs' settings (``ACKS``), every ACK route's weights and each flow's subflows' ACK hops
#: (:func:`uno.fluid.phases.ack_drift`), and the one link that fed each link this step (-1:
#: none yet, -2: several, a send or a carry); for the INT records (:mod:`uno.fluid.int_records`)
#: each entry's index among its flow's stamping hops (-1: none), the settings (``INTS``), each
#: flow's latest record of every stamping hop and a packet's records (scratch); for the QCN
#: congestion points (:mod:`uno.fluid.qcn`) their rows, each link's row (-1: none), each route
#: entry's notices' return delay and the bytes it left at its link this step, the step's log of
#: those entries
Hops = namedtuple(
    "Hops",
    ["link_level", "n_levels", "ei", "ef", "e_head", "l_nxt", "l_head", "l_buf", "s_head",
     "grid", "l_dense", "g_key", "g_val", "g_n", "g_order", "acks", "ack_w", "ack_hops",
     "l_input", "int_at", "int_set", "int_rec", "int_pkt", "qcn", "qcn_row", "qcn_back",
     "qcn_in", "qcn_log"],
)  # fmt: skip

#: the step's working arrays (the step loop allocates nothing; their contents do not outlive a
#: step): each subflow's loss chance on its path, a coded block's loss figures (the subflows'
#: chances of losing a packet, then the distribution: :func:`uno.fluid.coding.coded_losses`),
#: the step's NICs, senders, flows that lost bytes and
#: their count, flows that delivered bytes and their count (one-element arrays); the tally of
#: where the steps' time goes (:data:`uno.fluid.cycles.TALLY`) and, with ``engine.record_rtts``,
#: the run's RTT bins (:mod:`uno.metrics.rtts`; packets, fractional; empty: not recorded): both
#: outlive the steps; each subflow's RTT less its flow's mean (ps)
StepScratch = namedtuple(
    "StepScratch",
    ["sub_loss", "block_dist", "nics", "senders", "droppers", "n_drop", "markers",
     "n_mark", "tally", "rtt_counts", "sub_rtt"],
)  # fmt: skip
