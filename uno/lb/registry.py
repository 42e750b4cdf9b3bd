"""Name -> load-balancer class."""

from __future__ import annotations

from uno.cc.base import FlowContext
from uno.core.rng import UniformBuffer
from uno.lb.base import LoadBalancer
from uno.lb.ecmp import Ecmp
from uno.lb.plb import Plb
from uno.lb.reps import Reps
from uno.lb.spray import Spray
from uno.lb.unolb import UnoLb

LB_REGISTRY: dict[str, type[LoadBalancer]] = {
    "ecmp": Ecmp,
    "spray": Spray,
    "plb": Plb,
    "unolb": UnoLb,
    "reps": Reps,
}


def make_lb(name: str, lb_cfg, uniform: UniformBuffer, ctx: FlowContext) -> LoadBalancer:
    """The balancer ``name`` of one flow. ``uniform`` is the flow's own stream: with a stream
    shared by all flows, one flow's draws would depend on when every other flow sends."""
    return LB_REGISTRY[name](ctx, uniform, lb_cfg)
