"""The packet/fluid hybrid (``engine.kind=hybrid``): the flows under study run as packets, the
rest of the load as fluid, on one network.

Which flows are packets: those of at most ``engine.hybrid_packet_max_bytes`` bytes and those
tagged with one of ``engine.hybrid_packet_tags`` (a flow matching either); every other flow is
fluid. Both kinds come from the one :class:`uno.scenario.Scenario` (same routes, ECMP salts,
marking, controller parameters, random streams), so a flow is the same flow in every engine.

The coupling, every fluid step (``engine.fluid_step_intra_rtt`` x the intra-DC base RTT), runs
inside the packet engine's event loop:

- **Fluid links see the packets' bytes.** Every port counts the bytes it accepted during the
  step; they enter the fluid link's arrivals (:func:`uno.fluid.links.fold_packet_bytes`), so they
  fill its queue and phantom queue, and so delay, mark and drop the fluid flows.
- **Packets see the fluid occupancy.** The fluid link keeps its fluid flows' part of the queue
  (``LS_QF``, a FIFO share). A packet arriving at a port waits behind the link's queue (it
  departs no earlier than ``now + the fluid model's queue / rate``, which counts the bytes of
  both kinds sharing the line, and no earlier than the packets before it). It is dropped when
  its own queue would overflow the buffer, and, when the packets plus the fluid bytes would,
  with the probability the fluid model drops bytes that arrive at that link at a random phase
  of its packet time (a full fluid queue drops only the excess, not every arrival, and by its
  inputs' phases, where back-to-back inputs take the slots first:
  :func:`uno.fluid.phases.input_drop_shares`; the fluid grids do not set a packet's phase):
  a data packet whatever its size (a departure's room goes to the first arrival), an ACK
  scaled by its size over a full packet's (it fits the crumbs a data packet leaves far more
  often: :func:`uno.net.shared_link.squeezed_out`). It leaves with RED deciding on the larger
  of the packets behind it plus the fluid bytes and the link's queue. On a link the fluid flows
  cross, the phantom level that decides is the larger of the port's own and the fluid model's,
  which counts both kinds of bytes (one step late); on a link only packets cross, ports behave
  exactly as in the packet engine (a test checks it).
- **A host's NIC is shared round robin**, not FIFO: the host pulls one packet of each sending
  flow in turn (:mod:`uno.net.nic`), so a packet never waits behind the host's other flows'
  backlog. The packet flows at a host are one more claimant of the fluid NIC's water filling
  (``kernels.LS_PKT_CLAIM``: the bytes they sent in the step, or a whole step's worth while
  senders wait for the NIC), and the NIC port, after each data packet, stays busy for the
  bytes the fluid flows send in between (their share of the line in the step, at most a
  packet of each fluid flow with bytes to send). Waiting behind the fluid NIC queue
  instead doubled the FCT of the short packet flows of Uno's Fig. 10 traffic (scheme=uno),
  whose hosts also send inter-DC fluid flows.
- **INT records count both kinds of bytes** (HPCC, PowerTCP, Gear on single paths). A fluid
  flow's records are its links' state (:mod:`uno.fluid.int_records`), the packets' bytes
  folded in. A packet's record at a shared port holds the queue RED decides on (the larger
  of its packets behind it plus the fluid bytes and the link's queue, while fluid flows hold
  or send bytes there) and the bytes sent by the port plus those the fluid flows sent on the
  link, each step's replayed evenly over the step after it
  (:func:`uno.net.shared_link.fluid_sent_bytes`), so the law's rate estimate is the link's.

The approximation, stated: packets and fluid share a link as FIFO at step resolution. The
fluid model learns of the packets' bytes one step (1/8 intra-DC RTT by default) after they
arrived, and a packet waits behind the larger of that model's queue and its own port's
backlog. The packet flows see the fluid flows' queues as the fluid model has them, smoother
than packets would make them (a fluid sender spreads its window over the step, no bursts).

The fluid model's step grows as the fluid engine's does, with the shortest base RTT among the
flows left to run, the packet flows' counted until they finish
(:meth:`uno.fluid.engine.FluidSimulation._grow_step`): once only inter-DC flows of either kind
are left, it is a fraction of their RTT. With settled steps (``engine.fluid_step_settled_rtt``,
by default half a base RTT in the hybrid: :func:`uno.fluid.support.settled_step_rtt`) the
step follows the flows both ways, the packet flows bounding it as fluid ones would (young, or
about to start: the first step): long fluid flows beside the packets cost two steps per
intra-DC RTT once every flow has settled, not eight. Once every fluid flow has finished (none
starting later) the steps stop and the ports read no fluid bytes from then on
(:func:`uno.fluid.hybrid_loop.fluid_done`): the packets left run as in the packet engine, at
its cost, a port whose packets read the fluid model's phantom level taking it where it is
higher than its own (it counted the fluid flows' bytes). (While a PFC ingress queue still
counts fluid bytes, once the fluid links are empty as well: the fluid steps decide on its
pauses.)

The packets run on the compiled data plane (``engine.dataplane``: ``auto`` picks it unless the
config has what it does not model), its kernels' ports applying these rules
(:mod:`uno.net.shared_link`, the one definition both data planes use) and listing the ports
that took packets; after each fluid step the fluid links' state is copied into the ports'
floats (:class:`uno.fluid.shared_ports.KernelLinks`). With the Python data plane each port is a
:class:`uno.fluid.shared_ports.HybridPort`. Both give the same packets, bit for bit (a test
checks it).

- **PFC pauses both kinds of bytes** (``switch.pfc.enabled``, compiled data plane): the
  packets' ingress queues decide every pause, their levels counting the fluid flows' bytes
  that entered through their links, and a fluid link is paused for the share of each step its
  upstream port was (:mod:`uno.fluid.hybrid_pfc`). The ports are event ports
  (:mod:`uno.net.compiled.event_port`), which keep the rules above on shared links.

- **The DCI switches' element** (``switch.dci``, MLCC): each kind of flow keeps its own
  per-flow queues, credit loop and notices (the packet flows' in the data plane,
  :mod:`uno.net.dci`; the fluid flows' in :mod:`uno.fluid.dci`); they meet on the shared
  links as above.

Everything the fluid engine refuses is refused here too (:func:`check_fluid_support`), and PFC
with the Python data plane; the packet flows may use any congestion controller the fluid flows
may (``cc.*``), and the balancers the fluid engine routes.
"""

