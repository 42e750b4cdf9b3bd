"""Name -> congestion-control factory. Each algorithm's parameters live in ``cfg.cc.<name>``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from uno.cc.base import CongestionControl, FlowContext
from uno.cc.bbr import Bbr
from uno.cc.dcqcn import Dcqcn
from uno.cc.dctcp import Dctcp
from uno.cc.gemini import Gemini
from uno.cc.hpcc import Hpcc
from uno.cc.mprdma import Mprdma
from uno.cc.uno import UnoCC


@dataclass(frozen=True)
class CcEntry:
    factory: Callable[[FlowContext, object], CongestionControl]
    params_field: str  # attribute of the cc config holding this algorithm's parameters


CC_REGISTRY: dict[str, CcEntry] = {
    "dctcp": CcEntry(Dctcp, "dctcp"),
    "uno": CcEntry(UnoCC, "uno"),
    "gemini": CcEntry(Gemini, "gemini"),
    "mprdma": CcEntry(Mprdma, "mprdma"),
    "bbr": CcEntry(Bbr, "bbr"),
    "hpcc": CcEntry(Hpcc, "hpcc"),
    "dcqcn": CcEntry(Dcqcn, "dcqcn"),
}


def make_cc(name: str, cc_cfg, ctx: FlowContext) -> CongestionControl:
    entry = CC_REGISTRY[name]
    return entry.factory(ctx, getattr(cc_cfg, entry.params_field))
