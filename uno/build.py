"""Turn a validated run configuration into a :class:`uno.core.sim.Simulation`.

This is the one place where config units (µs, Gb/s) become engine units (ps, bit/s)."""

from __future__ import annotations

from dataclasses import dataclass

from uno.cc.base import FlowContext
from uno.cc.registry import make_cc
from uno.config.validate import check_against_topology, check_config, check_queue_ports
from uno.core.errors import ConfigError
from uno.core.sim import Simulation
from uno.core.units import BITS_PER_BYTE, PS_PER_S, ms_to_ps, us_to_ps
from uno.lb.registry import make_lb
from uno.metrics.recorder import Recorder
from uno.net.host import Host
from uno.net.network import Network
from uno.net.switch import Switch
from uno.topo.registry import build_topology
from uno.topo.routing import PathInfo, Routing
from uno.transport.flow import Flow, FlowCoding
from uno.transport.receiver import Receiver
from uno.transport.sender import Sender
from uno.workload.hosts import HostFacts
from uno.workload.registry import WORKLOAD_REGISTRY


def host_facts(routing: Routing) -> HostFacts:
    """Datacenter, edge switch (rack) and access-link rate of every host."""
    topo = routing.topo
    dcs, racks, rates = [], [], []
    for node in routing.host_nodes:
        dcs.append(topo.nodes[node].dc)
        (edge,) = routing.out_edges[node][:1]
        racks.append(routing.edges[edge].dst)
        rates.append(routing.edges[edge].rate_bps)
    return HostFacts(tuple(dcs), tuple(racks), tuple(rates))


@dataclass(frozen=True)
class ReferencePaths:
    """Paths from host 0 the network is described by: the longest intra-DC path (the intra-DC
    RTT and BDP some controllers use as a common time base), the longest inter-DC path (None on
    a single-datacenter topology) and the path with the largest BDP (phantom queue size). The
    first two are also the class reference paths of ``transport.path_facts=class_reference``;
    each is (path facts, destination host)."""

    intra: tuple[PathInfo, int]
    inter: tuple[PathInfo, int] | None
    widest: PathInfo


def reference_paths(
    routing: Routing, hosts: HostFacts, data_bytes: int, ack_bytes: int
) -> ReferencePaths:
    intra = inter = None
    widest = None
    for h in range(1, hosts.n_hosts):
        info = routing.path_info(0, h, data_bytes, ack_bytes)
        same_dc = hosts.dc[h] == hosts.dc[0]
        best = intra if same_dc else inter
        if best is None or info.base_rtt_ps > best[0].base_rtt_ps:
            if same_dc:
                intra = (info, h)
            else:
                inter = (info, h)
        if widest is None or info.bdp_bytes() > widest.bdp_bytes():
            widest = info
    if intra is None:  # a single host per DC: fall back to the inter-DC path
        intra = inter
    return ReferencePaths(intra, inter, widest)


def queue_drain_ps(routing: Routing, src: int, dst: int) -> int:
    """Time to drain a full buffer at every switch queue on the path from ``src`` to ``dst``,
    in ps: the largest queueing delay a packet can meet (the Uno artifact's estimate)."""
    drain_ps = 0
    topo = routing.topo
    for e in routing.path_edges(src, dst):
        if topo.nodes[e.src].kind != "host":
            drain_ps += e.buffer_bytes * BITS_PER_BYTE * PS_PER_S // e.rate_bps
    return drain_ps


def rto_for_path(routing: Routing, path: PathInfo, src: int, dst: int, tp) -> int:
    """RTO in ps: fixed ``rto_us`` if set, else base RTT + factor x time to drain a full buffer
    at every switch queue on the forward path (the Uno artifact's rule), floored at rto_min."""
    if tp.rto_us is not None:
        return us_to_ps(tp.rto_us)
    rto = path.base_rtt_ps + int(tp.rto_queue_factor * queue_drain_ps(routing, src, dst))
    return max(rto, us_to_ps(tp.rto_min_us))


@dataclass(frozen=True)
class EndpointFacts:
    """What a flow's endpoints know and how they recover from loss, times in ps."""

    path: PathInfo  # the path facts its controller sees (own path or class reference)
    rto_ps: int
    rto_after_retransmit_ps: int | None
    timer_granularity_ps: int
    dupack_threshold: int


