"""Range checks that types alone cannot express. Each failure raises one
:class:`uno.core.errors.ConfigError` naming the field and the accepted values, before any
simulation starts. Checks that need the built topology (host ids, link kinds) are in
:func:`check_against_topology`."""

from __future__ import annotations

from uno.cc.registry import CC_REGISTRY
from uno.core.errors import ConfigError
from uno.lb.registry import LB_REGISTRY
from uno.net.port import MARK_SOURCES
from uno.topo.registry import TOPO_KINDS
from uno.workload.registry import WORKLOAD_REGISTRY


def _positive(value, field: str) -> None:
    if value is None or value <= 0:
        raise ConfigError(field, f"must be > 0, got {value}")


def _non_negative(value, field: str) -> None:
    if value is None or value < 0:
        raise ConfigError(field, f"must be >= 0, got {value}")


def _fraction(value, field: str, allow_zero: bool = True) -> None:
    low_ok = value >= 0 if allow_zero else value > 0
    if not (low_ok and value <= 1):
        interval = "[0, 1]" if allow_zero else "(0, 1]"
        raise ConfigError(field, f"must be in {interval}, got {value}")


def _one_of(value, choices, field: str) -> None:
    if value not in choices:
        raise ConfigError(field, f"must be one of {sorted(choices)}, got {value!r}")


def check_topo(t) -> None:
    _one_of(t.kind, TOPO_KINDS, "topo.kind")
    if t.kind == "dumbbell":
        _positive(t.n_senders, "topo.n_senders")
        _positive(t.n_receivers, "topo.n_receivers")
        _positive(t.host_rate_gbps, "topo.host_rate_gbps")
        _positive(t.bottleneck_rate_gbps, "topo.bottleneck_rate_gbps")
        _non_negative(t.link_delay_us, "topo.link_delay_us")
        _non_negative(t.bottleneck_delay_us, "topo.bottleneck_delay_us")
    else:
        if t.k < 2 or t.k % 2:
            raise ConfigError("topo.k", f"must be an even integer >= 2, got {t.k}")
        _positive(t.link_rate_gbps, "topo.link_rate_gbps")
        _non_negative(t.link_delay_us, "topo.link_delay_us")
    if t.kind == "two_dc":
        _positive(t.core_border_links, "topo.core_border_links")
        _positive(t.wan_links, "topo.wan_links")
        _positive(t.wan_rate_gbps, "topo.wan_rate_gbps")
        _non_negative(t.wan_delay_us, "topo.wan_delay_us")
        if t.inter_rtt_ratio is not None and t.inter_rtt_ratio <= 1:
            raise ConfigError(
                "topo.inter_rtt_ratio", f"must be > 1 (or null), got {t.inter_rtt_ratio}"
            )
        for name in ("intra_buffer_bytes", "inter_buffer_bytes"):
            value = getattr(t, name)
            if value is not None:
                _positive(value, f"topo.{name}")
    _positive(t.buffer_bytes, "topo.buffer_bytes")
    _positive(t.nic_buffer_bytes, "topo.nic_buffer_bytes")


def check_transport(tp) -> None:
    _positive(tp.mtu_bytes, "transport.mtu_bytes")
    _non_negative(tp.header_bytes, "transport.header_bytes")
    _positive(tp.ack_bytes, "transport.ack_bytes")
    if tp.rto_us is not None:
        _positive(tp.rto_us, "transport.rto_us")
    _non_negative(tp.rto_queue_factor, "transport.rto_queue_factor")
    _non_negative(tp.rto_min_us, "transport.rto_min_us")
    _positive(tp.timer_granularity_us, "transport.timer_granularity_us")


def check_cc(cc) -> None:
    names = set(CC_REGISTRY)
    _one_of(cc.algo, names, "cc.algo")
    for cls in ("intra", "inter"):
        value = getattr(cc, cls)
        if value is not None:
            _one_of(value, names, f"cc.{cls}")
    for entry in CC_REGISTRY.values():
        params = getattr(cc, entry.params_field)
        check = getattr(params, "check", None)
        if check is not None:
            check(f"cc.{entry.params_field}")


