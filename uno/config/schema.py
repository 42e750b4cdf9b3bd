"""Structured configs: one dataclass per config group option, registered with Hydra's
ConfigStore so that a misspelt key or a value of the wrong type is refused when the config is
composed, before anything runs. Range checks that need more than a type live in
:mod:`uno.config.validate`. Units are in the field names; configs use human units (µs, Gb/s,
bytes) that :mod:`uno.build` converts to picoseconds and bits/s in one place."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, make_dataclass
from functools import cache
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, OmegaConf

from uno.config.engine_config import EngineConfig
from uno.config.fields import choice, num
from uno.config.parts import declared, names_of
from uno.config.switch_parts import DciConfig, IntTelemetryConfig, QcnConfig, TrimmingConfig
from uno.core.errors import ConfigError

MIB = 1 << 20
GIB = 1 << 30


# the choices the components own (uno.config.parts)
_topo_kinds = names_of("topo.kind")
_workload_kinds = names_of("workload.kind")
_cc_names = names_of("cc")
_lb_names = names_of("lb")


# ---- topology -----------------------------------------------------------------------------
#: host ids must fit in the 20 bits the ECMP hash key gives them (uno.core.packet)
MAX_HOSTS = "[1, 65536]"


@dataclass
class DumbbellTopo:
    kind: str = choice("dumbbell", _topo_kinds)
    #: hosts on the left switch (ids 0 .. n_senders - 1)
    n_senders: int = num(4, MAX_HOSTS)
    #: hosts on the right switch (ids n_senders ..), across the bottleneck from the senders
    n_receivers: int = num(1, MAX_HOSTS)
    #: rate of every host link
    host_rate_gbps: float = num(100.0, "> 0")
    #: rate of the link from the left switch to the right one
    bottleneck_rate_gbps: float = num(100.0, "> 0")
    #: one-way propagation delay of every host link
    link_delay_us: float = num(1.0, ">= 0")
    #: one-way propagation delay of the bottleneck link
    bottleneck_delay_us: float = num(1.0, ">= 0")
    #: buffer of every switch output port
    buffer_bytes: int = num(MIB, "> 0")
    #: buffer of every host's NIC queue
    nic_buffer_bytes: int = num(GIB, "> 0")
    #: latency of every switch traversal (uno/topo/base.py: add_switch_latency)
    switch_latency_us: float = num(0.0, ">= 0")


@dataclass
class FatTreeTopo:
    kind: str = choice("fat_tree", _topo_kinds)
    #: switch radix; hosts = k^3/4 per fat tree
    k: int = num(8, "[2, 64]")
    #: rate of every link
    link_rate_gbps: float = num(100.0, "> 0")
    #: one-way propagation delay of every link
    link_delay_us: float = num(1.0, ">= 0")
    #: buffer of every switch output port (on two_dc: unless intra_buffer_bytes or
    #: inter_buffer_bytes says otherwise)
    buffer_bytes: int = num(MIB, "> 0")
    #: buffer of every host's NIC queue
    nic_buffer_bytes: int = num(GIB, "> 0")
    #: uplinks of every ToR, one per aggregation switch of its pod (null: k/2; fewer
    #: oversubscribe the ToRs k/2 : tor_uplinks)
    tor_uplinks: int | None = num(None, "[1, 64]")
    #: core uplinks of every aggregation switch (null: k/2; fewer oversubscribe them)
    agg_uplinks: int | None = num(None, "[1, 64]")
    #: latency of every switch traversal (uno/topo/base.py: add_switch_latency)
    switch_latency_us: float = num(0.0, ">= 0")

    def check_consistency(self, prefix: str) -> None:
        if self.k % 2:
            raise ConfigError(f"{prefix}.k", f"must be an even integer in [2, 64], got {self.k}")
        for name in ("tor_uplinks", "agg_uplinks"):
            value = getattr(self, name)
            if value is not None and value > self.k // 2:
                raise ConfigError(f"{prefix}.{name}", f"at most k/2 = {self.k // 2}, got {value}")


@dataclass
class TwoDcTopo(FatTreeTopo):
    kind: str = choice("two_dc", _topo_kinds)
    #: parallel links from every core switch to its datacenter's border switch
    core_border_links: int = num(8, "[1, 1024]")
    #: parallel WAN links between the two border switches
    wan_links: int = num(8, "[1, 4096]")
    #: rate of every WAN link
    wan_rate_gbps: float = num(100.0, "> 0")
    #: one-way propagation delay of every WAN link (886.5: inter-DC base RTT 1.792 ms, 128x the
    #: intra-DC one)
    wan_delay_us: float = num(886.5, ">= 0")
    #: if set, overrides wan_delay_us so that inter-DC base RTT = ratio x intra-DC base RTT
    inter_rtt_ratio: float | None = num(None, "> 1")
    #: buffer of the intra-DC switch ports (ToR, aggregation, core); null: buffer_bytes
    intra_buffer_bytes: int | None = num(None, "> 0")
    #: buffer of the core-border and WAN ports; null: buffer_bytes
    inter_buffer_bytes: int | None = num(None, "> 0")


def _check_host_count(prefix: str, field_name: str, n_hosts: int) -> None:
    if n_hosts > 65536:
        raise ConfigError(
            f"{prefix}.{field_name}",
            f"gives {n_hosts} hosts in the two datacenters; at most 65536 are allowed",
        )


@dataclass
class GearTwoDcTopo:
    """Gear §IV-B: two oversubscribed fat trees, core routers joined by WAN links
    (uno/topo/gear_two_dc.py)."""

    kind: str = choice("gear_two_dc", _topo_kinds)
    #: pods per datacenter
    pods: int = num(4, "[1, 256]")
    #: ToR switches per pod
    tors_per_pod: int = num(4, "[1, 256]")
    #: aggregation switches per pod, each linked to every ToR of its pod
    aggs_per_pod: int = num(4, "[1, 256]")
    #: hosts under every ToR switch
    hosts_per_tor: int = num(8, "[1, 1024]")
    #: aggregation switch a of every pod links to core group a (core_switches / aggs_per_pod)
    core_switches: int = num(8, "[1, 4096]")
    #: WAN links between core c of DC 0 and core c of DC 1
    wan_links_per_core: int = num(1, "[1, 64]")
    #: rate of every host link
    host_rate_gbps: float = num(100.0, "> 0")
    #: rate of every ToR-aggregation and aggregation-core link
    fabric_rate_gbps: float = num(100.0, "> 0")
    #: rate of every WAN link
    wan_rate_gbps: float = num(100.0, "> 0")
    #: one-way propagation between hosts in different pods, spread over the path's 6 links
    inter_pod_delay_us: float = num(20.0, ">= 0")
    #: one-way propagation delay of every WAN link
    wan_delay_us: float = num(25000.0, ">= 0")
    #: buffer of every intra-DC switch output port
    buffer_bytes: int = num(10_000_000, "> 0")
    #: buffer of every WAN port
    wan_buffer_bytes: int = num(10_000_000, "> 0")
    #: buffer of every host's NIC queue
    nic_buffer_bytes: int = num(GIB, "> 0")
    #: latency of every switch traversal (uno/topo/base.py: add_switch_latency)
    switch_latency_us: float = num(0.0, ">= 0")

    def check_consistency(self, prefix: str) -> None:
        if self.core_switches % self.aggs_per_pod:
            raise ConfigError(
                f"{prefix}.core_switches",
                f"must be a multiple of aggs_per_pod ({self.aggs_per_pod}), "
                f"got {self.core_switches}",
            )
        n = 2 * self.pods * self.tors_per_pod * self.hosts_per_tor
        _check_host_count(prefix, "hosts_per_tor", n)


@dataclass
class MlccTwoDcTopo:
    """MLCC §4.1: two leaf-spine datacenters, DCI switches joined by long-distance links
    (uno/topo/mlcc_two_dc.py)."""

    kind: str = choice("mlcc_two_dc", _topo_kinds)
    #: spine switches per datacenter
    spines: int = num(2, "[1, 256]")
    #: leaf switches per datacenter, each linked to every spine
    leaves: int = num(4, "[1, 1024]")
    #: hosts under every leaf switch
    hosts_per_leaf: int = num(32, "[1, 1024]")
    #: links from every spine to its datacenter's DCI switch
    spine_dci_links: int = num(1, "[1, 64]")
    #: long-distance links between the two DCI switches
    wan_links: int = num(2, "[1, 1024]")
    #: rate of every host link
    host_rate_gbps: float = num(25.0, "> 0")
    #: rate of every leaf-spine and spine-DCI link
    fabric_rate_gbps: float = num(100.0, "> 0")
    #: rate of every long-distance link between the DCI switches
    wan_rate_gbps: float = num(100.0, "> 0")
    #: one-way propagation delay of every host link
    host_delay_us: float = num(1.0, ">= 0")
    #: one-way propagation delay of every other intra-DC link
    fabric_delay_us: float = num(5.0, ">= 0")
    #: one-way propagation delay of every DCI-to-DCI link
    wan_delay_us: float = num(3000.0, ">= 0")
    #: every output port of an intra-DC (leaf, spine) switch
    switch_buffer_bytes: int = num(22 * MIB, "> 0")
    #: every output port of a DCI switch
    dci_buffer_bytes: int = num(128 * MIB, "> 0")
    #: buffer of every host's NIC queue
    nic_buffer_bytes: int = num(GIB, "> 0")
    #: latency of every switch traversal (uno/topo/base.py: add_switch_latency)
    switch_latency_us: float = num(0.0, ">= 0")

    def check_consistency(self, prefix: str) -> None:
        _check_host_count(prefix, "hosts_per_leaf", 2 * self.leaves * self.hosts_per_leaf)


# ---- workload -----------------------------------------------------------------------------
@dataclass
class FlowEntry:
    #: sending host id
    src: int = num(MISSING, ">= 0")
    #: receiving host id
    dst: int = num(MISSING, ">= 0")
    #: bytes the flow carries
    size_bytes: int = num(MISSING, "> 0")
    #: when the flow starts
    start_us: float = num(0.0, ">= 0")
    #: when its sender stops, finished or not (nothing sent after it; null: it runs to its end)
    stop_us: float | None = num(None, "> 0")
    #: a label (flows table column ``tag``) that engine.stop_when_done and engine.hybrid_packet_tags
    #: can name
    tag: str = ""


@dataclass
class FlowsWorkload:
    kind: str = choice("flows", _workload_kinds)
    #: the flows, e.g. workload.flows='[{src:0,dst:200,size_bytes:1000000}]'
    flows: list[FlowEntry] = field(default_factory=list)


@dataclass
class IncastWorkload:
    kind: str = choice("incast", _workload_kinds)
    #: host id of the receiver; null: the topology's designated receiver (on the dumbbell the
    #: first host behind its bottleneck, elsewhere host 0)
    receiver: int | None = num(None, ">= 0")
    #: senders in the receiver's datacenter
    n_intra: int = num(4, "[0, 65536]")
    #: senders in the other datacenter
    n_inter: int = num(4, "[0, 65536]")
    #: bytes each sender sends
    size_bytes: int = num(1_000_000, "> 0")
    #: start of the first sender
    start_us: float = num(0.0, ">= 0")
    #: start of sender i = start_us + i * stagger_us
    stagger_us: float = num(0.0, ">= 0")
    #: how senders are chosen: "random" (seeded), "spread" (round-robin over racks) or
    #: "explicit" (the hosts in ``senders``, n_intra of them in the receiver's DC)
    placement: str = choice("random", names_of("workload.placement"))
    #: with placement explicit: the sending hosts
    senders: list[int] = field(default_factory=list)

    def check_consistency(self, prefix: str) -> None:
        if self.n_intra + self.n_inter == 0:
            raise ConfigError(f"{prefix}.n_intra", "n_intra and n_inter must not both be 0")


@dataclass
class RpcIncastWorkload(IncastWorkload):
    kind: str = choice("rpc_incast", _workload_kinds)
    #: RPCs sent to the receiver, on top of the incast
    rpc_count: int = num(1000, "[0, 10000000]")
    #: "same_rack" (hosts under the receiver's ToR), "same_dc" or "listed" (``rpc_hosts``)
    rpc_sources: str = choice("same_rack", names_of("workload.rpc_sources"))
    #: with rpc_sources listed: the hosts the RPCs come from
    rpc_hosts: list[int] = field(default_factory=list)
    #: shipped CDF name (data/cdf/<name>.csv) or a path to a CDF file
    rpc_cdf: str = "google_rpc"
    #: RPC sizes drawn from rpc_cdf are capped at this (null: no cap)
    rpc_max_bytes: int | None = num(None, "> 0")
    #: when the first RPC starts
    rpc_start_us: float = num(15000.0, ">= 0")
    #: gap between RPC starts (the mean gap with poisson arrivals)
    rpc_interval_us: float = num(25.0, "> 0")
    #: "periodic" (every rpc_interval_us) or "poisson" (exponential gaps of that mean)
    rpc_arrivals: str = choice("periodic", names_of("workload.rpc_arrivals"))

    def check_consistency(self, prefix: str) -> None:
        # the background incast may be empty when RPCs are what is studied
        if self.n_intra + self.n_inter + self.rpc_count == 0:
            raise ConfigError(
                f"{prefix}.rpc_count", "no flows: n_intra, n_inter and rpc_count are 0"
            )


@dataclass
class PermutationWorkload:
    kind: str = choice("permutation", _workload_kinds)
    #: bytes each host sends to its partner
    size_bytes: int = num(1_000_000, "> 0")
    #: when every flow starts
    start_us: float = num(0.0, ">= 0")
    #: "all" (any other host), "intra" (same DC), "inter" (other DC)
    scope: str = choice("all", names_of("workload.scope"))


@dataclass
class TraceWorkload:
    kind: str = choice("trace", _workload_kinds)
    #: an htsim connection-matrix file (.cm: "SRC->DST id K start US size BYTES" per flow) or
    #: the name of a shipped one (data/tms/<name>.cm)
    path: str = MISSING


@dataclass
class MixedWorkload:
    """Poisson arrivals at an offered load, intra/inter-DC sizes from CDFs (uno/workload/mixed.py)."""

    kind: str = choice("mixed", _workload_kinds)
    #: offered load: bytes per second / the hosts' total access capacity (load_of: hosts)
    load: float = num(0.4, "(0, 1)")
    #: what load is a share of: "hosts" (their access capacity) or "wan" (the inter-DC flows'
    #: bytes per second / the WAN links' capacity, both directions)
    load_of: str = choice("hosts", ("hosts", "wan"))
    #: the trace ends after this many flows, or (n_flows null) at duration_us
    n_flows: int | None = num(5000, "[1, 100000000]")
    #: with n_flows null: arrivals stop at this time
    duration_us: float | None = num(None, "> 0")
    #: share of intra-DC flows, by count (the paper: 4:1 -> 0.8); null with inter_load
    intra_fraction: float | None = num(0.8, "[0, 1]")
    #: shipped CDF names (data/cdf/<name>.csv) or CSV paths
    intra_cdf: str = "web_search"
    #: inter-DC flow sizes: a shipped CDF name (data/cdf/<name>.csv) or a CSV path
    inter_cdf: str = "alibaba_interdc"
    #: time of the first arrival
    start_us: float = num(0.0, ">= 0")
    #: the inter-DC flows' own load (share of the hosts' capacity); set, ``load`` is the
    #: intra-DC flows' and the share by count follows from the two (intra_fraction must be null)
    inter_load: float | None = num(None, "(0, 1)")

    def check_consistency(self, prefix: str) -> None:
        if (self.n_flows is None) == (self.duration_us is None):
            raise ConfigError(f"{prefix}.n_flows", "set exactly one of n_flows and duration_us")
        if self.inter_load is not None and (self.intra_fraction is not None
                                            or self.load_of != "hosts"):  # fmt: skip
            raise ConfigError(
                f"{prefix}.inter_load",
                "with inter_load, load is the intra-DC flows' share of the hosts' capacity: set "
                "intra_fraction=null and load_of=hosts",
            )
        if self.inter_load is None and self.intra_fraction is None:
            raise ConfigError(f"{prefix}.intra_fraction", "null only with inter_load")


@dataclass
class BackgroundTraffic:
    """Its flows come from uno/workload/mixed.py's generator, drawn from the run's stream
    ``background``, and are tagged ``background_intra`` / ``background_inter``."""

    #: offered load, as workload=mixed's ``load``; 0: no background traffic
    load: float = num(0.0, "[0, 1)")
    #: what load is a share of: "hosts" or "wan" (as workload=mixed's ``load_of``)
    load_of: str = choice("hosts", ("hosts", "wan"))
    #: time of the first arrival
    start_us: float = num(0.0, ">= 0")
    #: arrivals stop this long after start_us
    duration_us: float = num(1000.0, "> 0")
    #: share of intra-DC flows, by count
    intra_fraction: float = num(1.0, "[0, 1]")
    #: intra-DC flow sizes: a shipped CDF name (data/cdf/<name>.csv) or a CSV path
    intra_cdf: str = "web_search"
    #: inter-DC flow sizes: a shipped CDF name (data/cdf/<name>.csv) or a CSV path
    inter_cdf: str = "alibaba_interdc"


@dataclass
class AllreduceWorkload:
    kind: str = choice("allreduce", _workload_kinds)
    #: flows of one iteration's all-reduce, between fixed pairs of hosts, one host of each pair in
    #: each datacenter
    flows_per_iteration: int = num(8, "[1, 65536]")
    #: inter-DC bytes of one iteration's all-reduce (Uno §5.1: ~70-500 MiB for Llama 70B)
    iteration_bytes: int = num(70 * MIB, "> 0")
    #: training iterations, one all-reduce burst each
    iterations: int = num(3, "[1, 100000]")
    #: time between one collective's end and the next one's start (the backward pass)
    compute_us: float = num(1000.0, ">= 0")
    #: start of the first iteration
    start_us: float = num(0.0, ">= 0")
    #: every other flow runs from the second datacenter to the first (false: all from the first)
    bidirectional: bool = True


# ---- transport / cc / lb / switch ----------------------------------------------------------
@dataclass
class ClassRecovery:
    """Loss-recovery settings for one flow class (intra- or inter-DC); a null field keeps the
    transport-wide setting."""

    #: fixed RTO for the class's flows
    rto_us: float | None = num(None, "> 0")
    #: RTO = this many of the flow's base RTTs (the Uno artifact's MPRDMA: 3 base RTTs less a
    #: margin of 1/8 base RTT, 2.875)
    rto_base_rtts: float | None = num(None, "> 0")
    #: from the flow's first retransmission on, RTO = this many base RTTs (the artifact's MPRDMA
    #: widens its margin to 1/2 base RTT after a resend: 2.5)
    rto_base_rtts_after_retransmit: float | None = num(None, "> 0")
    #: the class's retransmission timer is checked at most this often
    timer_granularity_us: float | None = num(None, "> 0")
    #: fast retransmit (see TransportConfig.dupack_threshold); 0 turns it off for the class
    dupack_threshold: int | None = num(None, "[0, 1000]")
    #: see TransportConfig.scan_timers_while_resending
    scan_timers_while_resending: bool | None = None
    #: see TransportConfig.report_every_timeout
    report_every_timeout: bool | None = None


@dataclass
class TransportConfig:
    mtu_bytes: int = num(4096, "[64, 1048576]")  # payload per data packet
    #: header bytes on every data packet, on top of its payload
    header_bytes: int = num(64, "[0, 65536]")
    #: wire size of an ACK (and of a NACK or CNP)
    ack_bytes: int = num(64, "[1, 65536]")
    #: fixed RTO for every flow; if unset, RTO = base RTT + rto_queue_factor x (time to drain
    #: a full buffer at every switch queue on the path), as in the Uno authors' artifact.
    rto_us: float | None = num(None, "> 0")
    #: the factor of the drain time in the default RTO (see rto_us)
    rto_queue_factor: float = num(1.0, "[0, 1000]")
    #: lower bound on the default RTO
    rto_min_us: float = num(0.0, ">= 0")
    #: the retransmission timer is checked at most this often (htsim scans every 1 us)
    timer_granularity_us: float = num(1.0, "> 0")
    #: fast retransmit, TCP's duplicate-ACK rule on selective ACKs (RFC 6675): a packet is lost
    #: once this many packets sent after it are acknowledged (TCP: 3); 0: timeout only
    dupack_threshold: int = num(0, "[0, 1000]")
    #: what a flow's endpoints know of its path: "own" (its own path's base RTT, BDP and RTO) or
    #: "class_reference" (every intra-DC flow those of the longest intra-DC path, every inter-DC
    #: flow those of the longest inter-DC path, as htsim's Uno artifact computes them)
    path_facts: str = choice("own", ("own", "class_reference"))
    #: send every data packet at full size, the last one too (htsim sends whole MSS packets)
    pad_last_packet: bool = False
    #: while retransmissions wait (the window or the pacer holds them), every ACK and every
    #: paced send first tests the retransmission timers, not only the periodic scan (the Uno
    #: artifact's MPRDMA: its send_packets calls retransmit_packet whenever a resend is pending)
    scan_timers_while_resending: bool = False
    #: the congestion control hears of every timed-out packet, not of at most one timeout per
    #: base RTT (the Uno artifact's BBR resets its window for every timed-out packet)
    report_every_timeout: bool = False
    #: the path of a flow's ACKs: 0, the reverse of the data packet's (its entropy); N > 0, the
    #: ACKs cycle over entropies 0..N-1, one per ACK, while still echoing the data packet's
    #: entropy to the load balancer (the Uno artifact's sinks: 256, whatever the load balancer)
    ack_paths: int = num(0, "[0, 65536]")
    intra: ClassRecovery = field(default_factory=ClassRecovery)
    inter: ClassRecovery = field(default_factory=ClassRecovery)

    def check_consistency(self, prefix: str) -> None:
        for cls in ("intra", "inter"):
            rec = getattr(self, cls)
            if rec.rto_us is not None and rec.rto_base_rtts is not None:
                raise ConfigError(
                    f"{prefix}.{cls}.rto_us", "set rto_us or rto_base_rtts for a class, not both"
                )


@dataclass
class CcChoice:
    """The ``cc`` group's own fields; :class:`CcConfig` adds a section of parameters per
    algorithm (``cc.<name>``), as the algorithms declare them (uno.config.parts)."""

    #: algorithm for every flow unless ``intra``/``inter`` name one for that class
    algo: str = choice("dctcp", _cc_names)
    #: algorithm for intra-DC flows (null: algo)
    intra: str | None = choice(None, _cc_names)
    #: algorithm for inter-DC flows (null: algo)
    inter: str | None = choice(None, _cc_names)


@dataclass
class LbChoice:
    """The ``lb`` group's own fields; :class:`LbConfig` adds a section of parameters per load
    balancer that has some (``lb.<name>``), as they declare them."""

    #: load balancer of every flow
    algo: str = choice("ecmp", _lb_names)
    #: distinct entropy values a spraying flow (spray, reps) draws from (htsim: 256 path ids)
    n_entropies: int = num(256, "[1, 65536]")


def _check_thresholds(prefix: str, node, low: str, high: str) -> None:
    lo, hi = getattr(node, low), getattr(node, high)
    if lo is not None and hi is not None and lo > hi:
        raise ConfigError(f"{prefix}.{low}", f"must be <= {prefix}.{high} ({hi}), got {lo}")


@dataclass
class EcnConfig:
    #: physical queues mark ECN with RED at switch ports (false: no physical-queue marking)
    enabled: bool = True
    #: RED's Kmin as a fraction of the port buffer: no mark at or below it
    kmin_frac: float = num(0.25, "[0, 1]")
    #: RED's Kmax as a fraction of the port buffer: the marking probability rises linearly to pmax
    #: at it
    kmax_frac: float = num(0.75, "[0, 1]")
    #: absolute thresholds (bytes) override the fractions of the port buffer when set
    kmin_bytes: int | None = num(None, ">= 0")
    #: absolute Kmax (bytes); set with kmin_bytes
    kmax_bytes: int | None = num(None, ">= 0")
    #: marking probability reached at kmax (DCQCN's RED: Pmax); above kmax every packet is marked
    pmax: float = num(1.0, "(0, 1]")
    #: step marking (Kmin = Kmax = K) with K = intra-DC BDP / this (DCTCP's guideline
    #: K = C x RTT / 7, which Gemini §III-B follows for intra-DC flows); overrides the above
    k_intra_bdp_divisor: float | None = num(None, "> 0")

    def check_consistency(self, prefix: str) -> None:
        _check_thresholds(prefix, self, "kmin_frac", "kmax_frac")
        if (self.kmin_bytes is None) != (self.kmax_bytes is None):
            raise ConfigError(
                f"{prefix}.kmin_bytes", "set both kmin_bytes and kmax_bytes, or neither"
            )
        _check_thresholds(prefix, self, "kmin_bytes", "kmax_bytes")


@dataclass
class PhantomConfig:
    #: a phantom queue at every marking switch port (Uno paper §3.2, §4.1.3)
    enabled: bool = False
    #: the phantom queue drains at this fraction of the line rate
    drain_frac: float = num(0.9, "(0, 1]")
    #: default (null): the largest base-path BDP in the topology (the inter-DC BDP on two_dc)
    size_bytes: int | None = num(None, "> 0")
    #: the phantom queue's RED Kmin, as a fraction of its size
    kmin_frac: float = num(0.25, "[0, 1]")
    #: the phantom queue's RED Kmax, as a fraction of its size
    kmax_frac: float = num(0.75, "[0, 1]")
    #: control packets (ACKs) add to the phantom level (the paper says only "increase occupancy
    #: on ingress"; htsim's phantom queue counts data packets only)
    count_acks: bool = True
    #: data packets refused by the tail drop add to the phantom level too (htsim: yes)
    count_drops: bool = False

    def check_consistency(self, prefix: str) -> None:
        _check_thresholds(prefix, self, "kmin_frac", "kmax_frac")


@dataclass
class PfcConfig:
    """Priority flow control, a lossless fabric (uno/net/pfc.py). Needs the event port model;
    the fluid engine pauses links for shares of its steps (uno/fluid/pfc.py)."""

    #: lossless fabric: per-ingress PAUSE / RESUME at the thresholds below
    enabled: bool = False
    #: pause threshold of every ingress queue; null: derived per switch so that no packet that
    #: entered through a PFC queue can be dropped (smallest port buffer / ingress queues - headroom)
    xoff_bytes: int | None = num(None, "> 0")
    #: resume threshold; null: xoff_bytes less two full data packets
    xon_bytes: int | None = num(None, ">= 0")
    #: bytes an ingress queue may take after pausing; null: per link, 2 x delay x rate + PAUSE
    #: frame + two full packets
    headroom_bytes: int | None = num(None, ">= 0")
    #: link kinds with lossless ingress queues (empty: all); a switch with any incoming link of
    #: another kind stays lossy as a whole (uno/net/pfc.py)
    port_kinds: list[str] = field(default_factory=list)

    def check_consistency(self, prefix: str) -> None:
        _check_thresholds(prefix, self, "xon_bytes", "xoff_bytes")


@dataclass
class SwitchConfig:
    ecn: EcnConfig = field(default_factory=EcnConfig)
    phantom: PhantomConfig = field(default_factory=PhantomConfig)
    #: which queue's RED marks: auto (phantom if enabled, else physical), physical, phantom, either
    mark_source: str = choice("auto", names_of("switch.mark_source"))
    #: link kinds whose switch ports mark (empty: all switch ports)
    port_kinds: list[str] = field(default_factory=list)
    #: RED thresholds (fractions of the buffer) at border and WAN ports; null: those of ``ecn``
    #: (the Uno artifact's UnoCC without phantom queues: 20%/60% there, 10%/80% elsewhere)
    border_kmin_frac: float | None = num(None, "[0, 1]")
    #: RED Kmax (fraction of the buffer) at border and WAN ports; set with border_kmin_frac
    border_kmax_frac: float | None = num(None, "[0, 1]")
    #: control packets (ACKs) bypass the data queue at switch ports: never dropped, never
    #: counted in buffer, RED or phantom, served first on the link (htsim's high-priority queue
    #: for header-only packets; lazy ports let them take no time from data)
    ack_priority: bool = False
    pfc: PfcConfig = field(default_factory=PfcConfig)
    int_telemetry: IntTelemetryConfig = field(default_factory=IntTelemetryConfig)
    qcn: QcnConfig = field(default_factory=QcnConfig)
    trimming: TrimmingConfig = field(default_factory=TrimmingConfig)
    dci: DciConfig = field(default_factory=DciConfig)

    @property
    def control_lane(self) -> bool:
        """Whether control packets (ACKs, NACKs, trimmed headers) wait in a lane of their own
        at the switch ports, apart from the data queue: with ack_priority, or trimming."""
        return self.ack_priority or self.trimming.enabled

    def check_consistency(self, prefix: str) -> None:
        if (self.border_kmin_frac is None) != (self.border_kmax_frac is None):
            raise ConfigError(
                f"{prefix}.border_kmin_frac",
                "set both border_kmin_frac and border_kmax_frac, or neither",
            )
        _check_thresholds(prefix, self, "border_kmin_frac", "border_kmax_frac")
        if self.mark_source in ("phantom", "either") and not self.phantom.enabled:
            raise ConfigError(
                f"{prefix}.mark_source",
                f"{self.mark_source!r} needs {prefix}.phantom.enabled=true",
            )


# ---- erasure coding ------------------------------------------------------------------------
@dataclass
class EcConfig:
    """UnoRC's erasure coding (Uno paper §4.2): blocks of x data + y parity packets, decoded from
    any x; the receiver NACKs a block its timer finds undecodable."""

    #: "none" (no coding) or "mds" (Reed-Solomon blocks)
    kind: str = choice("none", ("none", "mds"))
    #: x: data packets per block
    data_packets: int = num(8, "[1, 254]")
    #: y: parity packets per block; a block decodes from any x of its x + y
    parity_packets: int = num(2, "[0, 254]")
    #: which flows are coded: "inter" (inter-DC flows, as the paper) or "all"
    scope: str = choice("inter", ("inter", "all"))
    #: the receiver's block timer; null: the time to drain a full buffer at every switch queue
    #: of the flow's path (the artifact's estimate of the maximum queueing: 640 us inter-DC)
    receiver_timeout_us: float | None = num(None, "> 0")
    #: the block timer of a block whose first packet to arrive is a retransmission: "same" (the
    #: receiver's timer above) or "target_rtt" (1.05 x the flow's base RTT, ~1.88 ms inter-DC:
    #: the Uno artifact's retransmissions carry it); a re-armed timer keeps the block's first value
    retransmit_timeout: str = choice("same", ("same", "target_rtt"))
    #: real Reed-Solomon symbols, encoded and decoded and checked per block; false counts only
    payload: bool = True
    #: one-byte Reed-Solomon symbols each packet carries per block (with payload)
    symbols_per_packet: int = num(4, "[1, 4096]")

    def check_consistency(self, prefix: str) -> None:
        if self.data_packets + self.parity_packets > 255:
            raise ConfigError(
                f"{prefix}.parity_packets",
                f"data_packets + parity_packets must be <= 255 (GF(2^8) Reed-Solomon), got "
                f"{self.data_packets} + {self.parity_packets}",
            )


# ---- faults -------------------------------------------------------------------------------
@dataclass
class LinkFailure:
    """A link that stops carrying packets (black-holes them) at ``at_us``."""

    #: port names or glob patterns, e.g. "dc0/border->dc1/border#3" (a port is one direction)
    ports: list[str] = field(default_factory=list)
    #: fail the reverse direction of each matched link too
    both_directions: bool = True
    #: the link fails at this time
    at_us: float = num(0.0, ">= 0")
    #: the link comes back at this time (null: never)
    until_us: float | None = num(None, "> 0")

    def check_consistency(self, prefix: str) -> None:
        if not self.ports:
            raise ConfigError(f"{prefix}.ports", "name at least one port (a name or glob pattern)")
        if self.until_us is not None and self.until_us <= self.at_us:
            raise ConfigError(
                f"{prefix}.until_us", f"must be > at_us ({self.at_us}), got {self.until_us}"
            )


@dataclass
class LinkLoss:
    """Random packet loss on links: independent (``probability``) and/or correlated per block of
    ``block_packets`` (``block_probabilities[k-1]`` = probability that a block loses k packets,
    the Uno paper's Table 1)."""

    #: port names or glob patterns of the lossy ports
    ports: list[str] = field(default_factory=list)
    #: the reverse direction of each matched link loses packets too
    both_directions: bool = False
    #: independent loss probability of every packet
    probability: float = num(0.0, "[0, 1]")
    #: correlated loss: entry k-1 is the probability that a block loses k packets (Uno Table 1;
    #: the fluid engine loses their mean rate, without the clusters)
    block_probabilities: list[float] = field(default_factory=list)
    #: packets per block of the correlated loss
    block_packets: int = num(10, "[1, 100000]")

    def check_consistency(self, prefix: str) -> None:
        import math

        if not self.ports:
            raise ConfigError(f"{prefix}.ports", "name at least one port (a name or glob pattern)")
        for i, p in enumerate(self.block_probabilities):
            if (
                isinstance(p, bool)
                or not isinstance(p, int | float)
                or not math.isfinite(p)
                or not 0 <= p <= 1
            ):
                raise ConfigError(
                    f"{prefix}.block_probabilities[{i}]", f"must be a number in [0, 1], got {p!r}"
                )
        if sum(self.block_probabilities) > 1:
            raise ConfigError(f"{prefix}.block_probabilities", "must add up to at most 1")
        if len(self.block_probabilities) > self.block_packets:
            raise ConfigError(
                f"{prefix}.block_probabilities",
                f"lists {len(self.block_probabilities)} loss counts for blocks of {self.block_packets} packets",
            )


@dataclass
class FaultsConfig:
    link_failures: list[LinkFailure] = field(default_factory=list)
    losses: list[LinkLoss] = field(default_factory=list)


@dataclass
class RunFields:
    """The run's fields; :class:`RunConfig` gives ``cc`` and ``lb`` their classes."""

    #: the run's name: results go to results/<name>/<time>-<pid>/ (one folder name: no '/',
    #: '\\', '..', leading '.' or control characters)
    name: str = "run"
    #: the one seed every random stream of the run derives from: same config and seed, same results
    seed: int = num(1, ">= 0")
    topo: Any = MISSING
    workload: Any = MISSING
    #: Poisson traffic added to the workload, off at load 0.
    background: BackgroundTraffic = field(default_factory=BackgroundTraffic)
    transport: TransportConfig = field(default_factory=TransportConfig)
    cc: Any = None
    lb: Any = None
    switch: SwitchConfig = field(default_factory=SwitchConfig)
    engine: EngineConfig = field(default_factory=EngineConfig)
    faults: FaultsConfig = field(default_factory=FaultsConfig)
    ec: EcConfig = field(default_factory=EcConfig)
    #: where results go; null means Hydra's run directory (a multirun: <out_dir>/<job number>)
    out_dir: str | None = None
    #: replace a complete run already in the result folder (otherwise it is refused, or in a
    #: multirun skipped when its config hash matches)
    overwrite: bool = False


#: fields that say how and where to run, or how to judge its end, not what to simulate: left out
#: of the config hash
RUN_CONTROL_KEYS = ("out_dir", "overwrite", "engine.progress", "engine.allow_unfinished")


TOPO_SCHEMAS = {
    "dumbbell": DumbbellTopo,
    "fat_tree": FatTreeTopo,
    "two_dc": TwoDcTopo,
    "gear_two_dc": GearTwoDcTopo,
    "mlcc_two_dc": MlccTwoDcTopo,
}
WORKLOAD_SCHEMAS = {
    "flows": FlowsWorkload,
    "incast": IncastWorkload,
    "permutation": PermutationWorkload,
    "rpc_incast": RpcIncastWorkload,
    "trace": TraceWorkload,
    "allreduce": AllreduceWorkload,
    "mixed": MixedWorkload,
}


def _with_sections(base: type, group: str, name: str) -> type:
    """``base`` with a section per component declared in ``group`` that has parameters."""
    sections = [
        (part, params, field(default_factory=params))
        for part, params in declared(group).items()
        if params is not None
    ]
    return _here(make_dataclass(name, sections, bases=(base,)))


def _here(cls: type) -> type:
    cls.__module__ = __name__  # (where the class is looked up by name, e.g. to pickle it)
    return cls


@cache
def _assembled() -> dict[str, type]:
    cc = _with_sections(CcChoice, "cc", "CcConfig")
    lb = _with_sections(LbChoice, "lb", "LbConfig")
    run = _here(
        make_dataclass(
            "RunConfig",
            [("cc", cc, field(default_factory=cc)), ("lb", lb, field(default_factory=lb))],
            bases=(RunFields,),
        )
    )
    return {"CcConfig": cc, "LbConfig": lb, "RunConfig": run}


def __getattr__(name: str):
    # CcConfig, LbConfig and RunConfig are assembled from what the components declared, the
    # first time they are asked for
    if name in ("CcConfig", "LbConfig", "RunConfig"):
        return _assembled()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register_configs() -> None:
    """Register the schemas with Hydra's ConfigStore and the ``uno_pid`` resolver that makes
    run directory names unique per process (idempotent)."""
    if not OmegaConf.has_resolver("uno_pid"):
        # cached: every evaluation in one config (and Hydra's copies of it) gives one value
        OmegaConf.register_new_resolver("uno_pid", lambda: str(os.getpid()), use_cache=True)
    cs = ConfigStore.instance()
    if "run_schema.yaml" in cs.repo:
        return  # (storing converts every schema again: a tenth of a second per call)
    # the default launcher and sweeper (conf/config.yaml): importing them stores their configs;
    # registering them makes them known to Hydra also where its plugin scan cannot list them
    # (an editable install)
    from hydra.core.plugins import Plugins

    from hydra_plugins.uno_launcher.uno_launcher import UnoLauncher, UnoSweeper

    Plugins.instance().register(UnoLauncher)
    Plugins.instance().register(UnoSweeper)
    for name, node in TOPO_SCHEMAS.items():
        cs.store(group="topo", name=f"{name}_schema", node=node)
    for name, node in WORKLOAD_SCHEMAS.items():
        cs.store(group="workload", name=f"{name}_schema", node=node)
    cs.store(name="run_schema", node=_assembled()["RunConfig"])  # last: marks the whole set