from __future__ import annotations

from heapq import heappop, heappush

import numpy as np
import pandas as pd

from uno.core.errors import ConfigError
from uno.fluid import kernels as K
from uno.fluid.cycles import TALLY
from uno.fluid.engine import FluidSimulation
from uno.fluid.hybrid_loop import (
    DRIVE_KERNEL_STOP,
    DRIVE_STEP_DONE,
    SC,
    fluid_done,
    hybrid_steps,
)
from uno.fluid.hybrid_pfc import shared_rows
from uno.fluid.int_records import INTS
from uno.fluid.outside import OutsideFlows
from uno.fluid.pfc import pfc_summary as fluid_pfc_summary
from uno.fluid.results import (
    STALL_CHECK_STEPS,
    all_stalled,
    late_acks,
    link_rows_seen,
    stalls,
    unaccounted_bytes,
)
from uno.fluid.routes import SUBFLOW_LB, split_routes
from uno.fluid.sampling import Sampler, idle_samples
from uno.fluid.shared_ports import HybridPort, KernelLinks, PortLinks
from uno.metrics.progress import Snapshot
from uno.metrics.result import RunResult
from uno.net.compiled.dataplane import loaded_entry
from uno.net.compiled.layout import NEVER_PS
from uno.net.compiled.recording import no_samples
from uno.net.event_port import EventPort
from uno.net.port import Port
from uno.packet_engine import populate_packet, resolve_dataplane
from uno.scenario import build_scenario, stop_flags
from uno.simulation import Simulation

#: fluid steps one kernel call runs at most (a call keeps the interpreter: Ctrl-C and the
#: progress line wait for it)
DRIVEN_STEPS = 1024


def packet_links(scenario, packet_plans) -> np.ndarray:
    """Every link the packet flows' data or ACKs may cross: each equal-cost link between
    their ends, both ways (whatever the balancer picks)."""
    if not packet_plans:
        return np.zeros(0, dtype=np.int64)
    src = np.array([p.spec.src for p in packet_plans], dtype=np.int64)
    dst = np.array([p.spec.dst for p in packet_plans], dtype=np.int64)
    pairs = np.unique(np.stack([np.r_[src, dst], np.r_[dst, src]], axis=1), axis=0)
    return np.unique(split_routes(scenario, pairs[:, 0], pairs[:, 1])[1])


