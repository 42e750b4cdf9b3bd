"""The scenario of a run as plain data, shared by every engine (packet, fluid, max-min).

:func:`build_scenario` turns a validated run configuration into the topology, its routes, the
switch ports' marking settings, the ECMP salts, and one :class:`FlowPlan` per flow (endpoints,
size, start, class, path facts, loss-recovery settings and the congestion controller's
:class:`~uno.cc.base.FlowContext`). Nothing here touches an event engine; the engines in
:mod:`uno.build` (packet) and :mod:`uno.fluid` read the same scenario, so a fluid and a packet run
of one config and seed simulate the same flows on the same paths.

The path facts, timers and marking thresholds become engine units (ps, bit/s) here, with the
functions of :mod:`uno.core.units`; the topology builders and workload generators convert their
own fields with the same functions.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from uno.cc.base import FlowContext
from uno.config.validate import check_against_topology, check_config
from uno.core.errors import ConfigError
from uno.core.rng import RngStreams
from uno.core.units import BITS_PER_BYTE, PS_PER_S, us_to_ps
from uno.net.port import MARK_PHANTOM, MARK_PHYSICAL
from uno.topo.base import HOST, Topology
from uno.topo.registry import build_topology
from uno.topo.routing import PathInfo, Routing
from uno.transport.flow import FlowSpec
from uno.workload.hosts import HostFacts
from uno.workload.mixed import background_flows
from uno.workload.registry import WORKLOAD_REGISTRY

#: the Uno artifact's target RTT over the base RTT, which its retransmitted coded packets carry
#: as their block timer (``ec.retransmit_timeout: target_rtt``)
TARGET_RTT_RATIO = 1.05


def host_facts(routing: Routing) -> HostFacts:
    """Datacenter, edge switch (rack) and access-link rate of every host."""
    topo = routing.topo
    dcs, racks, rates = [], [], []
    for node in routing.host_nodes:
        dcs.append(topo.nodes[node].dc)
        (edge,) = routing.out_edges[node][:1]
        racks.append(routing.edges[edge].dst)
        rates.append(routing.edges[edge].rate_bps)
    return HostFacts(
        tuple(dcs),
        tuple(racks),
        tuple(rates),
        receiver=topo.designated_receiver(),
        bottleneck_side=topo.bottleneck_sides(),
        wan_bps=sum(e.rate_bps for e in routing.edges if e.kind == "wan"),
    )


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
    others = np.arange(1, hosts.n_hosts)
    infos = routing.path_infos(np.zeros_like(others), others, data_bytes, ack_bytes)
    for h, info in enumerate(infos, start=1):
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
    scan_timers_while_resending: bool = False
    report_every_timeout: bool = False


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
        scan_timers_while_resending=_class_or_transport(rec, tp, "scan_timers_while_resending"),
        report_every_timeout=_class_or_transport(rec, tp, "report_every_timeout"),
    )


def _class_or_transport(rec, tp, name: str):
    """The class block's setting ``name``, or the transport-wide one where it is null."""
    value = getattr(rec, name)
    return getattr(tp, name) if value is None else value


@dataclass(frozen=True)
class PortMarking:
    """ECN marking settings of one switch output port (thresholds in bytes, rates in bit/s).
    ``red_*`` is RED on the physical queue (None: none), ``phantom_*`` the phantom queue
    (size None: none); ``source`` says which of them marks (``uno.net.port.MARK_SOURCES``)."""

    red_kmin_bytes: float | None
    red_kmax_bytes: float | None
    phantom_size_bytes: float | None
    phantom_drain_bps: float
    phantom_kmin_bytes: float
    phantom_kmax_bytes: float
    source: str
    phantom_counts_acks: bool
    phantom_counts_drops: bool
    #: RED's marking probability at red_kmax_bytes
    red_pmax: float = 1.0

    @property
    def marks_physical(self) -> bool:
        return self.red_kmin_bytes is not None and self.source != MARK_PHANTOM

    @property
    def marks_phantom(self) -> bool:
        return self.phantom_size_bytes is not None and self.source != MARK_PHYSICAL