def endpoint_facts(
    routing: Routing, own: PathInfo, src: int, dst: int, inter: bool, refs: ReferencePaths, tp
) -> EndpointFacts:
    """Path facts and loss-recovery settings of one flow (``transport``: path_facts, the
    class block ``intra``/``inter`` over the transport-wide rules)."""
    rec = tp.inter if inter else tp.intra
    path, src_f, dst_f = own, src, dst
    if tp.path_facts == "class_reference":
        ref = refs.inter if inter and refs.inter is not None else refs.intra
        path, src_f, dst_f = ref[0], 0, ref[1]
    if rec.rto_us is not None:
        rto = us_to_ps(rec.rto_us)
    elif rec.rto_base_rtts is not None:
        rto = round(rec.rto_base_rtts * path.base_rtt_ps)
    else:
        rto = rto_for_path(routing, path, src_f, dst_f, tp)
    after = rec.rto_base_rtts_after_retransmit
    granularity = rec.timer_granularity_us or tp.timer_granularity_us
    dupack = rec.dupack_threshold if rec.dupack_threshold is not None else tp.dupack_threshold
    return EndpointFacts(
        path=path,
        rto_ps=rto,
        rto_after_retransmit_ps=round(after * path.base_rtt_ps) if after is not None else None,
        timer_granularity_ps=us_to_ps(granularity),
        dupack_threshold=dupack,
    )


