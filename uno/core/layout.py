"""Named columns for struct-of-arrays state.

The kernels keep their state in plain float64 or int64 arrays; :func:`layout` names the columns
of a row (or the fields of a header) once, as a namedtuple instance whose attributes are the
indices and whose ``size`` is their count. Inside a Numba kernel ``row[L.cwnd]`` compiles to a
constant index, so named columns cost nothing over hand-written numbers.
"""

from __future__ import annotations

from collections import namedtuple


def layout(name: str, fields: tuple[str, ...] | list[str], start: int = 0):
    """Columns ``fields`` numbered from ``start``: a namedtuple instance (``L.field`` is an
    index) with ``size`` = ``start`` + the number of fields (the next free column)."""
    fields = tuple(fields)
    if len(set(fields)) != len(fields) or "size" in fields:
        raise ValueError(f"{name}: duplicate or reserved column names in {fields}")
    cls = namedtuple(name, [*fields, "size"])
    return cls(*range(start, start + len(fields)), start + len(fields))