def port_names(routing: Routing) -> list[str]:
    """The name of every edge's output port, ``"<from>-><to>"`` with ``#i`` for parallel links
    (the names queue tables, fault and sampling patterns use in every engine)."""
    topo = routing.topo
    links = Counter((e.src, e.dst) for e in routing.edges)  # parallel links: more than one
    seen: Counter = Counter()
    names = []
    for e in routing.edges:
        a, b = topo.nodes[e.src].name, topo.nodes[e.dst].name
        seen[(a, b)] += 1
        parallel = links[(e.src, e.dst)] > 1
        name = f"{a}->{b}"
        if seen[(a, b)] > 1 or parallel:
            name += f"#{seen[(a, b)] - 1}"
        names.append(name)
    return names


def is_switch_port(routing: Routing, edge) -> bool:
    return routing.topo.nodes[edge.src].kind != HOST


def marking_plan(
    switch_cfg, routing: Routing, phantom_size_bytes: float, intra_bdp_bytes: float
) -> list[PortMarking | None]:
    """The marking settings of every edge's output port (None: the port does not mark), per
    the ``switch`` config. ``phantom_size_bytes`` is the default phantom size (the largest path
    BDP); ``intra_bdp_bytes`` the intra-DC reference BDP (``ecn.k_intra_bdp_divisor``)."""
    plan: list[PortMarking | None] = [None] * len(routing.edges)
    ecn = switch_cfg.ecn
    ph = switch_cfg.phantom
    if not ecn.enabled and not ph.enabled:
        return plan
    kinds = set(switch_cfg.port_kinds) if switch_cfg.port_kinds else None
    source = switch_cfg.mark_source
    if source == "auto":
        source = MARK_PHANTOM if ph.enabled else MARK_PHYSICAL
    for e in routing.edges:
        if not is_switch_port(routing, e) or (kinds is not None and e.kind not in kinds):
            continue
        kmin = kmax = None
        if ecn.enabled and ecn.k_intra_bdp_divisor is not None:
            kmin = kmax = intra_bdp_bytes / ecn.k_intra_bdp_divisor
        elif ecn.enabled:
            kmin_frac, kmax_frac = ecn.kmin_frac, ecn.kmax_frac
            if e.kind in ("border", "wan") and switch_cfg.border_kmin_frac is not None:
                kmin_frac, kmax_frac = switch_cfg.border_kmin_frac, switch_cfg.border_kmax_frac
            kmin = ecn.kmin_bytes if ecn.kmin_bytes is not None else kmin_frac * e.buffer_bytes
            kmax = ecn.kmax_bytes if ecn.kmax_bytes is not None else kmax_frac * e.buffer_bytes
        size = None
        if ph.enabled:
            size = ph.size_bytes if ph.size_bytes is not None else phantom_size_bytes
        plan[e.edge_id] = PortMarking(
            red_kmin_bytes=kmin,
            red_kmax_bytes=kmax,
            phantom_size_bytes=size,
            phantom_drain_bps=ph.drain_frac * e.rate_bps,
            phantom_kmin_bytes=ph.kmin_frac * size if size is not None else 0.0,
            phantom_kmax_bytes=ph.kmax_frac * size if size is not None else 0.0,
            source=source,
            phantom_counts_acks=bool(ph.count_acks),
            phantom_counts_drops=bool(ph.count_drops),
            red_pmax=float(ecn.pmax),
        )
    return plan


def marking_threshold_bytes(plan: list[PortMarking | None], edges) -> float | None:
    """The smallest physical-queue ECN threshold (RED Kmin) among the ports of ``edges`` (a
    flow's path), None if none of them marks on its physical queue."""
    ks = [m.red_kmin_bytes for m in (plan[e.edge_id] for e in edges) if m and m.marks_physical]
    return min(ks) if ks else None


def marking_thresholds_bytes(
    plan: list[PortMarking | None], routing: Routing, src_hosts, dst_hosts
) -> list[float | None]:
    """:func:`marking_threshold_bytes` of the first path of every (src, dst) host pair."""
    k = [m.red_kmin_bytes if m and m.marks_physical else None for m in plan]
    k_or_inf = np.array([math.inf if v is None else v for v in k] + [math.inf])
    paths = routing.path_edge_matrix(src_hosts, dst_hosts)
    if paths.shape[1] == 0:
        return [None] * len(paths)
    # the first port of the path with the lowest threshold, as min() picks it
    lowest = paths[np.arange(len(paths)), np.argmin(k_or_inf[paths], axis=1)]
    return [k[e] if e >= 0 else None for e in lowest.tolist()]


