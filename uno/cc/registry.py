"""Name -> congestion-control factory. Each algorithm's parameters live in ``cfg.cc.<name>``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from uno.cc.base import CongestionControl, FlowContext
from uno.cc.dctcp import Dctcp


@dataclass(frozen=True)
class CcEntry:
    factory: Callable[[FlowContext, object], CongestionControl]
    params_field: str  # attribute of the cc config holding this algorithm's parameters


CC_REGISTRY: dict[str, CcEntry] = {
    "dctcp": CcEntry(Dctcp, "dctcp"),
}


def make_cc(name: str, cc_cfg, ctx: FlowContext) -> CongestionControl:
    entry = CC_REGISTRY[name]
    return entry.factory(ctx, getattr(cc_cfg, entry.params_field))
