"""The fluid engine (``engine.kind=fluid``): flows as rates, queues as continuous levels.

It reads the run's :class:`uno.scenario.Scenario` (the same topology, routes, flows, switch
marking and congestion-control parameters as the packet engine) into struct-of-arrays state and
advances it in fixed steps of ``engine.fluid_step_intra_rtt`` x the intra-DC base RTT inside the
Numba kernel :func:`uno.fluid.kernels.advance`. Once only flows with longer RTTs are left to
run (the short flows of a finite workload done), the step grows with the shortest RTT left, up
to ``engine.fluid_step_max_intra_rtt`` x the intra-DC base RTT
(:meth:`FluidSimulation._grow_step`, :func:`uno.fluid.rings.coarsen`). A flow whose RTT
spans many steps (an inter-DC flow) files what happened to its sends, drops and deliveries once
a block of steps, at most 1/``engine.fluid_blocks_per_rtt`` of its base RTT, instead of every
step, its bytes still moving every step (:meth:`FluidSimulation._set_blocks`,
:func:`uno.fluid.filing.hold_for_block`):

- **Senders** are window-based, as the packet transports: in each step a flow sends what its
  window allows, at most at its NIC rate, or at cwnd / base RTT when its controller paces, and
  at most what it has left (new bytes or bytes to resend). The window counts in whole packets
  as the packet sender's (a packet goes while the bytes in flight are below cwnd: cwnd rounded
  up to whole packets may be in flight). The flows of
  one host share its NIC as the packet hosts do (round robin, one packet each: max-min shares
  of the line, by one round of water filling), so a host never queues behind itself; they
  share what the step leaves after the bytes queued at the NIC and the ACKs the host's
  receivers send (a packet host queues its ACKs at once and hands the NIC data only when it is
  free: :func:`uno.fluid.kernels.nic_data_room`).
- **Links** are queues with a continuous level: arrivals minus departures at line rate, tail
  drop beyond the buffer. They advance hop by hop within a step (:func:`uno.fluid.forward.forward`):
  a link's arrivals are the flows' sends at their first hop and what the links before it let
  go in the same step, each flow's bytes at a link leaving in the link's departures / (queue +
  arrivals) share, so bytes are conserved link by link (a byte dropped upstream never reaches
  the next link). A byte reaches the links of its route in the step it is sent, up to its
  WAN link; what leaves that link (a route's longest, when its propagation is at least the
  intra-DC base RTT) crosses its propagation in the flow's delay line and reaches the next
  hop that much later (``engine.fluid_wire``, on by default;
  :func:`uno.fluid.forward.forward`): the receiving datacenter's links see an inter-DC flow's
  bytes half its base RTT after the send, as with packets. The rest of the base RTT (every
  other link's propagation, and the way back) is on the ACKs' way back. UnoLB's subflows
  cross their WAN link's propagation the same way, each to its own next hop (two delay-line
  columns a subflow). Phantom queues take the same arrivals
  and drain at their own rate. A byte leaving a link is marked with RED's probability at the
  (phantom) queue level, as the packet ports' ``set_marking`` sources say.
- **Feedback is delayed by each flow's own RTT**: what the network did to a step's bytes
  (acknowledged, marked, lost; the RTT sample = base RTT + queueing delay on the path + that
  of the ACKs on their way back, which wait in the reverse path's data queues) enters a
  per-flow delay line and reaches the controller one RTT later, so an inter-DC flow reacts ~128x
  later than an intra-DC one. A loss is detected a retransmission timeout after it (the packet
  engine's RTO rule; ``transport.dupack_threshold`` > 0: once that many packets sent after it
  are acknowledged), or, for erasure-coded flows, only when its block cannot be decoded: of the
  packets a coded flow loses to the links, those in blocks with more than m of their n + m
  packets lost (each lost with the drop fraction they met) are resent after the receiver's
  block timer, or after the sender's retransmission timeout when none of the block's packets
  arrived (the receiver has nothing to NACK); the others decode with their blocks
  (:func:`uno.fluid.coding.coded_loss_shares`). The resent packets go before new ones and
  complete the blocks they were resent for (a lost one fails its block only when more than m
  of the block's resent packets are lost); those of a block of which nothing arrived open it
  again, its receiver's timer ``ec.retransmit_timeout``.
- **A full queue drops by its inputs' packet phases** (``engine.fluid_phase_drops``, on by
  default; :func:`uno.fluid.phases.input_drop_shares`). A packet port whose buffer is full
  frees one slot per departure, and the first packet to arrive after it takes the slot: a link
  sending back to back at the full queue's own rate delivers its packets at a fixed phase of
  that queue's departure grid, and the input whose phase comes first takes every slot it
  wants while the one behind it loses nearly everything (drop-tail lock-out, Floyd &
  Jacobson 1992). So the fluid link's drops (its total is the fluid queue's) fall on its
  inputs (the link before each route entry) by the chance that their packets are not first
  in their packet time: grid inputs at their phase, others at random phases. A link's grid
  starts at a random phase (the run's seed) when its busy period begins, or on the grid of
  the one link that feeds it, passes on the grid of a single feeding link while not full,
  and drifts by the ACKs it carries (each delays the departures after it by its own
  transmission time; :func:`uno.fluid.phases.ack_drift`). With it off, every byte arriving at
  a full queue loses the same share.
- **Losses are whole packets.** A link drops the fraction of its arrivals that overflows the
  buffer (by input, above); a flow whose ``n`` packets reached links that dropped a fraction
  ``p`` of them in a step loses a binomial number (``n``, ``p``) of packets (drawn from the
  flow's own stream; the mean from 20 up; :func:`uno.fluid.losses.dropped_packets`), so a
  short flow crossing a lossy link loses a packet now and then and finishes untouched
  otherwise, rather than losing a sliver of every step and timing out every time (which
  doubled the short flows' timeouts on the Uno Fig. 10 traffic). A slice of a packet that met
  a link dropping all of it (a FIFO share lets a packet out over several steps) is a whole
  packet lost with the chance slice / packet, and a flow of less than a data packet has one
  packet, of its own size. Fast retransmit (``transport.dupack_threshold`` > 0) sees a loss
  once that many packets sent after it are acknowledged; what it misses waits for the
  retransmission timer, which runs from the lost bytes' send (at the latest their flow's
  last).
- **Controllers**: each flow's congestion-control law (:mod:`uno.cc.law`; UnoCC, DCTCP,
  GEMINI, MP-RDMA, DCQCN and BBR v1, PROBE_RTT included, given each batch's delivery-rate
  sample over the batch's flight time; HPCC, PowerTCP and Gear, given the newest packet's INT
  records: the laws whose signals the fluid engine computes), applied to
  each step's batch of ACKs (:mod:`uno.fluid.control`) with the constants the packet engines
  build for the flow, so the two can never disagree on a parameter. "Any packet of the
  epoch/window was marked" becomes "the expected number of marked packets, carried over,
  reached one". DCQCN's receiver (its notification point) sends a flow at most one CNP per
  ``cnp_interval_us``, at the first marked packet after the interval: the marked packets of
  each step's ACKs arrive evenly over the step, the expected count carried over, and the CNPs
  reach the law with the ACKs, a return trip after the marks
  (:func:`uno.fluid.control.np_cnps`); its rate-increase and alpha timers fire in order before
  each step's sends (its lazy timers, advanced to the step's start), and its byte counter
  counts the step's sends.
- **INT records** (``switch.int_telemetry``; :mod:`uno.fluid.int_records`): a stamping link's
  record is its state at the end of the step the flow's bytes crossed it (the step of the send
  up to the wire link, of the delivery beyond it): the link's level, its cumulative departures,
  the time and its line rate. They come back one RTT later through the flow's delay line, and
  a batch carries the flow's latest record of every stamping hop, put into a packet's
  ``max_records`` by the replacement rule, as the newest packet's records. Single-path routes
  only: with spraying or UnoLB a packet carries the records of the path it took, so INT with
  those balancers is refused (``lb.algo``), and so it is in the hybrid, whose packets would
  need records of the fluid links (``switch.int_telemetry.enabled``). A fluid link holds no
  queue below its rate, where paced packets meeting at a port queue a little: HPCC's two
  flows through one bottleneck ran it ~3% below the packet engine's utilisation
  (``tests/test_fluid_int.py``).
- **Load balancing**: ECMP flows take exactly the path the packet engine's switches hash them
  to (same entropy stream, hash and salts); packet spraying splits a flow evenly over its
  equal-cost next hops at every switch (its long-run share of each path); UnoLB (Uno paper
  §4.2, Alg. 2) keeps ``lb.unolb.subflows`` subflows on the paths of the packet UnoLB's first
  entropies, sends an equal share on each (its round robin), and on every loss report (timeout,
  or NACK of a coded flow), at most once per base RTT, moves the subflows that lost bytes since
  the last report onto the path of a random subflow that did not (``reroute: recent_ack``; a
  fresh random entropy, hashed as the switches do, when every subflow lost). As the Uno
  artifact (``lb=unolb_artifact``): ``affected: silent`` moves every subflow whose newest
  delivered bytes' ACK is more than half a base RTT old (and that did not move in the last base
  RTT), ``reroute: random`` to a fresh random entropy. A coded block's
  packets ride subflow j mod n, each lost with its subflow's drop fraction in the step
  (Poisson-binomial: :func:`uno.fluid.coding.spread_loss_shares`).

PLB (``lb=plb``) keeps each flow on one path, the packet PLB's first, and moves it to a fresh
random entropy by PLB's own rules (:func:`uno.lb.plb.plb_round_end` on each feedback batch's
acknowledged and marked bytes, rounds of a base RTT; :func:`uno.lb.plb.plb_loss_repaths` on a
loss report): a subflow of one (:func:`uno.fluid.balance.plb_acks`). REPS (``lb=reps``, its
Algorithm 1) spreads a flow over ``engine.fluid_reps_paths`` subflows on the entropies it
explores first, each carrying bytes inversely as its round trip (``reps_shares``); each round
of a base RTT one moves to the next entropy in turn with the chance its path marks its bytes,
as a packet's place in the window takes a new entropy at a marked ACK (``reps_acks``, both in
:mod:`uno.fluid.balance`); with ``lb.reps.freeze_us`` (the authors' code) a timeout freezes its
buffer, during which a moving subflow takes the path of one that stays, and after which every
subflow takes a random entropy. PLB and REPS hear the marks the receiver echoes (DCQCN's: one
packet's per CNP); a moving subflow's queued bytes move with it (``shift_queued``). An even
split would ignore what these balancers do (for UnoLB it lost 2.6x the packet engine's bytes
on the Uno Fig. 10 traffic).

- **PFC** (``switch.pfc.enabled``; :mod:`uno.fluid.pfc`): the packet engine's ingress queues
  and thresholds (the data class only); an ingress queue above Xoff pauses its link for the
  share of the next step its level takes to drain to Xon, which takes that share of the link's
  (or a host NIC's) capacity, so a paused link's queue grows and pauses spread upstream hop by
  hop; the bytes queued at a paused link wait for the line it keeps (its queueing delay, which
  times the flows' ACKs, over its recent unpaused share); a subflow's bytes count where its
  previous hop enters now. In the hybrid (routes only) the packets' ingress queues decide
  (:mod:`uno.fluid.hybrid_pfc`). The max-min engine takes it and never pauses. With PFC the
  step grows to at most one intra-DC RTT (``PFC_STEP_MAX_INTRA_RTT``): a pause acts on the
  next step, which must end before a paused link's ingress queue fills its headroom.

**Trimming** (``switch.trimming``): a switch port cuts a data packet it cannot queue to its
header, which goes on in the port's control lane to the receiver, whose NACK makes the sender
resend at once (uno/transport/sender.py). Here a trimmed flow's dropped bytes, drawn in whole
packets, come back as NACKs an RTT after their send (``R_NACK``; the RTT of the batch they
were sent in, whose queueing after the trimming port the header skips: at most a little
late), instead of waiting for fast retransmit or the timer; the controller hears a NACK per
packet and the balancer a loss report (:func:`uno.fluid.control.hear_trims`). The switches
serve the ACKs in the control lane, as with ``switch.ack_priority``. Not modelled: the
headers' and NACKs' own bytes on the links (64 B per trimmed packet of 4,160 B). Uncoded flows
only (with ``ec``: refused). In the hybrid a packet the fluid bytes squeeze out of a shared
trimming port is trimmed, as one its own queue has no room for.

**Faults** (``faults``, :mod:`uno.fluid.faults`): a failed link loses what leaves it from its
failure to its repair, a lossy one each packet with its probability, and the ACKs crossing
them on the way back in the same shares; these losses are found by fast retransmit or the
timer, never trimmed. The Table 1 correlated losses (``block_probabilities``) at their mean
packet loss rate: the clusters within a link's blocks are not modelled. Not in max-min (in
the hybrid the packet ports' own fault models drop its packets).

**Flows that wait for a group** (a workload's ``after``, :mod:`uno.fluid.chains`): a flow starts
its own delay after the last flow of the tag it names finished, in the step holding that time
(the kernel hands back to Python after a step in which such a flow finished). The hybrid
chains its packet flows only; max-min chains its flows at its events (a flow finishes at its
last byte's transfer plus its base RTT).

**Congestion notices** (``switch.qcn``, :mod:`uno.fluid.qcn`; Annulus's near-source loop): the
congestion points' links sample the data the flows leave in them every ``sample_bytes``, at
the queue of that point of the step, and each flow hears its share of the notices, with their
levels, after twice the propagation before the link (a flow on subflows: the links its
subflows are at). In the hybrid a packet port that is a congestion point on a link the fluid
flows share samples its packets at the link's level.

**The DCI switches' element** (``switch.dci``, :mod:`uno.fluid.dci`; MLCC's loops): a cross-DC
flow whose wire link joins two DCI switches waits in a per-flow queue at the receiver-side
one, drained at the rate its receiver's credit rounds set (the law's receiver part hears the
delivered bytes as packets, with the records of the links beyond the wire link); its ACKs
come as its bytes are delivered, past the queue, and carry R-bar_DQM back; the sender-side
switch's notices carry the records of the links before it. Not in the hybrid.

Not modelled, and refused with a message naming the setting: fast retransmit for
erasure-coded flows (``transport.dupack_threshold``: a coded flow's losses are found by its
blocks only), MP-RDMA's updates on duplicate ACKs. Not modelled: sprayed packets overtaking
one another (a packet sender's fast retransmit takes an overtaken packet as lost).

**ACKs** (``engine.fluid_ack_bytes``, on by default; :func:`uno.fluid.links.acks_out`): each
data packet delivered sends one ACK (64 B per 4,160-B data packet) back along the flow's ACK
route (the data's path reversed; with ``transport.ack_paths``, a flow on subflows too, the
paths of the receiver's cycled entropies, each link by the share of them that takes it:
:func:`uno.fluid.routes.cycled_ack_routes`), as bytes in the queues where ACKs share the data
queue (every port of the reverse route; with ``switch.ack_priority`` only the receiver's NIC,
the switches serving ACKs in a lane of their own): they take line time and buffer there, and
count in the phantom queue as ``switch.phantom.count_acks`` says. The queueing delay they meet
on the way back is in the RTT. A full buffer's leftover bytes take a 64-B ACK where a data
packet does not fit, so the packet ports drop far fewer ACKs than data (5% against 54% at the
WAN ports of the 40%-load Fig. 10 run when they dropped data). With ``engine.fluid_ack_losses``
(on by default) an ACK meets each link on its way back that dropped data in its last step with
its size's share of a data packet's chance there, the rule the hybrid drops its packets' ACKs
by at a full fluid link (:func:`uno.fluid.faults.ack_loss_share`); the ACKs a batch loses are
its packets the sender must find lost and resend. The size's share (1.5%) is below what the
packet ports show (the leftover bytes after a departure go to the first arrival, and an ACK
often comes first).

Units: times in ps, sizes in bytes, rates in bytes/ps inside the kernels.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd

from uno.core.budget import WallBudget
from uno.core.errors import ConfigError
from uno.core.rng import RngStreams
from uno.core.units import gbps_to_bps, ms_to_ps
from uno.fluid import columns as C
from uno.fluid.arrays import (
    cc_rows,
    first_line_lengths,
    flow_rows,
    hop_state,
    law_columns,
    link_rows,
    ring_lengths,
    ring_level,
    ring_pool,
    ring_rows_bound,
    route_wire,
    step_scratch,
    subflow_wire,
)
from uno.fluid.chains import FlowChains
from uno.fluid.dci import mark_queued, receiver_columns, receivers, reinserting_links, set_dci
from uno.fluid.faults import FaultSchedule
from uno.fluid.folding import fold_links
from uno.fluid.int_records import INTS, SLOT_FIELDS, int_state
from uno.fluid.kernels import advance
from uno.fluid.memory import DELAY_LINES, line_memory_limit_bytes, zeros_aligned
from uno.fluid.outside import OutsideFlows
from uno.fluid.pfc import entry_ingress, live_list, pfc_rows
from uno.fluid.qcn import QCN_FIELDS, qcn_rows, qcn_state
from uno.fluid.results import STALL_CHECK_STEPS, all_stalled, flows_table, ports_table, run_summary
from uno.fluid.rings import coarsen, refine
from uno.fluid.routes import SPLIT_LB, ack_priority_routes, flow_routes
from uno.fluid.sampling import Sampler, idle_samples
from uno.fluid.state import DelayLines, Flows, Links, RingPool, Routes
from uno.fluid.support import (
    check_fluid_support,
    law_batches_ps,
    law_reads_int,
    pow2_at_most,
    settled_step_rtt,
    step_intra_rtt,
)
from uno.fluid.timers import rescale_far_timers
from uno.lb.reps import explore_packets
from uno.metrics.progress import Snapshot
from uno.metrics.result import RunResult
from uno.metrics.rtts import RTT_BINS, rtt_report
from uno.scenario import Scenario, port_names, stop_flags


def take_delay_lines(pool, width: int, fs: np.ndarray, dt_ps: float):
    """The ring the flows' delay lines come from (:data:`uno.fluid.memory.DELAY_LINES`):
    address space for every line ``pool`` can hand out (:func:`ring_rows_bound`: lines start
    ``pool.length`` steps long and grow to at most ``pool.cap``, ``width`` columns each), of
    which only the rows the running flows' delays reach are ever touched; or, where the system
    cannot reserve that much, a ConfigError naming what sizes the longest lines: a line may
    have to hold a flow's losses until its retransmission timer expires."""
    rows, ring_len = ring_rows_bound(pool), pool.reach
    try:
        return DELAY_LINES.take(rows, width)
    except (OSError, MemoryError) as exc:
        gib = rows * width * 8 / 2**30
        raise ConfigError(
            "transport.rto_queue_factor",
            f"engine.kind=fluid cannot reserve the {gib:,.0f} GiB of address space its flows' "
            f"delay lines may grow to ({len(ring_len):,} flows, lines of up to "
            f"{int(ring_len.max()):,} steps of {dt_ps / 1e6:.2f} us, sized by their "
            f"retransmission timeouts of up to {fs[:, C.FS_RTO].max() / 1e9:,.1f} ms): shorter "
            "timeouts (transport.rto_us, transport.rto_queue_factor), a coarser step "
            f"(engine.fluid_step_intra_rtt) or engine.kind=packet ({exc.strerror or exc})",
        ) from None


