"""The engine's settings (``engine.*``; :class:`uno.config.schema.RunConfig`): which engine
runs (packet, fluid, hybrid, max-min), the flow-level engines' steps and models, what a run
records, and when it stops."""

from __future__ import annotations

from dataclasses import dataclass, field

from uno.config.fields import choice, num
from uno.core.errors import ConfigError


@dataclass
class EngineConfig:
    #: packet (the discrete-event packet engine), fluid (flows as rates, queues as levels,
    #: uno/fluid), hybrid (packets for the flows under study, fluid for the rest) or maxmin
    #: (flow-level max-min fair rates, no queues: a baseline for the fluid engine)
    kind: str = choice("packet", ("packet", "fluid", "hybrid", "maxmin"))
    #: the fluid engine's time step, as a fraction of the intra-DC base RTT
    fluid_step_intra_rtt: float = num(0.125, "(0, 1]")
    #: fluid: in a run where a flow's law reads INT (HPCC, PowerTCP, Gear) or PFC pauses links,
    #: the step is at most this fraction of the intra-DC base RTT (0: fluid_step_intra_rtt
    #: alone). An INT law reacts to each ACK's records of the queues and a pause acts on the
    #: next step, both of which a coarser step coarsens
    fluid_step_fine_intra_rtt: float = num(0.0, "[0, 1]")
    #: fluid: once only flows with longer RTTs are left to run, the step grows (in powers of
    #: two) to fluid_step_intra_rtt of the shortest base RTT left, up to this many intra-DC
    #: base RTTs (at most fluid_step_intra_rtt: a fixed step; with PFC at most 1, as a pause
    #: acts on the next step). Whatever the step, each law hears its ACKs in batches of at most
    #: its rules' period (one intra-DC RTT for UnoCC, Gear, MLCC; else the flow's base RTT; see
    #: docs/fluid_engine.md). The hybrid's step grows once its packet flows are done
    fluid_step_max_intra_rtt: float = num(1.0, "(0, 128]")
    #: fluid: each law hears its ACKs in batches of at most this fraction of its flow's base
    #: RTT, a longer step's as that many batches in a row (0: a step's, up to its law's period,
    #: as above). A per-ACK rule's timing then does not coarsen with the step: GEMINI cuts at most
    #: once per base RTT, at a batch, so at steps of half an RTT one batch a step lets it cut
    #: every 1.5 RTTs, where packets cut about every RTT. A flow's first batch stays whole,
    #: at its step (its law's periods begin at its first ACK), and so do the batches of a law
    #: that reads INT (a batch carries one packet's records). engine=fluid_fast: 1/8
    #: (docs/fluid_paper_traffic.md)
    fluid_batch_rtt: float = num(0.0, "[0, 1]")
    #: fluid: a link marks the bytes it sends in a step at the mean of its physical queue's
    #: RED over the step, the queue moving steadily from the step's start level at its
    #: arrivals less the line rate (emptying or filling the buffer on the way), not at the
    #: level it ends at: a step marking threshold (GEMINI's, DCTCP's K) marks the share of the
    #: step the queue spends above it. The phantom queue marks at its level either way
    fluid_mark_step_mean: bool = False
    #: fluid: the step of settled flows, as a fraction of their base RTT (0: off; null: 0.5 in the
    #: hybrid, whose packet flows carry the study, 0 in the fluid). A flow that has run
    #: fluid_settle_rtts of its base RTTs bounds the step at this fraction of its base RTT, not
    #: at fluid_step_intra_rtt of it (never a flow whose law reads INT); the step grows (in
    #: powers of two, up to fluid_step_max_intra_rtt) while every running flow has settled and
    #: no flow starts within fluid_settle_rtts intra-DC base RTTs, and goes back to the first
    #: step before the next start: long flows in steady state cost a few steps per RTT, not
    #: eight. A law's own windows shrink to fewer steps: at 0.5 UnoCC's Quick Adapt window is
    #: two steps, and one step without ACKs fires it (experiments/fluid_validation)
    fluid_step_settled_rtt: float | None = num(None, "[0, 1]")
    #: fluid: the base RTTs a flow runs before it counts as settled (fluid_step_settled_rtt)
    fluid_settle_rtts: float = num(8.0, "> 0")
    #: fluid: a flow whose base RTT spans many steps files what happened to its sends, drops
    #: and deliveries in blocks of steps (powers of two) of at most 1/this of its base RTT,
    #: instead of every step; its bytes still move every step (a GEMINI flow's block keeps
    #: the least RTT sample of its steps). The intra-DC flows' block is a step, and so is every
    #: BBR and DCQCN flow's (BBR's rate maximum depends on the number of samples, and in
    #: blocks its runs drift from the packet engine's: docs/fluid_paper_traffic.md; DCQCN's
    #: CNPs and timers on time). 0: every flow every step
    fluid_blocks_per_rtt: int = num(128, ">= 0")
    #: fluid: the most slots (steps) a flow's delay line holds. Longer delays (a cross-DC round
    #: trip behind PFC queues) go into a tail of half as many slots of several steps each,
    #: spread evenly over their steps: less than 4 reach / fluid_line_slots steps early or late
    #: (reach: the longest delay its buffers allow). Bounds the lines' memory per running flow
    fluid_line_slots: int = num(2048, ">= 64")
    #: fluid: a full drop-tail queue drops by its inputs' packet phases (a packet time's free
    #: slot goes to the first packet to arrive after a departure; back-to-back links arrive on
    #: fixed grids, which ACKs shift), not the same share of every flow's arrivals
    fluid_phase_drops: bool = True
    #: fluid: the flows' ACKs cross the links of their way back as bytes (one ACK per data
    #: packet delivered) where they share the data queue: they take line time and buffer, and
    #: count in the phantom queue with switch.phantom.count_acks
    fluid_ack_bytes: bool = True
    #: fluid: with fluid_ack_bytes, a full buffer that drops data also drops the ACKs in its
    #: queue, as the hybrid's packets are dropped at a full fluid link: an ACK's size over a
    #: full packet's times the data's loss; a lost ACK is a packet its sender resends
    fluid_ack_losses: bool = True
    #: fluid: a batch's ACKs count in the steps they arrive in, split at the step boundary
    #: they straddle (false: whole, in the step of their mean arrival; a window-limited flow's
    #: batches then land in every other step, and so do its ACK-clocked sends). A block's
    #: batch and a batch carrying INT records are filed whole either way
    fluid_ack_spread: bool = False
    #: fluid: the ACKs' queueing on the way back is the reverse links' queues as they will be
    #: when the ACKs meet them, each read half the flow's base RTT ahead at its recent growth
    #: rate, for no longer than that rate has kept its sign (false: as they are at the send;
    #: see docs/fluid_engine.md, "Round trips and packet sizes", for both)
    fluid_ack_read_ahead: bool = False
    #: fluid: a step's losses on both sides of a flow's wire link are booked each on its own side
    #: (ACKs, timers; false: all on the side that dropped most; docs/fluid_paper_traffic.md)
    fluid_wire_loss_sides: bool = False
    #: fluid: an UnoLB flow's batch of sends comes back subflow by subflow, each share at its
    #: own path's RTT, as a packet sender's ACKs do (false: all at the mean RTT of its
    #: subflows, which holds back the ACKs of those that meet no queue and lets Quick Adapt
    #: read an idle RTT; docs/fluid_paper_traffic.md)
    fluid_subflow_rtts: bool = True
    #: fluid: a law hears the bytes in flight before each feedback batch as a packet sender
    #: holds them at an ACK, whole packets (the fluid count rounded up; only BBR reads them:
    #: its gain phases end on them). false: the fluid count as it is (see
    #: docs/fluid_paper_traffic.md for both on the paper's and the artifact's traffic)
    fluid_whole_packets: bool = False
    #: fluid and max-min: a flow finishes when a packet sender hears its last packet's ACK,
    #: timed from its serialisation's start at the NIC, at its own size on every hop (a lone
    #: flow finishes as in the packet engine); in the fluid, after the mean wait where other
    #: flows' packets collide with it. false: at its last byte's ACK, the ideal FCT for a lone
    #: flow (docs/fluid_engine.md, "Round trips and packet sizes")
    fluid_last_packet: bool = False
    #: fluid: a flow's bytes cross its route's longest link's propagation (a WAN link's: at
    #: least the intra-DC base RTT) on their way out, reaching the links after it that late;
    #: the rest of the base RTT is on the way back. false: the whole base RTT on the way back.
    #: UnoLB's subflows have it on the way back either way
    fluid_wire: bool = True
    #: fluid: alike links that every route crossing them splits evenly over (spraying's hops
    #: in a fat tree) are stepped as one, the group's first standing for all: a sprayed
    #: route's hop is one entry instead of one per link (uno/fluid/folding.py). The same run
    #: to float rounding but for the packet grid a group's busy period draws (one for all its
    #: links, with engine.fluid_phase_drops). Not with PFC, INT, QCN, the DCI element or faults
    fluid_fold_links: bool = True
    #: hybrid, with fluid_fold_links: a folded group also takes in the links the packets
    #: cross, its fluid flows meeting the packets' mean load over the group's links (each
    #: packet takes one of them; uno/fluid/folding.py); false: those links stay apart, as
    #: unfolded (see docs/fluid_engine.md for both)
    hybrid_fold_packet_links: bool = True
    #: fluid: the paths a REPS flow (lb=reps) spreads over at once, each a share of its bytes
    #: inversely as its round trip, as many as its first BDP of packets at most (the entropies
    #: REPS explores first)
    fluid_reps_paths: int = num(16, "[1, 64]")
    #: hybrid: flows of at most this many bytes are simulated as packets (null: none by size)
    hybrid_packet_max_bytes: int | None = num(None, ">= 0")
    #: hybrid: flows with one of these tags are simulated as packets
    hybrid_packet_tags: list[str] = field(default_factory=list)
    #: stop at this simulated time even if flows are unfinished
    max_sim_time_ms: float = num(1000.0, "> 0")
    #: sampling interval of rates/cwnd/queues tables; 0 disables sampling
    sample_interval_us: float = num(10.0, ">= 0")
    #: sample every flow's sending rate (rates.parquet)
    sample_rates: bool = True
    #: sample every flow's window (cwnd.parquet)
    sample_cwnd: bool = True
    #: sample the queues of engine.queue_ports (queues.parquet)
    sample_queues: bool = True
    #: count every RTT sample senders take from ACKs in 1%-wide bins (rtts.parquet; the
    #: summary's rtt_us quantiles): the per-packet RTT distribution (fluid: each ACK batch's
    #: packets at the batch's mean RTT)
    record_rtts: bool = False
    #: ports whose queues are sampled: "receivers" (switch ports into flow destinations),
    #: "busy" (any port non-empty at the sample), "all", or glob patterns of port names; a
    #: pattern that matches no port is refused
    queue_ports: list[str] = field(default_factory=lambda: ["receivers"])
    #: end the run once every flow carrying one of these tags finished (empty: all flows)
    stop_when_done: list[str] = field(default_factory=list)
    #: the run is time-bounded by design: flows the run waits for (stop_when_done) may be
    #: unfinished at max_sim_time_ms. false: such a run is reported incomplete (summary
    #: run.status, uno-run exit status 3)
    allow_unfinished: bool = False
    #: progress bar on stderr: null shows it when stderr is a terminal and $CI is unset
    progress: bool | None = None
    #: check conservation of packets and bytes and every queue's bounds during and at the end of the
    #: run; a broken invariant stops the run with an error
    check_invariants: bool = True
    #: packet engine ports: "lazy" (departure computed at enqueue, one event per packet-hop),
    #: "event" (departure decided when the previous one ends: can pause, serve priorities and
    #: write INT) or "auto" (event when PFC, INT or switch.ack_priority is on, lazy otherwise)
    port_model: str = choice("auto", ("auto", "lazy", "event"))
    #: data plane of the packet engine and of the hybrid engine's packets: "compiled" (ports,
    #: links, switches and senders in Numba kernels, uno/net/compiled/; INT, link faults, PFC),
    #: "python" (uno/net: the reference the tests hold it to, same results bit for bit) or
    #: "auto" (compiled unless the config has what it does not model)
    dataplane: str = choice("auto", ("auto", "python", "compiled"))
    #: with the compiled data plane, run the senders in its kernel where it can (every law;
    #: ECMP or spraying; no coding: uno.net.compiled kernel_sender_supported; the others stay
    #: in Python beside them); false keeps all in Python
    compiled_senders: bool = True
    #: run each congestion-control law's pure-Python twin (its functions' .py_func), where a
    #: breakpoint in the law stops; needs engine.dataplane=python (the same results, slower)
    cc_py_func: bool = False

    def check_consistency(self, prefix: str) -> None:
        if self.cc_py_func and (self.kind != "packet" or self.dataplane != "python"):
            raise ConfigError(
                f"{prefix}.cc_py_func",
                "runs the laws interpreted in the Python data plane: set engine.kind=packet "
                "and engine.dataplane=python",
            )
