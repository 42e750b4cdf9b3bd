"""Declarative rules for config fields.

Every numeric field of a config dataclass declares its accepted range where it is defined::

    link_rate_gbps: float = num(100.0, "> 0")
    drain_frac: float = num(0.9, "(0, 1]")
    placement: str = choice("random", ("random", "spread"))

and :func:`uno.config.validate.check_fields` walks the dataclasses, so a new field is checked
the moment it is declared (``tests/test_config_errors.py`` fails for a numeric field without a
rule). On top of its rule, every number must be finite, an ``int`` field must hold an integer
that fits comfortably in 64 bits, and a field whose name carries a unit must stay within the
engine's integer range once converted (µs, ms, s to picoseconds; Gb/s to bit/s), and be 0 or at
least one engine unit (a positive time below 1 ps would round to 0 ps).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

#: the largest magnitude an integer config value may have (exact in a float64, and far from
#: overflowing the int64 columns of the result tables)
INT_LIMIT = 2**53

#: the largest magnitude a unit-carrying value may reach in engine units (picoseconds, bit/s):
#: leaves headroom below int64 for sums such as start time + run time
ENGINE_LIMIT = 2**62

#: field-name suffix -> (factor to engine units, engine unit name)
UNIT_SCALES: dict[str, tuple[float, str]] = {
    "_ps": (1.0, "ps"),
    "_ns": (1e3, "ps"),
    "_us": (1e6, "ps"),
    "_ms": (1e9, "ps"),
    "_s": (1e12, "ps"),
    "_bps": (1.0, "bit/s"),
    "_gbps": (1e9, "bit/s"),
    "_bytes": (1.0, "bytes"),
}

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_COMPARE = re.compile(rf"^(>=|>|<=|<)\s*({_NUM})$")
_INTERVAL = re.compile(rf"^([\[(])\s*({_NUM})\s*,\s*({_NUM})\s*([\])])$")


@dataclass(frozen=True)
class Rule:
    """An interval of accepted values; ``text`` is how messages state it ("> 0", "in (0, 1]")."""

    low: float = -math.inf
    low_open: bool = True
    high: float = math.inf
    high_open: bool = True
    text: str = ""

    def accepts(self, value: float) -> bool:
        lo_ok = value > self.low if self.low_open else value >= self.low
        hi_ok = value < self.high if self.high_open else value <= self.high
        return lo_ok and hi_ok


def parse_rule(text: str) -> Rule:
    """``"> 0"``, ``">= 1"``, ``"< 5"``, ``"<= 5"`` or an interval ``"[0, 1)"``."""
    spec = text.strip()
    m = _COMPARE.match(spec)
    if m:
        op, num = m.group(1), float(m.group(2))
        if op in (">", ">="):
            return Rule(low=num, low_open=op == ">", text=spec)
        return Rule(high=num, high_open=op == "<", text=spec)
    m = _INTERVAL.match(spec)
    if m:
        low, high = float(m.group(2)), float(m.group(3))
        if low > high:
            raise ValueError(f"empty interval {text!r}")
        return Rule(low, m.group(1) == "(", high, m.group(4) == ")", f"in {spec}")
    raise ValueError(f"not a rule: {text!r} (use '> 0', '>= 0', '[0, 1]', ...)")


def num(default: Any, rule: str, **kwargs: Any) -> Any:
    """A numeric dataclass field with its accepted range (see :func:`parse_rule`)."""
    return field(default=default, metadata={"rule": parse_rule(rule)}, **kwargs)


def choice(default: Any, choices: Iterable[str] | Callable[[], Iterable[str]]) -> Any:
    """A string field that must be one of ``choices`` (or of what a callable returns, for
    choices that live in a registry)."""
    return field(default=default, metadata={"choices": choices})


def unit_of(name: str) -> tuple[float, str] | None:
    """(scale to engine units, unit) for a field name ending in a unit suffix, else None. A
    ratio such as ``k_pkts_per_gbps`` is not a quantity in that unit."""
    if "_per_" in name:
        return None
    for suffix, scale in UNIT_SCALES.items():
        if name.endswith(suffix):
            return scale
    return None
