"""Name -> load-balancer factory."""

from __future__ import annotations

from uno.core.rng import UniformBuffer
from uno.lb.base import LoadBalancer
from uno.lb.ecmp import Ecmp
from uno.lb.spray import Spray

LB_REGISTRY = {"ecmp": Ecmp, "spray": Spray}


def make_lb(name: str, lb_cfg, uniform: UniformBuffer) -> LoadBalancer:
    return LB_REGISTRY[name](uniform)
