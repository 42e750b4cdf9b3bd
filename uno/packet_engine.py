"""The packet engine's assembly: the data plane a run gets (compiled or Python), its port
class, and the network, hosts, senders, receivers, controllers and balancers of its flows, built
into a :class:`uno.simulation.Simulation` (or the hybrid engine's) from the run's
:class:`uno.scenario.Scenario`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from uno.cc.adapter import make_cc, make_receiver_cc
from uno.cc.registry import LAW_BY_NAME
from uno.config.validate import check_queue_ports
from uno.core.errors import ConfigError
from uno.core.units import gbps_to_bps, ms_to_ps, us_to_ps
from uno.lb.registry import make_lb
from uno.metrics.recorder import Recorder
from uno.metrics.rtts import RTT_BINS
from uno.net.dci import configure_dci, dci_int_stampers, reinsert_int
from uno.net.event_port import EventPort
from uno.net.host import Host
from uno.net.int import configure_int, int_stampers
from uno.net.network import Network
from uno.net.pfc import PauseLog, configure_pfc
from uno.net.port import Port
from uno.net.qcn import configure_qcn
from uno.net.switch import Switch
from uno.transport.flow import Flow, FlowCoding
from uno.transport.receiver import Receiver
from uno.transport.sender import Sender

if TYPE_CHECKING:
    from uno.simulation import Simulation


def resolve_dataplane(cfg) -> str:
    """The packet engine's data plane for ``engine.dataplane``: ``compiled`` is checked (what it
    does not model is refused, naming the setting); ``auto`` is ``compiled`` unless the config
    has something it does not model, then ``python`` (the run's summary says which ran)."""
    from uno.net.compiled import check_compiled_support

    wanted = cfg.engine.dataplane
    if wanted == "python":
        return "python"
    try:
        check_compiled_support(cfg)
    except ConfigError:
        if wanted == "compiled":
            raise
        return "python"
    return "compiled"


def packet_port_class(cfg, dataplane: str = "python"):
    """The packet engine's port class for ``engine.port_model`` (uno/net/event_port.py) with
    data plane ``dataplane`` (:func:`resolve_dataplane`)."""
    sw = cfg.switch
    needs_event = sw.pfc.enabled or sw.int_telemetry.enabled
    model = cfg.engine.port_model
    if model == "lazy" and needs_event:
        on = "switch.pfc" if sw.pfc.enabled else "switch.int_telemetry"
        raise ConfigError(
            "engine.port_model",
            f"'lazy' ports cannot pause or write INT records, which {on} needs: use 'event' or "
            "'auto'",
        )
    # ACKs in a lane of their own take time on the link from data (the artifact's composite
    # queue; a lazy port's ControlLane approximates it without): event ports
    lanes = sw.control_lane
    event = model == "event" or (model == "auto" and (needs_event or lanes))
    if event and dataplane == "compiled" and model == "auto" and not sw.pfc.enabled and not lanes:
        # INT alone: the compiled data plane stamps at its lazy ports' departures, which are the
        # event ports' when nothing pauses them and no control queue shares the transmitter
        # (uno.net.compiled), at one kernel event per packet-hop instead of two
        return Port
    return EventPort if event else Port


def _credit_cc(cfg, plan, network):
    """The receiver's part of the flow's law (MLCC's credit loop), for a cross-DC flow whose
    receiver-side DCI switch keeps per-flow queues; None otherwise."""
    dci = cfg.switch.dci
    law = LAW_BY_NAME[plan.cc_name]
    if law.receiver is None or plan.cls != "inter":
        return None
    if not (dci.enabled and dci.per_flow_queues):
        raise ConfigError(
            "switch.dci.enabled",
            f"cc {plan.cc_name} needs the DCI switches' per-flow queues for its cross-DC flows: "
            "set switch.dci.enabled=true (and switch.dci.per_flow_queues=true)",
        )
    rate = dci.initial_rate_gbps
    init_rate = gbps_to_bps(rate) if rate is not None else network.hosts[plan.spec.dst].nic.rate_bps
    return make_receiver_cc(plan.cc_name, cfg.cc, plan.ctx, init_rate, cfg.engine.cc_py_func)


def populate_packet(
    cfg, sim: Simulation, scenario, plans, port_cls=Port, dataplane: str = "python"
) -> Simulation:
    """Build ``scenario``'s network into ``sim`` (every port of class ``port_cls``) and the flows
    ``plans`` as packet senders and receivers, the recorder and the run limits; with
    ``dataplane="compiled"`` the network runs in the compiled data plane (uno/net/compiled/)."""
    tp = cfg.transport
    routing = scenario.routing
    network = Network(sim.engine, routing, scenario.ecmp_salts, port_cls)
    network.configure_marking(cfg.switch, scenario.marking, sim.rng)
    dci = cfg.switch.dci
    if dci.enabled:  # before PFC: its ingress queues hand packets on to the DCI's taps
        configure_dci(network, dci)
    if cfg.switch.pfc.enabled:
        log = PauseLog()
        for port in network.ports:
            port.pause_log = log
        sim.pfc = (configure_pfc(network, cfg.switch.pfc, scenario.data_bytes), log)
    stampers = None
    int_cfg = cfg.switch.int_telemetry
    if int_cfg.enabled:
        # the qlen rule's coins: drawn only when that rule is on, so other runs draw nothing
        salt = 0
        if int_cfg.replacement == "qlen":
            salt = int(sim.rng.stream("int_ties").integers(0, 2**62))
        if dataplane == "compiled":
            stampers = int_stampers(network, int_cfg, salt)  # the kernel stamps
            if dci.enabled:
                stampers.update(dci_int_stampers(network, int_cfg, salt))
        else:
            configure_int(network, int_cfg, salt)
            if dci.enabled:
                reinsert_int(network, int_cfg, salt)
    if cfg.switch.qcn.enabled:
        configure_qcn(network, cfg.switch.qcn)
    # after PFC: a faulty link loses packets before they reach the next switch's ingress queue
    network.configure_faults(cfg.faults, sim.rng)
    sim.network = network
    ec = cfg.ec
    coder = None
    if ec.kind == "mds":
        from uno.ec.mds import BlockCoder

        coder = BlockCoder(
            ec.data_packets,
            ec.parity_packets,
            ec.symbols_per_packet,
            payload=ec.payload,
            seed=cfg.seed,
        )
    for plan in plans:
        spec, facts = plan.spec, plan.facts
        n_packets = plan.n_packets
        coding = None
        if coder is not None and plan.ec_timeout_ps is not None:
            layout = coder.layout(n_packets)
            coding = FlowCoding(coder, layout, plan.ec_timeout_ps, plan.ec_retransmit_timeout_ps)
            n_packets = layout.n_wire
        flow = Flow(
            spec,
            plan.cls,
            plan.path,
            n_packets,
            plan.wire_bytes,
            facts.rto_ps,
            plan.cc_name,
            cfg.lb.algo,
            plan.ideal_base_rtt_ps,
            coding,
        )
        ctx = plan.ctx
        cc = make_cc(plan.cc_name, cfg.cc, ctx, py_func=cfg.engine.cc_py_func)
        lb = make_lb(cfg.lb.algo, cfg.lb, sim.rng.buffered(f"lb/{spec.flow_id}"), ctx)
        flow.sender = Sender(
            sim.engine,
            flow,
            cc,
            lb,
            network.hosts[spec.src],
            tp.mtu_bytes,
            scenario.header_bytes,
            sim.flow_completed,
            timer_granularity_ps=facts.timer_granularity_ps,
            rto_after_retransmit_ps=facts.rto_after_retransmit_ps,
            dupack_threshold=facts.dupack_threshold,
            pad_last_packet=tp.pad_last_packet,
            scan_timers_while_resending=facts.scan_timers_while_resending,
            report_every_timeout=facts.report_every_timeout,
        )
        flow.receiver = Receiver(
            sim.engine,
            flow,
            network.hosts[spec.dst],
            scenario.ack_bytes,
            tp.mtu_bytes,
            cnp_interval_ps=cc.cnp_interval_ps,
            ack_paths=tp.ack_paths,
            credit_cc=_credit_cc(cfg, plan, network),
        )
        sim.flows.append(flow)
    by_id = network.flows_by_id  # (the hosts hold this list: fill it in place)
    by_id.extend([None] * (max((f.flow_id for f in sim.flows), default=-1) + 1))
    for flow in sim.flows:
        by_id[flow.flow_id] = flow
    if cfg.engine.record_rtts:
        sim.rtt_counts = np.zeros(RTT_BINS, dtype=np.int64)  # shared by the Python senders
        for flow in sim.flows:
            flow.sender.rtt_counts = sim.rtt_counts
    if dataplane == "compiled":
        from uno.net.compiled import CompiledDataplane

        CompiledDataplane(
            sim.engine,
            network,
            by_id,  # (the hybrid's packet flows leave gaps: its fluid flows' ids)
            int_stampers=stampers,
            pfc=sim.pfc,
            kernel_senders=cfg.engine.compiled_senders,
        )
    en = cfg.engine
    sim.max_time_ps = ms_to_ps(en.max_sim_time_ms)
    sim.check_invariants = bool(en.check_invariants)
    sim.stop_tags = set(en.stop_when_done)  # (build_scenario checked that flows have them)
    check_queue_ports(list(en.queue_ports), [p.name for p in network.ports])
    if en.sample_interval_us > 0:
        sim.recorder = make_recorder(sim, en, network)
    sim.meta = scenario.meta()
    return sim


def make_recorder(sim, en, network) -> Recorder:
    """The recorder of a run that samples (``engine.sample_interval_us`` > 0): its ports
    (``engine.queue_ports``: the receivers' switch ports, patterns, every busy port), its DCI
    switches, and on the compiled data plane the readers of the kernel's arrays."""
    rec = Recorder(sim.engine, us_to_ps(en.sample_interval_us), en.sample_rates, en.sample_cwnd,
                   en.sample_queues)  # fmt: skip
    dsts = {f.dst for f in sim.flows}
    receiver_ports = [
        p
        for p in network.ports
        if isinstance(p.owner, Switch)
        and isinstance(p.next_node, Host)
        and p.next_node.host_id in dsts
    ]
    rec.select_ports(list(en.queue_ports), network.ports, receiver_ports)
    rec.dcis = network.dcis
    if network.dataplane is not None:
        # the kernel's senders, receivers and DCI switches keep their state in its arrays
        rec.before_sample = network.dataplane.sync_dci
        rec.read_flows = network.dataplane.sender_counters
        if rec.busy_ports:
            rec.busy_levels = network.dataplane.busy_levels(rec.busy_ports)
        from uno.net.compiled.recording import KernelSamples, kernel_samples_fit

        if kernel_samples_fit(network.dataplane, network, sim.flows):
            rec.kernel = KernelSamples(network.dataplane, rec.ports, rec.busy_ports,
                                       (en.sample_rates, en.sample_cwnd, en.sample_queues),
                                       rec.interval_ps)  # fmt: skip
    return rec
