"""Declarative range checks for congestion-control parameters: each params dataclass lists
``field -> rule`` and :func:`check_fields` raises one ConfigError naming the first bad field."""

from __future__ import annotations

from collections.abc import Callable

from uno.core.errors import ConfigError

_RULES: dict[str, tuple[Callable[[float], bool], str]] = {
    "> 0": (lambda v: v > 0, "must be > 0"),
    ">= 0": (lambda v: v >= 0, "must be >= 0"),
    "> 1": (lambda v: v > 1, "must be > 1"),
    ">= 1": (lambda v: v >= 1, "must be >= 1"),
    "(0, 1]": (lambda v: 0 < v <= 1, "must be in (0, 1]"),
    "[0, 1]": (lambda v: 0 <= v <= 1, "must be in [0, 1]"),
    "[0, 1)": (lambda v: 0 <= v < 1, "must be in [0, 1)"),
    "int >= 1": (
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
        "must be an integer >= 1",
    ),
}

#: the window limits every window-based controller here shares
WINDOW_RULES = {"init_cwnd_bdp": "> 0", "min_cwnd_mss": "> 0", "max_cwnd_bdp": ">= 0"}


def check_fields(
    prefix: str, params, rules: dict[str, str], nullable: tuple[str, ...] = ()
) -> None:
    """Check ``getattr(params, field)`` against each rule; ``nullable`` fields may be None."""
    for name, rule in rules.items():
        value = getattr(params, name)
        if value is None and name in nullable:
            continue
        ok, text = _RULES[rule]
        if value is None or isinstance(value, bool) and rule != "int >= 1" or not ok(value):
            suffix = " (or null)" if name in nullable else ""
            suffix += " (0 = no cap)" if name == "max_cwnd_bdp" else ""
            raise ConfigError(f"{prefix}.{name}", f"{text}{suffix}, got {value!r}")