@dataclass(frozen=True)
class FlowPlan:
    """One flow as every engine sees it. Times in ps, sizes in bytes. ``wire_bytes`` is the
    message on the wire (payload + headers, padded per ``transport.pad_last_packet``);
    ``n_packets`` its data packets before coding; ``ec_timeout_ps`` the erasure-coding receiver
    timer (None: the flow is not coded), ``ec_retransmit_timeout_ps`` that of a block opened by
    a retransmitted packet (``ec.retransmit_timeout``)."""

    spec: FlowSpec
    cls: str
    inter: bool
    path: PathInfo  # the flow's own (first equal-cost) path
    facts: EndpointFacts
    cc_name: str
    n_packets: int
    wire_bytes: int
    ideal_base_rtt_ps: int | None  # the base RTT with the flow's own largest packet, if smaller
    ctx: FlowContext
    ec_timeout_ps: int | None
    ec_retransmit_timeout_ps: int | None = None

    @property
    def ideal_fct_ps(self) -> int:
        """Base RTT + serialisation of the message at the bottleneck rate (the flow alone)."""
        rtt = (
            self.ideal_base_rtt_ps if self.ideal_base_rtt_ps is not None else self.path.base_rtt_ps
        )
        return rtt + -(-self.wire_bytes * 8 * 10**12 // self.path.bottleneck_bps)


@dataclass
class Scenario:
    """Topology, routes, marking, ECMP salts and flows of one run, as plain data."""

    cfg: object
    topo: Topology
    routing: Routing
    hosts: HostFacts
    refs: ReferencePaths
    marking: list[PortMarking | None]
    #: per switch (in topology order), the salt its ECMP hash mixes in
    ecmp_salts: list[int]
    flows: list[FlowPlan]
    #: wire bytes of a full data packet, of a data packet's header and of an ACK (transport
    #: sizes plus INT's reserved header when INT is on)
    data_bytes: int
    header_bytes: int
    ack_bytes: int

    @property
    def intra_ref(self) -> PathInfo:
        return self.refs.intra[0]

    def meta(self) -> dict:
        """The run header every engine reports in its summary."""
        cfg = self.cfg
        cc = cfg.cc
        cc_label = (
            f"{cc.intra or cc.algo}+{cc.inter or cc.algo}" if cc.intra or cc.inter else cc.algo
        )
        return {
            "name": cfg.name,
            "seed": cfg.seed,
            "engine": cfg.engine.kind,
            "topo": self.topo.name,
            "workload": cfg.workload.kind,
            "cc": cc_label,
            "lb": cfg.lb.algo,
            "intra_base_rtt_us": self.intra_ref.base_rtt_ps / 1e6,
            "intra_bdp_bytes": self.intra_ref.bdp_bytes(),
            "max_base_rtt_us": self.refs.widest.base_rtt_ps / 1e6,
            "max_bdp_bytes": self.refs.widest.bdp_bytes(),
            "n_flows": len(self.flows),
            "n_hosts": self.hosts.n_hosts,
        }


def flow_plans(
    cfg,
    specs: list[FlowSpec],
    routing: Routing,
    hosts: HostFacts,
    refs: ReferencePaths,
    marking: list[PortMarking | None],
    data_bytes: int,
    header_bytes: int,
    ack_bytes: int,
) -> list[FlowPlan]:
    """One :class:`FlowPlan` per flow spec. The path facts are computed once per (src, dst)
    pair, for all pairs together (:meth:`~uno.topo.routing.Routing.path_infos`); the endpoint
    facts and controller contexts, of which a run has a few distinct values, are shared by the
    pairs with equal values."""
    tp = cfg.transport
    ec = cfg.ec
    n = len(specs)
    src = np.fromiter((s.src for s in specs), dtype=np.int64, count=n)
    dst = np.fromiter((s.dst for s in specs), dtype=np.int64, count=n)
    size = np.fromiter((s.size_bytes for s in specs), dtype=np.int64, count=n)
    pair_of, first = _pairs(src, dst, hosts.n_hosts)
    p_src, p_dst = src[first], dst[first]
    own_paths = routing.path_infos(p_src, p_dst, data_bytes, ack_bytes)
    # endpoint_facts reads a pair only through its path and its queues' drain time
    drains = routing.queue_drains_ps(p_src, p_dst)
    ecn_k = marking_thresholds_bytes(marking, routing, p_src, p_dst)
    dcs = hosts.dc
    intra_ref = refs.intra[0]
    intra_rtt_ps, intra_bdp = intra_ref.base_rtt_ps, intra_ref.bdp_bytes()
    inter_bdp = refs.inter[0].bdp_bytes() if refs.inter is not None else None
    own_rto_rule = tp.path_facts != "class_reference"
    facts_by_value: dict[tuple, EndpointFacts] = {}
    ctx_by_value: dict[tuple, FlowContext] = {}
    pair_facts = []  # per pair: (inter, own path, endpoint facts, controller context)
    for j, (s, d) in enumerate(zip(p_src.tolist(), p_dst.tolist(), strict=True)):
        own, inter = own_paths[j], dcs[s] != dcs[d]
        # (own paths and facts are shared objects per value: their ids are their values)
        fkey = (id(own), inter, drains[j] if own_rto_rule else None)
        facts = facts_by_value.get(fkey)
        if facts is None:
            facts = facts_by_value[fkey] = endpoint_facts(routing, own, s, d, inter, refs, tp)
        ckey = (id(facts), inter, ecn_k[j], type(ecn_k[j]))  # a config's int stays an int
        ctx = ctx_by_value.get(ckey)
        if ctx is None:
            ctx = ctx_by_value[ckey] = FlowContext(
                base_rtt_ps=facts.path.base_rtt_ps,
                bdp_bytes=facts.path.bdp_bytes(),
                bottleneck_bps=facts.path.bottleneck_bps,
                mss_bytes=data_bytes,
                intra_rtt_ps=intra_rtt_ps,
                intra_bdp_bytes=intra_bdp,
                is_inter_dc=inter,
                rto_ps=facts.rto_ps,
                ecn_k_bytes=ecn_k[j],
                int_max_records=cfg.switch.int_telemetry.max_records,
                inter_bdp_bytes=inter_bdp,
            )
        pair_facts.append((inter, own, facts, ctx))
    mtu, pad = tp.mtu_bytes, tp.pad_last_packet
    # a single packet smaller than a full one: the base RTT with that packet
    ideal_rtt: list[int | None] = [None] * n
    if not pad:
        small = np.nonzero(size < mtu)[0]
        rtts = routing.base_rtts_ps(src[small], dst[small], size[small] + header_bytes, ack_bytes)
        for i, rtt in zip(small.tolist(), rtts.tolist(), strict=True):
            ideal_rtt[i] = rtt
    cc_intra = cfg.cc.intra or cfg.cc.algo
    cc_inter = cfg.cc.inter or cfg.cc.algo
    coded = ec.kind == "mds"
    fixed_ec_timeout = (
        us_to_ps(ec.receiver_timeout_us) if ec.receiver_timeout_us is not None else None
    )
    plans = []
    for i, (spec, j) in enumerate(zip(specs, pair_of.tolist(), strict=True)):
        inter, path, facts, ctx = pair_facts[j]
        n_packets = -(-spec.size_bytes // mtu)
        if pad:
            wire_bytes = n_packets * data_bytes
        else:
            wire_bytes = spec.size_bytes + n_packets * header_bytes
        ec_timeout = ec_retx_timeout = None
        if coded and (inter or ec.scope == "all"):
            ec_timeout = fixed_ec_timeout if fixed_ec_timeout is not None else drains[j]
            ec_retx_timeout = ec_timeout
            if ec.retransmit_timeout == "target_rtt":
                ec_retx_timeout = round(TARGET_RTT_RATIO * ctx.base_rtt_ps)
        plans.append(
            FlowPlan(
                spec=spec,
                cls="inter" if inter else "intra",
                inter=inter,
                path=path,
                facts=facts,
                cc_name=cc_inter if inter else cc_intra,
                n_packets=n_packets,
                wire_bytes=wire_bytes,
                ideal_base_rtt_ps=ideal_rtt[i],
                ctx=ctx,
                ec_timeout_ps=ec_timeout,
                ec_retransmit_timeout_ps=ec_retx_timeout,
            )
        )
    return plans


def stop_flags(stop_when_done, tags) -> np.ndarray:
    """Per flow (``tags`` in flow order), whether the run waits for it to finish: the flows
    with one of ``engine.stop_when_done``'s tags (the run ends once they all have, the others
    reported unfinished), or every flow when that list is empty. :func:`build_scenario` has
    checked that some flow has each tag."""
    wanted = set(stop_when_done)
    tags = list(tags)
    if not wanted:
        return np.ones(len(tags), dtype=bool)
    return np.fromiter((t in wanted for t in tags), dtype=bool, count=len(tags))


def _pairs(src: np.ndarray, dst: np.ndarray, n_hosts: int) -> tuple[np.ndarray, np.ndarray]:
    """Each flow's (src, dst) pair as an index into the distinct pairs, and the first flow of
    each distinct pair."""
    _, first, pair_of = np.unique(src * n_hosts + dst, return_index=True, return_inverse=True)
    return pair_of.reshape(-1), first


def topology_and_routing(topo_cfg, data_bytes: int, ack_bytes: int) -> tuple:
    """The topology of ``topo_cfg`` for packets of ``data_bytes`` / ``ack_bytes`` on the wire
    and its routing tables. Both are read-only once built (their lazily filled tables are pure
    functions of the topology), so the runs of one process share them: the jobs of a sweep
    that differ in other settings build them once."""
    key = (repr(topo_cfg), data_bytes, ack_bytes)  # (the repr names every field's value)
    found = _BUILT_TOPOLOGIES.get(key)
    if found is None:
        topo = build_topology(topo_cfg, data_bytes, ack_bytes)
        found = (topo, Routing(topo))
        while len(_BUILT_TOPOLOGIES) >= _TOPOLOGIES_KEPT:
            _BUILT_TOPOLOGIES.pop(next(iter(_BUILT_TOPOLOGIES)))
        _BUILT_TOPOLOGIES[key] = found
    return found


#: the topologies (with routing) built last in this process, oldest first
_BUILT_TOPOLOGIES: dict[tuple, tuple] = {}
_TOPOLOGIES_KEPT = 4


def build_scenario(cfg, rng: RngStreams) -> Scenario:
    """Validate ``cfg`` (a RunConfig object) and build its scenario, drawing the workload and
    the ECMP salts from ``rng`` (the run's streams ``workload`` and ``ecmp_salt``)."""
    check_config(cfg)
    tp = cfg.transport
    # INT reserves a fixed-size header in every data packet and echoes it in every ACK
    int_bytes = cfg.switch.int_telemetry.overhead_bytes()
    header_bytes = tp.header_bytes + int_bytes
    ack_bytes = tp.ack_bytes + int_bytes
    data_bytes = tp.mtu_bytes + header_bytes
    topo, routing = topology_and_routing(cfg.topo, data_bytes, ack_bytes)
    check_against_topology(cfg, topo.link_kinds())
    hosts = host_facts(routing)
    specs = WORKLOAD_REGISTRY[cfg.workload.kind](cfg.workload, hosts, rng.stream("workload"))
    specs += background_flows(cfg.background, hosts, rng.stream("background"), len(specs))
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
    missing = set(cfg.engine.stop_when_done) - tags
    if missing:
        raise ConfigError("engine.stop_when_done", f"no flow has tag(s) {sorted(missing)}")
    n_switches = sum(1 for n in topo.nodes if n.kind != HOST)
    salts = rng.stream("ecmp_salt").integers(0, 2**63, size=max(1, n_switches)).tolist()
    refs = reference_paths(routing, hosts, data_bytes, ack_bytes)
    intra_ref = refs.intra[0]
    marking = marking_plan(cfg.switch, routing, refs.widest.bdp_bytes(), intra_ref.bdp_bytes())
    plans = flow_plans(
        cfg, specs, routing, hosts, refs, marking, data_bytes, header_bytes, ack_bytes
    )
    return Scenario(
        cfg=cfg,
        topo=topo,
        routing=routing,
        hosts=hosts,
        refs=refs,
        marking=marking,
        ecmp_salts=[int(s) for s in salts],
        flows=plans,
        data_bytes=data_bytes,
        header_bytes=header_bytes,
        ack_bytes=ack_bytes,
    )