def build_simulation(cfg) -> Simulation:
    """Build a ready-to-run simulation from ``cfg`` (a RunConfig object or DictConfig)."""
    check_config(cfg)
    tp = cfg.transport
    data_bytes = tp.mtu_bytes + tp.header_bytes
    sim = Simulation(cfg.seed)
    topo = build_topology(cfg.topo, data_bytes, tp.ack_bytes)
    check_against_topology(cfg, topo.link_kinds())
    routing = Routing(topo)
    hosts = host_facts(routing)
    specs = WORKLOAD_REGISTRY[cfg.workload.kind](cfg.workload, hosts, sim.rng.stream("workload"))
    tags = {s.tag for s in specs}
    for s in specs:
        if s.after and (s.after not in tags or s.after == s.tag):
            raise ConfigError(
                "workload", f"flow {s.flow_id} waits for tag {s.after!r}, which no other flow has"
            )
        if not routing.reachable(s.src, s.dst):
            raise ConfigError(
                "workload", f"flow {s.flow_id}: no route from host {s.src} to host {s.dst}"
            )
    network = Network(sim.engine, routing, sim.rng)
    refs = reference_paths(routing, hosts, data_bytes, tp.ack_bytes)
    intra_ref = refs.intra[0]
    network.configure_marking(
        cfg.switch, sim.rng, refs.widest.bdp_bytes(), refs.intra[0].bdp_bytes()
    )
    network.configure_faults(cfg.faults, sim.rng)
    sim.network = network
    own_paths: dict[tuple[int, int], PathInfo] = {}
    facts_cache: dict[tuple[int, int], EndpointFacts] = {}
    ecn_k: dict[tuple[int, int], float | None] = {}
    small_rtts: dict[tuple[int, int, int], int] = {}
    full_wire = tp.mtu_bytes + tp.header_bytes
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
    ec_timeouts: dict[tuple[int, int], int] = {}
    for spec in specs:
        key = (spec.src, spec.dst)
        inter = hosts.dc[spec.src] != hosts.dc[spec.dst]
        if key not in own_paths:
            own = own_paths[key] = routing.path_info(spec.src, spec.dst, data_bytes, tp.ack_bytes)
            facts_cache[key] = endpoint_facts(routing, own, spec.src, spec.dst, inter, refs, tp)
            ecn_k[key] = network.marking_threshold_bytes(routing.path_edges(spec.src, spec.dst))
        path, facts = own_paths[key], facts_cache[key]
        cls = "inter" if inter else "intra"
        cc_name = (cfg.cc.inter if inter else cfg.cc.intra) or cfg.cc.algo
        n_packets = -(-spec.size_bytes // tp.mtu_bytes)
        if tp.pad_last_packet:
            wire_bytes = n_packets * full_wire
        else:
            wire_bytes = spec.size_bytes + n_packets * tp.header_bytes
        ideal_rtt = None
        if spec.size_bytes < tp.mtu_bytes and not tp.pad_last_packet:
            # a single packet smaller than a full one
            small = (spec.src, spec.dst, spec.size_bytes + tp.header_bytes)
            if small not in small_rtts:
                small_rtts[small] = routing.path_info(
                    spec.src, spec.dst, small[2], tp.ack_bytes
                ).base_rtt_ps
            ideal_rtt = small_rtts[small]
        coding = None
        if coder is not None and (inter or ec.scope == "all"):
            if ec.receiver_timeout_us is not None:
                timeout = us_to_ps(ec.receiver_timeout_us)
            else:
                if key not in ec_timeouts:
                    ec_timeouts[key] = queue_drain_ps(routing, spec.src, spec.dst)
                timeout = ec_timeouts[key]
            layout = coder.layout(n_packets)
            coding = FlowCoding(coder, layout, timeout)
            n_packets = layout.n_wire
        flow = Flow(
            spec,
            cls,
            path,
            n_packets,
            wire_bytes,
            facts.rto_ps,
            cc_name,
            cfg.lb.algo,
            ideal_rtt,
            coding,
        )
        ctx = FlowContext(
            base_rtt_ps=facts.path.base_rtt_ps,
            bdp_bytes=facts.path.bdp_bytes(),
            bottleneck_bps=facts.path.bottleneck_bps,
            mss_bytes=data_bytes,
            intra_rtt_ps=intra_ref.base_rtt_ps,
            intra_bdp_bytes=intra_ref.bdp_bytes(),
            is_inter_dc=inter,
            rto_ps=facts.rto_ps,
            ecn_k_bytes=ecn_k[key],
        )
        cc = make_cc(cc_name, cfg.cc, ctx)
        lb = make_lb(cfg.lb.algo, cfg.lb, sim.rng.buffered(f"lb/{spec.flow_id}"), ctx)
        flow.sender = Sender(
            sim.engine,
            flow,
            cc,
            lb,
            network.hosts[spec.src],
            tp.mtu_bytes,
            tp.header_bytes,
            sim.flow_completed,
            timer_granularity_ps=facts.timer_granularity_ps,
            rto_after_retransmit_ps=facts.rto_after_retransmit_ps,
            dupack_threshold=facts.dupack_threshold,
            pad_last_packet=tp.pad_last_packet,
        )
        flow.receiver = Receiver(
            sim.engine, flow, network.hosts[spec.dst], tp.ack_bytes, tp.mtu_bytes
        )
        sim.flows.append(flow)
    en = cfg.engine
    sim.max_time_ps = ms_to_ps(en.max_sim_time_ms)
    sim.check_invariants = bool(en.check_invariants)
    sim.stop_tags = set(en.stop_when_done)
    missing = sim.stop_tags - {f.tag for f in sim.flows}
    if missing:
        raise ConfigError("engine.stop_when_done", f"no flow has tag(s) {sorted(missing)}")
    check_queue_ports(list(en.queue_ports), [p.name for p in network.ports])
    if en.sample_interval_us > 0:
        rec = Recorder(
            sim.engine,
            us_to_ps(en.sample_interval_us),
            en.sample_rates,
            en.sample_cwnd,
            en.sample_queues,
        )
        dsts = {f.dst for f in sim.flows}
        receiver_ports = [
            p
            for p in network.ports
            if isinstance(p.owner, Switch)
            and isinstance(p.next_node, Host)
            and p.next_node.host_id in dsts
        ]
        rec.select_ports(list(en.queue_ports), network.ports, receiver_ports)
        sim.recorder = rec
    sim.meta = {
        "name": cfg.name,
        "seed": cfg.seed,
        "topo": topo.name,
        "workload": cfg.workload.kind,
        "cc": _cc_label(cfg.cc),
        "lb": cfg.lb.algo,
        "intra_base_rtt_us": intra_ref.base_rtt_ps / 1e6,
        "intra_bdp_bytes": intra_ref.bdp_bytes(),
        "max_base_rtt_us": refs.widest.base_rtt_ps / 1e6,
        "max_bdp_bytes": refs.widest.bdp_bytes(),
        "n_flows": len(sim.flows),
        "n_hosts": hosts.n_hosts,
    }
    return sim


def _cc_label(cc) -> str:
    if cc.intra or cc.inter:
        return f"{cc.intra or cc.algo}+{cc.inter or cc.algo}"
    return cc.algo
