"""Topology builders. Each returns a :class:`uno.topo.base.Topology`: plain data (nodes, links
with rate, delay and per-direction buffer), never touching the event engine."""

from uno.topo.base import LinkSpec, NodeSpec, Topology
from uno.topo.registry import build_topology

__all__ = ["LinkSpec", "NodeSpec", "Topology", "build_topology"]
