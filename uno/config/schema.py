"""Structured configs: one dataclass per config group option, registered with Hydra's
ConfigStore so that a misspelt key or a value of the wrong type is refused when the config is
composed, before anything runs. Range checks that need more than a type live in
:mod:`uno.config.validate`. Units are in the field names; configs use human units (µs, Gb/s,
bytes) that :mod:`uno.build` converts to picoseconds and bits/s in one place."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from uno.cc.bbr import BbrParams
from uno.cc.dctcp import DctcpParams
from uno.cc.gemini import GeminiParams
from uno.cc.mprdma import MprdmaParams
from uno.cc.uno import UnoParams

MIB = 1 << 20
GIB = 1 << 30


# ---- topology -----------------------------------------------------------------------------
@dataclass
class DumbbellTopo:
    kind: str = "dumbbell"
    n_senders: int = 4
    n_receivers: int = 1
    host_rate_gbps: float = 100.0
    bottleneck_rate_gbps: float = 100.0
    link_delay_us: float = 1.0
    bottleneck_delay_us: float = 1.0
    buffer_bytes: int = MIB
    nic_buffer_bytes: int = GIB


@dataclass
class FatTreeTopo:
    kind: str = "fat_tree"
    k: int = 8
    link_rate_gbps: float = 100.0
    link_delay_us: float = 1.0
    buffer_bytes: int = MIB
    nic_buffer_bytes: int = GIB


@dataclass
class TwoDcTopo:
    kind: str = "two_dc"
    k: int = 8
    link_rate_gbps: float = 100.0
    link_delay_us: float = 1.0
    core_border_links: int = 8
    wan_links: int = 8
    wan_rate_gbps: float = 100.0
    wan_delay_us: float = 886.5
    #: if set, overrides wan_delay_us so that inter-DC base RTT = ratio x intra-DC base RTT
    inter_rtt_ratio: float | None = None
    buffer_bytes: int = MIB
    intra_buffer_bytes: int | None = None
    inter_buffer_bytes: int | None = None
    nic_buffer_bytes: int = GIB


# ---- workload -----------------------------------------------------------------------------
@dataclass
class FlowEntry:
    src: int = MISSING
    dst: int = MISSING
    size_bytes: int = MISSING
    start_us: float = 0.0
    tag: str = ""


@dataclass
class FlowsWorkload:
    kind: str = "flows"
    flows: list[FlowEntry] = field(default_factory=list)


@dataclass
class IncastWorkload:
    kind: str = "incast"
    receiver: int = 0
    n_intra: int = 4
    n_inter: int = 4
    size_bytes: int = 1_000_000
    start_us: float = 0.0
    #: start of sender i = start_us + i * stagger_us
    stagger_us: float = 0.0
    #: how senders are chosen: "random" (seeded) or "spread" (round-robin over racks)
    placement: str = "random"


@dataclass
class RpcIncastWorkload(IncastWorkload):
    kind: str = "rpc_incast"
    rpc_count: int = 1000
    #: "same_rack" (hosts under the receiver's ToR) or "same_dc"
    rpc_sources: str = "same_rack"
    #: shipped CDF name (data/cdf/<name>.csv) or a path to a CDF file
    rpc_cdf: str = "google_rpc"
    rpc_max_bytes: int | None = None
    rpc_start_us: float = 15000.0
    rpc_interval_us: float = 25.0
    #: "periodic" (every rpc_interval_us) or "poisson" (exponential gaps of that mean)
    rpc_arrivals: str = "periodic"


@dataclass
class PermutationWorkload:
    kind: str = "permutation"
    size_bytes: int = 1_000_000
    start_us: float = 0.0
    #: "all" (any other host), "intra" (same DC), "inter" (other DC)
    scope: str = "all"


# ---- transport / cc / lb / switch / engine -------------------------------------------------
@dataclass
class TransportConfig:
    mtu_bytes: int = 4096  # payload per data packet
    header_bytes: int = 64
    ack_bytes: int = 64
    #: fixed RTO for every flow; if unset, RTO = base RTT + rto_queue_factor x (time to drain
    #: a full buffer at every switch queue on the path), as in the Uno authors' artifact.
    rto_us: float | None = None
    rto_queue_factor: float = 1.0
    rto_min_us: float = 0.0
    #: the retransmission timer is checked at most this often (htsim scans every 1 us)
    timer_granularity_us: float = 1.0


@dataclass
class CcConfig:
    #: algorithm for every flow unless ``intra``/``inter`` name one for that class
    algo: str = "dctcp"
    intra: str | None = None
    inter: str | None = None
    dctcp: DctcpParams = field(default_factory=DctcpParams)
    uno: UnoParams = field(default_factory=UnoParams)
    gemini: GeminiParams = field(default_factory=GeminiParams)
    mprdma: MprdmaParams = field(default_factory=MprdmaParams)
    bbr: BbrParams = field(default_factory=BbrParams)


@dataclass
class LbConfig:
    algo: str = "ecmp"
    #: distinct entropy values a spraying flow draws from (htsim: 256 path ids)
    n_entropies: int = 256


@dataclass
class EcnConfig:
    enabled: bool = True
    kmin_frac: float = 0.25
    kmax_frac: float = 0.75
    #: absolute thresholds (bytes) override the fractions of the port buffer when set
    kmin_bytes: int | None = None
    kmax_bytes: int | None = None


@dataclass
class PhantomConfig:
    enabled: bool = False
    drain_frac: float = 0.9
    #: default (null): the largest base-path BDP in the topology (the inter-DC BDP on two_dc)
    size_bytes: int | None = None
    kmin_frac: float = 0.25
    kmax_frac: float = 0.75


@dataclass
class SwitchConfig:
    ecn: EcnConfig = field(default_factory=EcnConfig)
    phantom: PhantomConfig = field(default_factory=PhantomConfig)
    #: which queue's RED marks: auto (phantom if enabled, else physical), physical, phantom, either
    mark_source: str = "auto"
    #: link kinds whose switch ports mark (empty: all switch ports)
    port_kinds: list[str] = field(default_factory=list)


@dataclass
class EngineConfig:
    kind: str = "packet"
    #: stop at this simulated time even if flows are unfinished
    max_sim_time_ms: float = 1000.0
    #: sampling interval of rates/cwnd/queues tables; 0 disables sampling
    sample_interval_us: float = 10.0
    sample_rates: bool = True
    sample_cwnd: bool = True
    sample_queues: bool = True
    #: ports whose queues are sampled: "receivers" (switch ports into flow destinations),
    #: "busy" (any port non-empty at the sample), "all", or glob patterns of port names
    queue_ports: list[str] = field(default_factory=lambda: ["receivers"])
    #: end the run once every flow carrying one of these tags finished (empty: all flows)
    stop_when_done: list[str] = field(default_factory=list)
    progress: bool = False
    check_invariants: bool = True


@dataclass
class RunConfig:
    name: str = "run"
    seed: int = 1
    topo: Any = MISSING
    workload: Any = MISSING
    transport: TransportConfig = field(default_factory=TransportConfig)
    cc: CcConfig = field(default_factory=CcConfig)
    lb: LbConfig = field(default_factory=LbConfig)
    switch: SwitchConfig = field(default_factory=SwitchConfig)
    engine: EngineConfig = field(default_factory=EngineConfig)
    #: where results go; null means Hydra's run directory (or the current directory)
    out_dir: str | None = None


TOPO_SCHEMAS = {"dumbbell": DumbbellTopo, "fat_tree": FatTreeTopo, "two_dc": TwoDcTopo}
WORKLOAD_SCHEMAS = {
    "flows": FlowsWorkload,
    "incast": IncastWorkload,
    "permutation": PermutationWorkload,
    "rpc_incast": RpcIncastWorkload,
}


def register_configs() -> None:
    """Register the schemas with Hydra's ConfigStore (idempotent)."""
    cs = ConfigStore.instance()
    cs.store(name="run_schema", node=RunConfig)
    for name, node in TOPO_SCHEMAS.items():
        cs.store(group="topo", name=f"{name}_schema", node=node)
    for name, node in WORKLOAD_SCHEMAS.items():
        cs.store(group="workload", name=f"{name}_schema", node=node)
