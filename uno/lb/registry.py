"""Name -> load-balancer class."""

from __future__ import annotations

from uno.cc.base import FlowContext
from uno.config.parts import declare
from uno.core.rng import UniformBuffer
from uno.lb.base import LoadBalancer
from uno.lb.ecmp import Ecmp
from uno.lb.plb import Plb, PlbParams
from uno.lb.reps import Reps, RepsParams
from uno.lb.spray import Spray
from uno.lb.unolb import UnoLb, UnoLbParams

LB_REGISTRY: dict[str, type[LoadBalancer]] = {
    "ecmp": Ecmp,
    "spray": Spray,
    "plb": Plb,
    "unolb": UnoLb,
    "reps": Reps,
}
#: each balancer's parameters (its ``lb.<name>`` section; none for ECMP and spraying)
LB_PARAMS = {"plb": PlbParams, "unolb": UnoLbParams, "reps": RepsParams}
for _name in LB_REGISTRY:
    declare("lb", _name, LB_PARAMS.get(_name))


def make_lb(name: str, lb_cfg, uniform: UniformBuffer, ctx: FlowContext) -> LoadBalancer:
    """The balancer ``name`` of one flow. ``uniform`` is the flow's own stream: with a stream
    shared by all flows, one flow's draws would depend on when every other flow sends."""
    return LB_REGISTRY[name](ctx, uniform, lb_cfg)