def packet_selection(engine_cfg, sizes_bytes, tags) -> np.ndarray:
    """Per flow (its size and tag), whether the hybrid runs it as packets
    (``engine.hybrid_packet_max_bytes``, ``engine.hybrid_packet_tags``)."""
    max_bytes = engine_cfg.hybrid_packet_max_bytes
    chosen = np.isin(np.asarray(tags, dtype=object), list(engine_cfg.hybrid_packet_tags))
    if max_bytes is not None:
        chosen |= np.asarray(sizes_bytes) <= max_bytes
    return chosen


class HybridSimulation(Simulation):
    """The packet engine with a fluid engine stepped inside its event loop."""

    engine_name = "hybrid"

    def kernels(self) -> tuple:
        """The compiled kernels the run calls first: the fluid part's, and the compiled data
        plane's event loop if the packets run on it."""
        return self.fluid.kernels() + Simulation.kernels(self)

    def __init__(self, cfg):
        super().__init__(cfg.seed)
        en = cfg.engine
        if en.hybrid_packet_max_bytes is None and not en.hybrid_packet_tags:
            raise ConfigError(
                "engine.hybrid_packet_max_bytes",
                "engine.kind=hybrid needs the flows to run as packets: set "
                "engine.hybrid_packet_max_bytes and/or engine.hybrid_packet_tags",
            )
        scenario = build_scenario(cfg, self.rng)
        as_packets = packet_selection(
            en, [p.spec.size_bytes for p in scenario.flows], [p.spec.tag for p in scenario.flows]
        )
        if not as_packets.any():
            raise ConfigError(
                "engine.hybrid_packet_max_bytes",
                "engine.kind=hybrid: no flow matches the packet selection "
                f"(hybrid_packet_max_bytes={en.hybrid_packet_max_bytes}, "
                f"hybrid_packet_tags={list(en.hybrid_packet_tags)}); use engine.kind=fluid",
            )
        fluid_plans = [p for p, pk in zip(scenario.flows, as_packets, strict=True) if not pk]
        packet_plans = [p for p, pk in zip(scenario.flows, as_packets, strict=True) if pk]
        waited_for = {p.spec.after for p in scenario.flows if p.spec.after}
        if any(p.spec.after or p.spec.tag in waited_for for p in fluid_plans):
            raise ConfigError(
                "workload",
                "engine.kind=hybrid chains flows ('after') among its packet flows only: a fluid "
                "flow waits for a group or is waited for (engine.kind=fluid chains them)",
            )
        # the fluid engine checks what it cannot model (faults, balancers, controllers, ...)
        apart = None if en.hybrid_fold_packet_links else packet_links(scenario, packet_plans)
        self.fluid = FluidSimulation(cfg, scenario, self.rng, fluid_plans, self.engine_name, apart)
        # the packet flows bound the step as fluid ones would: until they finish (with
        # engine.fluid_step_settled_rtt, while young or about to start)
        self.fluid.outside = OutsideFlows([p.spec.start_ps for p in packet_plans],
                                          [p.path.base_rtt_ps for p in packet_plans])  # fmt: skip
        self._outside_index = {p.spec.flow_id: i for i, p in enumerate(packet_plans)}
        self._looked_start = None  # (the start looked at: _look_due)
        # the packets run on the compiled data plane unless the config has what it does not
        # model (engine.dataplane): the same packets, bit for bit
        self.dataplane = resolve_dataplane(cfg)
        compiled = self.dataplane == "compiled"
        pfc = bool(cfg.switch.pfc.enabled)
        if pfc and not compiled:
            raise ConfigError(
                "engine.dataplane",
                "engine.kind=hybrid pauses links (switch.pfc.enabled) on the compiled data plane "
                "only: set engine.dataplane=compiled (or auto) and leave out what it does not "
                "model",
            )
        if cfg.switch.int_telemetry.enabled:
            # the links keep what they sent before each step, which the packets' records count
            self.fluid.hops.int_set[INTS.keep_sent] = 1
        # (PFC pauses event ports; the compiled ones keep the shared links' rules)
        port_cls = (EventPort if pfc else Port) if compiled else HybridPort
        populate_packet(cfg, self, scenario, packet_plans, port_cls, self.dataplane)
        self.n_flows_total = len(scenario.flows)
        # the flows the run waits for (engine.stop_when_done; every flow when empty): the
        # packet flows' completions count in Simulation.flow_completed, the fluid ones' here
        waited = stop_flags(en.stop_when_done, (p.spec.tag for p in scenario.flows))
        self._n_required = int(waited.sum())
        self.step = 0  # the fluid step under way
        routing = scenario.routing
        nic_of = {routing.out_edges[h][0]: i for i, h in enumerate(routing.host_nodes)}
        # each host's NIC link and turn-taking, for the packet flows' claims on the NIC
        nic_schedulers = {link: self.network.hosts[i].nic_scheduler for link, i in nic_of.items()}
        coupling = KernelLinks if compiled else PortLinks
        reach = self._fluid_reach(cfg)
        links_args = (self.network.dataplane if compiled else self.network.ports, self.fluid.ls,
                      nic_schedulers, self.rng, float(scenario.data_bytes), reach,
                      self.fluid.link_rep)  # fmt: skip
        if compiled:  # (the PFC ingress queues the fluid flows share with the packets)
            links_args += (shared_rows(self.fluid.pfc, reach),)
        self.links = coupling(*links_args)
        self._kernel_driven = compiled and self.links.kernel_driven
        self._fluid_finished = 0
        self._fluid_waited_done = 0
        # the fluid flows and links are sampled with the packet recorder's samples
        sampled = self.recorder is not None and bool(fluid_plans)
        self._sampler = Sampler(self.fluid, cfg, in_loop=False) if sampled else None
        if self._sampler is not None:  # (the fluid model steps the links it reaches only)
            self._sampler.keep_ports(reach)
            self.recorder.companions.append(self._sample_fluid)
        # the recorder's samples taken inside the kernel's calls where it reads them there
        # (Recorder.kernel) and samples nothing else: no return to Python for each
        rec = self.recorder
        self._samples_in_kernel = (
            self._kernel_driven and rec is not None and rec.kernel is not None
            and rec.companions == ([self._sample_fluid] if self._sampler is not None else [])
        )  # fmt: skip
        self._sample_clock = np.zeros(SC.size, np.int64)
        if self._samples_in_kernel:
            self._sample_clock[SC.interval_ps] = rec.interval_ps
            self._sample_clock[SC.fluid] = self._sampler is not None
        self._no_samples = (no_samples(), tuple(idle_samples(0)))

    # ---- coupling ---------------------------------------------------------------------------
    def _fluid_reach(self, cfg) -> np.ndarray:
        """Per fluid link, 1 where a fluid flow's bytes or ACKs can reach it: the links of
        their routes, or every link where flows on subflows (UnoLB, PLB, REPS) move over the
        equal-cost paths (:func:`uno.fluid.links.fold_packet_bytes` leaves the others out)."""
        fluid = self.fluid
        if cfg.lb.algo in SUBFLOW_LB:
            return np.ones(len(fluid.ls), dtype=np.int64)
        reached = np.zeros(len(fluid.ls), dtype=np.int64)
        reached[fluid.rt_link] = 1
        reached[fluid.rv_link] = 1
        return reached[fluid.link_rep]  # (a folded group's links with it)

    def _time_of(self, k: int) -> int:
        return int(round(k * self.fluid.dt_ps))

    def start(self, measure_memory: bool = False) -> None:
        super().start(measure_memory)
        # the fluid step compiled on its own first, as the fluid engine compiles it: compiled
        # as a part of the kernels that call it (uno.fluid.hybrid_loop), the steps of the
        # default incast's hybrid run came out 35-75% slower (a call of no step: k to k)
        self.fluid.advance(0, 0)
        if self._kernel_driven:
            # its compiled entry, loaded before the run as the packets' kernels are: the
            # arrays stay the same objects, or grown ones of the same type, and
            # _steps_args fixes the scalars' types (~4 us less a call than the dispatcher)
            args = self._steps_args(False, (NEVER_PS, 2, 0), self._sampling(None))
            self._hybrid_steps = loaded_entry(hybrid_steps, args)
        # the fluid links' faults change at their failures and repairs (the packet ports'
        # fault models act on their own: uno.faults.models)
        faults = self.fluid.faults
        for at_ps in faults.change_times_ps():
            self.engine.call_at(at_ps, self._apply_faults, at_ps)
        if len(self.fluid.flows):
            self.engine.call_at(self._time_of(1), self._fluid_step, None)

    def _apply_faults(self, at_ps: int) -> None:
        self.fluid.faults.apply(at_ps, self.fluid.ls)

    def _fluid_step(self, _arg=None) -> None:
        """At the end of step ``self.step``: fold in the packets' bytes of the step, advance
        the fluid model by it (``self.links.step``), then what follows the step
        (:meth:`_after_step`) and the next: scheduled, or, when the compiled data plane runs
        every packet sender, run with the steps after it inside the kernel while nothing in
        Python is due (:meth:`_drive`, which then runs this step too)."""
        if self._kernel_driven:
            k = self._drive(due=True)
            if k is None:
                return
        else:
            self.links.step(self.fluid, self.step)
            k = self.step + 1
        while self._after_step(k):
            if not self._kernel_driven:
                self.engine.call_at(self._time_of(self.step + 1), self._fluid_step, None)
                return
            k = self._drive()
            if k is None:
                return

    def _after_step(self, k: int) -> bool:
        """Step ``k - 1`` is done: the fluid flows that finished count, the step may grow
        (:meth:`_may_grow`, ``self.step`` the index at the new step); returns whether step
        ``self.step`` follows now (False: the fluid model is done, or idle until a later start,
        whose step is scheduled)."""
        fluid = self.fluid
        self.step = k
        fluid.k_done = k
        fluid.now_ps = self._time_of(k)
        fluid.check_line_memory()
        counters = fluid.counters
        finished = int(counters[K.CT.finished])
        if finished > self._fluid_finished:
            self.n_finished += finished - self._fluid_finished
            self._fluid_finished = finished
            fluid.n_finished = finished
            # (counters[K.CT.waiting]: the fluid flows the run waits for, not finished yet)
            waited_done = fluid.n_waited - int(counters[K.CT.waiting]) if fluid.n_waited else 0
            self._n_done += waited_done - self._fluid_waited_done
            self._fluid_waited_done = waited_done
            if self._n_done == self._n_required and not self._stop.triggered:
                self._stop.succeed()
        if self._look_due(k) and self._may_grow():
            # the fluid engine's own step, following the flows left
            # (FluidSimulation._grow_step); k becomes the index at the new step
            k = self.step = fluid._grow_step(k, may_advance=not self._packets_left())
            fluid.k_done = k
            fluid.now_ps = self._time_of(k)
        if k % STALL_CHECK_STEPS == 0 and not self._packets_left():
            if all_stalled(fluid.fs, counters, fluid.order, fluid.chains, fluid.now_ps):
                # (no step can finish a flow: the run says so now, not at its stop time)
                fluid.stopped_stalled = True
                if not self._stop.triggered:
                    self._stop.succeed()
                return False
        n = len(fluid.flows)
        nxt = int(counters[K.CT.next_start])
        if fluid_done(counters, n, self.links.queues_hold_fluid(fluid.pfc)):
            # every fluid flow has finished: the ports see no fluid bytes from now on, and
            # the steps stop
            self.links.retire(fluid.now_ps)
            return False
        if counters[K.CT.running] == 0 and counters[K.CT.busy] == 0:
            # nothing fluid under way: jump to the step of the next fluid start; the packets'
            # bytes meanwhile meet no fluid flow and are dropped from the account
            first = int(fluid.fs[fluid.order[nxt], K.FS_START] // fluid.dt_ps)
            if first > k:
                self.step = first
                self.engine.call_at(self._time_of(first), self._forget_packet_bytes, None)
                return False
        return True

    def _sample_fluid(self, _now_ps: int) -> None:
        """The fluid flows' and links' sample, taken with the packet recorder's: their state
        at the end of the last step done, stamped with its time (within a step of the
        recorder's); none when no step was done since the last one (the fluid model idle or
        done). The kernel runs the steps through the sample times, and stops only for the
        recorder's own event."""
        now_ps = self.fluid.now_ps
        if now_ps > self._sampler.last_t:
            self._sampler.sample(now_ps)

    def _packets_left(self) -> bool:
        """Whether a packet flow has not finished (or not started)."""
        return self.n_finished - self._fluid_finished < len(self.flows)

    def _may_grow(self) -> bool:
        """Whether the fluid step may change: fluid flows are left, and either it follows the
        flows both ways (``engine.fluid_step_settled_rtt``) or it is below
        ``engine.fluid_step_max_intra_rtt``. Either way the packet flows bound it as fluid
        ones would (:attr:`uno.fluid.engine.FluidSimulation.outside`)."""
        fluid = self.fluid
        if self._fluid_finished >= len(fluid.flows):
            return False
        return fluid.adapts or fluid.step_factor < fluid.step_factor_max

    def flow_completed(self, flow) -> None:
        """A packet flow finished: counted (:meth:`uno.simulation.Simulation.flow_completed`),
        and its base RTT no longer bounds the fluid step."""
        super().flow_completed(flow)
        self.fluid.outside.finished(self._outside_index[flow.flow_id])

    def _look_steps(self) -> int:
        """Every how many steps the kernel stops for a look at the step, or, once every packet
        flow has finished, whether the fluid flows left have all stalled (0: never)."""
        if not self._may_grow():
            return 0 if self._packets_left() else STALL_CHECK_STEPS
        return self.fluid.look_steps

    def _look_due(self, k: int) -> bool:
        """Whether step ``k`` is one to look at the step at: a multiple of the look interval,
        or, with a step above the first, the step of the next start (fluid or packet), once."""
        fluid = self.fluid
        if k % fluid.look_steps == 0:
            return True
        if fluid.adapts and fluid.step_factor > 1 and k >= fluid._next_start_step():
            key = (int(fluid.counters[K.CT.next_start]), fluid.now_ps)
            if key != self._looked_start:
                self._looked_start = key
                return True
        return False

    def _steps_to_start(self) -> int:
        """The kernel's steps up to the next start's step while the step is above the first
        (it stops there for :meth:`_look_due`), else ``DRIVEN_STEPS``."""
        fluid = self.fluid
        if not (fluid.adapts and fluid.step_factor > 1):
            return DRIVEN_STEPS
        return int(min(DRIVEN_STEPS, max(1, fluid._next_start_step() - self.step)))

    def _drive(self, due: bool = False) -> int | None:
        """Run step ``self.step`` and those after it inside the kernel
        (:func:`uno.fluid.hybrid_loop.hybrid_steps`) up to Python's next event; returns the next
        step if the last one done needs :meth:`_after_step`, else None (the next step's event
        is in the engine's heap, keyed as the kernel keyed it, and a result of the kernel that
        stopped it taken as :meth:`uno.net.compiled.CompiledDataplane.run` takes it). ``due``:
        the step's own event is being handled, and the step runs first. A step not due that
        comes after Python's next event is scheduled here, as the kernel would schedule it
        before running anything (a step's event id is newer than any in the heap, so a heap
        entry at its time of priority <= 1 comes first): a call costs ~8 us of Numba's argument
        handling, and with steps longer than the sampling interval every step would make one."""
        engine, dp, fluid = self.engine, self.network.dataplane, self.fluid
        queue = engine._queue
        sample = None
        if self._samples_in_kernel and queue and queue[0][3] is self.recorder.tick:
            sample = heappop(queue)  # (the kernel takes it, and hands back the next one's key)
        top = queue[0] if queue else (NEVER_PS, 2, 0)
        t_step = self._time_of(self.step + 1)
        if not due and (t_step > top[0] or (t_step == top[0] and top[1] <= 1)):
            if sample is not None:
                heappush(queue, sample)
            engine.call_at(t_step, self._fluid_step, None)
            return None
        self.links.make_heap_room()  # (a step's PFC signals)
        sampling = self._sampling(sample)
        code, k, eid, t_step, e_step, host, slot, kind, ecn, now, top_t, top_e, calls = (
            self._hybrid_steps(*self._steps_args(due, top, sampling))
        )
        engine.set_eid_counter(eid)
        if sample is not None:  # the next sample, as the last one taken scheduled it
            clock = self._sample_clock
            heappush(queue, (int(clock[SC.t_ps]), 1, int(clock[SC.eid]), sample[3], None))
        dp.calls += calls
        dp.top = (top_t, top_e)
        if code == DRIVE_STEP_DONE:
            engine.set_clock(t_step)
            return k
        self.step = fluid.k_done = k
        fluid.now_ps = self._time_of(k)
        engine.push_entry((t_step, 1, e_step, self._fluid_step, None))
        if code == DRIVE_KERNEL_STOP:
            delivery = dp.take_result(host, slot, kind, ecn, now)
            if delivery is not None:
                delivery[1].receive(delivery[0])
        return None

    def _steps_args(self, due: bool, top: tuple, sampling: tuple) -> tuple:
        """:func:`uno.fluid.hybrid_loop.hybrid_steps`' arguments from step ``self.step``, with
        Python's next event keyed ``top`` (time, priority, id), in the types every call keeps."""
        dp, fluid = self.network.dataplane, self.fluid
        return (dp.ST, dp.F, dp.U, dp.PK, int(self.step), bool(due), float(fluid.dt_ps),
                int(self.engine.eid_counter()), int(top[0]), int(top[1]), int(top[2]),
                int(self._steps_to_start()), int(fluid.counters[K.CT.finished]),
                int(self._look_steps()), self.links.coupling, fluid.kernel_args()[1:],
                sampling)  # fmt: skip

    def _sampling(self, sample) -> tuple:
        """:func:`uno.fluid.hybrid_loop.hybrid_steps`' ``sampling``: the recorder's sample
        entry ``sample`` (time, priority 1, id, ...; None: the kernel takes none) as its clock,
        with the packet recorder's arrays and the fluid model's."""
        clock = self._sample_clock
        if sample is None:
            clock[SC.on] = 0
            return (clock, *self._no_samples)
        clock[SC.on], clock[SC.t_ps], clock[SC.eid] = 1, sample[0], sample[2]
        fluid = self._no_samples[1] if self._sampler is None else tuple(self._sampler.group)
        return clock, self.recorder.kernel.group(), fluid

    def _forget_packet_bytes(self, _arg=None) -> None:
        self.links.forget()
        self.engine.call_at(self._time_of(self.step + 1), self._fluid_step, None)

    def progress_snapshot(self) -> Snapshot:
        """The packet flows' and the fluid flows' progress together (:mod:`uno.metrics.progress`)."""
        now, done, total, started, late = self.packet_work()
        if len(self.fluid.flows):
            f_done, f_total, f_started, f_late = self.fluid.required_work(now)
            done, total = done + f_done, total + f_total
            started, late = started and f_started, late or f_late
        return Snapshot(now, done, total, started, late, self.n_finished, self.n_flows_total,
                        self.network.packet_hops(), "packet-hops")  # fmt: skip

    # ---- results ----------------------------------------------------------------------------
    def flows_table(self) -> pd.DataFrame:
        packets = super().flows_table()
        if not len(self.fluid.flows):
            return packets
        both = pd.concat([packets, self.fluid.flows_table()], ignore_index=True)
        return both.sort_values("flow_id", kind="stable").reset_index(drop=True)

    def rtt_bin_counts(self) -> np.ndarray:
        """The run's RTT bins: its packet senders' samples and its fluid flows' batches."""
        return super().rtt_bin_counts() + self.fluid.scratch.rtt_counts

    def _collect(self, wall_s: float, peak_mem_bytes) -> RunResult:
        result = super()._collect(wall_s, peak_mem_bytes)
        fluid = self.fluid
        fs = fluid.fs
        # as the fluid engine's: the steps run, the first step and the last; and where the
        # steps stopped (they stop once the fluid flows are done, the packets running on)
        result.summary["run"].update(
            fluid_steps=int(fluid.scratch.tally[TALLY.steps]),
            fluid_step_us=fluid.dt_first_ps / 1e6,
            fluid_step_last_us=fluid.dt_ps / 1e6,
            fluid_end_us=self.step * fluid.dt_ps / 1e6,
        )
        if fluid.stopped_stalled:
            result.summary["run"]["stopped_stalled"] = True
        fluid_ids = [plan.spec.flow_id for plan in fluid.flows]
        fluid_rows = result.flows["flow_id"].isin(fluid_ids)
        result.summary["hybrid"] = {
            "packet_flows": len(self.flows),
            "fluid_flows": len(fluid.flows),
            # (of the run's retransmits: the packets line counts the packet flows' alone)
            "fluid_retransmits": int(result.flows.loc[fluid_rows, "retransmits"].sum()),
            "fluid_lost_bytes": float(fs[:, K.FS_LOST].sum()),
            "fluid_sent_bytes": float(fs[:, K.FS_SENT].sum()),
            "fluid_unaccounted_bytes": unaccounted_bytes(fs),
            **late_acks(fluid.counters, prefix="fluid_"),
            **stalls(fs, fluid.now_ps, fluid.flows, prefix="fluid_"),
        }
        tables = result.tables
        if self._sampler is not None:
            for name, table in self._sampler.tables().items():
                if name in tables and len(table):
                    tables[name] = pd.concat([tables[name], table], ignore_index=True)
        tables["ports"] = self._ports_with_fluid(tables["ports"])
        if "pfc" in result.summary:  # (the fluid model's bytes lost at lossless switches)
            lost = fluid_pfc_summary(fluid)["lossless_violations"]
            result.summary["pfc"]["fluid_lossless_violations"] = lost
        fluid.free_delay_lines()
        return result

    def _ports_with_fluid(self, packet_ports: pd.DataFrame) -> pd.DataFrame:
        """The packet engine's ports table plus, per link, the bytes the fluid flows sent
        (``fluid_tx_bytes``) and the largest total queue the fluid model saw (0 on links no
        fluid flow can reach, which it does not step: :meth:`_fluid_reach`)."""
        fluid_ports = self.fluid.ports_table()
        if not len(fluid_ports):
            return packet_ports
        ls = link_rows_seen(self.fluid)
        index = {name: i for i, name in enumerate(self.fluid.port_names)}
        links = np.array([index[n] for n in fluid_ports["port"]], dtype=np.int64)
        ext = np.zeros(len(ls))
        for e, p in enumerate(self.network.ports):  # (port e: routing edge e)
            ext[e] = p.enqueued_bytes
        # a folded group's links took their packets as the group's mean (uno.fluid.folding)
        rep = self.fluid.link_rep
        ext = (np.bincount(rep, weights=ext, minlength=len(ext)) / self.fluid.ls[:, K.LS_FOLD])[rep]
        fluid_tx = np.maximum(0.0, ls[links, K.LS_IN] - ext[links]) * (
            ls[links, K.LS_TX] / np.maximum(ls[links, K.LS_IN], 1e-9)
        )
        extra = pd.DataFrame(
            {
                "port": fluid_ports["port"],
                "fluid_tx_bytes": np.round(fluid_tx).astype(np.int64),
                "link_max_queue_bytes": fluid_ports["max_queue_bytes"],
            }
        )
        if not len(packet_ports):
            base = fluid_ports.assign(
                arrivals=0, tx_packets=0, tx_bytes=0, drops=0, trims=0, ecn_marks=0,
                max_queue_bytes=0.0,
                queue_bytes_at_end=0,
            )  # fmt: skip
            return base.merge(extra, on="port", how="left")
        merged = packet_ports.merge(extra, on="port", how="outer")
        missing = merged["kind"].isna()
        if missing.any():  # links only fluid flows crossed
            meta = fluid_ports.set_index("port")
            for col in ("kind", "rate_gbps", "buffer_bytes"):
                merged.loc[missing, col] = merged.loc[missing, "port"].map(meta[col])
            for col in ("arrivals", "tx_packets", "tx_bytes", "drops", "trims", "fault_drops",
                        "ecn_marks", "max_queue_bytes", "queue_bytes_at_end"):  # fmt: skip
                merged.loc[missing, col] = 0
        merged["fluid_tx_bytes"] = merged["fluid_tx_bytes"].fillna(0).astype(np.int64)
        for col in ("arrivals", "tx_packets", "tx_bytes", "drops", "trims", "fault_drops",
                    "ecn_marks", "buffer_bytes"):  # fmt: skip
            merged[col] = merged[col].astype(np.int64)
        return merged
