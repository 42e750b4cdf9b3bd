"""Flows read from an htsim connection-matrix file (``.cm``), so published workloads can be
replayed:

    Nodes 256
    Connections 3
    130->240 id 1 start 0 size 1000000000
    0->240 id 5 start 15.5 size 4096

``start`` is in microseconds, ``size`` in bytes; ``id`` is the file's own flow number (kept as
the flow's tag, ``id<k>``). ``Nodes`` is informational (htsim files often give a smaller number
than the hosts they use); host ids must exist in the simulated topology. Blank lines and lines
starting with ``#`` are skipped. Any malformed line, or a flow id used twice, stops the run with
the file, the line number and the reason.
"""

from __future__ import annotations

import importlib.resources
import re
from pathlib import Path

from uno.core.errors import ConfigError
from uno.core.units import us_to_ps
from uno.transport.flow import FlowSpec
from uno.workload.hosts import HostFacts

_CONNECTION = re.compile(
    r"^(\d+)\s*->\s*(\d+)\s+id\s+(\d+)\s+start\s+([0-9.eE+-]+)\s+size\s+(\d+)\s*$"
)
_HEADER = re.compile(r"^(Nodes|Connections)\s+(\d+)\s*$")


def _shipped_dir() -> Path:
    return Path(str(importlib.resources.files("uno.data"))) / "tms"


def shipped_cms() -> list[str]:
    """Names of the connection matrices shipped in ``data/tms``."""
    return sorted(p.stem for p in _shipped_dir().glob("*.cm"))


def resolve_cm(path: str | Path) -> Path:
    """``path`` itself when it is a file or names one (``.cm``), else the shipped matrix of that
    name."""
    p = Path(path)
    if p.is_file() or p.suffix == ".cm":
        return p
    return _shipped_dir() / f"{p.name}.cm"


def read_cm(
    path: str | Path, field: str = "workload.path"
) -> list[tuple[int, int, int, float, int]]:
    """(src, dst, id, start_us, size_bytes) of every connection in ``path`` (a file, or the
    name of a shipped matrix: ``data/tms/<name>.cm``)."""
    p = resolve_cm(path)
    if not p.is_file():
        raise ConfigError(
            field, f"no connection-matrix file {str(p)!r}; shipped matrices: {shipped_cms()}"
        )
    header: dict[str, int] = {}
    rows = []
    first_line: dict[int, int] = {}  # flow id -> line it is defined on
    for lineno, raw in enumerate(p.read_text().splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _HEADER.match(line)
        if m:
            header[m.group(1)] = int(m.group(2))
            continue
        m = _CONNECTION.match(line)
        if not m:
            raise ConfigError(
                field,
                f"{p}:{lineno}: expected 'SRC->DST id K start US size BYTES', got {line!r}",
            )
        src, dst, fid = int(m.group(1)), int(m.group(2)), int(m.group(3))
        try:
            start_us = float(m.group(4))
        except ValueError:
            raise ConfigError(
                field, f"{p}:{lineno}: start {m.group(4)!r} is not a number"
            ) from None
        size = int(m.group(5))
        if not start_us >= 0 or start_us == float("inf"):
            raise ConfigError(field, f"{p}:{lineno}: start must be a finite time >= 0 us")
        if size <= 0 or size > 2**53:
            raise ConfigError(field, f"{p}:{lineno}: size must be in [1, 2**53] bytes, got {size}")
        if src == dst:
            raise ConfigError(field, f"{p}:{lineno}: source and destination are both {src}")
        if fid in first_line:
            raise ConfigError(
                field, f"{p}:{lineno}: flow id {fid} is already used on line {first_line[fid]}"
            )
        first_line[fid] = lineno
        rows.append((src, dst, fid, start_us, size))
    if "Connections" not in header:
        raise ConfigError(field, f"{p}: no 'Connections M' line")
    if header["Connections"] != len(rows):
        raise ConfigError(
            field, f"{p}: 'Connections {header['Connections']}' but {len(rows)} connection lines"
        )
    return rows


def trace_flows(cfg, hosts: HostFacts, rng=None) -> list[FlowSpec]:
    specs = []
    for i, (src, dst, fid, start_us, size) in enumerate(read_cm(cfg.path)):
        for end, h in (("source", src), ("destination", dst)):
            if h >= hosts.n_hosts:
                raise ConfigError(
                    "workload.path",
                    f"{cfg.path}: connection {fid} has {end} host {h}; the topology has hosts "
                    f"0..{hosts.n_hosts - 1}",
                )
        specs.append(FlowSpec(i, src, dst, size, us_to_ps(start_us), f"id{fid}"))
    if not specs:
        raise ConfigError("workload.path", f"{cfg.path}: no connections")
    return specs