#: how often (in steps) a run whose step may grow looks at the flows left (FluidSimulation.run)
LOOK_STEPS = 256

#: how often (in steps) a run with ``engine.fluid_step_settled_rtt`` looks at the flows: a
#: flow settles in a few of its RTTs
LOOK_SETTLED_STEPS = 32

#: with PFC the step grows to at most this many intra-DC base RTTs (:class:`FluidSimulation`)
PFC_STEP_MAX_INTRA_RTT = 1.0


class FluidSimulation:
    """One fluid run: the scenario's state as arrays, stepped by the kernels."""

    engine_name = "fluid"
    #: whether the engine runs the flows' congestion controllers
    runs_cc = True

    def __init__(self, cfg, scenario: Scenario, rng: RngStreams, plans=None, engine_name=None,
                 apart_links=None):  # fmt: skip
        """``plans``: the scenario's flows this engine runs (default: all of them);
        ``engine_name``: the ``engine.kind`` refusals name (the hybrid's, when it runs inside
        one); ``apart_links``: links no fold takes in (the hybrid's packets' links, with
        ``engine.hybrid_fold_packet_links`` false)."""
        check_fluid_support(cfg, engine_name or self.engine_name, self.runs_cc, plans)
        self._apart_links = () if apart_links is None else apart_links
        self.cfg = cfg
        self.scenario = scenario
        self.meta = scenario.meta()
        self.max_time_ps = ms_to_ps(cfg.engine.max_sim_time_ms)
        self.settled_rtt = settled_step_rtt(cfg.engine)
        #: the run stopped before its stop time, every flow left stalled (:meth:`run`)
        self.stopped_stalled = False
        #: the first step, as a fraction of the intra-DC base RTT (:func:`step_intra_rtt`)
        self.step_intra_rtt = step_intra_rtt(cfg, scenario.flows)
        self.dt_ps = float(self.step_intra_rtt * scenario.intra_ref.base_rtt_ps)
        self.dt_first_ps = self.dt_ps
        # the step is dt_first_ps x step_factor, a power of two, at most step_factor_max
        # (engine.fluid_step_max_intra_rtt; :meth:`_grow_step`)
        self.step_factor = 1
        self._rtt_after = None  # (_grow_step)
        #: flows outside this engine that bound its step as its own would (the hybrid's
        #: packet flows, which it sets)
        self.outside = OutsideFlows()
        cap = cfg.engine.fluid_step_max_intra_rtt
        if cfg.switch.pfc.enabled:  # (a pause acts on the next step: module docstring, PFC)
            cap = min(cap, PFC_STEP_MAX_INTRA_RTT)
        self.step_factor_max = pow2_at_most(cap / self.step_intra_rtt)
        #: sizes the kernel calls (uno.core.budget): each returns to Python within about
        #: its aim, for Ctrl-C and the progress watcher
        self.wall_budget = WallBudget()
        self.k_done = 0
        self.n_finished = 0
        self.now_ps = 0
        plans = scenario.flows if plans is None else list(plans)
        self.flows = plans
        self.port_names = port_names(scenario.routing)
        self.ls = link_rows(scenario, cfg.engine.fluid_mark_step_mean)
        self.faults = FaultSchedule(cfg.faults, self.port_names)
        self.faults.apply(0, self.ls)
        self._build_flows(cfg, rng)
        self.samples = idle_samples(len(plans))  # (the step loop's: uno.fluid.sampling)
        consts = self.cp if self.runs_cc else None
        self.fs[:, C.FS_BATCH_PS] = law_batches_ps(
            plans, consts, self.fs[:, C.FS_BASE_RTT], self.dt_first_ps, self.step_intra_rtt,
            cfg.engine.fluid_batch_rtt, self._may_settle)  # fmt: skip

    # ---- setup ----------------------------------------------------------------------------
    #: whether the engine may fold alike links (engine.fluid_fold_links; not the max-min)
    folds_links = True

    def _fold_links(self, cfg, routes):
        """The routes with their groups of alike links folded (:mod:`uno.fluid.folding`,
        ``engine.fluid_fold_links``); the links' ``LS_FOLD`` and ``link_rep`` set. Not where a
        link's own state reaches beyond its bytes: PFC's pauses, INT records, QCN's notices,
        the DCI element, faults, or with another balancer than spraying (the hybrid's packets
        on a folded link count in its group's mean: :func:`uno.fluid.links.fold_packet_bytes`;
        ``apart_links`` stay apart)."""
        self.link_rep = np.arange(len(self.ls), dtype=np.int64)
        sw = cfg.switch
        if not (
            cfg.engine.fluid_fold_links
            and self.folds_links
            and cfg.lb.algo in SPLIT_LB
            and not (sw.pfc.enabled or sw.int_telemetry.enabled or sw.qcn.enabled)
            and not (sw.dci.enabled or self.faults.any)
        ):
            return routes
        delay_ps = np.array([e.delay_ps for e in self.scenario.routing.edges], dtype=np.int64)
        routes, fold, self.link_rep = fold_links(routes, self.ls, delay_ps, self._apart_links)
        self.ls[:, C.LS_FOLD] = fold
        return routes

    def _build_flows(self, cfg, rng: RngStreams) -> None:
        """The per-flow arrays, built for all flows at once (:mod:`uno.fluid.arrays`): flow
        state ``fs``, controller state ``cs`` and parameters ``cp``, routes
        (:func:`uno.fluid.routes.flow_routes`), delay lines, the balancers' state ``lb``, the
        route entries ``hops``, and the step's scratch."""
        sc = self.scenario
        routing = sc.routing
        plans = self.flows
        n = len(plans)
        specs = [p.spec for p in plans]
        src = np.fromiter((s.src for s in specs), dtype=np.int64, count=n)
        dst = np.fromiter((s.dst for s in specs), dtype=np.int64, count=n)
        n_packets = np.fromiter((p.n_packets for p in plans), dtype=np.int64, count=n)
        coded = np.fromiter((p.ec_timeout_ps is not None for p in plans), dtype=bool, count=n)
        # the packets each flow sends once: its data and, coded, each block's parity (each
        # block of up to ec.data_packets data packets gets its own)
        n_sent = n_packets.copy()
        n_sent[coded] += -(-n_packets[coded] // cfg.ec.data_packets) * cfg.ec.parity_packets
        max_hops = max((p.path.hops for p in plans), default=1)
        explore = np.fromiter(
            (explore_packets(p.ctx.bdp_bytes, p.ctx.mss_bytes, cfg.lb.n_entropies) for p in plans),
            dtype=np.int64, count=n,
        )  # fmt: skip
        routes, lb = flow_routes(cfg, sc, specs, src, dst, n_sent, max_hops, rng, explore)
        routes = self._fold_links(cfg, routes)
        nic_link = np.array([routing.out_edges[h][0] for h in routing.host_nodes], dtype=np.int64)
        self.nic_link = nic_link  # (each host's NIC link)
        fs = flow_rows(cfg, sc, plans, src, n_packets, coded, n_sent, nic_link)
        # every ACK's way back, for the drift its transmission gives the grids of the links it
        # crosses (phases.ack_drift), whichever lane it waits in
        ack_w, ack_hops = routes.rv_w.copy(), lb.ack_hops.copy()
        if cfg.switch.control_lane:
            routes = ack_priority_routes(routes, lb, nic_link)
        ring_len = ring_lengths(routing, routes, src, dst, fs, self.dt_ps)
        self.fs = fs
        reads_int = (
            self.runs_cc
            and cfg.switch.int_telemetry.enabled
            and any(law_reads_int(p.cc_name) for p in plans)
        )
        self.cp = cc_rows(cfg, plans) if self.runs_cc else np.zeros((n, C.N_P))
        # (engine.fluid_step_settled_rtt) a law that reads INT hears each ACK's records of the
        # queues: a coarser step coarsens them (Gear's incast FCTs moved by 19-20%), so its
        # flows never settle
        self._may_settle = np.fromiter((not law_reads_int(p.cc_name) for p in plans), dtype=bool,
                                       count=n)  # fmt: skip
        state_columns = (
            law_columns(fs, self.cp, plans, cfg.cc, cfg.engine.fluid_whole_packets)
            if self.runs_cc
            else C.N_C
        )
        # the laws' receiver parts (MLCC's credit loop at the DCI switches: uno.fluid.dci)
        self._receivers = receivers(cfg, plans) if self.runs_cc else np.zeros(n, dtype=bool)
        rx_rate = np.array([routing.edges[nic_link[d]].rate_bps for d in dst], dtype=np.float64)
        self.cp, state_columns, rx_p, rx_s = receiver_columns(
            cfg, plans, self._receivers, self.cp, state_columns, rx_rate
        )
        level = ring_level(fs)
        # the QCN congestion points (uno.fluid.qcn): two columns for their notices
        self._qcn_points = qcn_rows(cfg.switch.qcn if self.runs_cc else None, sc)
        width = C.RING_WIDTH[level]
        self.qcn_col = -1
        if len(self._qcn_points[0]):
            self.qcn_col = width
            width += 2
        self.dqm_col = -1  # (the rate the receivers' ACKs carry, times the bytes)
        if self._receivers.any():
            self.dqm_col = width
            width += 1
        self.dup_col = width if (self.cp[:, C.P_DUP_ACKS] > 0.0).any() else -1  # (filing.py)
        width += self.dup_col >= 0
        # (memory kept from the process's last run, all zero: uno.fluid.memory)
        # the INT records (uno.fluid.int_records), three columns a stamping hop after the rest
        n_entries = len(routes.rt_link) + lb.links.size
        ints = None
        if reads_int:
            salt = int(rng.stream("int_ties").integers(0, 2**62))
            also = reinserting_links(routing, cfg.switch.dci)
            ints = int_state(routing, cfg.switch.int_telemetry, routes.rt_ptr, routes.rt_link,
                             n_entries, salt, width, also)  # fmt: skip
        self.int_col = -1 if ints is None else width
        if ints is not None:
            width += SLOT_FIELDS * int(ints[1][INTS.hops])
        pool = ring_pool(ring_len, first_line_lengths(ring_len, fs, self.dt_ps), level,
                         cfg.engine.fluid_line_slots, self.int_col)  # fmt: skip
        self._ring_memory, ring = take_delay_lines(pool, width, fs, self.dt_ps)
        self.cs = np.zeros((n, state_columns))
        self.rt_ptr, self.rt_link, self.rt_w = routes.rt_ptr, routes.rt_link, routes.rt_w
        self.rv_ptr, self.rv_link, self.rv_w = routes.rv_ptr, routes.rv_link, routes.rv_w
        self.ring, self.ring_pool, self.ring_len = ring, pool, ring_len
        self.line_memory_limit_bytes = line_memory_limit_bytes()
        self.chains = FlowChains(plans, fs)  # (workload ``after``: their starts wait)
        self.order = np.argsort(fs[:, C.FS_START], kind="stable").astype(np.int64)
        # what each step reads of every running flow, and which flows have something due at
        # which step (a row per step, modulo a span of the longest delay line: the lines hold
        # every timer and loss report)
        self.fx = zeros_aligned(n, C.N_FX)
        span = int(ring_len.max(initial=1))
        self.calendar = np.zeros((span, max(1, (n + 63) // 64)), dtype=np.uint64)
        # the flows the run waits for (engine.stop_when_done; -1: none among this engine's)
        waits = stop_flags(cfg.engine.stop_when_done, (p.spec.tag for p in plans))
        fs[:, C.FS_STOP] = waits
        self.n_waited = int(waits.sum())
        self.counters = np.zeros(C.CT.size, dtype=np.int64)
        self.counters[C.CT.waiting] = self.n_waited or -1
        # feedback in blocks (engine.fluid_blocks_per_rtt; filing.hold_for_block)
        self.block = np.zeros((C.BL.size, n + 1), dtype=np.int64)
        self._set_blocks()
        self.active = np.zeros(n, dtype=np.int64)
        self.busy = np.zeros(len(self.ls), dtype=np.int64)
        # each flow's stream for its whole-packet losses, seeded from the run's seed
        self.loss_rng = rng.stream("fluid/losses").integers(0, 1 << 62, n, dtype=np.uint64)
        self.lb = lb
        self.hops = hop_state(len(self.ls), routes.rt_ptr, routes.rt_link, routes.rt_w, lb.n,
                              lb.hops, lb.links, ack_w, ack_hops)  # fmt: skip
        if ints is not None:
            self.hops = self.hops._replace(int_at=ints[0], int_set=ints[1], int_rec=ints[2],
                                           int_pkt=ints[3])  # fmt: skip
        # full drop-tail queues drop by their inputs' packet phases (phases.input_drop_shares)
        grid = self.hops.grid
        grid[C.GRID.salt] = rng.stream("fluid/grid_phases").integers(0, 1 << 63, dtype=np.uint64)
        grid[C.GRID.on] = 1 if cfg.engine.fluid_phase_drops else 0
        pkt = sc.data_bytes  # (a full data packet's wire bytes, its header included)
        acks = self.hops.acks
        acks[C.ACKS.share] = sc.ack_bytes / pkt
        acks[C.ACKS.packet_bytes] = pkt
        acks[C.ACKS.as_bytes] = 1.0 if cfg.engine.fluid_ack_bytes else 0.0
        acks[C.ACKS.spread] = 1.0 if cfg.engine.fluid_ack_spread else 0.0
        acks[C.ACKS.ahead] = 1.0 if cfg.engine.fluid_ack_read_ahead else 0.0
        acks[C.ACKS.by_subflow] = 1.0 if cfg.engine.fluid_subflow_rtts else 0.0
        acks[C.ACKS.sides] = 1.0 if cfg.engine.fluid_wire_loss_sides else 0.0
        acks[C.ACKS.faults] = 1.0 if self.faults.any else 0.0
        # (ACKs in the switches' control lane meet no full data queue)
        squeezed = cfg.engine.fluid_ack_bytes and cfg.engine.fluid_ack_losses
        if squeezed and not cfg.switch.control_lane:
            acks[C.ACKS.squeeze] = acks[C.ACKS.share]
        acks[C.ACKS.dqm], acks[C.ACKS.dup] = self.dqm_col, self.dup_col
        self._set_wire(cfg.engine.fluid_wire)
        self._set_qcn()
        self._set_dci(cfg, rx_p, rx_s, rx_rate, ints is not None)
        # PFC's ingress queues (uno.fluid.pfc), and which of them each route entry counts in
        self.pfc, self.pf_of = pfc_rows(cfg, sc)
        self.pf_live = live_list(len(self.pfc))
        n_rt = len(self.rt_link)
        self.pf_ptr, self.pf_row, self.pf_w = entry_ingress(
            self.rt_ptr, self.rt_link, self.rt_w, self.hops.ei[:n_rt, C.EI_GSTART], self.pf_of
        )
        rtt_bins = RTT_BINS if cfg.engine.record_rtts else 0  # (engine.record_rtts)
        self.scratch = step_scratch(n, len(self.ls), lb.links.shape[1],
                                    int(fs[:, C.FS_EC_M].max(initial=0)), rtt_bins)  # fmt: skip

    def _set_wire(self, on: bool) -> None:
        """Each flow's wire link (``engine.fluid_wire``): a route's
        (:func:`uno.fluid.arrays.route_wire`) or, for UnoLB flows, its subflows' hop
        (:func:`uno.fluid.arrays.subflow_wire`; the ring then gets two columns a subflow).
        With the option off, ``FS_WIRE_NEXT`` = ``FS_WIRE_HOP`` = -1."""
        fs = self.fs
        fs[:, C.FS_WIRE_NEXT] = -1.0
        fs[:, C.FS_WIRE_HOP] = -1.0
        fs[:, C.FS_WIRE_PS] = 0.0
        fs[:, C.FS_WIRE_DROP] = 0.0
        if not on or len(self.flows) == 0 or len(self.rt_link) == 0:
            return
        link_delay = self._link_delays_ps()
        # (a link of a datacenter's fabric is shorter than its base RTT by far; a WAN link is
        # not, whatever the step)
        long_ps = self.scenario.intra_ref.base_rtt_ps
        lb = self.lb
        if subflow_wire(fs, lb.n, lb.hops, lb.links, link_delay, long_ps):
            rows = self.ring.shape[0]
            self.free_delay_lines()  # (untouched yet)
            width = C.R_SUBWIRE + 2 * lb.links.shape[1]  # (after the RING_FULL columns)
            self.ring_pool.wide[0] = C.RING_FULL
            if self.qcn_col >= 0:  # (the congestion points' two columns after them)
                self.qcn_col = width
                width += 2
            self._ring_memory, self.ring = DELAY_LINES.take(rows, width)
        route_wire(fs, self.hops, self.rt_ptr, self.rt_link, lb.n, link_delay, long_ps)

    def _set_dci(self, cfg, rx_p, rx_s, rx_rate, has_int: bool) -> None:
        """Each cross-DC flow's part in the DCI switches' element (after the wire links:
        :func:`uno.fluid.dci.set_dci`), its receiver's part at ``rx_p`` / ``rx_s`` and a new
        per-flow queue's rate (``switch.dci.initial_rate_gbps``, null: the receiving host's,
        ``rx_rate``, bit/s); such a flow files its feedback every step."""
        init = cfg.switch.dci.initial_rate_gbps
        pfq_rate = rx_rate if init is None else np.full(len(rx_rate), float(gbps_to_bps(init)))
        set_dci(cfg, self.fs, self.flows, self._receivers, rx_p, rx_s, self.scenario.routing,
                self.rt_ptr, self.rt_link, self.hops.int_at, has_int, pfq_rate)  # fmt: skip
        self._set_blocks()

    def _link_delays_ps(self) -> np.ndarray:
        """Each link's propagation (ps)."""
        edges = self.scenario.routing.edges
        return np.fromiter((e.delay_ps for e in edges), dtype=np.float64, count=len(edges))

    def _set_qcn(self) -> None:
        """The QCN congestion points' arrays (:func:`uno.fluid.qcn.qcn_state`; after the wire
        links, which their notices' return delays read) and their delay-line columns."""
        points, row_of = self._qcn_points
        if not len(points):
            return
        fs = self.fs  # (FS_WIRE_HOP: -1 but for flows on subflows with a wire link)
        state = qcn_state(points, row_of, self.rt_ptr, self.rt_link, self.rt_w, self.hops.ei,
                          self._link_delays_ps(), fs[:, C.FS_WIRE_HOP].astype(np.int64),
                          fs[:, C.FS_WIRE_PS])  # fmt: skip
        self.hops = self.hops._replace(**dict(zip(QCN_FIELDS, state, strict=True)))
        self.hops.acks[C.ACKS.qcn] = self.qcn_col

    # ---- running --------------------------------------------------------------------------
    def kernels(self) -> tuple:
        """The compiled kernels the run calls first (:func:`uno.core.jit_cache.announce_compile`)."""
        return (advance,)

    def progress_snapshot(self) -> Snapshot:
        """What the progress watcher shows (:mod:`uno.metrics.progress`); reads only."""
        done, total, started, late = self.required_work(self.now_ps)
        return Snapshot(self.now_ps, done, total, started, late, self.n_finished,
                        len(self.flows), self.k_done, "fluid steps")  # fmt: skip

    def required_work(self, now_ps: float, delivered=None) -> tuple[float, float, bool, bool]:
        """The required flows' (``engine.stop_when_done``) bytes delivered and their bytes;
        whether every one has started by ``now_ps``; whether one starts at or after the stop
        time. ``delivered``: each flow's bytes delivered (default: the steps', a finished
        flow's whole size)."""
        fs = self.fs
        req = fs[:, C.FS_STOP] > 0.0
        size = fs[req, C.FS_SIZE]
        if delivered is None:
            got = np.minimum(fs[req, C.FS_DELIVERED], size)
            got = np.where(fs[req, C.FS_STATE] == 2.0, size, got)
        else:
            got = delivered[req]
        start = fs[req, C.FS_START]
        known = ~self.chains.waiting(fs)[req]  # (a chained flow's start: once its group is done)
        return (
            float(got.sum()),
            float(size.sum()),
            bool((start <= now_ps).all()),
            bool((start[known] >= self.max_time_ps).any()),
        )

    def _busy_from(self, k: int) -> int:
        """The step from which the kernel has work: ``k``, or with nothing running and no
        link busy, the step of the next flow start (the kernel skips there at once)."""
        counters = self.counters
        nxt = int(counters[C.CT.next_start])
        if counters[C.CT.running] or counters[C.CT.busy] or nxt >= len(self.flows):
            return k
        return max(k, int(self.fs[self.order[nxt], C.FS_START] // self.dt_ps))

    def run(self, measure_memory: bool = False) -> RunResult:
        """Step until every flow finished (or every flow with a tag of ``engine.stop_when_done``)
        or ``engine.max_sim_time_ms``; collect the tables."""
        cfg = self.cfg
        sampler = Sampler(self, cfg) if cfg.engine.sample_interval_us > 0 else None
        self._install_samples(sampler)
        grows = self.step_factor_max > 1
        adapts = self.adapts
        look_steps = self.look_steps
        looked_start = -1
        self.k_done = 0
        self.advance(0, 0)  # (its kernel loaded before the run's time: a call of no step)
        t0 = time.perf_counter()
        k = 0
        budget = self.wall_budget
        while True:
            dt = self.dt_ps
            k_stop = int(self.max_time_ps // dt)
            if k >= k_stop:
                break
            # a kernel call takes the steps that fit in the wall budget (uno.core.budget),
            # counted from the end of the idle stretch the kernel skips (skipped steps cost
            # nothing, and would tell nothing of the pace after them); while the step may grow,
            # a look at the flows left every LOOK_STEPS steps
            grows = adapts or (grows and self.step_factor < self.step_factor_max)
            k_work = self._busy_from(k)
            k_next = min(
                k_work + budget.units(), (k_work // STALL_CHECK_STEPS + 1) * STALL_CHECK_STEPS
            )
            if grows:
                k_next = min(k_next, k + look_steps - self.k_done % look_steps)
            start_due = False
            nxt = int(self.counters[C.CT.next_start])
            if adapts and self.step_factor > 1 and nxt != looked_start:
                # (the next start may need a finer step: a look at its step, once)
                k_start = self._next_start_step()
                if k_start < k_next:
                    k_next, start_due = max(k_start, k), True
            fault_ps = self.faults.next_ps  # (a failure or repair: at its step's start)
            if fault_ps is not None:
                k_next = min(k_next, max(k + 1, int(math.ceil(fault_ps / dt))))
            k = self._advance_to(k, min(k_next, k_stop))
            if sampler is not None and sampler.make_room(int(self.counters[C.CT.running])):
                self._install_samples(sampler)  # (its arrays grew)
            if self.chains.any:
                self._start_chained()
            self.faults.apply(self.now_ps, self.ls)
            self.check_line_memory()
            budget.spent(k - k_work)
            if start_due and int(self.counters[C.CT.next_start]) == nxt:
                looked_start = nxt
            if grows and not self._done() and (start_due or self.k_done % look_steps == 0):
                k = self._grow_step(k)
            done = self._done()
            # (no step can finish a flow: the run says so now, not at its stop time)
            self.stopped_stalled = (
                not done
                and k % STALL_CHECK_STEPS == 0
                and all_stalled(self.fs, self.counters, self.order, self.chains, self.now_ps)
            )
            ending = done or self.stopped_stalled or k >= int(self.max_time_ps // self.dt_ps)
            if sampler is not None and ending and self.now_ps > sampler.last_t:
                sampler.sample(self.now_ps)  # (the run's last)
            if done or self.stopped_stalled:
                break
        wall = time.perf_counter() - t0
        result = self._collect(wall, sampler)
        self.free_delay_lines()
        return result

    def _install_samples(self, sampler) -> None:
        """The step loop takes ``sampler``'s samples in its arrays (:mod:`uno.fluid.sampling`;
        none: it samples nothing)."""
        self.samples = idle_samples(len(self.flows)) if sampler is None else sampler.group
        self._kernel_args = None

    def check_line_memory(self) -> None:
        """Stop the run, naming the step that sizes them, once the delay lines it handed out
        (their lengths follow the delays the flows meet, :func:`uno.fluid.rings.fit_lag`) hold
        more than ``line_memory_limit_bytes``: the system would otherwise kill the process
        when its memory runs out."""
        ring = self.ring
        used = int(self.ring_pool.top[0]) * ring.shape[1] * ring.itemsize
        if used <= self.line_memory_limit_bytes:
            return
        longest = int(self.ring_pool.length.max())
        limit_mib = self.line_memory_limit_bytes / 2**20
        raise ConfigError(
            "engine.fluid_line_slots",
            f"engine.kind=fluid stopped at {self.now_ps / 1e9:,.2f} ms: its flows' delay lines "
            f"hold {used / 2**20:,.0f} MiB, more than the {limit_mib:,.0f} MiB they may use "
            f"({int(self.counters[C.CT.running]):,} flows running, lines of up to {longest:,} "
            f"steps of {self.dt_ps / 1e6:.2f} us and their tails): fewer slots a line "
            "(engine.fluid_line_slots), a coarser step (engine.fluid_step_intra_rtt) or "
            "engine.kind=packet",
        )

    def free_delay_lines(self) -> None:
        """The run is over: its delay-line memory goes back to the process's cache, the rows
        it handed out zeroed (:mod:`uno.fluid.memory`); ``self.ring`` is None after it. (Not on
        a failed run: its memory is freed with it.)"""
        buf, self._ring_memory = self._ring_memory, None
        if buf is None:
            return
        ring, self.ring = self.ring, None
        # only rows below the pool's top were ever handed out (rings.ring_take); none if
        # the ring is not the buffer's (a test may put another in its place)
        mine = ring is not None and np.may_share_memory(ring, buf)
        used = int(RingPool(*self.ring_pool).top[0]) * ring.shape[1] if mine else 0
        DELAY_LINES.give(buf, used)

    def _done(self) -> bool:
        """Every flow finished, or every one the run waits for (``engine.stop_when_done``)."""
        return self.n_finished == len(self.flows) or self.counters[C.CT.waiting] == 0

    def _start_chained(self) -> None:
        """The flows whose group finished in the last kernel call get their starts
        (:class:`uno.fluid.chains.FlowChains`); the step's bound by the flows left to start
        is computed again (:meth:`_wanted_factor`)."""
        if self.chains.start_ready(self.fs, self.order, int(self.counters[C.CT.next_start])):
            self._rtt_after = None

    def _advance_to(self, k: int, k_stop: int) -> int:
        """:meth:`advance` from step ``k`` to ``k_stop`` (earlier if every flow finished), and
        the run's counts after it: steps done, time, flows finished. Returns the step reached."""
        k_reached = self.advance(k, k_stop)
        self.k_done += k_reached - k
        self.now_ps = int(k_reached * self.dt_ps)
        self.n_finished = int(self.counters[C.CT.finished])
        return k_reached

    def _grow_step(self, k: int, may_advance: bool = True) -> int:
        """The step follows the flows left to run (:meth:`_wanted_factor`), in powers of two of
        the first step: it grows (:func:`uno.fluid.rings.coarsen`) or, with
        ``engine.fluid_step_settled_rtt``, shrinks back (:func:`uno.fluid.rings.refine`).
        The laws still hear their ACKs in batches of at most their rules' period
        (``FS_BATCH_PS``, :attr:`uno.cc.law.Law.period_ps`: UnoCC's epochs of one intra-DC RTT,
        so that a step at an RTT ratio of 128 is 8 of its batches): a law's own periods do not
        stretch with the step. A growth comes at a multiple
        of its factor, the steps before it run first; without ``may_advance`` (the hybrid,
        whose packets run between the steps) it grows by as much as ``k`` is a multiple of.
        Returns the current step's index at the step size now in force."""
        want = self._wanted_factor()
        if want == self.step_factor:
            return k
        n_active = int(self.counters[C.CT.running])
        if want < self.step_factor:
            factor = self.step_factor // want
            self.step_factor = want
            self.dt_ps = self.dt_first_ps * want
            self._set_blocks()
            rescale_far_timers(self.ring_pool, factor, True)
            k = refine(factor, k, self.dt_ps, self.fs, self.ring, self.ring_pool, self.active,
                       n_active, self.calendar, self.fx)  # fmt: skip
            mark_queued(k, self.fs, self.active, n_active, self.calendar)
            return k
        factor = want // self.step_factor
        if not may_advance:  # (the hybrid: its packets run between the steps) as k allows
            while k % factor:
                factor //= 2
            if factor == 1:
                return k
            want = self.step_factor * factor
        # the fine steps up to the next multiple of the factor first
        k_aligned = -(-k // factor) * factor
        if k_aligned > k:
            if k_aligned > self.max_time_ps // self.dt_ps:
                return k
            k = self._advance_to(k, k_aligned)
            if k < k_aligned or self._done():  # every flow finished
                return k
            if self._wanted_factor() < want:  # (a start came near meanwhile)
                return k
        self.step_factor = want
        self.dt_ps = self.dt_first_ps * want
        self._set_blocks()
        n_active = int(self.counters[C.CT.running])
        rescale_far_timers(self.ring_pool, factor, False)
        k = coarsen(factor, k, self.dt_ps, self.fs, self.cp, self.ring, self.ring_pool,
                    self.active, n_active, self.calendar, self.fx, self.int_col)  # fmt: skip
        mark_queued(k, self.fs, self.active, n_active, self.calendar)  # (uno.fluid.dci)
        return k

    def _wanted_factor(self) -> int:
        """The step the flows left to run allow now, as a power-of-two multiple of the first
        step (at most ``step_factor_max``): the first step's fraction (:func:`step_intra_rtt`)
        of the shortest base RTT among them (the outside flows', :attr:`outside`, too, until
        they finish). A short flow's feedback loop sets the step while one may still run; once
        only long-RTT flows are left, their loops are slower, and what bounds the step is the
        links' own time scale (a line-rate burst filling a buffer).

        With ``engine.fluid_step_settled_rtt`` > 0, a running flow that has run
        ``engine.fluid_settle_rtts`` of its base RTTs is settled (never one whose law reads
        INT): it bounds the step at that fraction of its base RTT instead; the flows not
        started yet bound it only once the next of them starts within ``fluid_settle_rtts``
        intra-DC base RTTs (the run stops at the step holding a start:
        :meth:`_next_start_step`)."""
        e = self.cfg.engine
        if self._rtt_after is None:
            rtt = self.fs[:, C.FS_BASE_RTT][self.order]
            self._rtt_after = np.append(np.minimum.accumulate(rtt[::-1])[::-1], np.inf)
            self._base_rtt = np.ascontiguousarray(self.fs[:, C.FS_BASE_RTT])
        n_active = int(self.counters[C.CT.running])
        nxt = int(self.counters[C.CT.next_start])
        rtt = self._base_rtt[self.active[:n_active]]
        if self.settled_rtt <= 0.0:
            shortest = min(float(self._rtt_after[nxt]), self.outside.shortest_rtt_left_ps())
            if n_active:
                shortest = min(shortest, float(rtt.min()))
            bound = self.step_intra_rtt * shortest
        else:
            bound = np.inf
            if n_active:
                age = self.now_ps - self.fs[self.active[:n_active], C.FS_START]
                may_settle = self._may_settle[self.active[:n_active]]
                unsettled = (age < e.fluid_settle_rtts * rtt) | ~may_settle
                if unsettled.any():
                    bound = self.step_intra_rtt * float(rtt[unsettled].min())
                if not unsettled.all():
                    bound = min(bound, self.settled_rtt * float(rtt[~unsettled].min()))
            horizon = e.fluid_settle_rtts * self.dt_first_ps / self.step_intra_rtt
            if nxt < len(self.flows):
                if self.fs[self.order[nxt], C.FS_START] - self.now_ps < horizon:
                    bound = min(bound, self.step_intra_rtt * float(self._rtt_after[nxt]))
            starts, rtts = self.outside.starts_ps, self.outside.rtts_ps
            if len(starts):  # those young, or starting within the horizon
                i = np.searchsorted(starts, self.now_ps - e.fluid_settle_rtts * rtts.max())
                j = np.searchsorted(starts, self.now_ps + horizon)
                near = self.now_ps - starts[i:j] < e.fluid_settle_rtts * rtts[i:j]
                if near.any():
                    bound = min(bound, self.step_intra_rtt * float(rtts[i:j][near].min()))
        if bound == np.inf:
            return self.step_factor
        want = 1
        while want * 2 <= self.step_factor_max and self.dt_first_ps * want * 2 <= bound:
            want *= 2
        if self.settled_rtt <= 0.0:  # (the bound only rises: the step never shrinks)
            want = max(want, self.step_factor)
        return want

    def _next_start_step(self) -> int:
        """The step (at the step now in force) holding the next start, of this engine's flows
        or the outside ones: with a step above the first, the run calls :meth:`_grow_step`
        there; a very large number if none is left."""
        nxt = int(self.counters[C.CT.next_start])
        start = np.inf
        if nxt < len(self.flows):
            start = float(self.fs[self.order[nxt], C.FS_START])
        starts = self.outside.starts_ps
        i = np.searchsorted(starts, self.now_ps, side="right")
        if i < len(starts):
            start = min(start, float(starts[i]))
        return 1 << 62 if start == np.inf else int(start // self.dt_ps)

    @property
    def adapts(self) -> bool:
        """Whether the step follows the flows both ways (``engine.fluid_step_settled_rtt``)."""
        return self.step_factor_max > 1 and self.settled_rtt > 0.0

    @property
    def look_steps(self) -> int:
        """Every how many steps a run whose step may change looks at the flows left."""
        return LOOK_SETTLED_STEPS if self.adapts else LOOK_STEPS

    def _set_blocks(self) -> None:
        """Each flow's block at the current step (``engine.fluid_blocks_per_rtt``): the
        largest power of two of steps within 1/``fluid_blocks_per_rtt`` of its base RTT, at least a
        step; and the largest block (:func:`uno.fluid.filing.hold_for_block`). A flow held for its
        block when the step grows files it at its new block's end (its sends' times are kept in ps).

        The laws whose response to a batch of ACKs is its sum (UnoCC, DCTCP, MP-RDMA) take
        blocks, and so does GEMINI, whose window minimum of the RTT gets the least of the
        samples of every step of a block (:func:`uno.fluid.filing.note_block_rtts`). BBR's
        windowed maximum of the delivery rate depends on how many samples a window holds: with
        one sample a block instead of one a step its inter-DC flows ran steadily slower as the
        block grew (``mixed40`` inter-DC mean FCT +2% / +4% / +7% at 256 / 128 / 64 blocks per
        RTT), and on the paper's Fig. 10 traffic ``mprdma_bbr``'s intra-DC gap to packets grew
        at ``engine=fluid_fast`` (docs/fluid_engine.md), so it keeps a step. So does DCQCN: its
        notification point spaces the CNPs in time (:func:`uno.fluid.control.np_cnps`), and its
        cuts restart its timers at their time; and so does a flow at the DCI switches' element,
        whose receiver hears its packets and whose sender hears the switch's notices
        (:mod:`uno.fluid.dci`)."""
        n = len(self.flows)
        per_rtt = self.cfg.engine.fluid_blocks_per_rtt
        steps = np.ones(n, dtype=np.int64)
        if per_rtt > 0 and n:
            span = self.fs[:, C.FS_BASE_RTT] / (per_rtt * self.dt_ps)
            exp = np.floor(np.log2(np.maximum(span, 1.0)) + 1e-9).astype(np.int64)
            steps = np.left_shift(np.int64(1), exp)
            samples = (
                (self.fs[:, C.FS_RATE] > 0)
                | (self.fs[:, C.FS_CNP_GAP] > 0)
                | (self.fs[:, C.FS_LAW_TIMERS] > 0)
                | (self.fs[:, C.FS_PFQ_RATE] > 0)
                | (self.fs[:, C.FS_NS_HOPS] > 0)
            )
            steps[samples] = 1
        self.block[C.BL.steps, :n] = steps
        self.block[C.BL.steps, n] = int(steps.max(initial=1))

    def advance(self, k_start: int, k_stop: int) -> int:
        """Run steps ``k_start`` .. ``k_stop - 1``; returns the step reached
        (:func:`uno.fluid.kernels.advance`)."""
        return advance(k_start, k_stop, *self.kernel_args())

    #: :meth:`kernel_args` as last built, and what it was built for (the step, the ring)
    _kernel_args: tuple | None = None

    #: the state :func:`uno.fluid.kernels.advance` changes (the rest of its arguments it reads)
    STEPPED_STATE = ("fs", "cs", "ls", "ring", "ring_pool", "counters", "active", "busy", "lb",
                     "loss_rng", "hops", "fx", "calendar", "block", "pfc", "pf_live")  # fmt: skip

    def kernel_args(self, state: dict | None = None) -> tuple:
        """:func:`uno.fluid.kernels.advance`'s arguments after the two steps, in its order;
        ``state`` (names of :attr:`STEPPED_STATE` to arrays) stands in for the engine's own,
        for a twin run on copies. The groups of :mod:`uno.fluid.state` go as plain tuples in
        their fields' order, which ``advance`` names again: at each call from Python, Numba
        types a plain tuple of arrays several times faster than a namedtuple (the hybrid calls
        it every step)."""
        if state is None:  # (the arrays stay the same objects all run: only the step changes)
            key = (self.dt_ps, id(self.ring))
            cached = self._kernel_args
            if cached is not None and cached[0] == key:
                return cached[1]
        s = vars(self) if state is None else state  # (the STEPPED_STATE attributes)
        groups = (
            Flows(s["fs"], s["cs"], self.cp, s["fx"], self.order, s["active"], s["counters"],
                  s["loss_rng"], s["block"]),
            Links(s["ls"], s["busy"], s["pfc"], self.pf_ptr, self.pf_row, self.pf_w,
                  s["pf_live"], self.pf_of),
            Routes(self.rt_ptr, self.rt_link, self.rt_w, self.rv_ptr, self.rv_link, self.rv_w),
            DelayLines(s["ring"], tuple(s["ring_pool"]), s["calendar"]),
            s["lb"],
            s["hops"],
            self.scratch,
            self.samples if state is None else idle_samples(len(self.flows)),
        )  # fmt: skip
        args = (self.dt_ps, *map(tuple, groups))
        if state is None:
            self._kernel_args = (key, args)
        return args

    # ---- results --------------------------------------------------------------------------
    def flows_table(self) -> pd.DataFrame:
        """The flows table (:func:`uno.fluid.results.flows_table`)."""
        return flows_table(self)

    def ports_table(self) -> pd.DataFrame:
        """The ports table (:func:`uno.fluid.results.ports_table`)."""
        return ports_table(self)

    def _collect(self, wall_s: float, sampler) -> RunResult:
        flows = self.flows_table()
        summary = run_summary(self, flows, wall_s)
        tables = {"flows": flows}
        if sampler is not None:
            tables.update(sampler.tables())
        tables["ports"] = self.ports_table()
        if self.scratch.rtt_counts.size:  # (engine.record_rtts)
            tables["rtts"], summary["rtt_us"] = rtt_report(self.scratch.rtt_counts)
        return RunResult(flows=flows, tables=tables, summary=summary)