def check_switch(sw) -> None:
    ecn = sw.ecn
    _fraction(ecn.kmin_frac, "switch.ecn.kmin_frac")
    _fraction(ecn.kmax_frac, "switch.ecn.kmax_frac")
    if ecn.kmin_frac > ecn.kmax_frac:
        raise ConfigError(
            "switch.ecn.kmin_frac",
            f"must be <= switch.ecn.kmax_frac ({ecn.kmax_frac}), got {ecn.kmin_frac}",
        )
    if (ecn.kmin_bytes is None) != (ecn.kmax_bytes is None):
        raise ConfigError("switch.ecn.kmin_bytes", "set both kmin_bytes and kmax_bytes, or neither")
    if ecn.kmin_bytes is not None:
        _non_negative(ecn.kmin_bytes, "switch.ecn.kmin_bytes")
        if ecn.kmin_bytes > ecn.kmax_bytes:
            raise ConfigError(
                "switch.ecn.kmin_bytes",
                f"must be <= switch.ecn.kmax_bytes ({ecn.kmax_bytes}), got {ecn.kmin_bytes}",
            )
    ph = sw.phantom
    _fraction(ph.drain_frac, "switch.phantom.drain_frac", allow_zero=False)
    _fraction(ph.kmin_frac, "switch.phantom.kmin_frac")
    _fraction(ph.kmax_frac, "switch.phantom.kmax_frac")
    if ph.kmin_frac > ph.kmax_frac:
        raise ConfigError(
            "switch.phantom.kmin_frac",
            f"must be <= switch.phantom.kmax_frac ({ph.kmax_frac}), got {ph.kmin_frac}",
        )
    if ph.size_bytes is not None:
        _positive(ph.size_bytes, "switch.phantom.size_bytes")
    _one_of(sw.mark_source, set(MARK_SOURCES) | {"auto"}, "switch.mark_source")
    if sw.mark_source in ("phantom", "either") and not ph.enabled:
        raise ConfigError(
            "switch.mark_source", f"{sw.mark_source!r} needs switch.phantom.enabled=true"
        )


def check_engine(en) -> None:
    _one_of(en.kind, {"packet"}, "engine.kind")
    _positive(en.max_sim_time_ms, "engine.max_sim_time_ms")
    _non_negative(en.sample_interval_us, "engine.sample_interval_us")


def check_config(cfg) -> None:
    """All checks that need only the config."""
    _non_negative(cfg.seed, "seed")
    check_topo(cfg.topo)
    _one_of(cfg.workload.kind, set(WORKLOAD_REGISTRY), "workload.kind")
    check_transport(cfg.transport)
    check_cc(cfg.cc)
    _one_of(cfg.lb.algo, set(LB_REGISTRY), "lb.algo")
    if not 1 <= cfg.lb.n_entropies <= 1 << 16:
        raise ConfigError("lb.n_entropies", f"must be in [1, 65536], got {cfg.lb.n_entropies}")
    check_switch(cfg.switch)
    check_engine(cfg.engine)


#: link kinds the topology builders produce
LINK_KINDS = ("host", "fabric", "border", "wan", "bottleneck")


def check_against_topology(cfg, link_kinds: set[str]) -> None:
    """Checks that need the built topology."""
    kinds = list(cfg.switch.port_kinds)
    unknown = [k for k in kinds if k not in LINK_KINDS]
    if unknown:
        raise ConfigError(
            "switch.port_kinds", f"unknown link kinds {unknown}; link kinds are {list(LINK_KINDS)}"
        )
    if kinds and not set(kinds) & link_kinds:
        raise ConfigError(
            "switch.port_kinds",
            f"none of {kinds} exists in this topology, which has {sorted(link_kinds)}",
        )
