"""Name -> load-balancer factory."""

from __future__ import annotations

from uno.core.rng import UniformBuffer
from uno.lb.base import LoadBalancer
from uno.lb.ecmp import Ecmp
from uno.lb.spray import Spray

LB_REGISTRY = {
    "ecmp": lambda lb_cfg, uniform: Ecmp(uniform),
    "spray": lambda lb_cfg, uniform: Spray(uniform, lb_cfg.n_entropies),
}


def make_lb(name: str, lb_cfg, uniform: UniformBuffer) -> LoadBalancer:
    """The balancer ``name`` of one flow. ``uniform`` is the flow's own stream: with a stream
    shared by all flows, one flow's draws would depend on when every other flow sends."""
    return LB_REGISTRY[name](lb_cfg, uniform)
