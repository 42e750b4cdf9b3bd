"""Topology kind -> builder."""

from __future__ import annotations

from uno.config.parts import declare_choices
from uno.core.errors import ConfigError
from uno.core.units import us_to_ps
from uno.topo.base import Topology, add_switch_latency
from uno.topo.dumbbell import build_dumbbell
from uno.topo.fat_tree import build_fat_tree
from uno.topo.gear_two_dc import build_gear_two_dc
from uno.topo.mlcc_two_dc import build_mlcc_two_dc
from uno.topo.two_dc import build_two_dc

TOPO_KINDS = ("dumbbell", "fat_tree", "two_dc", "gear_two_dc", "mlcc_two_dc")
declare_choices("topo.kind", TOPO_KINDS)


def build_topology(cfg, data_wire_bytes: int, ack_bytes: int) -> Topology:
    """Build the topology named by ``cfg.kind`` (a validated ``topo`` config)."""
    if cfg.kind == "dumbbell":
        topo = build_dumbbell(cfg)
    elif cfg.kind == "fat_tree":
        topo = build_fat_tree(cfg)
    elif cfg.kind == "two_dc":
        topo = build_two_dc(cfg, data_wire_bytes, ack_bytes)
    elif cfg.kind == "gear_two_dc":
        topo = build_gear_two_dc(cfg)
    elif cfg.kind == "mlcc_two_dc":
        topo = build_mlcc_two_dc(cfg)
    else:
        raise ConfigError("topo.kind", f"must be one of {TOPO_KINDS}, got {cfg.kind!r}")
    add_switch_latency(topo, us_to_ps(cfg.switch_latency_us))
    topo.validate()
    return topo
