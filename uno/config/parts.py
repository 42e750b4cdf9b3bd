"""What the components declare to the configuration.

Each congestion control and load balancer declares its parameters (the dataclass its config
section ``cc.<name>`` / ``lb.<name>`` holds), and a component that owns the values a field may
take declares them (topology and workload kinds, incast placements, INT replacement rules,
marking sources, ...). The components declare when they are imported — the ``uno`` package
imports them all first (:mod:`uno.components`) — and the schema (:mod:`uno.config.schema`) reads
the declarations: the configuration never imports a component.
"""

from __future__ import annotations

from collections.abc import Iterable

_DECLARED: dict[str, dict[str, object]] = {}


def declare(group: str, name: str, value: object = None) -> None:
    """Declare ``name`` (with ``value``: a parameter dataclass, or None) in ``group``."""
    _DECLARED.setdefault(group, {})[name] = value


def declare_choices(group: str, names: Iterable[str]) -> None:
    """Declare the values a field may take."""
    for name in names:
        declare(group, name)


def declared(group: str) -> dict[str, object]:
    """Name -> value of everything declared in ``group``, in declaration order."""
    try:
        return _DECLARED[group]
    except KeyError:
        raise LookupError(
            f"no component declared {group!r}: import uno (which imports uno.components) first"
        ) from None


def names(group: str) -> tuple[str, ...]:
    """The names declared in ``group``."""
    return tuple(declared(group))


def names_of(group: str):
    """A callable giving the names of ``group`` when called (a field's choices, read when the
    field is checked, after the components have declared them)."""
    return lambda: names(group)
